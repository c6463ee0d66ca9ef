from webhand.surfaces.cli.forward import main

raise SystemExit(main())

from webhand.surfaces.cli_forward import main

raise SystemExit(main())

from webhand.surfaces.cli import main

raise SystemExit(main())

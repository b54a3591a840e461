from gmprep.cli import main

raise SystemExit(main())

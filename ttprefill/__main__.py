from ttprefill.cli import main

raise SystemExit(main())

from engramory.cli import main

raise SystemExit(main())

from pytest_rlsys.cli import main

raise SystemExit(main())

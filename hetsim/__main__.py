"""``python -m hetsim``: the command line."""

from hetsim.cli import main

raise SystemExit(main())

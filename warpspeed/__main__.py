"""``python -m warpspeed``: the command-line interface (where the ``warpspeed`` script is not on PATH)."""

from .interface.cli import main

raise SystemExit(main())

#!/usr/bin/env python3
"""Every engramory command from a copied skill folder, nothing installed:
`python3 tools/engramory.py <command> [...]` is `engramory <command> [...]` (new, update,
archive, restore, search, log, undo, check, doctor, ...); see `--help`."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from engramory.cli import main  # noqa: E402

raise SystemExit(main())

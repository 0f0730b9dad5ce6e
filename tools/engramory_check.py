#!/usr/bin/env python3
"""Check memory index files against their caps, on any host (no hook needed):
`python3 tools/engramory_check.py MEMORY.md`. Same as `engramory check`; see --help."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from engramory.commands.check import main  # noqa: E402

raise SystemExit(main())

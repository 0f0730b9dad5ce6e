#!/usr/bin/env python3
"""Audit a whole memory store on any host: `python3 tools/engramory_doctor.py MEMORY_ROOT`.
Same as `engramory doctor`; see --help. Report only: it never changes a file."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from engramory.commands.doctor import main  # noqa: E402

raise SystemExit(main())

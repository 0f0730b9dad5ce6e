"""Fixtures for the tests that drive the real Kilo Code CLI (see kilo_driver.py and
hostkit/hostbase.py): `kilo_cli` skips when the CLI is not installed (fails instead when
ENGRAMORY_REQUIRE_E2E is set), `kilo` is one test's Kilo."""

from __future__ import annotations

import sys
from pathlib import Path

HOSTKIT = next(p / "hostkit" for p in Path(__file__).resolve().parents if (p / "hostkit" / "hostbase.py").is_file())
sys.path.insert(0, str(HOSTKIT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostbase import fixtures  # noqa: E402
from kilo_driver import Kilo  # noqa: E402

kilo_cli, kilo = fixtures(Kilo)

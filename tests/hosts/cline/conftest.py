"""Fixtures for the tests that drive the real Cline CLI (see cline_driver.py and
hostkit/hostbase.py): `cline_cli` skips when the CLI is not installed (fails instead when
ENGRAMORY_REQUIRE_E2E is set), `cline` is one test's Cline."""

from __future__ import annotations

from cline_driver import Cline  # noqa: E402
from hostbase import fixtures  # noqa: E402

cline_cli, cline = fixtures(Cline)

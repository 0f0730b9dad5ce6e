"""Fixtures for the tests that drive the real Copilot CLI (see copilot_driver.py and
hostkit/hostbase.py): `copilot_cli` skips when the CLI is not installed (fails instead when
ENGRAMORY_REQUIRE_E2E is set), `copilot` is one test's Copilot CLI."""

from __future__ import annotations

from copilot_driver import Copilot  # noqa: E402
from hostbase import fixtures  # noqa: E402

copilot_cli, copilot = fixtures(Copilot)

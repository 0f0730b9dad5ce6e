"""Fixtures for the tests that drive the real OpenClaw CLI (see openclaw_driver.py and
hostkit/hostbase.py): `openclaw_cli` skips when the CLI is not installed (fails instead when
ENGRAMORY_REQUIRE_E2E is set), `openclaw` is one test's OpenClaw."""

from __future__ import annotations

from hostbase import fixtures  # noqa: E402
from openclaw_driver import Openclaw  # noqa: E402

openclaw_cli, openclaw = fixtures(Openclaw)

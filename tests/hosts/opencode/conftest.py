"""Fixtures for the tests that drive the real opencode CLI (see opencode_driver.py and
hostkit/hostbase.py): `opencode_cli` skips when the CLI is not installed (fails instead when
ENGRAMORY_REQUIRE_E2E is set), `opencode` is one test's opencode."""

from __future__ import annotations

from hostbase import fixtures  # noqa: E402
from opencode_driver import Opencode  # noqa: E402

opencode_cli, opencode = fixtures(Opencode)

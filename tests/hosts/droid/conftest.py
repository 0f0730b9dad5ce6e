"""Fixtures for the tests that drive the real Droid CLI (see droid_driver.py and
hostkit/hostbase.py): `droid_cli` skips when the CLI is not installed (fails instead when
ENGRAMORY_REQUIRE_E2E is set), `droid` is one test's droid."""

from __future__ import annotations

from droid_driver import Droid  # noqa: E402
from hostbase import fixtures  # noqa: E402

droid_cli, droid = fixtures(Droid)

"""Fixtures for the tests that drive the real Kilo Code CLI (see kilo_driver.py and
hostkit/hostbase.py): `kilo_cli` skips when the CLI is not installed (fails instead when
ENGRAMORY_REQUIRE_E2E is set), `kilo` is one test's Kilo."""

from __future__ import annotations

from hostbase import fixtures  # noqa: E402
from kilo_driver import Kilo  # noqa: E402

kilo_cli, kilo = fixtures(Kilo)

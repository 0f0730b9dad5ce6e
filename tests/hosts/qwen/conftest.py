"""Fixtures for the tests that drive the real Qwen CLI (see qwen_driver.py and
hostkit/hostbase.py): `qwen_cli` skips when the CLI is not installed (fails instead when
ENGRAMORY_REQUIRE_E2E is set), `qwen` is one test's Qwen Code."""

from __future__ import annotations

from hostbase import fixtures  # noqa: E402
from qwen_driver import Qwen  # noqa: E402

qwen_cli, qwen = fixtures(Qwen)

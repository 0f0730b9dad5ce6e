"""Fixtures for the tests that drive the real OpenClaw CLI (see openclaw_driver.py). They skip
when the CLI is not installed, and fail instead when ENGRAMORY_REQUIRE_E2E is set (CI sets it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hostkit"))

import common  # noqa: E402
import openclaw_driver as driver  # noqa: E402
from openclaw_driver import Openclaw  # noqa: E402


@pytest.fixture(scope="session")
def openclaw_cli() -> Path:
    common.require(driver.missing())
    installed = json.loads((driver.PKG_DIR / "package.json").read_text(encoding="utf-8"))["version"]
    assert installed == driver.VERSION, "tests/openclaw has OpenClaw %s, package.json pins %s: run ci-install.sh" % (installed, driver.VERSION)
    return driver.ENTRY


@pytest.fixture
def openclaw(openclaw_cli: Path, tmp_path: Path) -> Openclaw:
    return Openclaw(tmp_path)

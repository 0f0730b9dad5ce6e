"""Fixtures for the tests that drive the real Copilot CLI (see copilot_driver.py). They skip when the
CLI is not installed, and fail instead when ENGRAMORY_REQUIRE_E2E is set (CI sets it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hostkit"))

import common  # noqa: E402
import copilot_driver as driver  # noqa: E402
from copilot_driver import Copilot  # noqa: E402


@pytest.fixture(scope="session")
def copilot_cli() -> Path:
    common.require(driver.missing())
    installed = json.loads((driver.PKG_DIR / "package.json").read_text(encoding="utf-8"))["version"]
    assert installed == driver.VERSION, "tests/copilot has Copilot CLI %s installed, package.json pins %s: run ci-install.sh" % (installed, driver.VERSION)
    return driver.COPILOT


@pytest.fixture
def copilot(copilot_cli: Path, tmp_path: Path) -> Copilot:
    return Copilot(tmp_path)

"""Fixtures for the tests that drive the real Droid CLI (see droid_driver.py). They skip when the
CLI is not installed, and fail instead when ENGRAMORY_REQUIRE_E2E is set (CI sets it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hostkit"))

import common  # noqa: E402
import droid_driver as driver  # noqa: E402
from droid_driver import Droid  # noqa: E402


@pytest.fixture(scope="session")
def droid_cli() -> Path:
    common.require(driver.missing())
    installed = json.loads((driver.PKG_DIR / "package.json").read_text(encoding="utf-8"))["version"]
    assert installed == driver.VERSION, "tests/droid has droid %s installed, package.json pins %s: run ci-install.sh" % (installed, driver.VERSION)
    return driver.DROID


@pytest.fixture
def droid(droid_cli: Path, tmp_path: Path) -> Droid:
    return Droid(tmp_path)

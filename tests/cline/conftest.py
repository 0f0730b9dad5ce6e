"""Fixtures for the tests that drive the real Cline CLI (see cline_driver.py). They skip when
the CLI is not installed, and fail instead when ENGRAMORY_REQUIRE_E2E is set (CI sets it)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hostkit"))

import cline_driver as driver  # noqa: E402
import common  # noqa: E402
from cline_driver import Cline  # noqa: E402


@pytest.fixture(scope="session")
def cline_cli() -> Path:
    common.require(driver.missing())
    installed = driver.installed_version()
    assert installed == driver.VERSION, "tests/cline has Cline %s, package.json pins %s: run ci-install.sh" % (installed, driver.VERSION)
    return driver.CLINE


@pytest.fixture
def cline(cline_cli: Path, tmp_path: Path) -> Cline:
    return Cline(tmp_path)

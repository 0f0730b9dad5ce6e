"""Fixtures for the tests that drive the real Gemini CLI (pinned in package.json here).

They skip, with the reason shown, only when Node.js or the pinned CLI is not installed
(`bash tests/hosts/gemini/ci-install.sh`), and fail instead when ENGRAMORY_REQUIRE_E2E is set (CI
sets it); every other problem is a failure.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List

import common  # noqa: E402
import driver  # noqa: E402
import pytest

_skipped: List[str] = []


@pytest.fixture(scope="session")
def gemini_cli() -> Path:
    reason = driver.cli_missing_reason()
    try:
        common.require(reason)
    except pytest.skip.Exception:
        if reason not in _skipped:
            _skipped.append(str(reason))
        raise
    version = driver.cli_version()
    assert version == driver.CLI_VERSION, (
        "installed Gemini CLI is %r, tests/hosts/gemini/package.json pins %s: run `bash tests/hosts/gemini/ci-install.sh`"
        % (version, driver.CLI_VERSION)
    )
    return driver.CLI


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """GEMINI_CLI_HOME and HOME for one run, with the base settings every run needs."""
    h = tmp_path / "home"
    driver.write_json(h / ".gemini" / "settings.json", driver.base_settings())
    return h


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The project folder the CLI starts in."""
    w = tmp_path / "work"
    w.mkdir()
    return w


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for reason in _skipped:
        terminalreporter.write_line("gemini tests skipped: " + reason, yellow=True)

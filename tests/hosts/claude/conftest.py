"""Fixtures for the end-to-end tests that drive the real Claude Code CLI.

They skip, with the reason shown, only when Node.js or the pinned CLI is not
installed (``npm ci --prefix tests/e2e``), and even then fail when
ENGRAMORY_REQUIRE_E2E is set; every other problem is a failure.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Callable, List

import harness  # noqa: E402
import pytest

_skip_reasons: List[str] = []


@pytest.fixture(scope="session")
def claude_cli() -> Path:
    """The pinned CLI; skips the test when Node.js or the CLI is missing."""
    reason = harness.cli_missing_reason()
    if reason is not None:
        # CI sets ENGRAMORY_REQUIRE_E2E so a lost install step fails loudly
        # instead of turning the host tests into silent skips.
        if os.environ.get("ENGRAMORY_REQUIRE_E2E", "") not in ("", "0"):
            pytest.fail(f"ENGRAMORY_REQUIRE_E2E is set but {reason}", pytrace=False)
        if reason not in _skip_reasons:
            _skip_reasons.append(reason)
        pytest.skip(reason)
    cli = harness.find_cli()
    assert cli is not None
    # A stale node_modules would measure another host version: fail, don't skip.
    version = harness.cli_version(cli)
    assert version.startswith(harness.CLI_VERSION + " "), (
        f"installed Claude Code CLI is {version!r}, tests/hosts/claude/package.json pins "
        f"{harness.CLI_VERSION}: run `npm ci --prefix tests/e2e`"
    )
    return cli


@pytest.fixture
def e2e_home(tmp_path: Path) -> Path:
    """An empty HOME for one run: no user settings, memory or credentials."""
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.fixture
def e2e_project(tmp_path: Path) -> Path:
    """An empty project folder the CLI is started in."""
    project = tmp_path / "project"
    project.mkdir()
    return project


@pytest.fixture
def claude(claude_cli: Path, e2e_home: Path, e2e_project: Path) -> harness.RunClaude:
    """``run_claude`` with this test's HOME, project and CLI filled in."""
    run: Callable[..., Any] = functools.partial(
        harness.run_claude, home=e2e_home, cwd=e2e_project, cli=claude_cli
    )
    return run


def pytest_terminal_summary(terminalreporter: Any) -> None:
    # `-q` prints only "N skipped"; say once, plainly, why the e2e tests did not run.
    for reason in _skip_reasons:
        terminalreporter.write_line(f"e2e tests skipped: {reason}", yellow=True)

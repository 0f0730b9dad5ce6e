"""Fixtures for the tests that drive the real hermes-agent package.

Hermes runs in its own virtual environment (CI: `.ci/run` makes `.venv-hermes` from
tests/hosts/hermes/requirements.txt). Its Python is $ENGRAMORY_HERMES_PYTHON, else
<repo>/.venv-hermes/bin/python. When neither exists the tests skip with the reason shown,
and fail instead when ENGRAMORY_REQUIRE_E2E is set (CI sets it).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
VERSION = "0.19.0"


def _hermes_python() -> tuple[Path | None, str]:
    configured = os.environ.get("ENGRAMORY_HERMES_PYTHON", "").strip()
    python = Path(configured) if configured else ROOT / ".venv-hermes" / "bin" / "python"
    if python.is_file() and (python.parent / "hermes").is_file():
        return python, ""
    if configured:
        return None, "ENGRAMORY_HERMES_PYTHON=%s is not a Python with the hermes CLI beside it" % configured
    return None, (
        "hermes-agent is not installed: set ENGRAMORY_HERMES_PYTHON or run `python3 -m venv .venv-hermes && "
        ".venv-hermes/bin/python -m pip install -r tests/hosts/hermes/requirements.txt`"
    )


@pytest.fixture(scope="session")
def hermes_python() -> Path:
    python, reason = _hermes_python()
    if python is None:
        if os.environ.get("ENGRAMORY_REQUIRE_E2E", "") not in ("", "0"):
            pytest.fail("ENGRAMORY_REQUIRE_E2E is set but " + reason, pytrace=False)
        pytest.skip(reason)
    proc = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('hermes-agent'))"],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.stdout.strip() == VERSION, (
        "the Hermes venv has hermes-agent %r; tests/hosts/hermes/requirements.txt pins %s" % (proc.stdout.strip(), VERSION)
    )
    return python


@pytest.fixture
def hermes_env(tmp_path: Path) -> dict[str, str]:
    """An isolated Hermes: its own HERMES_HOME and HOME, a work folder as TERMINAL_CWD, no
    provider keys, no engramory settings."""
    home = tmp_path / "hermes_home"
    (home / "memories").mkdir(parents=True)
    work = tmp_path / "work"
    work.mkdir()
    user_home = tmp_path / "home"
    user_home.mkdir()
    env = {
        k: v for k, v in os.environ.items()
        if not k.startswith(("ENGRAMORY_", "HERMES_", "OPENAI_", "OPENROUTER_", "ANTHROPIC_", "TERMINAL_"))
    }
    env.update(HERMES_HOME=str(home), TERMINAL_CWD=str(work), HOME=str(user_home), NO_COLOR="1")
    return env

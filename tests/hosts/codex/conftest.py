"""Fixtures for the tests that drive the real OpenAI Codex CLI offline.

Codex is installed from npm, pinned in package-lock.json here (CI: `.ci/run` runs
ci-install.sh, i.e. `npm ci` in this folder); $ENGRAMORY_CODEX_BIN names another binary.
When it is missing the tests skip with the reason shown, and fail instead when
ENGRAMORY_REQUIRE_E2E is set (CI sets it).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import codex_driver
import pytest


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    binary = codex_driver.codex_binary()
    if binary is None:
        reason = (
            "the Codex CLI is not installed: run `bash tests/hosts/codex/ci-install.sh` (npm ci of "
            "@openai/codex@%s) or set ENGRAMORY_CODEX_BIN" % codex_driver.VERSION
        )
        if os.environ.get("ENGRAMORY_REQUIRE_E2E", "") not in ("", "0"):
            pytest.fail("ENGRAMORY_REQUIRE_E2E is set but " + reason, pytrace=False)
        pytest.skip(reason)
    proc = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "codex-cli %s" % codex_driver.VERSION, (
        "tests/codex pins Codex %s, found %r" % (codex_driver.VERSION, proc.stdout.strip())
    )
    return binary


@pytest.fixture
def home(tmp_path: Path, codex_bin: Path) -> codex_driver.Home:
    return codex_driver.Home(tmp_path)


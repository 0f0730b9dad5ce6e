"""The driver for the tests that drive the real Factory droid CLI offline (BYOK against a
scripted model on loopback, no Factory login).

The binary is pinned in package.json / package-lock.json beside this file
(`bash tests/droid/ci-install.sh`). When it is missing the tests skip with the reason, and
fail instead when ENGRAMORY_REQUIRE_E2E is set (CI sets it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Sequence

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "hostkit"))

import common  # noqa: E402
from mock_openai import MockModel  # noqa: E402

PACKAGE = "@factory/cli-linux-x64"
VERSION = json.loads((HERE / "package.json").read_text(encoding="utf-8"))["dependencies"][PACKAGE]
PKG_DIR = HERE / "node_modules" / "@factory" / "cli-linux-x64"
DROID = PKG_DIR / "bin" / "droid"


def missing() -> str | None:
    if not DROID.is_file():
        return "Factory droid is not installed in tests/droid: run `bash tests/droid/ci-install.sh`"
    return None


class Droid:
    """One test's droid: a HOME whose settings name the scripted model, a project, run()."""

    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        self.project = tmp / "project"
        self.project.mkdir(parents=True)
        (self.home / ".factory").mkdir(parents=True)
        self.env = common.base_env(self.home)

    def install(self, *extra: str) -> str:
        done = common.engramory(["install", "--host", "droid", "--scope", "project", *extra], self.project, self.home)
        assert done.returncode == 0, done.stderr + done.stdout
        return done.stdout

    def run(self, script: Sequence[Any], timeout: float = 120, **env: str) -> tuple[common.Run, MockModel]:
        with MockModel(script) as model:
            common.write_json(self.home / ".factory" / "settings.json", {"customModels": [{
                "model": "mock-model", "displayName": "Mock", "baseUrl": model.base_url, "apiKey": "dummy",
                "provider": "generic-chat-completion-api", "maxOutputTokens": 4096,
            }]})
            result = common.run(
                [str(DROID), "exec", "--auto", "high", "-m", "custom:Mock-0", "-o", "json", "--cwd", str(self.project),
                 "please do the task"],
                self.project, dict(self.env, **env), timeout,
            )
        assert not result.timed_out, "droid did not finish in %s s: %s" % (timeout, result.stderr[-2000:])
        assert not model.errors, model.errors
        return result, model

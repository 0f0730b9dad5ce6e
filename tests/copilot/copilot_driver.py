"""The driver for the tests that drive the real GitHub Copilot CLI offline (COPILOT_OFFLINE, a
BYOK OpenAI-compatible provider on loopback, no GitHub sign-in).

The CLI is pinned in package.json / package-lock.json beside this file
(`bash tests/copilot/ci-install.sh`). When it is missing the tests skip with the reason, and
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

VERSION = json.loads((HERE / "package.json").read_text(encoding="utf-8"))["dependencies"]["@github/copilot"]
PKG_DIR = HERE / "node_modules" / "@github" / "copilot-linux-x64"
COPILOT = PKG_DIR / "copilot"


def missing() -> str | None:
    if not COPILOT.is_file():
        return "GitHub Copilot CLI is not installed in tests/copilot: run `bash tests/copilot/ci-install.sh`"
    return None


class Copilot:
    """One test's Copilot CLI: its own HOME and COPILOT_HOME, a project, run()."""

    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        self.project = tmp / "project"
        self.project.mkdir(parents=True)
        self.copilot_home = self.home / ".copilot"
        self.copilot_home.mkdir(parents=True)
        self.env = common.base_env(self.home, COPILOT_HOME=str(self.copilot_home), COPILOT_OFFLINE="true",
                                   COPILOT_AUTO_UPDATE="false", COPILOT_PROVIDER_TYPE="openai",
                                   COPILOT_PROVIDER_API_KEY="dummy", COPILOT_MODEL="mock-model")

    def engramory(self, *args: str) -> Any:
        return common.engramory(list(args), self.project, self.home, self.env)

    def install(self) -> str:
        done = self.engramory("install", "--host", "copilot")
        assert done.returncode == 0, done.stderr + done.stdout
        return str(done.stdout)

    def run_responses(self, steps: Any, timeout: float = 120, **env: str) -> tuple[common.Run, Any]:
        """A run on the Responses wire with a codex model id: `apply_patch` replaces create/edit."""
        from mock_responses import ResponsesModel

        with ResponsesModel(steps) as model:
            result = common.run(
                [str(COPILOT), "-p", "please do the task", "--allow-all-tools", "--output-format", "json",
                 "--disable-client-telemetry"],
                self.project, dict(self.env, COPILOT_PROVIDER_BASE_URL=model.base_url, COPILOT_MODEL="gpt-5-codex",
                                   COPILOT_PROVIDER_WIRE_API="responses", **env), timeout,
            )
        assert not result.timed_out, "Copilot CLI did not finish in %s s: %s" % (timeout, result.stderr[-2000:])
        return result, model

    def run(self, script: Sequence[Any], timeout: float = 120, **env: str) -> tuple[common.Run, MockModel]:
        with MockModel(script) as model:
            result = common.run(
                [str(COPILOT), "-p", "please do the task", "--allow-all-tools", "--output-format", "json",
                 "--disable-client-telemetry"],
                self.project, dict(self.env, COPILOT_PROVIDER_BASE_URL=model.base_url, **env), timeout,
            )
        assert not result.timed_out, "Copilot CLI did not finish in %s s: %s" % (timeout, result.stderr[-2000:])
        assert not model.errors, model.errors
        return result, model

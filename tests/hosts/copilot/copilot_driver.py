"""The driver for the tests that drive the real GitHub Copilot CLI offline (COPILOT_OFFLINE, a
BYOK OpenAI-compatible provider on loopback, no GitHub sign-in).

The CLI is pinned in package.json / package-lock.json beside this file
(`bash tests/hosts/copilot/ci-install.sh`). When it is missing the tests skip with the reason, and
fail instead when ENGRAMORY_REQUIRE_E2E is set (CI sets it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import common
from hostbase import Call, Host
from mock_responses import ResponsesModel

HERE = Path(__file__).resolve().parent


class Copilot(Host):
    """One test's Copilot CLI: its own HOME and COPILOT_HOME, a project, run()."""

    name = "copilot"
    title = "Copilot CLI"
    here = HERE
    package = "@github/copilot"
    installed_package = "@github/copilot-linux-x64"
    required = ("node_modules/@github/copilot-linux-x64/copilot",)
    scope = ()  # user level: $COPILOT_HOME/hooks/

    @property
    def hook_script(self) -> str:
        return "hooks/engramory_hook.py"  # wired as `engramory_hook.py copilot <event>`

    def setup(self) -> None:
        self.copilot_home = self.home / ".copilot"
        self.copilot_home.mkdir(parents=True)
        self.env = common.base_env(self.home, COPILOT_HOME=str(self.copilot_home), COPILOT_OFFLINE="true",
                                   COPILOT_AUTO_UPDATE="false", COPILOT_PROVIDER_TYPE="openai",
                                   COPILOT_PROVIDER_API_KEY="dummy", COPILOT_MODEL="mock-model")

    @property
    def bundle(self) -> Path:
        return self.copilot_home / "engramory"

    def argv(self, mock: Any) -> List[str]:
        return [str(self.cli()), "-p", "please do the task", "--allow-all-tools", "--output-format", "json",
                "--disable-client-telemetry"]

    def wire_env(self, mock: Any) -> Dict[str, str]:
        env = {"COPILOT_PROVIDER_BASE_URL": mock.base_url}
        if isinstance(mock, ResponsesModel):  # a codex model id: `apply_patch` replaces create/edit
            env.update(COPILOT_MODEL=mock.model, COPILOT_PROVIDER_WIRE_API="responses")
        return env

    def run_responses(self, steps: Any, timeout: Optional[float] = None, **env: str) -> Tuple[common.Run, ResponsesModel]:
        """A run on the Responses wire with a codex model id: `apply_patch` replaces create/edit."""
        return self.session(ResponsesModel(steps), timeout, **env)

    def write_call(self, path: str, content: str) -> Call:
        return ("create", {"path": path, "file_text": content})

    def edit_call(self, path: str, old: str, new: str, replace_all: bool = False) -> Call:
        return ("edit", {"path": path, "old_str": old, "new_str": new})  # no replace-all in this tool

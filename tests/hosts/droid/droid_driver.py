"""The driver for the tests that drive the real Factory droid CLI offline (BYOK against a
scripted model on loopback, no Factory login).

The binary is pinned in package.json / package-lock.json beside this file
(`bash tests/hosts/droid/ci-install.sh`). When it is missing the tests skip with the reason, and
fail instead when ENGRAMORY_REQUIRE_E2E is set (CI sets it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import common
from hostbase import Call, Host

HERE = Path(__file__).resolve().parent


class Droid(Host):
    """One test's droid: a HOME whose settings name the scripted model, a project, run()."""

    name = "droid"
    title = "droid"
    here = HERE
    package = "@factory/cli-linux-x64"
    required = ("node_modules/@factory/cli-linux-x64/bin/droid",)
    core_module = "engramory/hosts/claudelike.py"

    @property
    def hook_script(self) -> str:
        return "hooks/engramory_hook.py"  # wired as `engramory_hook.py droid <event>`

    def setup(self) -> None:
        (self.home / ".factory").mkdir(parents=True)

    @property
    def bundle(self) -> Path:
        return self.project / ".factory" / "engramory"

    @property
    def settings(self) -> Path:
        return self.project / ".factory" / "settings.json"

    def prepare(self, mock: Any, env: Dict[str, str]) -> None:
        common.write_json(self.home / ".factory" / "settings.json", {"customModels": [{
            "model": "mock-model", "displayName": "Mock", "baseUrl": mock.base_url, "apiKey": "dummy",
            "provider": "generic-chat-completion-api", "maxOutputTokens": 4096,
        }]})

    def argv(self, mock: Any) -> List[str]:
        return [str(self.cli()), "exec", "--auto", "high", "-m", "custom:Mock-0", "-o", "json", "--cwd", str(self.project),
                "please do the task"]

    def write_call(self, path: str, content: str) -> Call:
        return ("Create", {"file_path": path, "content": content})

    def edit_call(self, path: str, old: str, new: str, replace_all: bool = False) -> Call:
        args: Dict[str, Any] = {"file_path": path, "old_str": old, "new_str": new}
        if replace_all:
            args["change_all"] = True
        return ("Edit", args)

    def read_call(self, path: str) -> Call:
        return ("Read", {"file_path": path})

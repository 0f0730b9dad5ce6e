"""The driver for the tests that drive the real opencode CLI offline: a HOME whose global
config names the scripted model, a git project, and run(). The CLI is pinned in package.json /
package-lock.json beside this file (`bash tests/hosts/opencode/ci-install.sh`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import common
from hostbase import Call, Host

HERE = Path(__file__).resolve().parent
SEED = HERE / "seed"
QUIET = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_CLAUDE_CODE": "1",
}


def seed(folder: Path) -> None:
    """What opencode would npm-install into a config folder on its first run, copied in."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(SEED / name, folder / name)
    shutil.copytree(SEED / "node_modules", folder / "node_modules", symlinks=True, dirs_exist_ok=True)


class Opencode(Host):
    name = "opencode"
    title = "opencode"
    here = HERE
    package = "opencode-ai"
    installed_package = "opencode-linux-x64"
    # the CLI, and in seed/ the plugin package opencode installs into every config folder
    required = ("node_modules/opencode-linux-x64/bin/opencode", "seed/node_modules/@opencode-ai/plugin")
    timeout = 150

    @property
    def hook_script(self) -> str:
        return "hooks/engramory_hook.py"  # the plugin spawns `engramory_hook.py opencode`

    def setup(self) -> None:
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        self.config = self.home / ".config" / "opencode"
        seed(self.config)
        self.env = common.base_env(self.home, **QUIET)

    @property
    def bundle(self) -> Path:
        return self.project / ".opencode" / "engramory"

    def first_run(self) -> None:
        seed(self.project / ".opencode")

    def prepare(self, mock: Any, env: Dict[str, str]) -> None:
        common.write_json(self.config / "opencode.json", {
            "provider": {"mock": {"npm": "@ai-sdk/openai-compatible",
                                  "options": {"baseURL": mock.base_url, "apiKey": "dummy"},
                                  "models": {"mock-model": {"tool_call": True}, "gpt-5-mock": {"tool_call": True}}}},
            "model": "mock/" + mock.model, "small_model": "mock/" + mock.model,
            "permission": {"edit": "allow", "bash": "allow", "external_directory": "allow"},
        })

    def argv(self, mock: Any) -> List[str]:
        return [str(self.cli()), "run", "--format", "json", "-m", "mock/" + mock.model, "please do the task"]

    def write_call(self, path: str, content: str) -> Call:
        return ("write", {"filePath": path, "content": content})

    def edit_call(self, path: str, old: str, new: str, replace_all: bool = False) -> Call:
        args: Dict[str, Any] = {"filePath": path, "oldString": old, "newString": new}
        if replace_all:
            args["replaceAll"] = True
        return ("edit", args)

    def patch_call(self, text: str) -> Call:
        return ("apply_patch", {"patchText": text})

"""The driver for the tests that drive the real Kilo Code CLI offline: a HOME whose user
config (`~/.config/kilo/kilo.json`) names the scripted model, a git project, and run(). The CLI
is pinned in package.json / package-lock.json beside this file (`bash ci-install.sh`).

Offline trap: a config folder with a local plugin makes Kilo npm-install `@kilocode/plugin`
(at 7.7.9, never published) at start-up, which stalls ~70 s when the registry cannot be
reached. The run's environment points npm at a dead loopback port with no retries, so that
install fails at once and the run goes on (the plugin still loads: it imports nothing of it).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import common
from hostbase import Call, Host

HERE = Path(__file__).resolve().parent
QUIET = {
    "KILO_DISABLE_AUTOUPDATE": "1", "KILO_DISABLE_MODELS_FETCH": "1", "KILO_DISABLE_SHARE": "1",
    "KILO_DISABLE_LSP_DOWNLOAD": "1", "KILO_DISABLE_DEFAULT_PLUGINS": "1", "KILO_DISABLE_CLAUDE_CODE": "1",
    "KILO_TELEMETRY_LEVEL": "off", "KILO_NO_DAEMON": "1", "KILO_DISABLE_SESSION_INGEST": "1",
    # the offline trap, defused: the start-up plugin install fails at once
    "npm_config_registry": "http://127.0.0.1:9/", "npm_config_fetch_retries": "0",
}
PATCH_MODEL = "gpt-5-mock"  # a `gpt-` id: apply_patch replaces edit, write stays


class Kilo(Host):
    name = "kilo"
    title = "Kilo Code CLI"
    here = HERE
    package = "@kilocode/cli-linux-x64"
    required = ("node_modules/@kilocode/cli-linux-x64/bin/kilo",)
    core_module = "engramory/hosts/kilo/__init__.py"
    timeout = 150

    @property
    def hook_script(self) -> str:
        return "hooks/engramory_hook.py"  # the plugin spawns `engramory_hook.py kilo`

    def setup(self) -> None:
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        self.config = self.home / ".config" / "kilo"
        env = {k: v for k, v in self.env.items() if not k.startswith(("KILO", "npm_config_"))}
        # Kilo's own binary on PATH: `install --check` loads the plugin in it, as Kilo would
        env["PATH"] = str(self.cli().parent) + os.pathsep + env.get("PATH", os.defpath)
        env.update(QUIET)
        self.env = env

    @property
    def bundle(self) -> Path:
        return self.plugin_base / "engramory"

    @property
    def plugin_base(self) -> Path:
        return self.config if "user" in self.scope else self.project / ".kilo"

    @property
    def plugin(self) -> Path:
        return self.plugin_base / "plugins" / "engramory.js"

    def prepare(self, mock: Any, env: Dict[str, str]) -> None:
        common.write_json(self.config / "kilo.json", {
            "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                                  "options": {"baseURL": mock.base_url, "apiKey": "dummy"},
                                  "models": {m: {"name": m, "tool_call": True, "limit": {"context": 100000, "output": 4096}}
                                             for m in ("mock-model", PATCH_MODEL)}}},
            "model": "mock/" + mock.model, "small_model": "mock/" + mock.model,
            "permission": {"edit": "allow", "bash": "allow", "external_directory": "allow"},
            "autoupdate": False, "share": "disabled",
        })

    def argv(self, mock: Any) -> List[str]:
        return [str(self.cli()), "run", "--format", "json", "-m", "mock/" + mock.model, "please do the task"]

    def read_call(self, path: str) -> Call:
        return ("read", {"filePath": path})

    def write_call(self, path: str, content: str) -> Call:
        return ("write", {"filePath": path, "content": content})

    def edit_call(self, path: str, old: str, new: str, replace_all: bool = False) -> Call:
        args: Dict[str, Any] = {"filePath": path, "oldString": old, "newString": new}
        if replace_all:
            args["replaceAll"] = True
        return ("edit", args)

    def patch_call(self, text: str) -> Call:
        return ("apply_patch", {"patchText": text})


class UserKilo(Kilo):
    """Kilo with the guard installed in user scope (`~/.config/kilo/`)."""

    scope = ("--scope", "user")

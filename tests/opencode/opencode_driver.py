"""The driver for the tests that drive the real opencode CLI offline: a HOME whose global
config names the scripted model, a git project, and run(). The CLI is pinned in package.json /
package-lock.json beside this file (`bash tests/opencode/ci-install.sh`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "hostkit"))

import common  # noqa: E402
from mock_openai import MockModel  # noqa: E402

VERSION = json.loads((HERE / "package.json").read_text(encoding="utf-8"))["dependencies"]["opencode-ai"]
PKG_DIR = HERE / "node_modules" / "opencode-linux-x64"
OPENCODE = PKG_DIR / "bin" / "opencode"
SEED = HERE / "seed"
QUIET = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_CLAUDE_CODE": "1",
}


def missing() -> str | None:
    if not OPENCODE.is_file():
        return "opencode is not installed in tests/opencode: run `bash tests/opencode/ci-install.sh`"
    if not (SEED / "node_modules" / "@opencode-ai" / "plugin").is_dir():
        return "tests/opencode/seed is not installed: run `bash tests/opencode/ci-install.sh`"
    return None


def seed(folder: Path) -> None:
    """What opencode would npm-install into a config folder on its first run, copied in."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(SEED / name, folder / name)
    shutil.copytree(SEED / "node_modules", folder / "node_modules", symlinks=True, dirs_exist_ok=True)


class Opencode:
    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        self.project = tmp / "project"
        self.project.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        self.config = self.home / ".config" / "opencode"
        seed(self.config)
        self.env = common.base_env(self.home, **QUIET)

    def engramory(self, *args: str) -> Any:
        return common.engramory(list(args), self.project, self.home, self.env)

    def install(self) -> str:
        done = self.engramory("install", "--host", "opencode", "--scope", "project")
        assert done.returncode == 0, done.stderr + done.stdout
        seed(self.project / ".opencode")
        return str(done.stdout)

    def run(self, script: Sequence[Any], model: str = "mock-model", timeout: float = 150, **env: str) -> tuple[common.Run, MockModel]:
        with MockModel(script, model=model) as mock:
            common.write_json(self.config / "opencode.json", {
                "provider": {"mock": {"npm": "@ai-sdk/openai-compatible",
                                      "options": {"baseURL": mock.base_url, "apiKey": "dummy"},
                                      "models": {"mock-model": {"tool_call": True}, "gpt-5-mock": {"tool_call": True}}}},
                "model": "mock/" + model, "small_model": "mock/" + model,
                "permission": {"edit": "allow", "bash": "allow", "external_directory": "allow"},
            })
            result = common.run([str(OPENCODE), "run", "--format", "json", "-m", "mock/" + model, "please do the task"],
                                self.project, dict(self.env, **env), timeout)
        assert not result.timed_out, "opencode did not finish in %s s: %s" % (timeout, result.stderr[-2000:])
        assert not mock.errors, mock.errors
        return result, mock

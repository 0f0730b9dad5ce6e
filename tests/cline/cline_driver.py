"""The driver for the tests that drive the real Cline CLI offline: a HOME whose provider is the
scripted model (set with `cline auth`, the only way Cline accepts it), a workspace, and run().
The CLI is pinned in package.json / package-lock.json beside this file
(`bash tests/cline/ci-install.sh`). Runs use the local session backend; a hub daemon that
outlives a run anyway is ended by its PID, found by this test's HOME."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, Sequence

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "hostkit"))

import common  # noqa: E402
from mock_openai import MockModel  # noqa: E402

VERSION = json.loads((HERE / "package.json").read_text(encoding="utf-8"))["dependencies"]["cline"]
PKG_DIR = HERE / "node_modules" / "@cline" / "cli-linux-x64"
CLINE = PKG_DIR / "bin" / "cline"


def missing() -> str | None:
    if not CLINE.is_file():
        return "Cline CLI is not installed in tests/cline: run `bash tests/cline/ci-install.sh`"
    return None


def installed_version() -> str:
    return str(json.loads((HERE / "node_modules" / "cline" / "package.json").read_text(encoding="utf-8"))["version"])


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


class Cline:
    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        self.home.mkdir(parents=True)
        self.project = tmp / "project"
        self.project.mkdir(parents=True)
        self.env = common.base_env(self.home, CLINE_NO_AUTO_UPDATE="1", OTEL_TELEMETRY_ENABLED="false",
                                   CLINE_SESSION_BACKEND_MODE="local", CLINE_LOG_PATH=str(tmp / "cline.log"))

    def engramory(self, *args: str) -> Any:
        return common.engramory(list(args), self.project, self.home, self.env)

    def install(self) -> str:
        done = self.engramory("install", "--host", "cline", "--scope", "project")
        assert done.returncode == 0, done.stderr + done.stdout
        return str(done.stdout)

    def run(self, script: Sequence[Any], model: str = "mock-model", timeout: float = 120, **env: str) -> tuple[common.Run, MockModel]:
        run_env = dict(self.env, **env)
        try:
            with MockModel(script, model=model) as mock:
                auth = common.run([str(CLINE), "auth", "-p", "openai-compatible", "-k", "dummy", "-b", mock.base_url, "-m", model],
                                  self.project, run_env, 60)
                assert auth.returncode == 0, auth.stdout + auth.stderr
                result = common.run([str(CLINE), "--json", "-c", str(self.project), "please do the task"],
                                    self.project, run_env, timeout)
        finally:
            end_daemons(self.home)
        assert not result.timed_out, "Cline did not finish in %s s: %s" % (timeout, result.stderr[-2000:])
        assert not mock.errors, mock.errors
        return result, mock

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

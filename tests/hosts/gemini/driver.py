"""Run the real Gemini CLI (pinned in package.json beside this file) headless and offline,
one session per call, against a ScriptedModel.

Recipe (shared reference, measured-codex-gemini B1): `HOME` and `GEMINI_CLI_HOME` point at a
throw-away folder, `GOOGLE_GEMINI_BASE_URL` at the scripted model, `GEMINI_API_KEY` is any
value, the user settings select `gemini-api-key` auth and pin the model (the default `auto`
router would ask a side model first), telemetry and update checks are off, the workspace is
trusted by environment, and `--approval-mode yolo` registers the edit tools headless.

Standard library only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

import common
from common import write_json
from scripted_model import Call, Request, ScriptedModel, Text, Turn

__all__ = ["CLI", "CLI_VERSION", "Call", "Request", "Result", "Text", "Turn", "base_settings", "cli_missing_reason",
           "gemini_env", "run_gemini", "write_json"]

HERE = Path(__file__).resolve().parent
CLI = HERE / "node_modules" / ".bin" / "gemini"
CLI_VERSION: str = json.loads((HERE / "package.json").read_text(encoding="utf-8"))["dependencies"]["@google/gemini-cli"]
MODEL = "gemini-2.5-pro"
_SCRUB = ("GEMINI_", "GOOGLE_", "ENGRAMORY_", "OTEL_", "CLOUDSDK_")


def cli_missing_reason() -> Optional[str]:
    if shutil.which("node") is None:
        return "node is not on PATH: the Gemini suite needs Node.js to run the Gemini CLI"
    if not CLI.exists():
        return "Gemini CLI not installed at tests/hosts/gemini/node_modules: run `bash tests/hosts/gemini/ci-install.sh`"
    return None


def cli_version() -> str:
    done = subprocess.run([str(CLI), "--version"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, env=gemini_env(Path("/nonexistent"), "http://127.0.0.1:9"))
    return done.stdout.strip()


def base_settings() -> Dict[str, Any]:
    """The user settings every run needs (no hooks)."""
    return {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "model": {"name": MODEL},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    }


def gemini_env(home: Path, url: str, extra: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB)}
    env.update(
        HOME=str(home), GEMINI_CLI_HOME=str(home), GOOGLE_GEMINI_BASE_URL=url, GEMINI_API_KEY="scripted",
        GEMINI_CLI_TRUST_WORKSPACE="true", GEMINI_CLI_NO_RELAUNCH="1", NO_COLOR="1", TERM="dumb", CI="1",
    )
    if extra:
        env.update(extra)
    return env


@dataclass
class Result:
    returncode: Optional[int]
    stdout: str
    stderr: str
    duration: float
    requests: List[Request]
    server_errors: List[str] = field(default_factory=list)
    overruns: int = 0

    def turns(self) -> List[Request]:
        return [r for r in self.requests if r.kind == "turn"]

    def responses_after(self, turn: int) -> List[Dict[str, Any]]:
        """The functionResponse parts the CLI sent back for the calls of script turn `turn`
        (0-based): they arrive in the request for turn `turn + 1`."""
        turns = self.turns()
        assert len(turns) > turn + 1, "the CLI made %d model requests; turn %d has no answer\n%s" % (
            len(turns), turn, self.stderr[-3000:])
        return turns[turn + 1].function_responses()


def run_gemini(
    script: Sequence[Turn],
    home: Path,
    cwd: Path,
    prompt: str = "go",
    extra_env: Optional[Mapping[str, str]] = None,
    timeout: float = 120,
    approval: str = "yolo",
    side: Optional[Dict[str, Dict[str, Any]]] = None,
) -> Result:
    """One headless session. The caller writes `<home>/.gemini/settings.json` (base_settings()
    plus hooks) before; this only runs the CLI."""
    with ScriptedModel(list(script), side=dict(side or {})) as model:
        env = gemini_env(home, model.url, extra_env)
        argv = [str(CLI), "-p", prompt, "-o", "json", "--approval-mode", approval]
        start = time.monotonic()
        done = common.run(argv, cwd, env, timeout)  # returncode None: timed out (the whole process group is killed)
        duration = time.monotonic() - start
        return Result(done.returncode, done.stdout, done.stderr, duration, list(model.requests), list(model.errors),
                      model.overruns)

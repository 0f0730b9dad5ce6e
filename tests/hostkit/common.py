"""What every real-CLI host suite shares: the skip-or-fail rule for a missing host, running a
CLI in its own process group with a hard timeout, the engramory CLI as a user runs it, and
generated index text. Standard library only."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Sequence

import pytest

from engramory import hosts

ROOT = Path(__file__).resolve().parent.parent.parent

# Inherited variables that could point a CLI at a real account or config: ours, the XDG folders,
# the model vendors', the ones a host reads under another name (droid: FACTORY_; Copilot:
# GITHUB_, GH_), and every registry host's own prefix (its NAME upper-cased: QWEN_, KILO_, ...),
# so a new host is scrubbed without an edit here.
SCRUB = ("ENGRAMORY_", "XDG_", "OPENAI_", "ANTHROPIC_", "FACTORY_", "GITHUB_", "GH_") + tuple(
    name.upper().replace("-", "_") + "_" for name in hosts.names())


def require(reason: str | None) -> None:
    """Skip with `reason`, or fail when ENGRAMORY_REQUIRE_E2E is set (CI sets it)."""
    if reason is None:
        return
    if os.environ.get("ENGRAMORY_REQUIRE_E2E", "") not in ("", "0"):
        pytest.fail("ENGRAMORY_REQUIRE_E2E is set but " + reason, pytrace=False)
    pytest.skip(reason)


def base_env(home: Path, **extra: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUB)}
    env.update(HOME=str(home), NO_COLOR="1", XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local/share"), XDG_CACHE_HOME=str(home / ".cache"),
               XDG_STATE_HOME=str(home / ".local/state"))
    env.update(extra)
    return env


@dataclass
class Run:
    argv: List[str]
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool


def run(argv: Sequence[str], cwd: Path, env: Mapping[str, str], timeout: float = 120) -> Run:
    """Run a CLI in its own session; on timeout the whole process group is killed."""
    env = dict(env, PWD=str(cwd))  # some CLIs (opencode) take the project from $PWD, not the real cwd
    proc = subprocess.Popen(list(argv), cwd=str(cwd), env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return Run(list(argv), proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), False)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return Run(list(argv), None, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), True)


def engramory(args: Sequence[str], cwd: Path, home: Path, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m engramory ...` from this checkout, as a user in `cwd` with HOME=`home`."""
    e = dict(env) if env is not None else base_env(home)
    e["HOME"] = str(home)
    e["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "engramory", *args], cwd=str(cwd), env=e,
                          capture_output=True, text=True, timeout=120)


def index_text(lines: int, start: int = 0, newline: str = "\n") -> str:
    return "".join("- [note %d](note-%d.md) - hook %d%s" % (i, i, i, newline) for i in range(start, start + lines))


def write_json(path: Path, obj: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")
    return path


def read_trace(path: Path) -> List[Dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

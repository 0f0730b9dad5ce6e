from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOOK = ROOT / "hooks" / "engramory_index_guard.py"
CHECK = ROOT / "tools" / "engramory_check.py"

# Variables that change the guard's behaviour; tests start from a clean slate.
_ENGRAMORY_VARS = [v for v in os.environ if v.startswith("ENGRAMORY_") and v != "ENGRAMORY_REQUIRE_E2E"]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in _ENGRAMORY_VARS:
        monkeypatch.delenv(var, raising=False)


def index_text(n: int, width: int = 0) -> str:
    """An index of n pointer lines; `width` pads each line to at least that many characters."""
    lines = []
    for i in range(n):
        line = "- [note %d](note-%d.md) - hook %d" % (i, i, i)
        lines.append(line.ljust(width, "x") + "\n")
    return "".join(lines)


def payload(tool: str, path: Path | str, **tool_input: Any) -> dict[str, Any]:
    return {
        "session_id": "s",
        "transcript_path": "/dev/null",
        "cwd": str(Path(path).parent),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {"file_path": str(path), **tool_input},
        "tool_use_id": "t",
    }


def run_hook_subprocess(data: bytes | dict[str, Any], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-I", "-S", str(HOOK)], input=raw, capture_output=True, env=full_env, timeout=60
    )


def hook_output(proc: subprocess.CompletedProcess[bytes]) -> dict[str, Any] | None:
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.decode()
    if not out.strip():
        return None
    obj = json.loads(out)
    assert isinstance(obj, dict)
    return obj

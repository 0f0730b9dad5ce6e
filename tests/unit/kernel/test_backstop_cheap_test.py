"""The after-tool hooks' cheap test (automemory.unchanged): notices is imported only when
something the backstop watches moved since the session state last recorded it, and what the
hook answers is what notices answers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tests.test_hook_modules as probe
from engramory import automemory, notices
from tests.conftest import ROOT, index_text
from tests.unit.kernel.test_notices import Session

HOOK = ROOT / "hooks" / "engramory_hook.py"


@pytest.fixture
def s(tmp_path: Path) -> Session:
    return Session(tmp_path)


def settle(payload: dict[str, object], env: dict[str, str]) -> None:
    """Let notices look until its state holds everything as it is (its first review of a store
    makes the store's meta folder, which moves the folder's stamp once more)."""
    for _ in range(3):
        if automemory.unchanged(payload, env):
            return
        notices.after_tool_or_late(payload, env)
    raise AssertionError("notices' state never settled")


def test_unchanged_only_once_every_stamp_is_recorded_as_it_is(s: Session) -> None:
    env = s.env()
    payload = s.post_payload("ls")
    s.index.write_text(index_text(10))
    assert not automemory.unchanged(payload, env)  # no state yet: notices must look
    settle(payload, env)
    # unchanged means notices would say nothing and write nothing
    state = Path(automemory.state_path(env, payload["session_id"]) or "")
    kept = state.read_bytes()
    assert notices.after_tool_or_late(payload, env) == "" and state.read_bytes() == kept
    s.index.write_text(index_text(11))
    assert not automemory.unchanged(payload, env)  # the index moved
    settle(payload, env)
    (s.memory / "new-note.md").write_text("x\n")  # the store folder moved (a note created)
    assert not automemory.unchanged(payload, env)
    settle(payload, env)
    (s.memory / ".engramory.json").write_text("{}\n")  # the store config appeared
    assert not automemory.unchanged(payload, env)
    settle(payload, env)
    (s.memory / ".engramory.json").write_text('{"hardLines": 150}\n')  # changed in place: the folder did not move
    assert not automemory.unchanged(payload, env)
    assert automemory.unchanged(payload, env, configs=False)  # notices.post_tool watches no config
    assert notices.post_tool(payload, env) == ""
    settle(payload, env)
    other = dict(payload, session_id="another-session")
    assert not automemory.unchanged(other, env)  # another session has no state of its own


def test_no_known_index_is_unchanged_and_an_unusable_state_folder_is_not(s: Session) -> None:
    assert automemory.unchanged({"cwd": "relative"}, {"HOME": str(s.home), "TMPDIR": str(s.state)})
    s.index.write_text(index_text(10))
    env = dict(s.env(), CLAUDE_PLUGIN_DATA=str(s.state / "plugin"))
    (s.state / "plugin").mkdir(parents=True)
    (s.state / "plugin" / "backstop").write_text("a file, not a folder")  # no state can be kept
    notices.after_tool_or_late(s.post_payload("ls"), env)
    assert not automemory.unchanged(s.post_payload("ls"), env)  # notices looks every time, as before


def _hook(host: str, event: str, payload: dict[str, object], env: dict[str, str]) -> tuple[str, list[str]]:
    argv = [sys.executable, "-I", "-S", "-c", probe.PROBE, str(HOOK), host, event]
    done = subprocess.run(argv, input=json.dumps(payload).encode(), capture_output=True, env=env, timeout=60)
    marker = done.stderr.rfind(b"\nMODULES:")
    assert done.returncode == 0 and marker >= 0, done.stderr[-400:]
    return done.stdout.decode(), done.stderr[marker + 9:].decode().strip().split(",")


@pytest.mark.parametrize(("host", "event"), [("claude", "PostToolUse"), ("qwen", "PostToolUse"), ("codex", "PostToolUse")])
def test_a_quiet_after_tool_call_imports_no_notices_and_a_grown_index_is_still_reported(
        s: Session, host: str, event: str) -> None:
    env = s.env()
    s.index.write_text(index_text(150))
    payload = s.post_payload("ls")
    out, modules = _hook(host, event, payload, env)  # the session's first call records the stamps
    assert out == "" and "engramory.notices" in modules
    _hook(host, event, payload, env)  # its review made the store's meta folder: the folder moved once
    out, modules = _hook(host, event, payload, env)
    assert out == "" and "engramory.notices" not in modules and "engramory.config" not in modules
    s.index.write_text(index_text(240))  # a shell command grew it past the hard cap
    out, modules = _hook(host, event, payload, env)
    assert "engramory.notices" in modules
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "over its hard cap" in context and "240 lines" in context
    out, modules = _hook(host, event, payload, env)  # reported once, then quiet again
    assert out == "" and "engramory.notices" not in modules

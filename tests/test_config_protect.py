"""The store config protects itself (issue 10): caps above the host's window are reported by
the guard's nudge, `check` (WARN) and `doctor` (error); `.engramory.json` is read-only to the
agent unless the user sets "agentMayEdit"; a shell change to it, or a late write to an index,
is reported by the backstop; no engramory process blocks on a FIFO named `.engramory.json`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engramory import config, guard, notices
from engramory.commands import check as check_cmd
from engramory.doctor import run as doctor
from engramory.hosts import claude
from engramory.store import reader as store
from tests.conftest import ROOT, index_text, payload
from tests.unit.kernel.test_notices import Session, context_of

HOOKS = ROOT / "hooks"


@pytest.fixture
def s(tmp_path: Path) -> Session:
    return Session(tmp_path)


def decide(data: dict[str, Any]) -> dict[str, Any] | None:
    raw = claude.respond(json.dumps(data).encode(), {})[0]
    return json.loads(raw) if raw.strip() else None


def reason(out: dict[str, Any] | None) -> str:
    assert out is not None
    spec = out["hookSpecificOutput"]
    return str(spec.get("permissionDecisionReason") or spec.get("additionalContext"))


# -- read-only to the agent ---------------------------------------------------------------


@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_config_edit_denied_by_default(tmp_path: Path, tool: str) -> None:
    cfg = tmp_path / ".engramory.json"
    cfg.write_text('{"version": 1, "readOnly": ["user-*.md"]}')
    args = {"content": '{"version": 1}'} if tool == "Write" else {
        "old_string": ', "readOnly": ["user-*.md"]', "new_string": ""}
    out = decide(payload(tool, cfg, **args))
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "read-only to the agent" in reason(out) and '"agentMayEdit": true' in reason(out)


def test_creating_a_config_is_denied_too(tmp_path: Path) -> None:
    out = decide(payload("Write", tmp_path / ".engramory.json", content='{"version": 1, "hardLines": 100000}'))
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_user_allows_edits_with_agent_may_edit(tmp_path: Path) -> None:
    cfg = tmp_path / ".engramory.json"
    cfg.write_text('{"version": 1, "agentMayEdit": true}')
    assert config.protect_config(str(cfg)) is None
    assert decide(payload("Write", cfg, content='{"version": 1, "agentMayEdit": true, "warnLines": 120}')) is None
    cfg.write_text('{"version": 1, "agentMayEdit": "yes"}')  # invalid: the file is ignored, so protected
    assert config.protect_config(str(cfg)) is not None


def test_a_link_to_a_config_is_protected(tmp_path: Path) -> None:
    cfg = tmp_path / ".engramory.json"
    cfg.write_text('{"version": 1}')
    link = tmp_path / "settings-link.json"
    link.symlink_to(cfg)
    assert config.is_config_path(str(link)) and config.protect_config(str(link)) is not None
    assert not config.is_config_path(str(tmp_path / "engramory.json"))


# -- caps above the window ----------------------------------------------------------------


def test_caps_above_the_window_are_reported_everywhere(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".engramory.json").write_text('{\n  "version": 1,\n  "hardLines": 1000000000000000000000000000000\n}\n')
    index = tmp_path / "MEMORY.md"
    index.write_text(index_text(10))
    # the guard: a nudge on an edit it allows
    out = decide(payload("Write", index, content=index_text(20)))
    assert "no longer protects" in reason(out) and "'hardLines' in %s" % (tmp_path / ".engramory.json") in reason(out)
    # check: WARN (exit 1) with the reason

    assert check_cmd.main([str(index)]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("WARN") and "no longer protects" in captured.err
    # doctor: an error on the line of the key
    st = store.load(str(tmp_path))
    found = [f for f in doctor.run_checks(st, doctor.Context(git=False)) if f.code == "config-above-window"]
    assert [(f.severity, f.path, f.line) for f in found] == [("error", ".engramory.json", 3)]


def test_caps_from_the_environment_above_the_window(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text(index_text(10))
    caps, notes = config.caps_for(str(index), {"ENGRAMORY_HARD_BYTES": "99999999"})
    assert caps.hard_bytes == 99999999
    assert any("ENGRAMORY_HARD_BYTES = 99,999,999 bytes is above the 25,000 bytes" in n for n in notes)
    assert config.window_problems(caps, lines=10**6, units=10**9) == []  # a host with a bigger window


# -- no FIFO blocks anything --------------------------------------------------------------


def test_a_fifo_config_blocks_nothing(s: Session) -> None:
    os.mkfifo(s.memory / ".engramory.json")
    s.index.write_text(index_text(250))
    env = s.env()
    runs = [
        ([sys.executable, "-I", "-S", str(HOOKS / "engramory_index_guard.py")],
         payload("Write", s.index, content=index_text(300))),
        ([sys.executable, "-I", "-S", str(HOOKS / "engramory_post_tool.py")], s.post_payload()),
        ([sys.executable, "-I", "-S", str(HOOKS / "engramory_session_start.py")], s.start_payload()),
        ([sys.executable, "-m", "engramory", "check", str(s.index)], None),
        ([sys.executable, "-m", "engramory", "doctor", str(s.memory)], None),
    ]
    for argv, data in runs:
        proc = subprocess.run(argv, input=json.dumps(data).encode() if data else b"", capture_output=True,
                              env=dict(env, PYTHONPATH=str(ROOT)), timeout=30, cwd=str(ROOT))
        assert proc.returncode in (0, 1, 2), (argv, proc.stderr)
    # and the guard still denies the over-cap Write (the unreadable config is said, not obeyed)
    out = decide(payload("Write", s.index, content=index_text(300)))
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "not a regular file" in reason(out)


def test_read_bounded_refuses_devices(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="not a regular file"):
        config.read_bounded("/dev/zero", 10)
    with pytest.raises(OSError):
        config.read_bounded(str(tmp_path), 10)


# -- the backstop: shell changes to the config, late writes ----------------------------------


def test_shell_change_to_the_config_is_reported(s: Session) -> None:
    env = s.env()
    s.index.write_text(index_text(50))
    notices.session_start_and_seed(s.start_payload(), env)
    cfg = s.memory / ".engramory.json"
    cfg.write_text('{"version": 1, "hardLines": 100000}')  # as `printf > .engramory.json` would
    ctx = context_of(notices.after_tool_or_late(s.post_payload("printf x > .engramory.json"), env), "PostToolUse")
    assert ctx is not None and "after this Bash call, the store config %s was created" % cfg in ctx
    assert notices.after_tool_or_late(s.post_payload("echo unrelated"), env) == ""  # once
    cfg.write_text('{"version": 1}')
    ctx = context_of(notices.after_tool_or_late(s.post_payload("sed -i ..."), env), "PostToolUse")
    assert ctx is not None and "was changed" not in ctx and "%s changed" % cfg in ctx


def test_late_write_is_reported_on_the_next_prompt_once(s: Session) -> None:
    env = s.env()
    s.index.write_text(index_text(199))
    notices.session_start_and_seed(s.start_payload(), env)
    assert notices.after_tool_or_late(s.post_payload("sleep 2; cat more >> MEMORY.md &"), env) == ""
    with open(s.index, "a") as f:
        f.write(index_text(30))  # the background command writes after PostToolUse
    prompt = dict(s.start_payload(), hook_event_name="UserPromptSubmit", prompt="<task-notification>")
    ctx = context_of(notices.after_tool_or_late(prompt, env), "UserPromptSubmit")
    assert ctx is not None and "since the last check (a background command" in ctx and "over its hard cap: 229 lines" in ctx
    assert notices.after_tool_or_late(prompt, env) == ""  # once
    assert notices.after_tool_or_late(s.post_payload("echo unrelated"), env) == ""


def test_monitor_is_matched_by_the_shell_backstop() -> None:
    from engramory.hosts.claude import check as install_check
    from engramory.hosts.claude import install

    assert install_check.matcher_selects(install.SHELL_MATCHER, "Monitor")
    assert install_check.matcher_selects(install.SHELL_MATCHER, "Bash")
    assert not install_check.matcher_selects(install.SHELL_MATCHER, "Edit")
    assert not install_check.matcher_selects("edit|write", "Edit")


def test_guard_evaluate_calls_protect_config_first(tmp_path: Path) -> None:
    from engramory import edits

    req = edits.normalise("Write", {"file_path": str(tmp_path / ".engramory.json"), "content": "{}"}, str(tmp_path), [])
    assert req is not None
    decision = guard.evaluate(req, {})
    assert decision is not None and decision.action == guard.DENY


def test_a_fifo_index_or_state_blocks_nothing(s: Session) -> None:
    os.mkfifo(s.index)
    state = s.state / ("engramory-backstop-%d" % os.getuid())
    state.mkdir(parents=True, mode=0o700)
    os.mkfifo(state / (s.session_id + ".state"))
    env = dict(s.env(), PYTHONPATH=str(ROOT))
    for argv, data in [
        ([sys.executable, "-I", "-S", str(HOOKS / "engramory_post_tool.py")], s.post_payload()),
        ([sys.executable, "-I", "-S", str(HOOKS / "engramory_session_start.py")], s.start_payload()),
        ([sys.executable, "-m", "engramory", "check", str(s.index)], None),
        ([sys.executable, "-m", "engramory", "doctor", str(s.memory)], None),
    ]:
        proc = subprocess.run(argv, input=json.dumps(data).encode() if data else b"", capture_output=True,
                              env=env, timeout=30, cwd=str(ROOT))
        assert proc.returncode in (0, 1, 2, 66), (argv, proc.stderr)

"""The Cursor preToolUse hook: every payload dialect in the shared reference, as fixture
files with the expected decision, exact response and exit code, run through the adapter in
process and through the real entry script (`python -I -S hooks/engramory_cursor_guard.py`).
Also: the Claude Code hook fed Cursor-shaped input (Cursor's third-party hook loading)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engramory.hosts import cursor
from tests.conftest import ROOT, hook_output, index_text, run_hook_subprocess

FIXTURES = ROOT / "tests" / "fixtures" / "cursor"
CURSOR_HOOK = ROOT / "hooks" / "engramory_cursor_guard.py"
AGENT = "$AGENT"

FIXTURE_FILES = sorted(FIXTURES.glob("*.json"))


def _sub(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace("$ROOT", root)
    if isinstance(value, list):
        return [_sub(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _sub(v, root) for k, v in value.items()}
    return value


def _stdin(doc: dict[str, Any]) -> bytes:
    if "raw" in doc:
        return str(doc["raw"]).encode()
    how = doc.get("stdin", {})
    text = json.dumps(doc["payload"], indent=1 if how.get("crlf") else None)
    if how.get("crlf"):
        text = text.replace("\n", "\r\n") + "\r\n"
    raw = text.encode()
    return b"\xef\xbb\xbf" + raw if how.get("bom") else raw


def _setup(path: Path, tmp_path: Path) -> tuple[dict[str, Any], bytes, dict[str, str]]:
    root = str(tmp_path / "proj")
    doc = _sub(json.loads(path.read_text(encoding="utf-8")), root)
    for rel, text in doc["files"].items():
        target = Path(root) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode())
    return doc, _stdin(doc), dict(doc["env"])


def _run_subprocess(raw: bytes, env: dict[str, str], cwd: Path) -> tuple[str, str, int]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "CURSOR_"))}
    full.update(env)
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(CURSOR_HOOK)], input=raw, capture_output=True, env=full, cwd=cwd, timeout=60
    )
    return proc.stdout.decode(), proc.stderr.decode(), proc.returncode


def _check(expect: dict[str, Any], out: str, err: str, code: int) -> None:
    assert code == expect["exit"], err
    assert out.endswith("\n") or out == cursor.NO_OPINION
    response = json.loads(out)
    assert response.get("permission") in (None, "deny"), "the guard must never allow or ask"
    wanted = dict(expect["stdout"])
    if wanted.get("agent_message") == AGENT:
        agent = response.get("agent_message")
        assert isinstance(agent, str) and agent
        wanted["agent_message"] = agent
        for fragment in expect.get("agent_contains", []):
            assert fragment in agent
    else:
        agent = None
    assert response == wanted
    if "stderr" in expect:
        assert err == (expect["stderr"].replace(AGENT, agent) if agent else expect["stderr"])
    for fragment in expect.get("stderr_contains", []):
        assert fragment in err
    if code == 2:
        decision = "deny"
    elif not err:
        decision = "silent"
    elif err.startswith(cursor.TAG + ":"):
        decision = "unchecked"  # allowed, with a line saying why nothing was checked
    else:
        assert err.startswith("engramory: ")
        decision = "nudge"
    assert decision == expect["decision"]


def test_there_is_a_fixture_for_each_dialect() -> None:
    names = {p.stem for p in FIXTURE_FILES}
    for needed in [
        "write_file_path_content", "write_path_contents", "write_target_file_relative_to_cwd",
        "relative_path_workspace_root", "relative_path_cursor_project_dir", "strreplace_path_old_new",
        "strreplace_replace_all", "multiedit_edits", "no_tool_name_full_content", "no_tool_name_old_new",
        "bom_crlf_stdin", "applypatch_v4a", "applypatch_unified_diff", "delete_index", "malformed_stdin",
    ]:
        assert needed in names


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=[p.stem for p in FIXTURE_FILES])
def test_fixture_in_process(fixture: Path, tmp_path: Path) -> None:
    doc, raw, env = _setup(fixture, tmp_path)
    out, err, code = cursor.handle(raw, env)
    _check(doc["expect"], out + "\n", err, code)


@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=[p.stem for p in FIXTURE_FILES])
def test_fixture_through_the_entry_script(fixture: Path, tmp_path: Path) -> None:
    doc, raw, env = _setup(fixture, tmp_path)
    out, err, code = _run_subprocess(raw, env, tmp_path)
    _check(doc["expect"], out, err, code)


def test_deny_fixtures_leave_the_index_untouched(tmp_path: Path) -> None:
    doc, raw, env = _setup(FIXTURES / "applypatch_v4a.json", tmp_path)
    index = tmp_path / "proj" / ".memory" / "MEMORY.md"
    before = index.read_bytes()
    assert _run_subprocess(raw, env, tmp_path)[2] == 2
    assert index.read_bytes() == before


def test_a_move_into_the_index_is_judged_at_the_destination(tmp_path: Path) -> None:
    mem = tmp_path / "MEMORY.md"
    mem.write_text(index_text(8))
    (tmp_path / "draft.md").write_text(index_text(12))
    patch = "*** Begin Patch\n*** Update File: draft.md\n*** Move to: MEMORY.md\n*** End Patch\n"
    payload = {"hook_event_name": "preToolUse", "cwd": str(tmp_path), "tool_name": "ApplyPatch", "tool_input": {"patch": patch}}
    out, err, code = cursor.handle(json.dumps(payload).encode(), {"ENGRAMORY_HARD": "10"})
    assert code == 2 and "from 8 to 12 lines" in json.loads(out)["agent_message"]


def test_index_path_setting_guards_a_differently_named_index(tmp_path: Path) -> None:
    idx = tmp_path / "INDEX.md"
    idx.write_text(index_text(8))
    payload = {"tool_name": "Write", "tool_input": {"path": str(idx), "contents": index_text(12)}}
    env = {"ENGRAMORY_HARD": "10", "ENGRAMORY_INDEX_PATH": str(idx)}
    assert cursor.handle(json.dumps(payload).encode(), env)[2] == 2
    assert cursor.handle(json.dumps(payload).encode(), {"ENGRAMORY_HARD": "10"})[2] == 0


def test_a_path_the_os_refuses_is_allowed(tmp_path: Path) -> None:
    hostile = b'{"tool_name": "Write", "tool_input": {"file_path": "/' + (b"a/" * 5000) + b'MEMORY.md", "content": "x"}}'
    out, err, code = _run_subprocess(hostile, {}, tmp_path)
    assert (out, code) == ("{}\n", 0)
    assert "could not be read" in err


def test_internal_error_is_allowed_with_a_line_on_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import io

    from engramory import guard

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(guard, "evaluate", broken)
    raw = json.dumps({"tool_name": "Write", "tool_input": {"file_path": str(tmp_path / "MEMORY.md"), "content": "x"}})
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw.encode())))
    assert cursor.main() == 0
    captured = capsys.readouterr()
    assert captured.out == "{}\n"
    assert "internal error, allowed: RuntimeError('simulated bug')" in captured.err


def test_broken_bundle_copy_allows(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / CURSOR_HOOK.name).write_bytes(CURSOR_HOOK.read_bytes())
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(hooks / CURSOR_HOOK.name)], input=b"{}", capture_output=True, timeout=60
    )
    assert (proc.stdout, proc.returncode) == (b"{}\n", 0)
    assert b"cannot load the bundle" in proc.stderr


# --- the Claude Code hook under Cursor's third-party hook loading ---------------------------
# Cursor runs hooks from .claude/settings*.json with its own tool names and keys. Whether it
# honours a Claude-shaped answer there is unverified, so the Claude hook recognises Cursor's
# payloads and answers them in Cursor's own protocol (deny = exit 2 + Cursor JSON, else {}),
# which denies in either host. It must read every Cursor dialect and never crash on the rest.


def _cursorish(tmp_path: Path, tool: str | None, tool_input: dict[str, Any], **top: Any) -> dict[str, Any]:
    p: dict[str, Any] = {
        "conversation_id": "c", "generation_id": "g", "hook_event_name": "preToolUse", "cursor_version": "2.x",
        "workspace_roots": [str(tmp_path)], "cwd": str(tmp_path), "tool_use_id": "t", "tool_input": tool_input,
    }
    if tool is not None:
        p["tool_name"] = tool
    p.update(top)
    return p


def _claude_hook_on_cursor(proc: subprocess.CompletedProcess[bytes]) -> tuple[str, str]:
    """(decision, reason) from the Claude hook's answer to a Cursor payload."""
    out = json.loads(proc.stdout)
    if proc.returncode == 2:
        assert out["permission"] == "deny" and out["agent_message"] == proc.stderr.decode().strip()
        return "deny", out["agent_message"]
    assert proc.returncode == 0 and out == {}, (proc.returncode, out)
    return "silent", ""


@pytest.mark.parametrize(
    ("tool", "keys"),
    [
        ("StrReplace", {"path": "MEMORY.md", "old_string": "- [note 7](note-7.md) - hook 7\n",
                        "new_string": "- [note 7](note-7.md) - hook 7\n- a\n- b\n- c\n- d\n"}),
        ("Write", {"path": "MEMORY.md", "contents": index_text(12)}),
        (None, {"file_path": "MEMORY.md", "content": index_text(12)}),
        (None, {"target_file": "MEMORY.md", "file_text": index_text(12)}),
        ("MultiEdit", {"relative_path": "MEMORY.md", "edits": [{"old_string": "hook 0\n", "new_string": "hook 0\n- a\n- b\n- c\n- d\n"}]}),
    ],
)
def test_claude_hook_denies_cursor_shaped_growth(tmp_path: Path, tool: str | None, keys: dict[str, Any]) -> None:
    (tmp_path / "MEMORY.md").write_text(index_text(8))
    proc = run_hook_subprocess(_cursorish(tmp_path, tool, keys), {"ENGRAMORY_HARD": "10", "ENGRAMORY_WARN": "6"})
    decision, reason = _claude_hook_on_cursor(proc)
    assert decision == "deny"
    assert "from 8 to 12 lines" in reason


def test_claude_hook_reads_cursor_bom_crlf_and_project_dir(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text(index_text(8))
    p = _cursorish(tmp_path, "Write", {"path": "MEMORY.md", "contents": index_text(12)})
    del p["cwd"], p["workspace_roots"]
    raw = b"\xef\xbb\xbf" + json.dumps(p, indent=1).replace("\n", "\r\n").encode() + b"\r\n"
    proc = run_hook_subprocess(raw, {"ENGRAMORY_HARD": "10", "CURSOR_PROJECT_DIR": str(tmp_path)})
    assert _claude_hook_on_cursor(proc)[0] == "deny"


@pytest.mark.parametrize(
    ("tool", "keys"),
    [
        ("StrReplace", {"path": "MEMORY.md", "old_string": "- [note 7](note-7.md) - hook 7\n", "new_string": ""}),
        ("Delete", {"path": "MEMORY.md"}),
        ("Shell", {"command": "cat MEMORY.md"}),
        ("Write", {"path": "notes/x.md", "contents": index_text(40)}),
        ("Write", {"path": "MEMORY.md", "code_edit": "..."}),
        ("ApplyPatch", {"patch": "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n+- z\n*** End Patch\n"}),
    ],
)
def test_claude_hook_stays_silent_on_cursor_input_it_should_pass(
    tmp_path: Path, tool: str, keys: dict[str, Any]
) -> None:
    (tmp_path / "MEMORY.md").write_text(index_text(12))
    proc = run_hook_subprocess(_cursorish(tmp_path, tool, keys), {"ENGRAMORY_HARD": "20", "ENGRAMORY_WARN": "15"})
    assert _claude_hook_on_cursor(proc)[0] == "silent"
    assert b"Traceback" not in proc.stderr


def test_claude_hook_never_crashes_on_cursor_noise(tmp_path: Path) -> None:
    for raw in [b"\xef\xbb\xbf", b"\xef\xbb\xbf{\r\n}\r\n", b'{"tool_input": "not a dict"}', b'{"tool_name": 3}']:
        proc = run_hook_subprocess(raw)
        assert hook_output(proc) is None


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [("Shell", {"command": "ls"}), ("Write", {"path": "src/app.py", "contents": "x" * 1000}),
     ("StrReplace", {"path": "/elsewhere/MEMORY.txt", "old_string": "a", "new_string": "b"})],
)
def test_a_file_no_store_cares_about_imports_only_what_it_needs(
    tmp_path: Path, tool: str, tool_input: dict[str, Any]
) -> None:
    # Cursor runs the hook before every tool call (no matcher): the common case must stay a
    # process start plus a few string checks.
    code = (
        "import sys; before = set(sys.modules); sys.path.insert(0, %r);"
        "from engramory.hosts import cursor; out = cursor.handle(sys.stdin.buffer.read());"
        "print(repr((out, sorted(set(sys.modules) - before))))" % str(ROOT)
    )
    raw = json.dumps({"hook_event_name": "preToolUse", "cwd": str(tmp_path), "tool_name": tool, "tool_input": tool_input})
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code], input=raw.encode(), capture_output=True, check=True)
    out, loaded = eval(proc.stdout.decode())  # a tuple literal printed by the child
    assert out == ("{}", "", 0)
    ours = {m for m in loaded if m.startswith("engramory")}
    assert ours <= {"engramory", "engramory.hosts", "engramory.hosts.cursor", "engramory.jsonlite",
                    "engramory.scope", "engramory.edits"}
    assert not {"json", "re", "enum", "fnmatch", "pathlib"} & set(loaded), loaded


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=12), kids, max_size=4),
    max_leaves=12,
)
_keys = st.sampled_from(
    ["file_path", "path", "target_file", "relative_path", "content", "contents", "file_text", "old_string",
     "new_string", "replace_all", "edits", "patch", "input", "working_directory"]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.sampled_from([None, "Write", "StrReplace", "Edit", "MultiEdit", "ApplyPatch", "Delete", "Shell", 7]),
    st.dictionaries(_keys, _json | st.just("MEMORY.md") | st.just("*** Begin Patch\n*** End Patch\n"), max_size=5),
    st.sampled_from([None, "preToolUse", "PreToolUse", "beforeReadFile"]),
)
def test_any_payload_gets_a_valid_answer_and_never_an_allow(
    tmp_path: Path, tool: Any, tool_input: dict[str, Any], event: Any
) -> None:
    (tmp_path / "MEMORY.md").write_text(index_text(12))
    payload: dict[str, Any] = {"cwd": str(tmp_path), "tool_input": tool_input}
    if tool is not None:
        payload["tool_name"] = tool
    if event is not None:
        payload["hook_event_name"] = event
    out, err, code = cursor.handle(json.dumps(payload).encode(), {"ENGRAMORY_HARD": "10"})
    response = json.loads(out)
    assert code in (0, 2)
    assert response.get("permission") == ("deny" if code == 2 else None)
    assert (tmp_path / "MEMORY.md").read_text() == index_text(12)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_get_a_valid_answer(raw: bytes) -> None:
    out, err, code = cursor.handle(raw, {})
    assert code in (0, 2) and isinstance(json.loads(out), dict)


def test_claude_hook_judges_cursor_applypatch_through_the_cursor_adapter(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text(index_text(8))
    patch = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n hook 7\n+- a\n+- b\n+- c\n+- d\n*** End Patch\n"
    patch = patch.replace(" hook 7", " - [note 7](note-7.md) - hook 7")
    proc = run_hook_subprocess(_cursorish(tmp_path, "ApplyPatch", {"patch": patch}), {"ENGRAMORY_HARD": "10"})
    decision, reason = _claude_hook_on_cursor(proc)
    assert decision == "deny" and "from 8 to 12 lines" in reason

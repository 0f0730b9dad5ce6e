"""Stale writes on the real Gemini CLI (pinned in package.json), offline (issue 22, "Stale
writes, per host"): the agent reads MEMORY.md with read_file, another process appends a pointer
line, then the agent writes from what it read. Each case runs without the guard and with it
installed (`engramory install --host gemini`), and asserts the exact bytes on disk afterwards.

What Gemini CLI 0.61.0 does: it has no staleness check (its bundle mentions an external change
only in the LLM edit fixer's prompt, off by default). `write_file` overwrites the file with the
agent's content, dropping the other writer's line, and tells the model it "overwrote" it,
echoing the new content; `replace` matches against the file as it is and keeps the line. It
has no patch tool.

With the guard installed, its AfterTool hook sees read_file and records what the agent read
(engramory.stale), so the stale write_file is refused by the guard, with the lines it would
drop, in the model's next request; after one more read the same write goes through. The
stale replace keeps the line, and the guard lets it through as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
import stale
from driver import Call, Result, Turn, base_settings, run_gemini, write_json
from test_gemini_real import blocked, install, not_blocked, response

pytestmark = pytest.mark.e2e

GUARD = pytest.mark.parametrize("guard", [False, True], ids=["bare", "guarded"])


def agent_call(case: str, index: Path) -> Call:
    if case == "write":
        return Call("write_file", {"file_path": str(index), "content": stale.FULL_WRITE})
    return Call("replace", {"file_path": str(index), "instruction": "revise note 2", "old_string": stale.OLD_LINE,
                            "new_string": stale.NEW_LINE})


def stale_case(home: Path, work: Path, case: str, guard: bool, silent: bool = True,
               then: Optional[List[Turn]] = None) -> tuple[stale.Measured, Result]:
    """read_file, the foreign append (just before the model's next answer), the agent's call
    (and the turns `then`). `silent`: the guard, if installed, refuses nothing."""
    index = work / "memory" / "MEMORY.md"
    stale.seed(index)
    trace = work.parent / "trace.jsonl"
    if guard:
        install(home, work)
    script = [Turn([Call("read_file", {"file_path": str(index)})]),
              Turn([agent_call(case, index)], before=lambda _request: stale.append_foreign(index)), *(then or [])]
    result = run_gemini(script, home, work, extra_env={"ENGRAMORY_TRACE_FILE": str(trace)})
    assert result.returncode == 0, result.stderr[-2000:]
    outputs: List[Dict[str, Any]] = [response(result, 0), response(result, 1)]
    assert outputs[0] == {"output": stale.SEED}  # the read showed the index before the foreign line
    measured = stale.Measured(index.read_bytes(), case, [str(o.get("output", o.get("error", o))) for o in outputs])
    if silent:
        stale.assert_guard_silent(measured)
        assert "error" not in outputs[1], outputs[1]
        stale.assert_predicted(trace, index, guard, case)
    return measured, result


def tool_names(result: Result) -> List[str]:
    first: Optional[Any] = result.turns()[0].body.get("tools") if result.turns() else None
    return [str(d.get("name")) for t in first or [] for d in t.get("functionDeclarations") or []]


def test_stale_write_file_host_drops_the_foreign_line(gemini_cli: Path, home: Path, work: Path) -> None:
    """host drops the foreign line: write_file puts what the agent read plus its line over it."""
    index = work / "memory" / "MEMORY.md"
    m, result = stale_case(home, work, "write", False)
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    assert m.seen == "Successfully overwrote file: %s. Here is the updated code:\n%s" % (index, stale.FULL_WRITE)
    assert not [t for t in tool_names(result) if "patch" in t]  # no case 3 on this host


STALE_DENY = (
    "Tool execution blocked: engramory blocked this write_file: %s changed since this session last read it: "
    "another writer added 1 line (line 6: \"- [foreign](foreign.md) - added by another session\"), and this "
    "write_file would drop it. Read MEMORY.md again and redo your change on what is there now. Nothing was "
    "written; compacting is allowed after that read.")


def test_stale_write_file_guard_refuses_and_the_same_write_after_a_read_goes_through(
        gemini_cli: Path, home: Path, work: Path) -> None:
    """guard refuses: the stale write_file would drop the foreign line; the model reads the
    reason in its next request, the file is as the other writer left it. One more read_file
    (recorded by the AfterTool hook) and the same write_file is the agent's informed choice:
    applied."""
    index = work / "memory" / "MEMORY.md"
    on_disk: List[bytes] = []
    then = [Turn([Call("read_file", {"file_path": str(index)})], before=lambda _r: on_disk.append(index.read_bytes())),
            Turn([agent_call("write", index)])]
    m, result = stale_case(home, work, "write", True, silent=False, then=then)
    assert on_disk == [stale.READ_FOREIGN.encode()]  # refused: nothing of the agent's landed
    assert stale.outcome(on_disk[0], "write") == stale.REFUSED
    assert m.seen == STALE_DENY % index
    assert blocked(result, 1) == STALE_DENY % index
    assert response(result, 2) == {"output": stale.READ_FOREIGN}  # the read it was asked for
    assert "Successfully overwrote file" in not_blocked(result, 3)
    assert index.read_bytes() == stale.FULL_WRITE.encode()


def test_a_fresh_write_file_with_the_guard_goes_through(gemini_cli: Path, home: Path, work: Path) -> None:
    """The control: read, then write_file, nothing else writing in between: applied."""
    index = work / "memory" / "MEMORY.md"
    stale.seed(index)
    install(home, work)
    script = [Turn([Call("read_file", {"file_path": str(index)})]), Turn([agent_call("write", index)])]
    result = run_gemini(script, home, work)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Successfully overwrote file" in not_blocked(result, 1)
    assert index.read_bytes() == stale.fresh_result("write")


@GUARD
def test_stale_replace_host_keeps_the_foreign_line(gemini_cli: Path, home: Path, work: Path, guard: bool) -> None:
    """host keeps the foreign line: replace matches the line it names in the file as it is."""
    index = work / "memory" / "MEMORY.md"
    m, _ = stale_case(home, work, "edit", guard)
    assert m.outcome == stale.KEPT
    assert m.on_disk == stale.EDITED_KEPT.encode()
    assert m.seen == "Successfully modified file: %s (1 replacements). Here is the updated code:\n%s" % (
        index, stale.EDITED_KEPT)


# --- the whole index written through run_shell_command ------------------------------------------
# Measured on 0.61.0: after a stale read_file, a heredoc or printf write of the whole index runs as
# with no other writer (the foreign line dropped), bare. Guarded, engramory.shellwrite predicts
# its bytes and the core's stale rule refuses it, as it refuses the stale write_file.

SHELL_TOOL = "run_shell_command write (heredoc, printf or echo)"
SHELL_WRITES = {
    "cat-heredoc": lambda path: "cat > %s <<'EOF'\n%sEOF" % (path, stale.FULL_WRITE),
    "printf": lambda path: "printf '%%s\\n' %s > %s" % (
        " ".join('"%s"' % line for line in stale.FULL_WRITE.splitlines()), path),
}


@GUARD
@pytest.mark.parametrize("how", sorted(SHELL_WRITES))
def test_stale_shell_write_of_the_whole_index(gemini_cli: Path, home: Path, work: Path, guard: bool, how: str) -> None:
    """host drops the foreign line: `cat > MEMORY.md <<'EOF'` or `printf ... > MEMORY.md` after a
    stale read_file puts what the agent read plus its line over the index. Guarded: refused with
    the stale rule's message in the model's next request, the other writer's line kept; after one
    more read_file the same shell write is the agent's informed choice, and goes through."""
    index = work / "memory" / "MEMORY.md"
    stale.seed(index)
    if guard:
        install(home, work)
    call = Call("run_shell_command", {"command": SHELL_WRITES[how](index), "description": "rewrite the index"})
    on_disk: List[bytes] = []
    script = [Turn([Call("read_file", {"file_path": str(index)})]),
              Turn([call], before=lambda _request: stale.append_foreign(index))]
    if guard:
        script += [Turn([Call("read_file", {"file_path": str(index)})], before=lambda _r: on_disk.append(index.read_bytes())),
                   Turn([call])]
    result = run_gemini(script, home, work)
    assert result.returncode == 0, result.stderr[-2000:]
    assert response(result, 0) == {"output": stale.SEED}
    if not guard:
        assert index.read_bytes() == stale.FULL_WRITE.encode()
        assert stale.outcome(index.read_bytes(), "write") == stale.DROPPED
        assert "error" not in response(result, 1), response(result, 1)
        return
    assert on_disk == [stale.READ_FOREIGN.encode()]  # refused: nothing of the agent's landed
    assert blocked(result, 1) == "Tool execution blocked: " + stale.stale_message(SHELL_TOOL, str(index))
    assert response(result, 2) == {"output": stale.READ_FOREIGN}
    not_blocked(result, 3)
    assert index.read_bytes() == stale.FULL_WRITE.encode()


def test_a_hook_on_read_file_sees_the_session_and_the_content_read(gemini_cli: Path, home: Path, work: Path) -> None:
    """What a staleness check in the guard could know here: BeforeTool and AfterTool fire for
    read_file (matcher `read_file`), with the session id the later write_file carries; the
    AfterTool payload holds the text the model was shown (tool_response.llmContent), and the
    write's AfterTool a diff that shows the foreign line going (returnDisplay, for the user)."""
    log = work.parent / "probe.jsonl"
    hook = [{"matcher": "read_file|write_file", "hooks": [{"type": "command", "command": stale.probe_command(log)}]}]
    settings = base_settings()
    settings["hooks"] = {"BeforeTool": hook, "AfterTool": hook}
    write_json(home / ".gemini" / "settings.json", settings)
    index = work / "memory" / "MEMORY.md"
    stale.seed(index)
    script = [Turn([Call("read_file", {"file_path": str(index)})]),
              Turn([agent_call("write", index)], before=lambda _request: stale.append_foreign(index))]
    assert run_gemini(script, home, work).returncode == 0
    payloads = stale.probed(log)
    assert [(p["hook_event_name"], p["tool_name"]) for p in payloads] == [
        ("BeforeTool", "read_file"), ("AfterTool", "read_file"), ("BeforeTool", "write_file"), ("AfterTool", "write_file")]
    assert len({p["session_id"] for p in payloads}) == 1
    assert payloads[1]["tool_response"]["llmContent"] == stale.SEED
    assert "-" + stale.FOREIGN in payloads[3]["tool_response"]["returnDisplay"]["fileDiff"]


def test_an_install_without_read_file_after_tool_fails_check_and_reinstall_upgrades_it(home: Path, work: Path) -> None:
    """An install from before the stale rule (AfterTool without read_file) records no read, so
    --check says so; install again puts read_file in and --check passes."""
    import json

    from test_gemini_real import engramory

    install(home, work)
    settings = home / ".gemini" / "settings.json"
    data = json.loads(settings.read_text(encoding="utf-8"))
    (group,) = [g for g in data["hooks"]["AfterTool"] if "engramory" in json.dumps(g)]
    assert group["matcher"] == "write_file|replace|run_shell_command|read_file"
    group["matcher"] = "write_file|replace|run_shell_command"
    settings.write_text(json.dumps(data, indent=2), encoding="utf-8")
    check = engramory(home, work, "install", "--host", "gemini", "--check")
    assert check.returncode == 1
    assert ("AfterTool matcher 'write_file|replace|run_shell_command' does not match read_file: those reads are not "
            "recorded, so a stale write_file is not refused") in check.stdout
    install(home, work)
    data = json.loads(settings.read_text(encoding="utf-8"))
    (group,) = [g for g in data["hooks"]["AfterTool"] if "engramory" in json.dumps(g)]
    assert group["matcher"] == "write_file|replace|run_shell_command|read_file"
    check = engramory(home, work, "install", "--host", "gemini", "--check")
    assert check.returncode == 0, check.stdout

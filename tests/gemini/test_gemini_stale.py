"""Stale writes on the real Gemini CLI (pinned in package.json), offline (issue 22, "Stale
writes, per host"): the agent reads MEMORY.md with read_file, another process appends a pointer
line, then the agent writes from what it read. Each case runs without the guard and with it
installed (`engramory install --host gemini`), and asserts the exact bytes on disk afterwards.

What Gemini CLI 0.61.0 does: it has no staleness check (its bundle mentions an external change
only in the LLM edit fixer's prompt, off by default). `write_file` overwrites the file with the
agent's content, dropping the other writer's line, and tells the model it "overwrote" it,
echoing the new content; `replace` matches against the file as it is and keeps the line. It
has no patch tool. The guard, installed, judged both calls and predicted exactly those bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
import stale
from driver import Call, Result, Turn, base_settings, run_gemini, write_json
from test_gemini_real import install, response

pytestmark = pytest.mark.e2e

GUARD = pytest.mark.parametrize("guard", [False, True], ids=["bare", "guarded"])


def agent_call(case: str, index: Path) -> Call:
    if case == "write":
        return Call("write_file", {"file_path": str(index), "content": stale.FULL_WRITE})
    return Call("replace", {"file_path": str(index), "instruction": "revise note 2", "old_string": stale.OLD_LINE,
                            "new_string": stale.NEW_LINE})


def stale_case(home: Path, work: Path, case: str, guard: bool) -> tuple[stale.Measured, Result]:
    """read_file, the foreign append (just before the model's next answer), the agent's call."""
    index = work / "memory" / "MEMORY.md"
    stale.seed(index)
    trace = work.parent / "trace.jsonl"
    if guard:
        install(home, work)
    script = [Turn([Call("read_file", {"file_path": str(index)})]),
              Turn([agent_call(case, index)], before=lambda _request: stale.append_foreign(index))]
    result = run_gemini(script, home, work, extra_env={"ENGRAMORY_TRACE_FILE": str(trace)})
    assert result.returncode == 0, result.stderr[-2000:]
    outputs: List[Dict[str, Any]] = [response(result, 0), response(result, 1)]
    assert outputs[0] == {"output": stale.SEED}  # the read showed the index before the foreign line
    measured = stale.Measured(index.read_bytes(), case, [str(o.get("output", o)) for o in outputs])
    stale.assert_guard_silent(measured)
    assert "error" not in outputs[1], outputs[1]
    stale.assert_predicted(trace, index, guard, case)
    return measured, result


def tool_names(result: Result) -> List[str]:
    first: Optional[Any] = result.turns()[0].body.get("tools") if result.turns() else None
    return [str(d.get("name")) for t in first or [] for d in t.get("functionDeclarations") or []]


@GUARD
def test_stale_write_file_host_drops_the_foreign_line(gemini_cli: Path, home: Path, work: Path, guard: bool) -> None:
    """host drops the foreign line: write_file puts what the agent read plus its line over it."""
    index = work / "memory" / "MEMORY.md"
    m, result = stale_case(home, work, "write", guard)
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    assert m.seen == "Successfully overwrote file: %s. Here is the updated code:\n%s" % (index, stale.FULL_WRITE)
    assert not [t for t in tool_names(result) if "patch" in t]  # no case 3 on this host


@GUARD
def test_stale_replace_host_keeps_the_foreign_line(gemini_cli: Path, home: Path, work: Path, guard: bool) -> None:
    """host keeps the foreign line: replace matches the line it names in the file as it is."""
    index = work / "memory" / "MEMORY.md"
    m, _ = stale_case(home, work, "edit", guard)
    assert m.outcome == stale.KEPT
    assert m.on_disk == stale.EDITED_KEPT.encode()
    assert m.seen == "Successfully modified file: %s (1 replacements). Here is the updated code:\n%s" % (
        index, stale.EDITED_KEPT)


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

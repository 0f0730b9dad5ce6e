"""Stale writes on the real Claude Code CLI 2.1.332, offline (issue 22, "Stale writes, per
host"): the agent Reads MEMORY.md, another process appends a pointer line when the model's
next request arrives, and the agent then writes from what it read. Each case runs without the
guard and with it installed (`engramory install --scope user`, ENGRAMORY_TRACE_FILE set), and
asserts the exact bytes on disk afterwards, what the model was sent, and what the guard judged.

What Claude Code does (measured here):
1. Write of the content it read plus one line: the host refuses it itself, before any hook
   ("File has been modified since read, either by the user or by a linter. Read it again
   before attempting to write it."); the model gets that as an error tool result in its next
   request, and the other writer's line survives. With the guard installed it never ran for
   that call (no trace entry): the host's refusal needs no help.
2. Edit of a line it read: applied to the file as it is now, so the other writer's line is
   kept; the guard, installed, judged it and predicted exactly those bytes, refusing nothing.
3. Patch: Claude Code has no patch tool (none is offered to the model), so there is no third
   case; a whole-file rewrite can only be a Write (case 1).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List, Sequence

import pytest
import stale  # noqa: E402
from harness import Result, RunClaude, Text, ToolUse
from test_installed_claude import install, request_text, traced

pytestmark = pytest.mark.e2e

GUARD = pytest.mark.parametrize("guard", [False, True], ids=["bare", "guarded"])
HOST_REFUSAL = ("File has been modified since read, either by the user or by a linter. Read it again before "
                "attempting to write it.")
SHELL_WRITE_TOOL = "Bash write (heredoc, printf or echo)"  # engramory.hosts.claude's label
PATCH_TOOLS = ("apply_patch", "ApplyPatch", "patch", "MultiEdit")


def agent_call(case: str, index: Path) -> ToolUse:
    if case == "write":
        return ToolUse("Write", {"file_path": str(index), "content": stale.FULL_WRITE})
    if case == "shell":  # the whole index rewritten through Bash from what the agent read
        return ToolUse("Bash", {"command": "cat > '%s' <<'EOF'\n%sEOF" % (index, stale.FULL_WRITE), "description": "rewrite"})
    return ToolUse("Edit", {"file_path": str(index), "old_string": stale.OLD_LINE, "new_string": stale.NEW_LINE})


def run_case(claude: RunClaude, home: Path, project: Path, tmp_path: Path, case: str, guard: bool,
             foreign: bool = True) -> tuple[Result, stale.Measured, List[Any]]:
    """Read, the other writer (when `foreign`), the agent's `case`, then "done"."""
    index = stale.seed(project / "memory" / "MEMORY.md")
    trace = tmp_path / "trace.jsonl"
    if guard:
        install(home)
    write: Sequence[Any] = [agent_call(case, index)]
    turns: List[Any] = [ToolUse("Read", {"file_path": str(index)})]
    turns.append(stale.after_foreign(index, lambda: write) if foreign else write)
    turns.append(Text("done"))
    result = claude(turns, env={"ENGRAMORY_TRACE_FILE": str(trace)}, allowed_tools=["Bash"] if case == "shell" else None)
    results = result.tool_results()
    assert [r.tool_name for r in results] == ["Read", agent_call(case, index).name], result.describe()
    assert not results[0].is_error and "note 4" in results[0].text  # the read showed the seeded index
    assert stale.FOREIGN.strip() not in results[0].text
    measured = stale.Measured(index.read_bytes(), "write" if case == "shell" else case, [r.text for r in results],
                              left=stale.READ_FOREIGN if foreign else stale.SEED)
    return result, measured, traced(trace).get(str(index), [])


def predicted(entries: List[Any]) -> List[Any]:
    return [bytes.fromhex(e["after"]) if isinstance(e.get("after"), str) else None for e in entries]


@GUARD
def test_stale_write_host_refuses_and_the_model_reads_why(claude: RunClaude, e2e_home: Path, e2e_project: Path,
                                                          tmp_path: Path, guard: bool) -> None:
    result, m, judged = run_case(claude, e2e_home, e2e_project, tmp_path, "write", guard)
    assert m.outcome == stale.REFUSED
    assert m.on_disk == stale.READ_FOREIGN.encode()  # the other writer's line survived
    write = result.tool_results()[1]
    assert write.is_error and HOST_REFUSAL in write.text, write.text
    assert HOST_REFUSAL in request_text(result, 2)  # the host's refusal reached the model's next request
    stale.assert_guard_silent(m)
    assert "engramory" not in write.text
    assert judged == []  # refused before PreToolUse: the guard, installed or not, never ran for it


@GUARD
def test_stale_edit_host_keeps_the_foreign_line(claude: RunClaude, e2e_home: Path, e2e_project: Path,
                                                tmp_path: Path, guard: bool) -> None:
    result, m, judged = run_case(claude, e2e_home, e2e_project, tmp_path, "edit", guard)
    assert m.outcome == stale.KEPT
    assert m.on_disk == stale.EDITED_KEPT.encode()
    edit = result.tool_results()[1]
    assert not edit.is_error, edit.text
    stale.assert_guard_silent(m)
    # installed, the guard judged the Edit against the disk as the other writer left it and
    # predicted the host's bytes (the foreign line kept): nothing for it to refuse
    assert predicted(judged) == ([stale.EDITED_KEPT.encode()] if guard else [])


@GUARD
def test_stale_shell_rewrite_host_drops_and_the_guard_refuses(claude: RunClaude, e2e_home: Path, e2e_project: Path,
                                                              tmp_path: Path, guard: bool) -> None:
    """A heredoc rewrite of the whole index through Bash, from a stale Read: the host's
    staleness check is its Write tool's, so, bare, the shell drops the other writer's line.
    Installed, PostToolUse on Read records what the agent was shown and the PreToolUse guard
    (Bash in its matcher) refuses the rewrite by the stale-write rule, the reason in the model's
    next request, the other writer's line kept."""
    result, m, _ = run_case(claude, e2e_home, e2e_project, tmp_path, "shell", guard)
    write = result.tool_results()[1]
    if not guard:
        assert not write.is_error, write.text
        assert m.outcome == stale.DROPPED
        assert m.on_disk == stale.FULL_WRITE.encode()
        return
    assert write.is_error, write.text
    refusal = stale.stale_message(SHELL_WRITE_TOOL, str(e2e_project / "memory" / "MEMORY.md"))
    assert refusal in write.text, write.text
    assert json.dumps(refusal, ensure_ascii=False)[1:-1] in request_text(result, 2)  # in the model's next request
    assert m.outcome == stale.REFUSED
    assert m.on_disk == stale.READ_FOREIGN.encode()


def test_no_patch_tool_is_offered(claude: RunClaude, e2e_home: Path, e2e_project: Path, tmp_path: Path) -> None:
    """Case 3 does not exist on Claude Code: no patch tool among the tools the model is offered
    (Write and Edit are the only file writers)."""
    result, _m, _ = run_case(claude, e2e_home, e2e_project, tmp_path, "edit", False, foreign=False)
    names = result.turn_requests()[0].tool_names
    assert "Write" in names and "Edit" in names, names
    assert not [n for n in names if n in PATCH_TOOLS or "patch" in n.lower()], names


@pytest.mark.parametrize("case", ["write", "edit"])
def test_control_with_no_foreign_write_the_call_applies(claude: RunClaude, e2e_home: Path, e2e_project: Path,
                                                        tmp_path: Path, case: str) -> None:
    """The same calls with nothing written between the read and the write: applied, so the
    refusal above is the host's staleness check and nothing else."""
    result, m, _ = run_case(claude, e2e_home, e2e_project, tmp_path, case, False, foreign=False)
    assert m.on_disk == stale.fresh_result(case), json.dumps(result.tool_results()[1].text)

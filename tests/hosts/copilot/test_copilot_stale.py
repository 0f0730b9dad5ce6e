"""Stale writes on the real GitHub Copilot CLI (pinned in package.json), offline (issue 22,
"Stale writes, per host"): the agent views MEMORY.md, another process appends a pointer line,
then the agent writes from what it read. Each case runs without the guard and with it
installed (`engramory install --host copilot`), and asserts the exact bytes on disk afterwards.

What Copilot CLI 1.0.102 does: it has no staleness check at all. `edit` and `apply_patch`
match their strings against the file as it is when they run, so the foreign line survives.
`create` never overwrites an existing file (stale or not), so on the chat-completions wire the
agent has no full-file write. On the Responses wire (codex model ids) its only file tool is
`apply_patch`, and a patch that deletes the file and adds it back in one go is applied: that
full-file rewrite drops the other writer's line.

With the guard installed, its matcherless postToolUse records what `view` showed the session
(engramory.stale) and preToolUse passes the session, so that rewrite is denied by the guard,
with the line it would drop; after one more view the very same patch goes through. The edit
and the Update patch keep the line and the guard lets them through, having predicted exactly
the bytes Copilot writes (it applies a patch's operations one by one)."""

from __future__ import annotations

from pathlib import Path

import common
import pytest
import stale
from copilot_driver import Copilot
from hostbase import Call
from mock_responses import function_call, patch_call

GUARD = pytest.mark.parametrize("guard", [False, True], ids=["bare", "guarded"])


class StaleCopilot(Copilot):
    """Copilot with its read tool (`view`) named, for the shared stale runner."""

    def read_call(self, path: str) -> Call:
        return ("view", {"path": path})


@pytest.fixture
def copilot(tmp_path: Path, copilot_cli: Path) -> StaleCopilot:
    return StaleCopilot(tmp_path)


def index_of(copilot: Copilot) -> Path:
    return copilot.project / "memory" / "MEMORY.md"


def patch_case(copilot: Copilot, case: str, guard: bool) -> stale.Measured:
    """The stale case on the Responses wire: view, foreign append, then the agent's patch
    ("patch": an Update of the line it read; "rewrite": Delete + Add of the whole file)."""
    index = index_of(copilot)
    trace = copilot.trace_file()
    if guard:
        copilot.install()
    stale.seed(index)
    text = stale.case_patch(case, str(index))
    result, model = copilot.run_responses([[function_call("view", {"path": str(index)})],
                                           stale.after_foreign(index, lambda: [patch_call(text)])],
                                          ENGRAMORY_TRACE_FILE=str(trace))
    copilot.assert_completed(result)
    measured = stale.Measured(index.read_bytes(), case, model.tool_outputs())
    stale.assert_guard_silent(measured)
    stale.assert_predicted(trace, index, guard, case)
    return measured


@GUARD
def test_stale_create_host_refuses_because_create_never_overwrites(copilot: StaleCopilot, guard: bool) -> None:
    """host refuses, though not for staleness: create refuses any existing path (the control
    below shows it refuses without a foreign write too). The guard predicts that refusal."""
    index = index_of(copilot)
    m = stale.measure(copilot, "write", index, guard, predicted=[None])
    assert m.outcome == stale.REFUSED
    assert m.on_disk == stale.READ_FOREIGN.encode()
    assert m.seen == "Path %s already exists as a file. Use `view` to check contents then edit it." % index


@GUARD
def test_stale_edit_host_keeps_the_foreign_line(copilot: StaleCopilot, guard: bool) -> None:
    """host keeps the foreign line: edit replaces the line it names in the file as it is."""
    index = index_of(copilot)
    m = stale.measure(copilot, "edit", index, guard)
    assert m.outcome == stale.KEPT
    assert m.on_disk == stale.EDITED_KEPT.encode()
    assert m.seen == "File %s updated with changes." % index


@GUARD
def test_stale_apply_patch_host_keeps_the_foreign_line(copilot: StaleCopilot, guard: bool) -> None:
    """host keeps the foreign line: the Update's context matches the file as it is."""
    m = patch_case(copilot, "patch", guard)
    assert m.outcome == stale.KEPT
    assert m.on_disk == stale.EDITED_KEPT.encode()
    assert m.seen == "Modified 1 file(s): %s" % index_of(copilot)


def test_stale_rewrite_patch_host_drops_the_foreign_line(copilot: StaleCopilot) -> None:
    """host drops the foreign line: Delete File + Add File of the index in one apply_patch
    writes what the agent read plus its line; nothing checks the file changed since the view."""
    index = index_of(copilot)
    m = patch_case(copilot, "rewrite", False)
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    assert m.seen == "Added 1 file(s): %s\nDeleted 1 file(s): %s" % (index, index)


def test_stale_rewrite_patch_guard_refuses_and_the_same_patch_after_a_view_goes_through(copilot: StaleCopilot) -> None:
    """guard refuses: postToolUse of the view recorded what the session saw, so the Delete + Add
    that would drop the foreign line is denied with it; after one more view the very same
    patch goes through."""
    index = index_of(copilot)
    copilot.install()
    stale.seed(index)
    text = stale.case_patch("rewrite", str(index))
    between: list[bytes] = []

    def review(_body: object) -> list[object]:
        between.append(index.read_bytes())
        return [function_call("view", {"path": str(index)})]

    result, model = copilot.run_responses([[function_call("view", {"path": str(index)})],
                                           stale.after_foreign(index, lambda: [patch_call(text)]),
                                           review, [patch_call(text)]])
    copilot.assert_completed(result)
    assert between == [stale.READ_FOREIGN.encode()]  # the stale patch wrote nothing
    outputs = model.tool_outputs()
    assert len(outputs) == 4, outputs
    assert outputs[1] == "Denied by preToolUse hook: " + stale.stale_message("apply_patch", str(index)), outputs[1]
    assert stale.FOREIGN.rstrip("\n") in outputs[2]  # the view the deny asked for shows the line
    assert outputs[3] == "Added 1 file(s): %s\nDeleted 1 file(s): %s" % (index, index)
    assert index.read_bytes() == stale.FULL_WRITE.encode()


def test_a_fresh_rewrite_patch_with_the_guard_goes_through(copilot: StaleCopilot) -> None:
    """The control: view, then the Delete + Add, nothing else writing in between: applied."""
    index = index_of(copilot)
    copilot.install()
    stale.seed(index)
    text = stale.case_patch("rewrite", str(index))
    result, _ = copilot.run_responses([[function_call("view", {"path": str(index)})], [patch_call(text)]])
    copilot.assert_completed(result)
    assert index.read_bytes() == stale.FULL_WRITE.encode()


def test_control_create_refuses_an_existing_file_with_no_foreign_write(copilot: StaleCopilot) -> None:
    """The create refusal above is not a staleness check: nothing wrote the file since the
    view, and create still refuses it."""
    assert stale.run_fresh(copilot, "write", index_of(copilot)) == stale.SEED.encode()


def test_a_hook_sees_the_view_with_its_session_and_the_content_read(copilot: StaleCopilot) -> None:
    """What a staleness check in the guard could know here: the native dialect has no matcher,
    so preToolUse and postToolUse already run for `view` (the installed guard is called for
    every read), with the sessionId the later edit carries; postToolUse holds the text the
    model was shown (toolResult.textResultForLlm)."""
    log = copilot.tmp / "probe.jsonl"
    handler = [{"type": "command", "bash": stale.probe_command(log), "cwd": ".", "timeoutSec": 30}]
    common.write_json(copilot.copilot_home / "hooks" / "probe.json",
                      {"version": 1, "hooks": {"preToolUse": handler, "postToolUse": handler}})
    stale.run_case(copilot, "edit", index_of(copilot))
    payloads = stale.probed(log)
    assert [(p["toolName"], "toolResult" in p) for p in payloads] == [
        ("view", False), ("view", True), ("edit", False), ("edit", True)]
    assert len({p["sessionId"] for p in payloads}) == 1
    assert payloads[1]["toolResult"]["textResultForLlm"] == stale.SEED


def test_an_over_cap_delete_and_add_is_denied_and_the_model_reads_why(copilot: StaleCopilot) -> None:
    """A 150-line index replaced by 300 lines through Delete File + Add File in one apply_patch:
    the guard predicts the Add's text (before, it predicted a refusal and the 300 lines landed)."""
    copilot.install()
    index = index_of(copilot)
    index.parent.mkdir(parents=True)
    index.write_text(common.index_text(150), encoding="utf-8")
    body = "".join("+%s\n" % line for line in common.index_text(300).splitlines())
    text = "*** Begin Patch\n*** Delete File: %s\n*** Add File: %s\n%s*** End Patch\n" % (index, index, body)
    result, model = copilot.run_responses([[patch_call(text)]])
    copilot.assert_completed(result)
    assert index.read_text(encoding="utf-8") == common.index_text(150)
    (denied,) = model.tool_outputs()
    assert "Denied by preToolUse hook: engramory blocked this apply_patch" in denied, denied
    assert "grow from 150 to 300 lines (hard cap 200: 100 over)" in denied

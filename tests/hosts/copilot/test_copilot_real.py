"""engramory on the real GitHub Copilot CLI (pinned in package.json), offline against a
scripted model on loopback: the user-level hook file installed by `engramory install --host
copilot`, both edit tools of the chat-completions wire, the notices, install/uninstall, the
differential prediction check (exact or within the stated bound) and the fail modes."""

from __future__ import annotations

import common
import differential
import edit_cases
import scenarios
from copilot_driver import Copilot
from mock_responses import patch_call

from engramory import patches
from engramory.hosts import claudelike
from engramory.hosts import copilot as copilot_host

DENIED = ("Denied", scenarios.REFUSED)


def test_create_over_cap_is_denied_and_the_model_reads_why(copilot: Copilot) -> None:
    copilot.install()
    # no matcher in this dialect: the other call still runs
    denied = scenarios.over_cap_write(copilot, copilot.project / "memory" / "MEMORY.md", common.index_text(300))
    assert "Denied by preToolUse hook: engramory blocked this create" in denied
    assert "grow from 0 to 300 lines (hard cap 200: 100 over)" in denied


def test_edit_over_cap_is_denied_with_numbers(copilot: Copilot) -> None:
    copilot.install()
    index = scenarios.project_index(copilot, common.index_text(199))
    (denied,) = scenarios.refused(copilot, index, [
        [copilot.edit_call(str(index), "- [note 5](note-5.md) - hook 5\n", common.index_text(6, start=1000))],
    ])
    assert "engramory blocked this edit" in denied and "grow from 199 to 204 lines (hard cap 200: 4 over)" in denied


def test_a_loosely_matched_edit_is_judged_too(copilot: Copilot) -> None:
    """Copilot re-indents and matches trailing spaces loosely: the guard's normalised match
    finds the same lines, so a growing edit that only matches loosely is still denied."""
    copilot.install()
    index = scenarios.project_index(copilot, common.index_text(199))
    (denied,) = scenarios.refused(copilot, index, [
        [copilot.edit_call(str(index), "  - [note 5](note-5.md)   -   hook 5", common.index_text(6, start=1000))],
    ])
    assert "engramory blocked this edit" in denied


def test_shrinking_edits_are_allowed_and_other_tools_are_untouched(copilot: Copilot) -> None:
    copilot.install()
    index = scenarios.project_index(copilot, common.index_text(230))
    scenarios.allowed(copilot, [
        [copilot.edit_call(str(index), "- [note 7](note-7.md) - hook 7\n", "")],
        [("view", {"path": str(index)})],
    ], DENIED)
    assert index.read_text().count("\n") == 229


def test_notices_reach_the_model_at_session_start_and_after_bash(copilot: Copilot) -> None:
    copilot.install()
    index = scenarios.project_index(copilot, common.index_text(210))
    result, model = copilot.run([
        [("bash", {"command": scenarios.append_command(index), "description": "append"})],
        "done",
    ], ENGRAMORY_INDEX_PATH=str(index))
    copilot.assert_completed(result)
    text = model.all_text()
    assert "is over its hard cap: 210 lines" in text  # sessionStart
    assert "after this bash call, the memory index %s is over its hard cap: 211 lines" % index in text


def test_install_then_uninstall_leaves_the_copilot_home_as_it_was(copilot: Copilot) -> None:
    hooks = copilot.copilot_home / "hooks"
    hooks.mkdir()
    (hooks / "mine.json").write_bytes(b'{"version": 1, "hooks": {}}\n')
    scenarios.tree_round_trip(copilot, copilot.copilot_home, hooks / "engramory.json")
    assert (hooks / "mine.json").read_bytes() == b'{"version": 1, "hooks": {}}\n'


def _bound(edit: differential.Edit) -> int:
    tool = claudelike.WRITE if edit.call[0] == "create" else claudelike.EDIT
    return copilot_host.predict_with_bound(edit.seed, edit.call[1], tool)[1]


def test_predictions_match_or_bound_the_bytes_copilot_writes(copilot: Copilot) -> None:
    """>= 50 generated edits in one session: where the prediction is exact the bytes equal it;
    where Copilot's loose matching cannot be reproduced, the line count is exact and the bytes
    stay within the stated bound; a predicted refusal leaves the file as it was."""
    copilot.install()
    # create refuses an existing path: a whole-file write creates a new one
    edits = differential.case_edits(copilot, copilot.project / "cases", edit_cases.cases(60), bound=_bound, seed_writes=False)
    outcome = differential.run(copilot, edits, timeout=300)
    assert outcome.exact >= 20, "only %d exact predictions" % outcome.exact


# -- fail modes ---------------------------------------------------------------------------------


def test_a_deleted_bundle_blocks_nothing_and_check_reports_it(copilot: Copilot) -> None:
    scenarios.deleted_bundle(copilot, common.index_text(300), marks=DENIED)


def test_a_slow_guard_is_timed_out_by_copilot_and_check_reports_it(copilot: Copilot) -> None:
    scenarios.slow_guard(copilot, answer_within=2.0, finish_within=90, timeout=120, marks=DENIED,
                         shorten=(copilot.copilot_home / "hooks" / "engramory.json", '"timeoutSec": 10', '"timeoutSec": 2'))


def test_a_crashing_guard_blocks_nothing_and_check_reports_it(copilot: Copilot) -> None:
    scenarios.crashing_guard(copilot, common.index_text(300), marks=DENIED)


def test_apply_patch_over_cap_is_denied_on_the_responses_wire(copilot: Copilot) -> None:
    copilot.install()
    index = scenarios.project_index(copilot, common.index_text(199))
    before = index.read_bytes()
    body = "".join("+- [p%d](p%d.md) - patched\n" % (i, i) for i in range(5))
    patch = "*** Begin Patch\n*** Update File: %s\n@@\n - [note 5](note-5.md) - hook 5\n%s*** End Patch" % (index, body)
    result, model = copilot.run_responses([[patch_call(patch)]])
    copilot.assert_completed(result)
    assert index.read_bytes() == before
    (output,) = model.tool_outputs()
    assert "Denied by preToolUse hook: engramory blocked this apply_patch" in output
    assert "grow from 199 to 204 lines (hard cap 200: 4 over)" in output


def test_patch_predictions_match_or_bound_the_bytes_copilot_writes(copilot: Copilot) -> None:
    """12 generated patches in one session (LF, CRLF, mixed, BOM, no final newline): each file's
    bytes equal the prediction (with mixed line endings: its line count, bytes within its bound),
    or the patch fails and the file is as it was."""
    copilot.install()
    edits = differential.patch_edits(copilot.project / "patches", patch_call,
                                     lambda seed, text: claudelike.patch_keeping_endings(seed, patches.parse(text)[0])[1])
    differential.plant(edits)
    trace = copilot.trace_file()
    # one patch per turn: the freeform tool takes one call at a time
    result, _ = copilot.run_responses([[e.call] for e in edits], timeout=300, ENGRAMORY_TRACE_FILE=str(trace))
    copilot.assert_completed(result)
    outcome = differential.judge(edits, trace, copilot.title)
    assert outcome.changed >= 8, "only %d of the 12 patches changed their file" % outcome.changed
    assert outcome.exact + outcome.refused >= 8


# (name, the index before or None, the patch between Begin and End: {p} the index, {s} an LF
# file "s\nt\n" beside it, {c} a CRLF one): several operations on one index, measured
MULTI = [
    ("delete-add", b"a\nb\n", "*** Delete File: {p}\n*** Add File: {p}\n+x\n+y\n"),
    ("delete-add-crlf-bom", b"\xef\xbb\xbfa\r\nb\r\n", "*** Delete File: {p}\n*** Add File: {p}\n+x\n+y\n"),
    ("delete-add-no-final-newline", b"a\nb", "*** Delete File: {p}\n*** Add File: {p}\n+x\n"),
    ("add-delete", b"a\nb\n", "*** Add File: {p}\n+x\n*** Delete File: {p}\n"),
    ("add-over", b"a\nb\n", "*** Add File: {p}\n+x\n"),
    ("update-twice", b"a\nb\nc\n", "*** Update File: {p}\n@@\n a\n+A1\n*** Update File: {p}\n@@\n a\n+A2\n"),
    ("update-then-delete", b"a\nb\n", "*** Update File: {p}\n@@\n-a\n+A\n*** Delete File: {p}\n"),
    ("delete-then-update", b"a\nb\n", "*** Delete File: {p}\n*** Update File: {p}\n@@\n-a\n+A\n"),
    ("add-add", None, "*** Add File: {p}\n+x\n*** Add File: {p}\n+y\n"),
    ("delete-add-add", b"a\n", "*** Delete File: {p}\n*** Add File: {p}\n+x\n*** Add File: {p}\n+y\n"),
    ("delete-delete-add", b"a\n", "*** Delete File: {p}\n*** Delete File: {p}\n*** Add File: {p}\n+x\n"),
    ("add-then-update", None, "*** Add File: {p}\n+x\n*** Update File: {p}\n@@\n-x\n+X\n"),
    ("delete-add-update", b"a\n", "*** Delete File: {p}\n*** Add File: {p}\n+x\n*** Update File: {p}\n@@\n-x\n+X\n"),
    ("move-to-new", None, "*** Update File: {s}\n*** Move to: {p}\n@@\n-s\n+S\n"),
    ("move-onto-existing", b"old\n", "*** Update File: {s}\n*** Move to: {p}\n@@\n-s\n+S\n"),
    ("move-then-update", None, "*** Update File: {s}\n*** Move to: {p}\n@@\n-s\n+S\n*** Update File: {p}\n@@\n-S\n+T\n"),
    ("delete-then-move", b"old\n", "*** Delete File: {p}\n*** Update File: {s}\n*** Move to: {p}\n@@\n-s\n+S\n"),
    ("move-crlf", None, "*** Update File: {c}\n*** Move to: {p}\n@@\n-s\n+S\n"),
]


def test_patches_of_several_operations_are_predicted_as_copilot_applies_them(copilot: Copilot) -> None:
    """Copilot applies a patch's operations one by one, each on what the ones before left, and
    stops at the first that fails: for each patch the guard's recorded prediction and
    copilot.apply_patch equal what is on disk after it (absent where the patch deleted it)."""
    copilot.install()
    cases = []
    for name, seed, body in MULTI:
        index = copilot.project / name / "MEMORY.md"
        index.parent.mkdir(parents=True)
        if seed is not None:
            index.write_bytes(seed)
        (index.parent / "s.txt").write_bytes(b"s\nt\n")
        (index.parent / "c.txt").write_bytes(b"s\r\nt\r\n")
        text = "*** Begin Patch\n%s*** End Patch" % body.format(p=index, s=index.parent / "s.txt", c=index.parent / "c.txt")
        cases.append((name, index, seed, copilot_host.apply_patch(patches.parse(text), None, str(index), seed)[0], text))
    trace = copilot.trace_file()
    result, _ = copilot.run_responses([[patch_call(text)] for *_, text in cases], timeout=300,
                                      ENGRAMORY_TRACE_FILE=str(trace))
    copilot.assert_completed(result)
    traced = {str(r["path"]): r["after"] for r in common.read_trace(trace)}
    problems = []
    for name, index, seed, want, _ in cases:
        got = index.read_bytes() if index.exists() else None
        if got != want:
            problems.append("%s: predicted %r, Copilot left %r" % (name, want, got))
        if got is not None and got != seed and traced.get(str(index)) != got.hex():
            problems.append("%s: the guard recorded %r, Copilot wrote %r" % (name, traced.get(str(index)), got))
    assert not problems, "\n".join(problems)

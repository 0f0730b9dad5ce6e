"""engramory on the real Cline CLI (pinned in package.json), offline against a scripted model on
loopback: the plugin installed by `engramory install --host cline`, every way the editor writes
(create, replace, insert_line) and `apply_patch` (gpt style model ids), the notices,
install/uninstall, the differential prediction check and the fail modes (a plugin that throws or
takes 3 s ends the whole run: the plugin's own 2 s bound is what keeps a slow guard from doing
that)."""

from __future__ import annotations

import random

import differential
import edit_cases
import legacy
import scenarios
from cline_driver import Cline


def short_index(lines: int, start: int = 0) -> str:
    """Index lines short enough that a whole over-cap file stays under the editor's 6,000
    characters per argument."""
    return "".join("- [n%d](n%d.md)\n" % (i, i) for i in range(start, start + lines))


def test_create_over_cap_is_denied_and_only_that_call(cline: Cline) -> None:
    cline.install()
    denied = scenarios.over_cap_write(cline, cline.project / "memory" / "MEMORY.md", short_index(300))
    assert "engramory blocked this editor" in denied and "grow from 0 to 300 lines (hard cap 200: 100 over)" in denied


def test_replace_and_insert_over_cap_are_denied_with_numbers(cline: Cline) -> None:
    cline.install()
    index = scenarios.project_index(cline, short_index(199))
    replaced, inserted = scenarios.refused(cline, index, [
        [cline.edit_call(str(index), "- [n5](n5.md)\n", short_index(6, start=1000))],
        [cline.insert_call(str(index), 3, short_index(4, start=2000))],
    ])
    assert "grow from 199 to 204 lines (hard cap 200: 4 over)" in replaced
    assert "grow from 199 to 204 lines" in inserted  # 4 lines and the split's extra empty one


def test_apply_patch_over_cap_is_denied(cline: Cline) -> None:
    cline.install()
    index = scenarios.project_index(cline, short_index(199))
    body = "".join("+- [p%d](p%d.md)\n" % (i, i) for i in range(5))
    patch = "*** Begin Patch\n*** Update File: memory/MEMORY.md\n@@\n - [n5](n5.md)\n%s*** End Patch" % body
    (denied,) = scenarios.refused(cline, index, [[cline.patch_call(patch)]], model="gpt-5-mock")
    assert "engramory blocked this apply_patch" in denied


def test_shrinking_edits_are_allowed_on_an_over_cap_index(cline: Cline) -> None:
    cline.install()
    index = scenarios.project_index(cline, short_index(230))
    scenarios.allowed(cline, [[cline.edit_call(str(index), "- [n7](n7.md)\n", "")]])
    assert index.read_text() == short_index(230).replace("- [n7](n7.md)\n", "")


def test_notices_reach_the_model_when_a_run_starts_and_after_commands(cline: Cline) -> None:
    cline.install()
    index = scenarios.project_index(cline, short_index(210))
    result, model = cline.run([
        [("run_commands", {"commands": [scenarios.append_command(index, "- [x](x.md)")]})],
        "done",
    ], ENGRAMORY_INDEX_PATH=str(index))
    cline.assert_completed(result)
    first = str(model.turn_requests[0]["messages"])
    assert "is over its hard cap: 210 lines" in first
    assert "after this run_commands call, the memory index %s is over its hard cap: 211 lines" % index in model.all_text()


def test_install_then_uninstall_leaves_the_workspace_as_it_was(cline: Cline) -> None:
    scenarios.tree_round_trip(cline, cline.project, cline.project / ".cline" / "plugins" / "engramory.js")


def test_predictions_match_the_bytes_cline_writes(cline: Cline) -> None:
    """60 generated editor calls (create, replace, insert_line) in one session: each file's bytes
    equal the prediction of the ported editor, and a predicted refusal leaves the file alone."""
    cline.install()
    rng = random.Random(15)
    cases = edit_cases.cases(60)
    edits = differential.case_edits(cline, cline.project / "cases", cases, seed_writes=False)
    for edit, case in zip(edits, cases):
        if case.name.endswith("-3") or case.name.endswith("-11"):  # some replacements become inserts
            lines = case.seed.count(b"\n") + 1
            edit.call = cline.insert_call(str(edit.path), rng.randrange(0, lines + 3), case.new)
    changed = differential.run(cline, edits, timeout=300).changed
    assert changed >= 20, "only %d of the generated edits changed their file" % changed


def test_an_install_from_before_the_generic_entry_still_denies_and_a_reinstall_moves_it(cline: Cline) -> None:
    """The plugin an earlier install wrote (kept byte for byte in tests/fixtures/), running the
    shim hooks/engramory_cline_hook.py with today's bundle: Cline still refuses an over-cap write
    through it, --check passes with a note, and a reinstall leaves the generic form only (the
    real Cline then refuses through it too)."""
    cline.install()
    legacy.make_old(cline.plugin, cline.bundle, "cline.js", "engramory_cline_hook.py")
    out = cline.check_passes()
    assert "was written by an earlier install: it runs hooks/engramory_cline_hook.py" in out and "problem" not in out
    index = cline.project / "memory" / "MEMORY.md"
    denied = scenarios.over_cap_write(cline, index, short_index(300))
    assert "engramory blocked this editor" in denied and "grow from 0 to 300 lines" in denied
    cline.install(first_run=False)
    legacy.assert_moved(cline.plugin, cline.bundle, "engramory_cline_hook.py", "cline")
    assert "earlier install" not in cline.check_passes()
    denied = scenarios.over_cap_write(cline, index, short_index(300))
    assert "engramory blocked this editor" in denied


# -- fail modes ---------------------------------------------------------------------------------


def test_a_deleted_bundle_lets_edits_through_and_check_reports_it(cline: Cline) -> None:
    scenarios.deleted_bundle(cline, short_index(300))


def test_a_slow_guard_does_not_end_the_run_and_check_reports_it(cline: Cline) -> None:
    # finished, not "error": the plugin gave up at 2 s
    scenarios.slow_guard(cline, answer_within=2.0, finish_within=60, content="- [a](a.md)\n")


def test_a_crashing_guard_allows_and_check_reports_it(cline: Cline) -> None:
    scenarios.crashing_guard(cline, short_index(300))


def test_patch_predictions_match_the_bytes_cline_writes(cline: Cline) -> None:
    """12 generated patches in one session (LF, CRLF, mixed, BOM, no final newline): each
    file's bytes equal the prediction, or the patch fails and the file is as it was."""
    cline.install()
    edits = differential.patch_edits(cline.project / "patches", cline.patch_call)
    changed = differential.run(cline, edits, timeout=300, model="gpt-5-mock").changed
    assert changed >= 8, "only %d of the 12 patches changed their file" % changed

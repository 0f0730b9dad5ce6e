"""engramory on the real opencode CLI (pinned in package.json), offline against a scripted
model on loopback: the plugin installed by `engramory install --host opencode`, every edit tool
(`write` and `edit`; `apply_patch`, which replaces them for gpt-5 style model ids), the notices,
install/uninstall, the differential prediction check and the fail modes (opencode has no hook
timeout: the plugin's own bound is what keeps a hung guard from hanging the session)."""

from __future__ import annotations

import common
import differential
import edit_cases
import legacy
import scenarios
from opencode_driver import Opencode


def test_write_over_cap_is_denied_and_the_model_reads_why(opencode: Opencode) -> None:
    opencode.install()
    denied = scenarios.over_cap_write(opencode, opencode.project / "memory" / "MEMORY.md", common.index_text(300),
                                      "memory/MEMORY.md")  # relative: the session dir
    assert denied.startswith("engramory blocked this write")
    assert "grow from 0 to 300 lines (hard cap 200: 100 over)" in denied


def test_edit_over_cap_is_denied_even_when_only_the_fuzzy_matcher_finds_it(opencode: Opencode) -> None:
    opencode.install()
    index = scenarios.project_index(opencode, common.index_text(199))
    (denied,) = scenarios.refused(opencode, index, [
        # indentation and spacing differ from the file: opencode's replacers still match
        [opencode.edit_call(str(index), "   - [note 5](note-5.md)   -  hook 5", common.index_text(6, start=1000))],
    ])
    assert "engramory blocked this edit" in denied and "grow from 199 to 205 lines" in denied


def test_apply_patch_over_cap_is_denied(opencode: Opencode) -> None:
    opencode.install()
    index = scenarios.project_index(opencode, common.index_text(199))
    body = "".join("+- [p%d](p%d.md) - patched\n" % (i, i) for i in range(5))
    patch = "*** Begin Patch\n*** Update File: memory/MEMORY.md\n@@\n - [note 5](note-5.md) - hook 5\n%s*** End Patch" % body
    (denied,) = scenarios.refused(opencode, index, [[opencode.patch_call(patch)]], model="gpt-5-mock")
    assert "engramory blocked this apply_patch" in denied
    assert "grow from 199 to 204 lines" in denied


def test_shrinking_edits_are_allowed_on_an_over_cap_index(opencode: Opencode) -> None:
    opencode.install()
    index = scenarios.project_index(opencode, common.index_text(230))
    scenarios.allowed(opencode, [
        [opencode.edit_call(str(index), "- [note 7](note-7.md) - hook 7\n", "")],
        [opencode.write_call(str(index), common.index_text(220))],
    ])
    assert index.read_text() == common.index_text(220)


def test_notices_reach_the_model_at_session_start_and_after_bash(opencode: Opencode) -> None:
    opencode.install()
    index = scenarios.project_index(opencode, common.index_text(210))
    result, model = opencode.run([
        [("bash", {"command": scenarios.append_command(index), "description": "append"})],
        "done",
    ], ENGRAMORY_INDEX_PATH=str(index))
    opencode.assert_completed(result)
    first = model.turn_requests[0]
    system = " ".join(str(m.get("content")) for m in first["messages"] if m.get("role") == "system")
    assert "is over its hard cap: 210 lines" in system
    assert "after this bash call, the memory index %s is over its hard cap: 211 lines" % index in model.tool_messages()[0]


def test_install_then_uninstall_leaves_the_project_as_it_was(opencode: Opencode) -> None:
    scenarios.tree_round_trip(opencode, opencode.project, opencode.project / ".opencode" / "plugins" / "engramory.js",
                              skip=(".git",))


def test_predictions_match_the_bytes_opencode_writes(opencode: Opencode) -> None:
    """60 generated edits and writes in one session, then 12 patches in another (apply_patch
    replaces the other tools for gpt-5 style ids): each file's bytes equal the prediction of
    the ported replacers, and a predicted failure leaves the file as it was."""
    opencode.install()
    edits = differential.case_edits(opencode, opencode.project / "cases", edit_cases.cases(60))
    changed = differential.run(opencode, edits, timeout=300).changed
    assert changed >= 30, "only %d of the generated edits changed their file" % changed

    edits = differential.patch_edits(opencode.project / "patches", opencode.patch_call, strip_context=True)
    assert differential.run(opencode, edits, timeout=300, model="gpt-5-mock").changed >= 8


def test_an_install_from_before_the_generic_entry_still_denies_and_a_reinstall_moves_it(opencode: Opencode) -> None:
    """The plugin an earlier install wrote (kept byte for byte in tests/fixtures/), running the
    shim hooks/engramory_opencode_hook.py with today's bundle: opencode still refuses an
    over-cap write through it, --check passes with a note, and a reinstall leaves the generic
    form only (the real opencode then refuses through it too)."""
    opencode.install()
    plugin = opencode.project / ".opencode" / "plugins" / "engramory.js"
    legacy.make_old(plugin, opencode.bundle, "opencode.js", "engramory_opencode_hook.py")
    out = opencode.check_passes()
    assert "was written by an earlier install: it runs hooks/engramory_opencode_hook.py" in out and "problem" not in out
    index = opencode.project / "memory" / "MEMORY.md"
    denied = scenarios.over_cap_write(opencode, index, common.index_text(300), "memory/MEMORY.md")
    assert denied.startswith("engramory blocked this write") and "grow from 0 to 300 lines" in denied
    opencode.install(first_run=False)
    legacy.assert_moved(plugin, opencode.bundle, "engramory_opencode_hook.py", "opencode")
    assert "earlier install" not in opencode.check_passes()
    denied = scenarios.over_cap_write(opencode, index, common.index_text(300), "memory/MEMORY.md")
    assert denied.startswith("engramory blocked this write")


# -- fail modes ---------------------------------------------------------------------------------


def test_a_deleted_bundle_lets_edits_through_and_check_reports_it(opencode: Opencode) -> None:
    scenarios.deleted_bundle(opencode, common.index_text(300))


def test_a_hung_guard_does_not_hang_the_session_and_check_reports_it(opencode: Opencode) -> None:
    # the plugin gives up after its own 5 s and lets the tool run
    scenarios.slow_guard(opencode, answer_within=5.0, finish_within=90, timeout=120, sleep=600)


def test_a_crashing_guard_allows_and_check_reports_it(opencode: Opencode) -> None:
    scenarios.crashing_guard(opencode, common.index_text(300))

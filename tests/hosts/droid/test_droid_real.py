"""engramory on the real Factory droid CLI (pinned in package.json), offline against a
scripted model on loopback: the guard installed by `engramory install --host droid`, both edit
tools, the notices, install/uninstall bytes, the differential prediction check and the fail
modes."""

from __future__ import annotations

import common
import differential
import edit_cases
import scenarios
from droid_driver import Droid


def test_create_over_cap_is_denied_and_the_model_reads_why(droid: Droid) -> None:
    droid.install()
    denied = scenarios.over_cap_write(droid, droid.project / "memory" / "MEMORY.md", common.index_text(300))
    assert denied.startswith("Error: engramory blocked this Create")
    assert "grow from 0 to 300 lines (hard cap 200: 100 over)" in denied


def test_edit_over_cap_is_denied_with_numbers(droid: Droid) -> None:
    droid.install()
    index = scenarios.project_index(droid, common.index_text(199))
    _, denied = scenarios.refused(droid, index, [
        [droid.read_call(str(index))],
        [droid.edit_call(str(index), "- [note 5](note-5.md) - hook 5\n", common.index_text(6, start=1000))],
    ])
    assert "engramory blocked this Edit" in denied and "grow from 199 to 204 lines (hard cap 200: 4 over)" in denied


def test_shrinking_edits_are_allowed_on_an_over_cap_index(droid: Droid) -> None:
    droid.install()
    index = scenarios.project_index(droid, common.index_text(230))
    scenarios.allowed(droid, [
        [droid.read_call(str(index))],
        [droid.edit_call(str(index), "- [note 7](note-7.md) - hook 7\n", "")],
        [droid.write_call(str(index), common.index_text(220))],
    ])
    assert index.read_text() == common.index_text(220)


def test_notices_reach_the_model_at_session_start_and_after_execute(droid: Droid) -> None:
    droid.install()
    index = scenarios.project_index(droid, common.index_text(210))
    result, model = droid.run([
        [("Execute", {"command": scenarios.append_command(index), "summary": "append",
                      "riskLevel": "low", "riskLevelReason": "test"})],
        "done",
    ], ENGRAMORY_INDEX_PATH=str(index))
    droid.assert_completed(result)
    text = model.all_text()
    assert "is over its hard cap: 210 lines" in text  # SessionStart
    assert "after this Execute call, the memory index %s is over its hard cap: 211 lines" % index in text


def test_install_then_uninstall_gives_the_settings_bytes_back(droid: Droid) -> None:
    original = b'{\r\n\t"model": "mine",\r\n\t"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}\r\n}\r\n'
    scenarios.settings_round_trip(droid, droid.settings, original, b"hooks/engramory_hook.py", b" droid PreToolUse")


def test_install_into_a_project_without_factory_folder_leaves_nothing_behind(droid: Droid) -> None:
    droid.install()
    droid.uninstall()
    assert not (droid.project / ".factory").exists()


def test_predictions_match_the_bytes_droid_writes(droid: Droid) -> None:
    """>= 50 generated edits in one session: each file's bytes after the run equal the guard's
    prediction, and a predicted refusal leaves the file as it was."""
    droid.install()
    edits = differential.case_edits(droid, droid.project / "cases", edit_cases.cases(60))
    outcome = differential.run(droid, edits, before=[[droid.read_call(str(e.path)) for e in edits]], timeout=300)
    assert outcome.changed >= 20, "only %d of the generated edits changed their file: the cases test too little" % outcome.changed


# -- fail modes ---------------------------------------------------------------------------------


def test_a_deleted_bundle_lets_edits_through_and_check_reports_it(droid: Droid) -> None:
    scenarios.deleted_bundle(droid, common.index_text(300))


def test_a_slow_guard_is_timed_out_by_droid_and_check_reports_it(droid: Droid) -> None:
    scenarios.slow_guard(droid, answer_within=2.0, finish_within=60, timeout=90,
                         shorten=(droid.settings, '"timeout": 10', '"timeout": 2'))


def test_a_crashing_guard_allows_and_check_reports_it(droid: Droid) -> None:
    scenarios.crashing_guard(droid, common.index_text(300))

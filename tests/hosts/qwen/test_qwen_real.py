"""engramory on the real Qwen Code CLI (pinned in package.json), offline against a scripted
model on loopback: the guard installed by `engramory install --host qwen`, every edit tool,
the notices, install/uninstall bytes, the differential prediction check and the fail modes."""

from __future__ import annotations

import os

import common
import differential
import edit_cases
import scenarios
from qwen_driver import Qwen

from engramory.hosts import qwen as qwen_host


def test_write_file_over_cap_is_denied_and_the_model_reads_why(qwen: Qwen) -> None:
    qwen.install()
    denied = scenarios.over_cap_write(qwen, qwen.project / "memory" / "MEMORY.md", common.index_text(300))
    assert denied.startswith("engramory blocked this write_file")
    assert "grow from 0 to 300 lines (hard cap 200: 100 over)" in denied


def test_edit_over_cap_is_denied_with_numbers(qwen: Qwen) -> None:
    qwen.install()
    index = scenarios.project_index(qwen, common.index_text(199))
    _, denied = scenarios.refused(qwen, index, [
        [qwen.read_call(str(index))],
        [qwen.edit_call(str(index), "- [note 5](note-5.md) - hook 5\n", common.index_text(6, start=1000))],
    ])
    assert "engramory blocked this edit" in denied and "grow from 199 to 204 lines (hard cap 200: 4 over)" in denied


def test_shrinking_edits_are_allowed_on_an_over_cap_index(qwen: Qwen) -> None:
    qwen.install()
    index = scenarios.project_index(qwen, common.index_text(230))
    scenarios.allowed(qwen, [
        [qwen.read_call(str(index))],
        [qwen.edit_call(str(index), "- [note 7](note-7.md) - hook 7\n", "")],
        [qwen.write_call(str(index), common.index_text(220))],
    ])
    assert index.read_text() == common.index_text(220)  # 230 -> 229 -> 220: each step shrank it


def test_notices_reach_the_model_at_session_start_and_after_shell(qwen: Qwen) -> None:
    qwen.install()
    native = qwen.native_index()  # Qwen's own auto-memory index: guarded by default
    native.parent.mkdir(parents=True)
    native.write_text(common.index_text(210), encoding="utf-8")
    result, model = qwen.run([[("run_shell_command", {"command": scenarios.append_command(native)})], "done"])
    qwen.assert_completed(result)
    first = model.all_text().split("\n")[0]
    assert "is over its hard cap: 210 lines" in first  # SessionStart additionalContext, first request
    shell_result = model.tool_messages()[0]
    assert "after this run_shell_command call, the memory index %s is over its hard cap: 211 lines" % native in shell_result


def test_the_guard_covers_qwens_native_memory_index(qwen: Qwen) -> None:
    qwen.install()
    native = qwen.native_index()
    (denied,) = scenarios.refused(qwen, native, [[qwen.write_call(str(native), common.index_text(201))]])
    assert "grow from 0 to 201 lines" in denied


def test_install_then_uninstall_gives_the_settings_bytes_back(qwen: Qwen) -> None:
    original = b'{\n    "model": {"name": "mine"},\n    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}\n}\n'
    scenarios.settings_round_trip(qwen, qwen.settings, original, b"hooks/engramory_hook.py", b" qwen PreToolUse")
    assert sorted(p.name for p in qwen.settings.parent.iterdir() if "engramory-backup" not in p.name) == ["settings.json"]


def test_install_into_a_project_without_qwen_folder_leaves_nothing_behind(qwen: Qwen) -> None:
    qwen.install()
    qwen.uninstall()
    assert not (qwen.project / ".qwen").exists()


def test_predictions_match_the_bytes_qwen_writes(qwen: Qwen) -> None:
    """>= 50 generated edits in one session: each file's bytes after the run equal the guard's
    prediction, and a predicted refusal leaves the file as it was."""
    qwen.install()
    edits = differential.case_edits(qwen, qwen.project / "cases", edit_cases.cases(60))
    outcome = differential.run(qwen, edits, before=[[qwen.read_call(str(e.path)) for e in edits]], timeout=240)
    assert outcome.changed >= 25, "only %d of the generated edits changed their file: the cases test too little" % outcome.changed


# -- fail modes: the host stays usable, and --check says what is wrong --------------------------


def test_a_deleted_bundle_lets_edits_through_and_check_reports_it(qwen: Qwen) -> None:
    scenarios.deleted_bundle(qwen, common.index_text(300))


def test_a_slow_guard_is_timed_out_by_qwen_and_check_reports_it(qwen: Qwen) -> None:
    scenarios.slow_guard(qwen, answer_within=2.0, finish_within=45, timeout=60,
                         shorten=(qwen.settings, '"timeout": 10000', '"timeout": 2000'))


def test_a_crashing_guard_allows_and_check_reports_it(qwen: Qwen) -> None:
    scenarios.crashing_guard(qwen, common.index_text(300))


def test_window_is_measured_in_utf16_units() -> None:
    w = qwen_host.window()
    assert (w.lines, w.size, w.unit, w.trim) == (200, 25_000, "UTF-16 units", True)
    assert os.path.basename(qwen_host.index_paths("/p", {"HOME": "/h"})[0]) == "MEMORY.md"

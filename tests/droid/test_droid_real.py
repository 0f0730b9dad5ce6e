"""engramory on the real Factory droid CLI (pinned in package.json), offline against a
scripted model on loopback: the guard installed by `engramory install --host droid`, both edit
tools, the notices, install/uninstall bytes, the differential prediction check and the fail
modes."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import common
import edit_cases
from droid_driver import Droid


def _index(droid: Droid, lines: int) -> Path:
    path = droid.project / "memory" / "MEMORY.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(common.index_text(lines), encoding="utf-8")
    return path


def test_create_over_cap_is_denied_and_the_model_reads_why(droid: Droid) -> None:
    droid.install()
    index = droid.project / "memory" / "MEMORY.md"
    other = droid.project / "other.txt"
    result, model = droid.run([
        [("Create", {"file_path": str(index), "content": common.index_text(300)})],
        [("Create", {"file_path": str(other), "content": "hello\n"})],
        "done",
    ])
    assert result.returncode == 0, result.stderr[-2000:]
    assert not index.exists()
    assert other.read_text() == "hello\n"
    denied = model.tool_messages()[0]
    assert denied.startswith("Error: engramory blocked this Create")
    assert "grow from 0 to 300 lines (hard cap 200: 100 over)" in denied


def test_edit_over_cap_is_denied_with_numbers(droid: Droid) -> None:
    droid.install()
    index = _index(droid, 199)
    before = index.read_bytes()
    result, model = droid.run([
        [("Read", {"file_path": str(index)})],
        [("Edit", {"file_path": str(index), "old_str": "- [note 5](note-5.md) - hook 5\n",
                   "new_str": common.index_text(6, start=1000)})],
        "done",
    ])
    assert result.returncode == 0
    assert index.read_bytes() == before
    denied = model.tool_messages()[1]
    assert "engramory blocked this Edit" in denied and "grow from 199 to 204 lines (hard cap 200: 4 over)" in denied


def test_shrinking_edits_are_allowed_on_an_over_cap_index(droid: Droid) -> None:
    droid.install()
    index = _index(droid, 230)
    result, model = droid.run([
        [("Read", {"file_path": str(index)})],
        [("Edit", {"file_path": str(index), "old_str": "- [note 7](note-7.md) - hook 7\n", "new_str": ""})],
        [("Create", {"file_path": str(index), "content": common.index_text(220)})],
        "done",
    ])
    assert result.returncode == 0
    assert index.read_text() == common.index_text(220)
    assert not any("engramory blocked" in m for m in model.tool_messages()), model.tool_messages()


def test_notices_reach_the_model_at_session_start_and_after_execute(droid: Droid) -> None:
    droid.install()
    index = _index(droid, 210)
    result, model = droid.run([
        [("Execute", {"command": "printf -- '- [x](x.md) - more\\n' >> '%s'" % index, "summary": "append",
                      "riskLevel": "low", "riskLevelReason": "test"})],
        "done",
    ], ENGRAMORY_INDEX_PATH=str(index))
    assert result.returncode == 0, result.stderr[-2000:]
    text = model.all_text()
    assert "is over its hard cap: 210 lines" in text  # SessionStart
    assert "after this Execute call, the memory index %s is over its hard cap: 211 lines" % index in text


def test_install_then_uninstall_gives_the_settings_bytes_back(droid: Droid) -> None:
    settings = droid.project / ".factory" / "settings.json"
    settings.parent.mkdir()
    original = b'{\r\n\t"model": "mine",\r\n\t"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}\r\n}\r\n'
    settings.write_bytes(original)
    droid.install()
    assert b"engramory_droid_hook.py" in settings.read_bytes()
    check = common.engramory(["install", "--host", "droid", "--scope", "project", "--check"], droid.project, droid.home)
    assert check.returncode == 0, check.stdout
    done = common.engramory(["uninstall", "--host", "droid", "--scope", "project"], droid.project, droid.home)
    assert done.returncode == 0, done.stderr
    assert settings.read_bytes() == original


def test_install_into_a_project_without_factory_folder_leaves_nothing_behind(droid: Droid) -> None:
    droid.install()
    done = common.engramory(["uninstall", "--host", "droid", "--scope", "project"], droid.project, droid.home)
    assert done.returncode == 0, done.stderr
    assert not (droid.project / ".factory").exists()


def test_predictions_match_the_bytes_droid_writes(droid: Droid, tmp_path: Path) -> None:
    """>= 50 generated edits in one session: each file's bytes after the run equal the guard's
    prediction, and a predicted refusal leaves the file as it was."""
    droid.install()
    trace = tmp_path / "trace.jsonl"
    cases = edit_cases.cases(60)
    paths = []
    for case in cases:
        path = droid.project / "cases" / case.name / "MEMORY.md"
        path.parent.mkdir(parents=True)
        path.write_bytes(case.seed)
        paths.append(path)
    reads = [("Read", {"file_path": str(p)}) for p in paths]
    calls = []
    for case, path in zip(cases, paths):
        if case.kind == "write":
            calls.append(("Create", {"file_path": str(path), "content": case.content}))
        else:
            args = {"file_path": str(path), "old_str": case.old, "new_str": case.new}
            if case.replace_all:
                args["change_all"] = True
            calls.append(("Edit", args))
    result, model = droid.run([reads, calls, "done"], timeout=300, ENGRAMORY_TRACE_FILE=str(trace))
    assert result.returncode == 0, result.stderr[-2000:]
    predicted = {str(r["path"]): r for r in common.read_trace(trace)}
    assert len(predicted) == len(cases), "the guard saw %d of %d edits" % (len(predicted), len(cases))
    mismatches = []
    for case, path in zip(cases, paths):
        record = predicted[str(path)]
        want = case.seed if record["refused"] else bytes.fromhex(str(record["after"]))
        got = path.read_bytes()
        if got != want:
            mismatches.append("%s: predicted %r, droid wrote %r" % (case.name, want, got))
    assert not mismatches, "\n".join(mismatches)
    changed = sum(1 for c, p in zip(cases, paths) if p.read_bytes() != c.seed)
    assert changed >= 20, "only %d of the generated edits changed their file: the cases test too little" % changed


# -- fail modes ---------------------------------------------------------------------------------


def _check(droid: Droid) -> str:
    done = common.engramory(["install", "--host", "droid", "--scope", "project", "--check"], droid.project, droid.home)
    assert done.returncode == 1, done.stdout
    return done.stdout


def _replace_installed(droid: Droid, rel: str, text: str) -> None:
    path = droid.project / ".factory" / "engramory" / rel
    path.write_text(text, encoding="utf-8")
    cache = path.parent / "__pycache__"
    if cache.exists():
        shutil.rmtree(cache)


def test_a_deleted_bundle_lets_edits_through_and_check_reports_it(droid: Droid) -> None:
    droid.install()
    shutil.rmtree(droid.project / ".factory" / "engramory")
    index = droid.project / "MEMORY.md"
    result, _ = droid.run([[("Create", {"file_path": str(index), "content": common.index_text(300)})], "done"])
    assert result.returncode == 0
    assert index.read_text() == common.index_text(300)
    assert "does not exist: the guard is off" in _check(droid)


def test_a_slow_guard_is_timed_out_by_droid_and_check_reports_it(droid: Droid) -> None:
    droid.install()
    settings = droid.project / ".factory" / "settings.json"
    settings.write_text(settings.read_text().replace('"timeout": 10', '"timeout": 2'))
    _replace_installed(droid, "hooks/engramory_droid_hook.py", "import time\ntime.sleep(60)\n")
    index = droid.project / "MEMORY.md"
    started = time.monotonic()
    result, _ = droid.run([[("Create", {"file_path": str(index), "content": "- [a](a.md) one\n"})], "done"], timeout=90)
    assert result.returncode == 0
    assert index.exists()
    assert time.monotonic() - started < 60
    assert "did not answer within 2.0 s" in _check(droid)


def test_a_crashing_guard_allows_and_check_reports_it(droid: Droid) -> None:
    droid.install()
    _replace_installed(droid, "engramory/hosts/claudelike.py", "raise RuntimeError('boom')\n")
    index = droid.project / "MEMORY.md"
    result, _ = droid.run([[("Create", {"file_path": str(index), "content": common.index_text(300)})], "done"])
    assert result.returncode == 0
    assert index.exists()
    assert "boom" in _check(droid)

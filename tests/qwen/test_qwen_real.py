"""engramory on the real Qwen Code CLI (pinned in package.json), offline against a scripted
model on loopback: the guard installed by `engramory install --host qwen`, every edit tool,
the notices, install/uninstall bytes, the differential prediction check and the fail modes."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import common
import edit_cases
from qwen_driver import Qwen

from engramory.hosts import qwen as qwen_host


def _index(qwen: Qwen, lines: int, name: str = "MEMORY.md") -> Path:
    path = qwen.project / "memory" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(common.index_text(lines), encoding="utf-8")
    return path


def test_write_file_over_cap_is_denied_and_the_model_reads_why(qwen: Qwen) -> None:
    qwen.install()
    index = qwen.project / "memory" / "MEMORY.md"
    other = qwen.project / "other.txt"
    result, model = qwen.run([
        [("write_file", {"file_path": str(index), "content": common.index_text(300)})],
        [("write_file", {"file_path": str(other), "content": "hello\n"})],
        "done",
    ])
    assert result.returncode == 0, result.stderr[-2000:]
    assert not index.exists()
    assert other.read_text() == "hello\n"  # the session goes on: only that call was denied
    denied = model.tool_messages()[0]
    assert denied.startswith("engramory blocked this write_file")
    assert "grow from 0 to 300 lines (hard cap 200: 100 over)" in denied


def test_edit_over_cap_is_denied_with_numbers(qwen: Qwen) -> None:
    qwen.install()
    index = _index(qwen, 199)
    before = index.read_bytes()
    result, model = qwen.run([
        [("read_file", {"file_path": str(index)})],
        [("edit", {"file_path": str(index), "old_string": "- [note 5](note-5.md) - hook 5\n",
                   "new_string": common.index_text(6, start=1000)})],
        "done",
    ])
    assert result.returncode == 0
    assert index.read_bytes() == before
    denied = model.tool_messages()[1]
    assert "engramory blocked this edit" in denied and "grow from 199 to 204 lines (hard cap 200: 4 over)" in denied


def test_shrinking_edits_are_allowed_on_an_over_cap_index(qwen: Qwen) -> None:
    qwen.install()
    index = _index(qwen, 230)
    result, model = qwen.run([
        [("read_file", {"file_path": str(index)})],
        [("edit", {"file_path": str(index), "old_string": "- [note 7](note-7.md) - hook 7\n", "new_string": ""})],
        [("write_file", {"file_path": str(index), "content": common.index_text(220)})],
        "done",
    ])
    assert result.returncode == 0
    assert index.read_text() == common.index_text(220)  # 230 -> 229 -> 220: each step shrank it
    assert not any("engramory blocked" in m for m in model.tool_messages()), model.tool_messages()


def test_notices_reach_the_model_at_session_start_and_after_shell(qwen: Qwen) -> None:
    qwen.install()
    native = qwen.memory_index()  # Qwen's own auto-memory index: guarded by default
    native.parent.mkdir(parents=True)
    native.write_text(common.index_text(210), encoding="utf-8")
    result, model = qwen.run([
        [("run_shell_command", {"command": "printf -- '- [x](x.md) - more\\n' >> '%s'" % native})],
        "done",
    ])
    assert result.returncode == 0, result.stderr[-2000:]
    first = model.all_text().split("\n")[0]
    assert "is over its hard cap: 210 lines" in first  # SessionStart additionalContext, first request
    shell_result = model.tool_messages()[0]
    assert "after this run_shell_command call, the memory index %s is over its hard cap: 211 lines" % native in shell_result


def test_the_guard_covers_qwens_native_memory_index(qwen: Qwen) -> None:
    qwen.install()
    native = qwen.memory_index()
    result, model = qwen.run([[("write_file", {"file_path": str(native), "content": common.index_text(201)})], "done"])
    assert not native.exists()
    assert "grow from 0 to 201 lines" in model.tool_messages()[0]


def test_install_then_uninstall_gives_the_settings_bytes_back(qwen: Qwen) -> None:
    settings = qwen.project / ".qwen" / "settings.json"
    settings.parent.mkdir()
    original = b'{\n    "model": {"name": "mine"},\n    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}\n}\n'
    settings.write_bytes(original)
    qwen.install()
    assert b"engramory_qwen_hook.py" in settings.read_bytes()
    check = common.engramory(["install", "--host", "qwen", "--scope", "project", "--check"], qwen.project, qwen.home)
    assert check.returncode == 0, check.stdout
    done = common.engramory(["uninstall", "--host", "qwen", "--scope", "project"], qwen.project, qwen.home)
    assert done.returncode == 0, done.stderr
    assert settings.read_bytes() == original
    assert sorted(p.name for p in settings.parent.iterdir() if "engramory-backup" not in p.name) == ["settings.json"]


def test_install_into_a_project_without_qwen_folder_leaves_nothing_behind(qwen: Qwen) -> None:
    qwen.install()
    done = common.engramory(["uninstall", "--host", "qwen", "--scope", "project"], qwen.project, qwen.home)
    assert done.returncode == 0, done.stderr
    assert not (qwen.project / ".qwen").exists()


def test_predictions_match_the_bytes_qwen_writes(qwen: Qwen, tmp_path: Path) -> None:
    """>= 50 generated edits in one session: each file's bytes after the run equal the guard's
    prediction, and a predicted refusal leaves the file as it was."""
    qwen.install()
    trace = tmp_path / "trace.jsonl"
    cases = edit_cases.cases(60)
    paths = []
    for case in cases:
        path = qwen.project / "cases" / case.name / "MEMORY.md"
        path.parent.mkdir(parents=True)
        path.write_bytes(case.seed)
        paths.append(path)
    reads = [("read_file", {"file_path": str(p)}) for p in paths]
    calls = []
    for case, path in zip(cases, paths):
        if case.kind == "write":
            calls.append(("write_file", {"file_path": str(path), "content": case.content}))
        else:
            args = {"file_path": str(path), "old_string": case.old, "new_string": case.new}
            if case.replace_all:
                args["replace_all"] = True
            calls.append(("edit", args))
    result, model = qwen.run([reads, calls, "done"], timeout=240, ENGRAMORY_TRACE_FILE=str(trace))
    assert result.returncode == 0, result.stderr[-2000:]
    predicted = {str(r["path"]): r for r in common.read_trace(trace)}
    assert len(predicted) == len(cases), "the guard saw %d of %d edits" % (len(predicted), len(cases))
    mismatches = []
    for case, path in zip(cases, paths):
        record = predicted[str(path)]
        want = case.seed if record["refused"] else bytes.fromhex(str(record["after"]))
        got = path.read_bytes()
        if got != want:
            mismatches.append("%s: predicted %r, Qwen wrote %r" % (case.name, want, got))
    assert not mismatches, "\n".join(mismatches)
    changed = sum(1 for c, p in zip(cases, paths) if p.read_bytes() != c.seed)
    assert changed >= 25, "only %d of the generated edits changed their file: the cases test too little" % changed


# -- fail modes: the host stays usable, and --check says what is wrong --------------------------


def _check(qwen: Qwen) -> str:
    done = common.engramory(["install", "--host", "qwen", "--scope", "project", "--check"], qwen.project, qwen.home)
    assert done.returncode == 1, done.stdout
    return done.stdout


def test_a_deleted_bundle_lets_edits_through_and_check_reports_it(qwen: Qwen) -> None:
    qwen.install()
    shutil.rmtree(qwen.project / ".qwen" / "engramory")
    index = qwen.project / "MEMORY.md"
    result, model = qwen.run([[("write_file", {"file_path": str(index), "content": common.index_text(300)})], "done"])
    assert result.returncode == 0
    assert index.read_text() == common.index_text(300)
    assert "does not exist: the guard is off" in _check(qwen)


def _replace_installed(qwen: Qwen, rel: str, text: str) -> None:
    path = qwen.project / ".qwen" / "engramory" / rel
    path.write_text(text, encoding="utf-8")
    cache = path.parent / "__pycache__"
    if cache.exists():
        shutil.rmtree(cache)


def test_a_slow_guard_is_timed_out_by_qwen_and_check_reports_it(qwen: Qwen) -> None:
    qwen.install()
    settings = qwen.project / ".qwen" / "settings.json"
    settings.write_text(settings.read_text().replace('"timeout": 10000', '"timeout": 2000'))
    _replace_installed(qwen, "hooks/engramory_qwen_hook.py", "import time\ntime.sleep(60)\n")
    index = qwen.project / "MEMORY.md"
    started = time.monotonic()
    result, _ = qwen.run([[("write_file", {"file_path": str(index), "content": "- [a](a.md) one\n"})], "done"], timeout=60)
    assert result.returncode == 0
    assert index.exists()  # timed out -> allowed
    assert time.monotonic() - started < 45
    assert "did not answer within 2.0 s" in _check(qwen)


def test_a_crashing_guard_allows_and_check_reports_it(qwen: Qwen) -> None:
    qwen.install()
    _replace_installed(qwen, "engramory/hosts/claudelike.py", "raise RuntimeError('boom')\n")
    index = qwen.project / "MEMORY.md"
    result, model = qwen.run([[("write_file", {"file_path": str(index), "content": common.index_text(300)})], "done"])
    assert result.returncode == 0
    assert index.exists()
    assert "boom" in _check(qwen)


def test_window_is_measured_in_utf16_units() -> None:
    w = qwen_host.window()
    assert (w.lines, w.size, w.unit, w.trim) == (200, 25_000, "UTF-16 units", True)
    assert os.path.basename(qwen_host.index_paths("/p", {"HOME": "/h"})[0]) == "MEMORY.md"

"""engramory on the real GitHub Copilot CLI (pinned in package.json), offline against a
scripted model on loopback: the user-level hook file installed by `engramory install --host
copilot`, both edit tools of the chat-completions wire, the notices, install/uninstall, the
differential prediction check (exact or within the stated bound) and the fail modes."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import common
import edit_cases
from copilot_driver import Copilot

from engramory.hosts import claudelike
from engramory.hosts import copilot as copilot_host


def _index(c: Copilot, lines: int) -> Path:
    path = c.project / "memory" / "MEMORY.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(common.index_text(lines), encoding="utf-8")
    return path


def test_create_over_cap_is_denied_and_the_model_reads_why(copilot: Copilot) -> None:
    copilot.install()
    index = copilot.project / "memory" / "MEMORY.md"
    other = copilot.project / "other.txt"
    result, model = copilot.run([
        [("create", {"path": str(index), "file_text": common.index_text(300)})],
        [("create", {"path": str(other), "file_text": "hello\n"})],
        "done",
    ])
    assert result.returncode == 0, result.stderr[-2000:]
    assert not index.exists()
    assert other.read_text() == "hello\n"  # no matcher in this dialect: the other call still ran
    denied = model.tool_messages()[0]
    assert "Denied by preToolUse hook: engramory blocked this create" in denied
    assert "grow from 0 to 300 lines (hard cap 200: 100 over)" in denied


def test_edit_over_cap_is_denied_with_numbers(copilot: Copilot) -> None:
    copilot.install()
    index = _index(copilot, 199)
    before = index.read_bytes()
    result, model = copilot.run([
        [("edit", {"path": str(index), "old_str": "- [note 5](note-5.md) - hook 5\n", "new_str": common.index_text(6, start=1000)})],
        "done",
    ])
    assert result.returncode == 0
    assert index.read_bytes() == before
    denied = model.tool_messages()[0]
    assert "engramory blocked this edit" in denied and "grow from 199 to 204 lines (hard cap 200: 4 over)" in denied


def test_a_loosely_matched_edit_is_judged_too(copilot: Copilot) -> None:
    """Copilot re-indents and matches trailing spaces loosely: the guard's normalised match
    finds the same lines, so a growing edit that only matches loosely is still denied."""
    copilot.install()
    index = _index(copilot, 199)
    before = index.read_bytes()
    result, model = copilot.run([
        [("edit", {"path": str(index), "old_str": "  - [note 5](note-5.md)   -   hook 5", "new_str": common.index_text(6, start=1000)})],
        "done",
    ])
    assert index.read_bytes() == before
    assert "engramory blocked this edit" in model.tool_messages()[0]


def test_shrinking_edits_are_allowed_and_other_tools_are_untouched(copilot: Copilot) -> None:
    copilot.install()
    index = _index(copilot, 230)
    result, model = copilot.run([
        [("edit", {"path": str(index), "old_str": "- [note 7](note-7.md) - hook 7\n", "new_str": ""})],
        [("view", {"path": str(index)})],
        "done",
    ])
    assert result.returncode == 0
    assert index.read_text().count("\n") == 229
    assert not any("Denied" in m for m in model.tool_messages()), model.tool_messages()


def test_notices_reach_the_model_at_session_start_and_after_bash(copilot: Copilot) -> None:
    copilot.install()
    index = _index(copilot, 210)
    result, model = copilot.run([
        [("bash", {"command": "printf -- '- [x](x.md) - more\\n' >> '%s'" % index, "description": "append"})],
        "done",
    ], ENGRAMORY_INDEX_PATH=str(index))
    assert result.returncode == 0, result.stderr[-2000:]
    text = model.all_text()
    assert "is over its hard cap: 210 lines" in text  # sessionStart
    assert "after this bash call, the memory index %s is over its hard cap: 211 lines" % index in text


def test_install_then_uninstall_leaves_the_copilot_home_as_it_was(copilot: Copilot) -> None:
    hooks = copilot.copilot_home / "hooks"
    hooks.mkdir()
    (hooks / "mine.json").write_bytes(b'{"version": 1, "hooks": {}}\n')
    before = sorted(str(p.relative_to(copilot.copilot_home)) for p in copilot.copilot_home.rglob("*"))
    copilot.install()
    assert (hooks / "engramory.json").is_file()
    check = copilot.engramory("install", "--host", "copilot", "--check")
    assert check.returncode == 0, check.stdout
    done = copilot.engramory("uninstall", "--host", "copilot")
    assert done.returncode == 0, done.stderr
    after = sorted(str(p.relative_to(copilot.copilot_home)) for p in copilot.copilot_home.rglob("*"))
    assert after == before
    assert (hooks / "mine.json").read_bytes() == b'{"version": 1, "hooks": {}}\n'


def test_predictions_match_or_bound_the_bytes_copilot_writes(copilot: Copilot, tmp_path: Path) -> None:
    """>= 50 generated edits in one session: where the prediction is exact the bytes equal it;
    where Copilot's loose matching cannot be reproduced, the line count is exact and the bytes
    stay within the stated bound; a predicted refusal leaves the file as it was."""
    copilot.install()
    trace = tmp_path / "trace.jsonl"
    cases = edit_cases.cases(60)
    paths, calls, bounds = [], [], []
    for case in cases:
        path = copilot.project / "cases" / case.name / "MEMORY.md"
        path.parent.mkdir(parents=True)
        if case.kind == "write":  # create refuses an existing path: create a new one
            args = {"path": str(path), "file_text": case.content}
            calls.append(("create", args))
            bounds.append(copilot_host.predict_with_bound(None, args, claudelike.WRITE)[1])
        else:
            path.write_bytes(case.seed)
            args = {"path": str(path), "old_str": case.old, "new_str": case.new}
            calls.append(("edit", args))
            bounds.append(copilot_host.predict_with_bound(case.seed, args, claudelike.EDIT)[1])
        paths.append(path)
    result, model = copilot.run([calls, "done"], timeout=300, ENGRAMORY_TRACE_FILE=str(trace))
    assert result.returncode == 0, result.stderr[-2000:]
    predicted = {str(r["path"]): r for r in common.read_trace(trace)}
    assert len(predicted) == len(cases), "the guard saw %d of %d edits" % (len(predicted), len(cases))
    problems = []
    exact = 0
    for case, path, bound in zip(cases, paths, bounds):
        record = predicted[str(path)]
        seed = None if case.kind == "write" else case.seed
        got = path.read_bytes() if path.exists() else None
        if record["refused"]:
            if got != seed:
                problems.append("%s: predicted a refusal, Copilot wrote %r" % (case.name, got))
            continue
        want = bytes.fromhex(str(record["after"]))
        if got is None:
            problems.append("%s: predicted %r, Copilot wrote nothing" % (case.name, want))
        elif bound == 0:
            exact += 1
            if got != want:
                problems.append("%s: predicted exactly %r, Copilot wrote %r" % (case.name, want, got))
        elif got.count(b"\n") != want.count(b"\n") or abs(len(got) - len(want)) > bound:
            problems.append("%s: predicted %r (bound %d bytes), Copilot wrote %r" % (case.name, want, bound, got))
    assert not problems, "\n".join(problems)
    assert exact >= 20, "only %d exact predictions" % exact


# -- fail modes ---------------------------------------------------------------------------------


def _check(c: Copilot) -> str:
    done = c.engramory("install", "--host", "copilot", "--check")
    assert done.returncode == 1, done.stdout
    return str(done.stdout)


def _replace_installed(c: Copilot, rel: str, text: str) -> None:
    path = c.copilot_home / "engramory" / rel
    path.write_text(text, encoding="utf-8")
    cache = path.parent / "__pycache__"
    if cache.exists():
        shutil.rmtree(cache)


def test_a_deleted_bundle_blocks_nothing_and_check_reports_it(copilot: Copilot) -> None:
    copilot.install()
    shutil.rmtree(copilot.copilot_home / "engramory")
    index = copilot.project / "MEMORY.md"
    other = copilot.project / "other.txt"
    result, model = copilot.run([
        [("create", {"path": str(index), "file_text": common.index_text(300)})],
        [("create", {"path": str(other), "file_text": "x\n"})],
        "done",
    ])
    assert result.returncode == 0
    assert index.read_text() == common.index_text(300) and other.exists()
    assert not any("Denied" in m for m in model.tool_messages()), model.tool_messages()
    assert "does not exist: the guard is off" in _check(copilot)


def test_a_slow_guard_is_timed_out_by_copilot_and_check_reports_it(copilot: Copilot) -> None:
    copilot.install()
    hook_file = copilot.copilot_home / "hooks" / "engramory.json"
    hook_file.write_text(hook_file.read_text().replace('"timeoutSec": 10', '"timeoutSec": 2'))
    _replace_installed(copilot, "hooks/engramory_copilot_hook.py", "import time\ntime.sleep(60)\n")
    index = copilot.project / "MEMORY.md"
    started = time.monotonic()
    result, _ = copilot.run([[("create", {"path": str(index), "file_text": "- [a](a.md) one\n"})], "done"], timeout=120)
    assert result.returncode == 0
    assert index.exists()
    assert time.monotonic() - started < 90
    assert "did not answer within 2.0 s" in _check(copilot)


def test_a_crashing_guard_blocks_nothing_and_check_reports_it(copilot: Copilot) -> None:
    copilot.install()
    _replace_installed(copilot, "engramory/hosts/copilot.py", "raise RuntimeError('boom')\n")
    index = copilot.project / "MEMORY.md"
    result, model = copilot.run([[("create", {"path": str(index), "file_text": common.index_text(300)})], "done"])
    assert result.returncode == 0
    assert index.exists()
    assert not any("Denied" in m for m in model.tool_messages()), model.tool_messages()
    assert "boom" in _check(copilot)


def test_apply_patch_over_cap_is_denied_on_the_responses_wire(copilot: Copilot) -> None:
    from mock_responses import patch_call

    copilot.install()
    index = _index(copilot, 199)
    before = index.read_bytes()
    body = "".join("+- [p%d](p%d.md) - patched\n" % (i, i) for i in range(5))
    patch = "*** Begin Patch\n*** Update File: %s\n@@\n - [note 5](note-5.md) - hook 5\n%s*** End Patch" % (index, body)
    result, model = copilot.run_responses([[patch_call(patch)]])
    assert result.returncode == 0, result.stdout[-2000:]
    assert index.read_bytes() == before
    (output,) = model.tool_outputs()
    assert "Denied by preToolUse hook: engramory blocked this apply_patch" in output
    assert "grow from 199 to 204 lines (hard cap 200: 4 over)" in output


def test_patch_predictions_match_or_bound_the_bytes_copilot_writes(copilot: Copilot, tmp_path: Path) -> None:
    """12 generated patches in one session (LF, CRLF, mixed, BOM, no final newline): each file's
    bytes equal the prediction (with mixed line endings: its line count, bytes within its bound),
    or the patch fails and the file is as it was."""
    from mock_responses import patch_call

    from engramory import patches

    copilot.install()
    trace = tmp_path / "trace.jsonl"
    steps, paths, seeds, bounds = [], [], [], []
    for n, case in enumerate(edit_cases.cases(12)):
        path = copilot.project / "patches" / case.name / "MEMORY.md"
        path.parent.mkdir(parents=True)
        path.write_bytes(case.seed)
        first = case.seed.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n").split("\n")[1]
        body = "@@\n %s\n+- [added](added.md) by patch\n" % first if n % 2 else "@@\n-%s\n+- [swap](s.md) x\n" % first
        text = "*** Begin Patch\n*** Update File: %s\n%s*** End Patch" % (path, body)
        steps.append([patch_call(text)])  # one patch per turn: the freeform tool takes one call at a time
        paths.append(path)
        seeds.append(case.seed)
        bounds.append(claudelike.patch_keeping_endings(case.seed, patches.parse(text)[0])[1])
    result, _ = copilot.run_responses(steps, timeout=300, ENGRAMORY_TRACE_FILE=str(trace))
    assert result.returncode == 0, result.stdout[-2000:]
    predicted = {str(r["path"]): r for r in common.read_trace(trace)}
    assert len(predicted) == len(paths), "the guard saw %d of %d patches" % (len(predicted), len(paths))
    problems, exact = [], 0
    for path, seed, bound in zip(paths, seeds, bounds):
        record = predicted[str(path)]
        want = seed if record["refused"] else bytes.fromhex(str(record["after"]))
        got = path.read_bytes()
        if bound == 0 or record["refused"]:
            exact += 1
            if got != want:
                problems.append("%s: predicted %r, Copilot wrote %r" % (path.parent.name, want, got))
        elif got.count(b"\n") != want.count(b"\n") or abs(len(got) - len(want)) > bound:
            problems.append("%s: predicted %r (bound %d), Copilot wrote %r" % (path.parent.name, want, bound, got))
    assert not problems, "\n".join(problems)
    changed = sum(1 for path, seed in zip(paths, seeds) if path.read_bytes() != seed)
    assert changed >= 8, "only %d of the 12 patches changed their file" % changed
    assert exact >= 8

"""engramory on the real Cline CLI (pinned in package.json), offline against a scripted model on
loopback: the plugin installed by `engramory install --host cline`, every way the editor writes
(create, replace, insert_line) and `apply_patch` (gpt style model ids), the notices,
install/uninstall, the differential prediction check and the fail modes (a plugin that throws or
takes 3 s ends the whole run: the plugin's own 2 s bound is what keeps a slow guard from doing
that)."""

from __future__ import annotations

import random
import shutil
import time
from pathlib import Path

import common
import edit_cases
from cline_driver import Cline


def short_index(lines: int, start: int = 0) -> str:
    """Index lines short enough that a whole over-cap file stays under the editor's 6,000
    characters per argument."""
    return "".join("- [n%d](n%d.md)\n" % (i, i) for i in range(start, start + lines))


def _index(c: Cline, lines: int) -> Path:
    path = c.project / "memory" / "MEMORY.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(short_index(lines), encoding="utf-8")
    return path


def test_create_over_cap_is_denied_and_only_that_call(cline: Cline) -> None:
    cline.install()
    index = cline.project / "memory" / "MEMORY.md"
    other = cline.project / "other.txt"
    result, model = cline.run([
        [("editor", {"path": str(index), "new_text": short_index(300)})],
        [("editor", {"path": str(other), "new_text": "hello\n"})],
        "done",
    ])
    assert cline.finish_reason(result) == "completed", result.stdout[-2000:]
    assert not index.exists()
    assert other.read_text() == "hello\n"
    denied = model.tool_messages()[0]
    assert "engramory blocked this editor" in denied and "grow from 0 to 300 lines (hard cap 200: 100 over)" in denied


def test_replace_and_insert_over_cap_are_denied_with_numbers(cline: Cline) -> None:
    cline.install()
    index = _index(cline, 199)
    before = index.read_bytes()
    result, model = cline.run([
        [("editor", {"path": str(index), "old_text": "- [n5](n5.md)\n", "new_text": short_index(6, start=1000)})],
        [("editor", {"path": str(index), "insert_line": 3, "new_text": short_index(4, start=2000)})],
        "done",
    ])
    assert cline.finish_reason(result) == "completed"
    assert index.read_bytes() == before
    replaced, inserted = model.tool_messages()
    assert "grow from 199 to 204 lines (hard cap 200: 4 over)" in replaced
    assert "grow from 199 to 204 lines" in inserted  # 4 lines and the split's extra empty one


def test_apply_patch_over_cap_is_denied(cline: Cline) -> None:
    cline.install()
    index = _index(cline, 199)
    before = index.read_bytes()
    body = "".join("+- [p%d](p%d.md)\n" % (i, i) for i in range(5))
    patch = "*** Begin Patch\n*** Update File: memory/MEMORY.md\n@@\n - [n5](n5.md)\n%s*** End Patch" % body
    result, model = cline.run([[("apply_patch", {"input": patch})], "done"], model="gpt-5-mock")
    assert cline.finish_reason(result) == "completed", result.stdout[-2000:]
    assert index.read_bytes() == before
    assert "engramory blocked this apply_patch" in model.tool_messages()[0]


def test_shrinking_edits_are_allowed_on_an_over_cap_index(cline: Cline) -> None:
    cline.install()
    index = _index(cline, 230)
    result, model = cline.run([
        [("editor", {"path": str(index), "old_text": "- [n7](n7.md)\n", "new_text": ""})],
        "done",
    ])
    assert cline.finish_reason(result) == "completed"
    assert index.read_text() == short_index(230).replace("- [n7](n7.md)\n", "")
    assert not any("engramory blocked" in m for m in model.tool_messages()), model.tool_messages()


def test_notices_reach_the_model_when_a_run_starts_and_after_commands(cline: Cline) -> None:
    cline.install()
    index = _index(cline, 210)
    result, model = cline.run([
        [("run_commands", {"commands": ["printf -- '- [x](x.md)\\n' >> '%s'" % index]})],
        "done",
    ], ENGRAMORY_INDEX_PATH=str(index))
    assert cline.finish_reason(result) == "completed", result.stdout[-2000:]
    first = str(model.turn_requests[0]["messages"])
    assert "is over its hard cap: 210 lines" in first
    assert "after this run_commands call, the memory index %s is over its hard cap: 211 lines" % index in model.all_text()


def test_install_then_uninstall_leaves_the_workspace_as_it_was(cline: Cline) -> None:
    before = sorted(str(p.relative_to(cline.project)) for p in cline.project.rglob("*"))
    cline.install()
    assert (cline.project / ".cline" / "plugins" / "engramory.js").is_file()
    check = cline.engramory("install", "--host", "cline", "--scope", "project", "--check")
    assert check.returncode == 0, check.stdout
    done = cline.engramory("uninstall", "--host", "cline", "--scope", "project")
    assert done.returncode == 0, done.stderr
    assert sorted(str(p.relative_to(cline.project)) for p in cline.project.rglob("*")) == before


def test_predictions_match_the_bytes_cline_writes(cline: Cline, tmp_path: Path) -> None:
    """60 generated editor calls (create, replace, insert_line) in one session: each file's bytes
    equal the prediction of the ported editor, and a predicted refusal leaves the file alone."""
    cline.install()
    trace = tmp_path / "trace.jsonl"
    rng = random.Random(15)
    calls, paths, seeds = [], [], []
    for case in edit_cases.cases(60):
        path = cline.project / "cases" / case.name / "MEMORY.md"
        path.parent.mkdir(parents=True)
        seed = None
        if case.kind == "write":
            args = {"path": str(path), "new_text": case.content}
        elif case.name.endswith("-3") or case.name.endswith("-11"):  # some replacements become inserts
            seed = case.seed
            lines = case.seed.count(b"\n") + 1
            args = {"path": str(path), "insert_line": rng.randrange(0, lines + 3), "new_text": case.new}
        else:
            seed = case.seed
            args = {"path": str(path), "old_text": case.old, "new_text": case.new}
        if seed is not None:
            path.write_bytes(seed)
        calls.append(("editor", args))
        paths.append(path)
        seeds.append(seed)
    result, _ = cline.run([calls, "done"], timeout=300, ENGRAMORY_TRACE_FILE=str(trace))
    assert cline.finish_reason(result) == "completed", result.stdout[-2000:]
    predicted = {str(r["path"]): r for r in common.read_trace(trace)}
    assert len(predicted) == len(paths), "the guard saw %d of %d edits" % (len(predicted), len(paths))
    problems, changed = [], 0
    for path, seed in zip(paths, seeds):
        record = predicted[str(path)]
        got = path.read_bytes() if path.exists() else None
        want = seed if record["refused"] else bytes.fromhex(str(record["after"]))
        if got != want:
            problems.append("%s: predicted %r, Cline wrote %r" % (path.parent.name, want, got))
        changed += got != seed
    assert not problems, "\n".join(problems)
    assert changed >= 20, "only %d of the generated edits changed their file" % changed


# -- fail modes ---------------------------------------------------------------------------------


def _check(c: Cline) -> str:
    done = c.engramory("install", "--host", "cline", "--scope", "project", "--check")
    assert done.returncode == 1, done.stdout
    return str(done.stdout)


def _replace_installed(c: Cline, rel: str, text: str) -> None:
    path = c.project / ".cline" / "engramory" / rel
    path.write_text(text, encoding="utf-8")
    cache = path.parent / "__pycache__"
    if cache.exists():
        shutil.rmtree(cache)


def test_a_deleted_bundle_lets_edits_through_and_check_reports_it(cline: Cline) -> None:
    cline.install()
    shutil.rmtree(cline.project / ".cline" / "engramory")
    index = cline.project / "MEMORY.md"
    result, _ = cline.run([[("editor", {"path": str(index), "new_text": short_index(300)})], "done"])
    assert cline.finish_reason(result) == "completed"
    assert index.read_text() == short_index(300)
    assert "does not exist: the guard is off" in _check(cline)


def test_a_slow_guard_does_not_end_the_run_and_check_reports_it(cline: Cline) -> None:
    cline.install()
    _replace_installed(cline, "hooks/engramory_cline_hook.py", "import time\ntime.sleep(60)\n")
    index = cline.project / "MEMORY.md"
    started = time.monotonic()
    result, _ = cline.run([[("editor", {"path": str(index), "new_text": "- [a](a.md)\n"})], "done"])
    assert cline.finish_reason(result) == "completed", result.stdout[-2000:]  # not "error": the plugin gave up at 2 s
    assert index.exists()
    assert time.monotonic() - started < 60
    assert "did not answer within 2.0 s" in _check(cline)


def test_a_crashing_guard_allows_and_check_reports_it(cline: Cline) -> None:
    cline.install()
    _replace_installed(cline, "engramory/hosts/cline.py", "raise RuntimeError('boom')\n")
    index = cline.project / "MEMORY.md"
    result, _ = cline.run([[("editor", {"path": str(index), "new_text": short_index(300)})], "done"])
    assert cline.finish_reason(result) == "completed"
    assert index.exists()
    assert "boom" in _check(cline)


def test_patch_predictions_match_the_bytes_cline_writes(cline: Cline, tmp_path: Path) -> None:
    """12 generated patches in one session (LF, CRLF, mixed, BOM, no final newline): each
    file's bytes equal the prediction, or the patch fails and the file is as it was."""
    cline.install()
    trace = tmp_path / "trace.jsonl"
    calls, paths, seeds = [], [], []
    for n, case in enumerate(edit_cases.cases(12)):
        path = cline.project / "patches" / case.name / "MEMORY.md"
        path.parent.mkdir(parents=True)
        path.write_bytes(case.seed)
        first = case.seed.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n").split("\n")[1]
        body = "@@\n %s\n+- [added](added.md) by patch\n" % first if n % 2 else "@@\n-%s\n+- [swap](s.md) x\n" % first
        calls.append(("apply_patch", {"input": "*** Begin Patch\n*** Update File: %s\n%s*** End Patch" % (path, body)}))
        paths.append(path)
        seeds.append(case.seed)
    result, _ = cline.run([calls, "done"], model="gpt-5-mock", timeout=300, ENGRAMORY_TRACE_FILE=str(trace))
    assert cline.finish_reason(result) == "completed", result.stdout[-2000:]
    predicted = {str(r["path"]): r for r in common.read_trace(trace)}
    problems = []
    for path, seed in zip(paths, seeds):
        record = predicted[str(path)]
        want = seed if record["refused"] else bytes.fromhex(str(record["after"]))
        if path.read_bytes() != want:
            problems.append("%s: predicted %r, Cline wrote %r" % (path.parent.name, want, path.read_bytes()))
    assert not problems, "\n".join(problems)
    changed = sum(1 for path, seed in zip(paths, seeds) if path.read_bytes() != seed)
    assert changed >= 8, "only %d of the 12 patches changed their file" % changed

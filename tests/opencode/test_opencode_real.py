"""engramory on the real opencode CLI (pinned in package.json), offline against a scripted
model on loopback: the plugin installed by `engramory install --host opencode`, every edit tool
(`write` and `edit`; `apply_patch`, which replaces them for gpt-5 style model ids), the notices,
install/uninstall, the differential prediction check and the fail modes (opencode has no hook
timeout: the plugin's own bound is what keeps a hung guard from hanging the session)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import common
import edit_cases
from opencode_driver import Opencode


def _index(o: Opencode, lines: int) -> Path:
    path = o.project / "memory" / "MEMORY.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(common.index_text(lines), encoding="utf-8")
    return path


def test_write_over_cap_is_denied_and_the_model_reads_why(opencode: Opencode) -> None:
    opencode.install()
    other = opencode.project / "other.txt"
    result, model = opencode.run([
        [("write", {"filePath": "memory/MEMORY.md", "content": common.index_text(300)})],  # relative: the session dir
        [("write", {"filePath": str(other), "content": "hello\n"})],
        "done",
    ])
    assert result.returncode == 0, result.stderr[-2000:]
    assert not (opencode.project / "memory" / "MEMORY.md").exists()
    assert other.read_text() == "hello\n"
    denied = model.tool_messages()[0]
    assert denied.startswith("engramory blocked this write")
    assert "grow from 0 to 300 lines (hard cap 200: 100 over)" in denied


def test_edit_over_cap_is_denied_even_when_only_the_fuzzy_matcher_finds_it(opencode: Opencode) -> None:
    opencode.install()
    index = _index(opencode, 199)
    before = index.read_bytes()
    result, model = opencode.run([
        # indentation and spacing differ from the file: opencode's replacers still match
        [("edit", {"filePath": str(index), "oldString": "   - [note 5](note-5.md)   -  hook 5",
                   "newString": common.index_text(6, start=1000)})],
        "done",
    ])
    assert result.returncode == 0
    assert index.read_bytes() == before
    denied = model.tool_messages()[0]
    assert "engramory blocked this edit" in denied and "grow from 199 to 205 lines" in denied


def test_apply_patch_over_cap_is_denied(opencode: Opencode) -> None:
    opencode.install()
    index = _index(opencode, 199)
    before = index.read_bytes()
    body = "".join("+- [p%d](p%d.md) - patched\n" % (i, i) for i in range(5))
    patch = "*** Begin Patch\n*** Update File: memory/MEMORY.md\n@@\n - [note 5](note-5.md) - hook 5\n%s*** End Patch" % body
    result, model = opencode.run([[("apply_patch", {"patchText": patch})], "done"], model="gpt-5-mock")
    assert result.returncode == 0, result.stderr[-2000:]
    assert index.read_bytes() == before
    assert "engramory blocked this apply_patch" in model.tool_messages()[0]
    assert "grow from 199 to 204 lines" in model.tool_messages()[0]


def test_shrinking_edits_are_allowed_on_an_over_cap_index(opencode: Opencode) -> None:
    opencode.install()
    index = _index(opencode, 230)
    result, model = opencode.run([
        [("edit", {"filePath": str(index), "oldString": "- [note 7](note-7.md) - hook 7\n", "newString": ""})],
        [("write", {"filePath": str(index), "content": common.index_text(220)})],
        "done",
    ])
    assert result.returncode == 0
    assert index.read_text() == common.index_text(220)
    assert not any("engramory blocked" in m for m in model.tool_messages()), model.tool_messages()


def test_notices_reach_the_model_at_session_start_and_after_bash(opencode: Opencode) -> None:
    opencode.install()
    index = _index(opencode, 210)
    result, model = opencode.run([
        [("bash", {"command": "printf -- '- [x](x.md) - more\\n' >> '%s'" % index, "description": "append"})],
        "done",
    ], ENGRAMORY_INDEX_PATH=str(index))
    assert result.returncode == 0, result.stderr[-2000:]
    first = model.turn_requests[0]
    system = " ".join(str(m.get("content")) for m in first["messages"] if m.get("role") == "system")
    assert "is over its hard cap: 210 lines" in system
    assert "after this bash call, the memory index %s is over its hard cap: 211 lines" % index in model.tool_messages()[0]


def test_install_then_uninstall_leaves_the_project_as_it_was(opencode: Opencode) -> None:
    before = sorted(str(p.relative_to(opencode.project)) for p in opencode.project.rglob("*") if ".git" not in p.parts)
    done = opencode.engramory("install", "--host", "opencode", "--scope", "project")
    assert done.returncode == 0, done.stderr
    assert (opencode.project / ".opencode" / "plugins" / "engramory.js").is_file()
    check = opencode.engramory("install", "--host", "opencode", "--scope", "project", "--check")
    assert check.returncode == 0, check.stdout
    done = opencode.engramory("uninstall", "--host", "opencode", "--scope", "project")
    assert done.returncode == 0, done.stderr
    after = sorted(str(p.relative_to(opencode.project)) for p in opencode.project.rglob("*") if ".git" not in p.parts)
    assert after == before


def _differential(opencode: Opencode, tmp_path: Path, calls: list, paths: list, seeds: list, model: str) -> int:
    trace = tmp_path / ("trace-%s.jsonl" % model)
    result, _ = opencode.run([calls, "done"], model=model, timeout=300, ENGRAMORY_TRACE_FILE=str(trace))
    assert result.returncode == 0, result.stderr[-2000:]
    predicted = {str(r["path"]): r for r in common.read_trace(trace)}
    assert len(predicted) == len(paths), "the guard saw %d of %d edits" % (len(predicted), len(paths))
    problems = []
    changed = 0
    for path, seed in zip(paths, seeds):
        record = predicted[str(path)]
        got = path.read_bytes() if path.exists() else None
        want = seed if record["refused"] else bytes.fromhex(str(record["after"]))
        if got != want:
            problems.append("%s: predicted %r, opencode wrote %r" % (path.parent.name, want, got))
        changed += got != seed
    assert not problems, "\n".join(problems)
    return changed


def test_predictions_match_the_bytes_opencode_writes(opencode: Opencode, tmp_path: Path) -> None:
    """60 generated edits and writes in one session, then 12 patches in another (apply_patch
    replaces the other tools for gpt-5 style ids): each file's bytes equal the prediction of
    the ported replacers, and a predicted failure leaves the file as it was."""
    opencode.install()
    cases = edit_cases.cases(60)
    calls, paths, seeds = [], [], []
    for case in cases:
        path = opencode.project / "cases" / case.name / "MEMORY.md"
        path.parent.mkdir(parents=True)
        path.write_bytes(case.seed)
        if case.kind == "write":
            calls.append(("write", {"filePath": str(path), "content": case.content}))
        else:
            args = {"filePath": str(path), "oldString": case.old, "newString": case.new}
            if case.replace_all:
                args["replaceAll"] = True
            calls.append(("edit", args))
        paths.append(path)
        seeds.append(case.seed)
    changed = _differential(opencode, tmp_path, calls, paths, seeds, "mock-model")
    assert changed >= 30, "only %d of the generated edits changed their file" % changed

    calls, paths, seeds = [], [], []
    for case in cases[:12]:
        path = opencode.project / "patches" / case.name / "MEMORY.md"
        path.parent.mkdir(parents=True)
        path.write_bytes(case.seed)
        text = case.seed.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n")
        first = text.split("\n")[1]
        body = "@@\n %s\n+- [added](added.md) by patch\n" % first.rstrip() if len(calls) % 2 else "@@\n-%s\n+- [swap](s.md) x\n" % first
        calls.append(("apply_patch", {"patchText": "*** Begin Patch\n*** Update File: %s\n%s*** End Patch" % (path, body)}))
        paths.append(path)
        seeds.append(case.seed)
    assert _differential(opencode, tmp_path, calls, paths, seeds, "gpt-5-mock") >= 8


# -- fail modes ---------------------------------------------------------------------------------


def _check(o: Opencode) -> str:
    done = o.engramory("install", "--host", "opencode", "--scope", "project", "--check")
    assert done.returncode == 1, done.stdout
    return str(done.stdout)


def _replace_installed(o: Opencode, rel: str, text: str) -> None:
    path = o.project / ".opencode" / "engramory" / rel
    path.write_text(text, encoding="utf-8")
    cache = path.parent / "__pycache__"
    if cache.exists():
        shutil.rmtree(cache)


def test_a_deleted_bundle_lets_edits_through_and_check_reports_it(opencode: Opencode) -> None:
    opencode.install()
    shutil.rmtree(opencode.project / ".opencode" / "engramory")
    index = opencode.project / "MEMORY.md"
    result, _ = opencode.run([[("write", {"filePath": str(index), "content": common.index_text(300)})], "done"])
    assert result.returncode == 0
    assert index.read_text() == common.index_text(300)
    assert "does not exist: the guard is off" in _check(opencode)


def test_a_hung_guard_does_not_hang_the_session_and_check_reports_it(opencode: Opencode) -> None:
    opencode.install()
    _replace_installed(opencode, "hooks/engramory_opencode_hook.py", "import time\ntime.sleep(600)\n")
    index = opencode.project / "MEMORY.md"
    started = time.monotonic()
    result, _ = opencode.run([[("write", {"filePath": str(index), "content": "- [a](a.md) one\n"})], "done"], timeout=120)
    assert result.returncode == 0
    assert index.exists()  # the plugin gave up after its own 5 s and let the tool run
    assert time.monotonic() - started < 90
    assert "did not answer within 5.0 s" in _check(opencode)


def test_a_crashing_guard_allows_and_check_reports_it(opencode: Opencode) -> None:
    opencode.install()
    _replace_installed(opencode, "engramory/hosts/opencode.py", "raise RuntimeError('boom')\n")
    index = opencode.project / "MEMORY.md"
    result, _ = opencode.run([[("write", {"filePath": str(index), "content": common.index_text(300)})], "done"])
    assert result.returncode == 0
    assert index.exists()
    assert "boom" in _check(opencode)

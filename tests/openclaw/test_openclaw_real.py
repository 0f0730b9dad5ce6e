"""engramory on the real OpenClaw CLI (pinned in package.json), offline against a scripted model
on loopback, under `openclaw agent --local`: the plugin installed and enabled by `engramory
install --host openclaw`, every edit tool (`write`, `edit`, `apply_patch`), the workspace
MEMORY.md judged by OpenClaw's own 20,000-character head-and-tail window, install/uninstall
bytes of a commented config, the differential prediction check, the fail modes (a hook that
throws or takes 15 s blocks the call: the plugin's own 5 s bound keeps a slow guard from doing
that), and the documented limit that `agent exec` never runs plugin hooks."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import common
import edit_cases
from openclaw_driver import Openclaw


def long_index(lines: int, width: int = 140, start: int = 0) -> str:
    return "".join("- [note %d](note-%d.md) - %s\n" % (i, i, "x" * width) for i in range(start, start + lines))


def test_write_past_the_character_window_is_denied_and_names_the_dropped_middle(openclaw: Openclaw) -> None:
    openclaw.install()
    result, model = openclaw.run([[("write", {"path": "MEMORY.md", "content": long_index(150)})], "done"])
    assert result.returncode == 0, result.stderr[-2000:]
    assert not openclaw.index.exists()
    denied = model.tool_messages()[0]
    assert denied.startswith("engramory blocked this write")
    assert "characters (hard cap 20,000" in denied
    assert "the middle dropped" in denied and "would never be recalled: line" in denied


def test_edit_over_cap_is_denied_with_numbers(openclaw: Openclaw) -> None:
    openclaw.install()
    index = openclaw.workspace / "memory" / "MEMORY.md"  # not OpenClaw's own: the standard window
    index.parent.mkdir()
    index.write_text(common.index_text(199))
    before = index.read_bytes()
    result, model = openclaw.run([[("edit", {"path": str(index), "edits": [
        {"oldText": "- [note 5](note-5.md) - hook 5\n", "newText": common.index_text(6, start=1000)}]})], "done"])
    assert result.returncode == 0
    assert index.read_bytes() == before
    assert "grow from 199 to 204 lines (hard cap 200: 4 over)" in model.tool_messages()[0]


def test_apply_patch_over_cap_is_denied(openclaw: Openclaw) -> None:
    openclaw.install()
    openclaw.index.write_text(long_index(120))
    before = openclaw.index.read_bytes()
    body = "".join("+- [p%d](p%d.md) - %s\n" % (i, i, "y" * 140) for i in range(30))
    patch = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n %s*** End Patch" % (long_index(1, start=5) + body)
    result, model = openclaw.run([[("apply_patch", {"input": patch})], "done"])
    assert result.returncode == 0, result.stderr[-2000:]
    assert openclaw.index.read_bytes() == before
    assert "engramory blocked this apply_patch" in model.tool_messages()[0]


def test_shrinking_edits_are_allowed_on_an_over_cap_workspace_index(openclaw: Openclaw) -> None:
    openclaw.install()
    openclaw.index.write_text(long_index(160))  # 160 lines of ~165 characters: over 20,000
    line = long_index(1, start=7)
    result, model = openclaw.run([[("edit", {"path": "MEMORY.md", "edits": [{"oldText": line, "newText": ""}]})], "done"])
    assert result.returncode == 0
    assert openclaw.index.read_text() == long_index(160).replace(line, "")
    assert not any("engramory blocked" in m for m in model.tool_messages()), model.tool_messages()


def test_install_then_uninstall_gives_the_config_bytes_back(openclaw: Openclaw) -> None:
    original = openclaw.config.read_bytes().replace(b"{\n", b"{\n  // my own comment\n", 1)
    openclaw.config.write_bytes(original)
    openclaw.install()
    assert b'"engramory"' in openclaw.config.read_bytes() and b"// my own comment" in openclaw.config.read_bytes()
    check = openclaw.engramory("install", "--host", "openclaw", "--check")
    assert check.returncode == 0, check.stdout
    done = openclaw.engramory("uninstall", "--host", "openclaw")
    assert done.returncode == 0, done.stderr
    assert openclaw.config.read_bytes() == original
    assert not (openclaw.home / ".openclaw" / "engramory-plugin").exists()
    assert not (openclaw.home / ".openclaw" / "engramory").exists()


def test_predictions_match_or_bound_the_bytes_openclaw_writes(openclaw: Openclaw, tmp_path: Path) -> None:
    """60 generated writes and edits in one session: exact predictions equal the bytes OpenClaw
    writes, bounded ones (mixed line endings) have the exact line count and bytes within the
    bound, and a predicted refusal leaves the file alone."""
    from engramory.hosts import openclaw as host

    openclaw.install()
    trace = tmp_path / "trace.jsonl"
    calls, paths, seeds, bounds = [], [], [], []
    for case in edit_cases.cases(60):
        path = openclaw.workspace / "cases" / case.name / "MEMORY.md"
        path.parent.mkdir(parents=True)
        path.write_bytes(case.seed)
        if case.kind == "write":
            calls.append(("write", {"path": str(path), "content": case.content}))
            bounds.append(0)
        else:
            calls.append(("edit", {"path": str(path), "edits": [{"oldText": case.old, "newText": case.new}]}))
            bounds.append(host.apply_edits(case.seed, [(case.old, case.new)])[1])
        paths.append(path)
        seeds.append(case.seed)
    result, _ = openclaw.run([calls, "done"], timeout=400, ENGRAMORY_TRACE_FILE=str(trace))
    assert result.returncode == 0, result.stderr[-2000:]
    predicted = {str(r["path"]): r for r in common.read_trace(trace)}
    assert len(predicted) == len(paths), "the guard saw %d of %d edits" % (len(predicted), len(paths))
    problems, exact = [], 0
    for path, seed, bound in zip(paths, seeds, bounds):
        record = predicted[str(path)]
        got = path.read_bytes()
        if record["refused"]:
            if got != seed:
                problems.append("%s: predicted a refusal, OpenClaw wrote %r" % (path.parent.name, got))
            continue
        want = bytes.fromhex(str(record["after"]))
        if bound == 0:
            exact += 1
            if got != want:
                problems.append("%s: predicted %r, OpenClaw wrote %r" % (path.parent.name, want, got))
        elif got.count(b"\n") != want.count(b"\n") or abs(len(got) - len(want)) > bound:
            problems.append("%s: predicted %r (bound %d), OpenClaw wrote %r" % (path.parent.name, want, bound, got))
    assert not problems, "\n".join(problems)
    assert exact >= 20, "only %d exact predictions" % exact


def test_agent_exec_never_runs_the_guard(openclaw: Openclaw) -> None:
    """The documented limit: `openclaw agent exec` registers plugins in discovery mode only, so
    before_tool_call never fires and an over-cap write goes through."""
    openclaw.install()
    result, _ = openclaw.run([[("write", {"path": str(openclaw.index), "content": long_index(150)})], "done"], exec_mode=True)
    assert openclaw.index.exists(), result.stdout[-2000:] + result.stderr[-2000:]


# -- fail modes ---------------------------------------------------------------------------------


def _check(o: Openclaw) -> str:
    done = o.engramory("install", "--host", "openclaw", "--check")
    assert done.returncode == 1, done.stdout
    return str(done.stdout)


def _replace_installed(o: Openclaw, rel: str, text: str) -> None:
    path = o.home / ".openclaw" / "engramory" / rel
    path.write_text(text, encoding="utf-8")
    cache = path.parent / "__pycache__"
    if cache.exists():
        shutil.rmtree(cache)


def test_a_deleted_bundle_blocks_nothing_and_check_reports_it(openclaw: Openclaw) -> None:
    openclaw.install()
    shutil.rmtree(openclaw.home / ".openclaw" / "engramory")
    result, model = openclaw.run([[("write", {"path": "MEMORY.md", "content": long_index(150)})], "done"])
    assert result.returncode == 0
    assert openclaw.index.read_text() == long_index(150)
    assert not any("blocked" in m for m in model.tool_messages()), model.tool_messages()
    assert "does not exist: the guard is off" in _check(openclaw)


def test_a_slow_guard_blocks_nothing_and_check_reports_it(openclaw: Openclaw) -> None:
    openclaw.install()
    _replace_installed(openclaw, "hooks/engramory_openclaw_hook.py", "import time\ntime.sleep(60)\n")
    started = time.monotonic()
    result, model = openclaw.run([[("write", {"path": "MEMORY.md", "content": "- [a](a.md) one\n"})], "done"])
    assert result.returncode == 0
    assert openclaw.index.exists()  # the plugin gave up at 5 s, well before OpenClaw's 15 s block
    assert not any("blocked" in m for m in model.tool_messages()), model.tool_messages()
    assert time.monotonic() - started < 150
    assert "did not answer within 5.0 s" in _check(openclaw)


def test_a_crashing_guard_blocks_nothing_and_check_reports_it(openclaw: Openclaw) -> None:
    openclaw.install()
    _replace_installed(openclaw, "engramory/hosts/openclaw.py", "raise RuntimeError('boom')\n")
    result, model = openclaw.run([[("write", {"path": "MEMORY.md", "content": long_index(150)})], "done"])
    assert result.returncode == 0
    assert openclaw.index.exists()
    assert not any("blocked" in m for m in model.tool_messages()), model.tool_messages()
    assert "boom" in _check(openclaw)


def test_patch_predictions_match_the_bytes_openclaw_writes(openclaw: Openclaw, tmp_path: Path) -> None:
    """12 generated patches in one session (LF, CRLF, mixed, BOM, no final newline): each
    file's bytes equal the prediction (or, with mixed line endings, have its line count and stay
    within its bound), or the patch fails and the file is as it was."""
    from engramory import patches
    from engramory.hosts import openclaw as host

    openclaw.install()
    trace = tmp_path / "trace.jsonl"
    calls, paths, seeds, bounds = [], [], [], []
    for n, case in enumerate(edit_cases.cases(12)):
        path = openclaw.workspace / "patches" / case.name / "MEMORY.md"
        path.parent.mkdir(parents=True)
        path.write_bytes(case.seed)
        first = case.seed.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n").split("\n")[1]
        body = "@@\n %s\n+- [added](added.md) by patch\n" % first if n % 2 else "@@\n-%s\n+- [swap](s.md) x\n" % first
        text = "*** Begin Patch\n*** Update File: %s\n%s*** End Patch" % (path, body)
        calls.append(("apply_patch", {"input": text}))
        paths.append(path)
        seeds.append(case.seed)
        bounds.append(host.patch_update(case.seed, patches.parse(text)[0])[1])
    result, _ = openclaw.run([calls, "done"], timeout=300, ENGRAMORY_TRACE_FILE=str(trace))
    assert result.returncode == 0, result.stderr[-2000:]
    predicted = {str(r["path"]): r for r in common.read_trace(trace)}
    problems, exact = [], 0
    for path, seed, bound in zip(paths, seeds, bounds):
        record = predicted[str(path)]
        want = seed if record["refused"] else bytes.fromhex(str(record["after"]))
        got = path.read_bytes()
        if bound == 0 or record["refused"]:
            exact += 1
            if got != want:
                problems.append("%s: predicted %r, OpenClaw wrote %r" % (path.parent.name, want, got))
        elif got.count(b"\n") != want.count(b"\n") or abs(len(got) - len(want)) > bound:
            problems.append("%s: predicted %r (bound %d), OpenClaw wrote %r" % (path.parent.name, want, bound, got))
    assert not problems, "\n".join(problems)
    changed = sum(1 for path, seed in zip(paths, seeds) if path.read_bytes() != seed)
    assert changed >= 8, "only %d of the 12 patches changed their file" % changed
    assert exact >= 8


# -- notice channels: what OpenClaw 2026.9.6 offers a plugin after a shell tool ---------------

NOTICE_PROBE = r'''
import fs from "node:fs";
const LOG = process.env.NOTICE_PROBE_LOG;
const log = (x) => { try { fs.appendFileSync(LOG, JSON.stringify(x) + "\n"); } catch {} };
export default { id: "engramory", name: "engramory", description: "notice-channel probe",
  register(api) {
    api.on("session_start", () => log({ev: "session_start"}));
    api.on("after_tool_call", async (e, ctx) => {
      log({ev: "after", tool: e.toolName, hasResult: !!(e.result && Array.isArray(e.result.content))});
      try { e.result.content.push({type: "text", text: "MARK_MUTATED_RESULT"}); } catch {}
      try {
        const r = await api.enqueueNextTurnInjection({sessionKey: ctx.sessionKey, text: "MARK_NEXT_TURN", placement: "prepend_context"});
        log({ev: "enqueue", enqueued: r && r.enqueued});
      } catch (x) { log({ev: "enqueue", error: String(x)}); }
    });
    api.on("tool_result_persist", (e) => {
      try { const m = JSON.parse(JSON.stringify(e.message)); m.content.push({type: "text", text: "MARK_PERSISTED"}); return {message: m}; }
      catch { return undefined; }
    });
    api.on("before_prompt_build", () => { log({ev: "prompt_build"}); return {prependContext: "MARK_PROMPT_BUILD"}; });
  } };
'''


def test_no_plugin_route_puts_a_notice_before_the_model_after_a_shell_tool(openclaw: Openclaw, tmp_path: Path) -> None:
    """What OpenClaw 2026.9.6 does with each route a plugin has to the model after `exec`: the
    result mutated in after_tool_call, enqueueNextTurnInjection, tool_result_persist: none
    reaches the model's next request. before_prompt_build (only with
    hooks.allowConversationAccess) reaches it, but runs once per run, before the first request,
    never between a tool and the next request. If this test fails, OpenClaw grew a channel:
    wire the post-tool backstop through it (see PORTING.md, OpenClaw)."""
    openclaw.install()
    (openclaw.home / ".openclaw" / "engramory-plugin" / "index.mjs").write_text(NOTICE_PROBE, encoding="utf-8")
    data = json.loads(openclaw.config.read_text(encoding="utf-8"))
    data["plugins"]["entries"]["engramory"]["hooks"] = {"allowConversationAccess": True}
    openclaw.config.write_text(json.dumps(data), encoding="utf-8")
    log = tmp_path / "probe.log"
    result, model = openclaw.run([[("exec", {"command": "echo one"})], [("exec", {"command": "echo two"})], "done"],
                                 NOTICE_PROBE_LOG=str(log))
    assert result.returncode == 0, result.stderr[-2000:]
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [e["tool"] for e in events if e["ev"] == "after"] == ["exec", "exec"]
    assert all(e["hasResult"] for e in events if e["ev"] == "after")
    assert [e.get("enqueued") for e in events if e["ev"] == "enqueue"] == [False, False]
    assert [e["ev"] for e in events].count("prompt_build") == 1
    assert "session_start" not in [e["ev"] for e in events]  # not fired under `agent --local`
    bodies = [json.dumps(r) for r in model.turn_requests]
    assert len(bodies) == 3
    for mark in ("MARK_MUTATED_RESULT", "MARK_NEXT_TURN", "MARK_PERSISTED"):
        assert not any(mark in b for b in bodies), mark
    assert all("MARK_PROMPT_BUILD" in b for b in bodies)  # fixed for the run, from the first request on


GROW = "for i in $(seq 1 150); do printf -- '- [n%d](n%d.md) - %0140d\\n' $i $i 0 >> MEMORY.md; done"


def _notices(model: object) -> list[str]:
    return [json.dumps(r) for r in model.turn_requests if "engramory: the memory index" in json.dumps(r)]  # type: ignore[attr-defined]


def test_an_index_a_shell_command_grew_past_its_cap_is_reported_to_the_next_run(openclaw: Openclaw) -> None:
    """No channel reaches the model between `exec` and the next request (see the test above), so
    the notice comes at the next run's first request, through before_prompt_build."""
    openclaw.install()
    result, model = openclaw.run([[("exec", {"command": GROW})], "done"])
    assert result.returncode == 0, result.stderr[-2000:]
    assert openclaw.index.stat().st_size > 20_000  # the shell grew it; the guard checks only the file tools
    assert not _notices(model)  # the index was absent when this run started
    result, model = openclaw.run(["ok"])
    assert result.returncode == 0, result.stderr[-2000:]
    first = json.dumps(model.turn_requests[0])
    assert "engramory: the memory index" in first and str(openclaw.index) in first
    assert "over its hard cap: 150 lines and" in first and "20,000 characters" in first
    assert "these entries were not loaded: line" in first


def test_a_crashing_start_notice_leaves_the_run_usable(openclaw: Openclaw) -> None:
    openclaw.install()
    openclaw.index.write_text(long_index(150))  # over the window: a working backstop would speak
    _replace_installed(openclaw, "engramory/hosts/openclaw.py", "raise RuntimeError('boom')\n")
    result, model = openclaw.run([[("exec", {"command": "echo still-here"})], "done"])
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(model.turn_requests) == 2 and "still-here" in model.tool_messages()[0]
    assert not _notices(model)


def test_a_slow_start_notice_leaves_the_run_usable(openclaw: Openclaw) -> None:
    openclaw.install()
    openclaw.index.write_text(long_index(150))
    _replace_installed(openclaw, "hooks/engramory_openclaw_hook.py", "import time\ntime.sleep(60)\n")
    started = time.monotonic()
    result, model = openclaw.run([[("exec", {"command": "echo still-here"})], "done"])
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(model.turn_requests) == 2 and "still-here" in model.tool_messages()[0]
    assert not _notices(model)
    assert time.monotonic() - started < 150  # the plugin gave up at 5 s, not OpenClaw's 15 s block

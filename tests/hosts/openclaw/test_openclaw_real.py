"""engramory on the real OpenClaw CLI (pinned in package.json), offline against a scripted model
on loopback, under `openclaw agent --local`: the plugin installed and enabled by `engramory
install --host openclaw`, every edit tool (`write`, `edit`, `apply_patch`), the workspace
MEMORY.md judged by OpenClaw's own 20,000-character head-and-tail window, install/uninstall
bytes of a commented config, the differential prediction check, the fail modes (a hook that
throws or takes 15 s blocks the call: the plugin's own 5 s bound keeps a slow guard from doing
that), and the documented limit that `agent exec` never runs plugin hooks."""

from __future__ import annotations

import json
import time
from pathlib import Path

import common
import differential
import edit_cases
import legacy
import scenarios
from openclaw_driver import Openclaw


def long_index(lines: int, width: int = 140, start: int = 0) -> str:
    return "".join("- [note %d](note-%d.md) - %s\n" % (i, i, "x" * width) for i in range(start, start + lines))


def test_write_past_the_character_window_is_denied_and_names_the_dropped_middle(openclaw: Openclaw) -> None:
    openclaw.install()
    (denied,) = scenarios.refused(openclaw, openclaw.index, [[openclaw.write_call("MEMORY.md", long_index(150))]])
    assert denied.startswith("engramory blocked this write")
    assert "characters (hard cap 20,000" in denied
    assert "the middle dropped" in denied and "would never be recalled: line" in denied


def test_edit_over_cap_is_denied_with_numbers(openclaw: Openclaw) -> None:
    openclaw.install()
    index = openclaw.workspace / "memory" / "MEMORY.md"  # not OpenClaw's own: the standard window
    index.parent.mkdir()
    index.write_text(common.index_text(199))
    (denied,) = scenarios.refused(openclaw, index, [
        [openclaw.edit_call(str(index), "- [note 5](note-5.md) - hook 5\n", common.index_text(6, start=1000))],
    ])
    assert "grow from 199 to 204 lines (hard cap 200: 4 over)" in denied


def test_apply_patch_over_cap_is_denied(openclaw: Openclaw) -> None:
    openclaw.install()
    openclaw.index.write_text(long_index(120))
    body = "".join("+- [p%d](p%d.md) - %s\n" % (i, i, "y" * 140) for i in range(30))
    patch = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n %s*** End Patch" % (long_index(1, start=5) + body)
    (denied,) = scenarios.refused(openclaw, openclaw.index, [[openclaw.patch_call(patch)]])
    assert "engramory blocked this apply_patch" in denied


def test_shrinking_edits_are_allowed_on_an_over_cap_workspace_index(openclaw: Openclaw) -> None:
    openclaw.install()
    openclaw.index.write_text(long_index(160))  # 160 lines of ~165 characters: over 20,000
    line = long_index(1, start=7)
    scenarios.allowed(openclaw, [[openclaw.edit_call("MEMORY.md", line, "")]])
    assert openclaw.index.read_text() == long_index(160).replace(line, "")


def test_install_then_uninstall_gives_the_config_bytes_back(openclaw: Openclaw) -> None:
    original = openclaw.config.read_bytes().replace(b"{\n", b"{\n  // my own comment\n", 1)
    scenarios.settings_round_trip(openclaw, openclaw.config, original, b'"engramory"', b"// my own comment")
    assert not (openclaw.home / ".openclaw" / "engramory-plugin").exists()
    assert not (openclaw.home / ".openclaw" / "engramory").exists()


def _edit_bound(edit: differential.Edit) -> int:
    from engramory.hosts import openclaw as host

    if edit.call[0] == "write":
        return 0
    (change,) = edit.call[1]["edits"]
    return host.apply_edits(edit.seed, [(change["oldText"], change["newText"])])[1]


def test_predictions_match_or_bound_the_bytes_openclaw_writes(openclaw: Openclaw) -> None:
    """60 generated writes and edits in one session: exact predictions equal the bytes OpenClaw
    writes, bounded ones (mixed line endings) have the exact line count and bytes within the
    bound, and a predicted refusal leaves the file alone."""
    openclaw.install()
    edits = differential.case_edits(openclaw, openclaw.workspace / "cases", edit_cases.cases(60), bound=_edit_bound)
    outcome = differential.run(openclaw, edits, timeout=400)
    assert outcome.exact >= 20, "only %d exact predictions" % outcome.exact


def test_agent_exec_never_runs_the_guard(openclaw: Openclaw) -> None:
    """The documented limit: `openclaw agent exec` registers plugins in discovery mode only, so
    before_tool_call never fires and an over-cap write goes through."""
    openclaw.install()
    result, _ = openclaw.run([[openclaw.write_call(str(openclaw.index), long_index(150))], "done"], exec_mode=True)
    assert openclaw.index.exists(), result.stdout[-2000:] + result.stderr[-2000:]


def test_an_install_from_before_the_generic_entry_still_denies_and_a_reinstall_moves_it(openclaw: Openclaw) -> None:
    """The index.mjs an earlier install wrote (kept byte for byte in tests/fixtures/), running
    the shim hooks/engramory_openclaw_hook.py with today's bundle: OpenClaw still blocks a write
    past the window through it, --check passes with a note, and a reinstall leaves the generic
    form only (the real OpenClaw then blocks through it too)."""
    openclaw.install()
    legacy.make_old(openclaw.plugin, openclaw.bundle, "openclaw.mjs", "engramory_openclaw_hook.py")
    out = openclaw.check_passes()
    assert "was written by an earlier install: it runs hooks/engramory_openclaw_hook.py" in out and "problem" not in out
    denied = scenarios.over_cap_write(openclaw, openclaw.index, long_index(150), "MEMORY.md")
    assert denied.startswith("engramory blocked this write") and "characters (hard cap 20,000" in denied
    openclaw.install(first_run=False)
    legacy.assert_moved(openclaw.plugin, openclaw.bundle, "engramory_openclaw_hook.py", "openclaw")
    assert "earlier install" not in openclaw.check_passes()
    denied = scenarios.over_cap_write(openclaw, openclaw.index, long_index(150), "MEMORY.md")
    assert denied.startswith("engramory blocked this write")


# -- fail modes ---------------------------------------------------------------------------------

BLOCKED = ("blocked",)


def test_a_deleted_bundle_blocks_nothing_and_check_reports_it(openclaw: Openclaw) -> None:
    scenarios.deleted_bundle(openclaw, long_index(150), openclaw.index, "MEMORY.md", marks=BLOCKED)


def test_a_slow_guard_blocks_nothing_and_check_reports_it(openclaw: Openclaw) -> None:
    # the plugin gives up at 5 s, well before OpenClaw's 15 s block
    scenarios.slow_guard(openclaw, answer_within=5.0, finish_within=150, index=openclaw.index, arg="MEMORY.md",
                         marks=BLOCKED)


def test_a_crashing_guard_blocks_nothing_and_check_reports_it(openclaw: Openclaw) -> None:
    scenarios.crashing_guard(openclaw, long_index(150), openclaw.index, "MEMORY.md", marks=BLOCKED)


def _patch_bound(seed: bytes, text: str) -> int:
    from engramory import patches
    from engramory.hosts import openclaw as host

    return host.patch_update(seed, patches.parse(text)[0])[1]


def test_patch_predictions_match_the_bytes_openclaw_writes(openclaw: Openclaw) -> None:
    """12 generated patches in one session (LF, CRLF, mixed, BOM, no final newline): each
    file's bytes equal the prediction (or, with mixed line endings, have its line count and stay
    within its bound), or the patch fails and the file is as it was."""
    openclaw.install()
    edits = differential.patch_edits(openclaw.workspace / "patches", openclaw.patch_call, _patch_bound)
    outcome = differential.run(openclaw, edits, timeout=300)
    assert outcome.changed >= 8, "only %d of the 12 patches changed their file" % outcome.changed
    assert outcome.exact + outcome.refused >= 8


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
    openclaw.replace_installed(openclaw.crash_module, "raise RuntimeError('boom')\n")
    result, model = openclaw.run([[("exec", {"command": "echo still-here"})], "done"])
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(model.turn_requests) == 2 and "still-here" in model.tool_messages()[0]
    assert not _notices(model)


def test_a_slow_start_notice_leaves_the_run_usable(openclaw: Openclaw) -> None:
    openclaw.install()
    openclaw.index.write_text(long_index(150))
    openclaw.replace_installed(openclaw.hook_script, "import time\ntime.sleep(60)\n")
    started = time.monotonic()
    result, model = openclaw.run([[("exec", {"command": "echo still-here"})], "done"])
    assert result.returncode == 0, result.stderr[-2000:]
    assert len(model.turn_requests) == 2 and "still-here" in model.tool_messages()[0]
    assert not _notices(model)
    assert time.monotonic() - started < 150  # the plugin gave up at 5 s, not OpenClaw's 15 s block

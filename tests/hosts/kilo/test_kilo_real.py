"""engramory on the real Kilo Code CLI (pinned in package.json), offline against a scripted
model on loopback: the plugin installed by `engramory install --host kilo` (opencode's plugin,
filled in for Kilo), in project and in user scope, on `write`, `edit` and, for a `gpt-` model id,
`apply_patch` (which replaces `edit` there while `write` stays). Each Kilo run costs ~15 s,
so the cases ride in few sessions: one run per scope and model, one for a broken plugin file."""

from __future__ import annotations

import time
from pathlib import Path

import common
import legacy
import scenarios
import stale
from kilo_driver import PATCH_MODEL, Kilo, UserKilo

DENIED = "engramory blocked this "
OFFLINE_BOUND = 60.0  # s: a run that paid Kilo's ~70 s start-up plugin install would not make it


def shrink_lines(start: int, count: int) -> str:
    return common.index_text(count, start=start)


def test_growth_denied_shrink_applied_unrelated_untouched(kilo: Kilo) -> None:
    """Project scope, default model: a write and an edit that grow a 200-line index are refused
    with the reason as the tool result of the model's next request; an edit that shrinks a
    210-line index (over the cap) is applied; a file that is no index is edited as asked and
    one nobody names keeps its bytes. The whole run beats the offline start-up stall."""
    kilo.install()
    index = scenarios.project_index(kilo, common.index_text(200))
    big = scenarios.seed_index(kilo.project / "big" / "memory" / "MEMORY.md", common.index_text(210))
    notes = kilo.project / "notes.txt"
    notes.write_text("alpha\nbeta\n", encoding="utf-8")
    bystander = kilo.project / "README.md"
    bystander.write_bytes(b"# project\r\nleft alone\n")
    started = time.monotonic()
    result, model = kilo.run([
        [kilo.write_call("memory/MEMORY.md", common.index_text(206))],  # relative, as models send it
        [kilo.edit_call(str(index), "- [note 5](note-5.md) - hook 5\n", "- [note 5](note-5.md) - hook 5\n" + common.index_text(4, start=900))],
        [kilo.edit_call(str(big), shrink_lines(100, 4), "")],
        [kilo.edit_call("notes.txt", "beta\n", "beta\ngamma\n")],
        "done",
    ])
    took = time.monotonic() - started
    kilo.assert_completed(result)
    assert index.read_text(encoding="utf-8") == common.index_text(200)
    assert big.read_text(encoding="utf-8") == common.index_text(100) + common.index_text(106, start=104)
    assert notes.read_text(encoding="utf-8") == "alpha\nbeta\ngamma\n"
    assert bystander.read_bytes() == b"# project\r\nleft alone\n"
    write_denied, edit_denied, shrunk, edited = model.tool_messages()
    assert write_denied.startswith(DENIED + "write") and "grow from 200 to 206 lines (hard cap 200: 6 over)" in write_denied
    assert edit_denied.startswith(DENIED + "edit") and "grow from 200 to 204 lines (hard cap 200: 4 over)" in edit_denied
    assert shrunk == edited == "Edit applied successfully."
    # the reason is the tool result of the very next request, verbatim (no prefix)
    assert last_tool_message(model.turn_requests[1]) == write_denied
    assert last_tool_message(model.turn_requests[2]) == edit_denied
    assert took < OFFLINE_BOUND, "the run took %.0f s: Kilo's start-up plugin install was not defused" % took


def test_user_scope_guards_write_and_apply_patch_for_a_gpt_model(tmp_path: Path, kilo_cli: Path) -> None:
    """User scope (`~/.config/kilo/plugins/`), a `gpt-` model id: apply_patch is offered in
    place of edit and write stays; both are refused when they grow the 200-line index, and a
    patch of another file is applied."""
    kilo = UserKilo(tmp_path)
    kilo.install()
    assert kilo.plugin.is_file()
    index = scenarios.project_index(kilo, common.index_text(200))
    other = kilo.project / "src.txt"
    other.write_text("one\ntwo\n", encoding="utf-8")
    grow = "".join("+- [p%d](p%d.md) - patched\n" % (i, i) for i in range(5))
    patch = "*** Begin Patch\n*** Update File: memory/MEMORY.md\n@@\n - [note 5](note-5.md) - hook 5\n%s*** End Patch" % grow
    other_patch = "*** Begin Patch\n*** Update File: src.txt\n@@\n one\n-two\n+three\n*** End Patch"
    result, model = kilo.run([
        [kilo.patch_call(patch)],
        [kilo.write_call(str(index), common.index_text(203))],
        [kilo.patch_call(other_patch)],
        "done",
    ], model=PATCH_MODEL)
    kilo.assert_completed(result)
    tools = stale.offered_tools(model.turn_requests)
    assert "apply_patch" in tools and "write" in tools and "edit" not in tools
    assert index.read_text(encoding="utf-8") == common.index_text(200)
    assert other.read_text(encoding="utf-8") == "one\nthree\n"
    patch_denied, write_denied, patched = model.tool_messages()
    assert patch_denied.startswith(DENIED + "apply_patch") and "grow from 200 to 205 lines" in patch_denied
    assert write_denied.startswith(DENIED + "write") and "grow from 200 to 203 lines" in write_denied
    assert patched == "Success. Updated the following files:\nM src.txt"
    assert last_tool_message(model.turn_requests[1]) == patch_denied


def test_check_proves_the_plugin_loads_and_fails_on_a_broken_plugin_file(kilo: Kilo) -> None:
    """--check loads the installed plugin in Kilo's own runtime and sees it refuse. Broken by a
    syntax error, the file is skipped by Kilo without a word (an over-cap write lands: the
    guard fails open there), and --check says so."""
    kilo.install()
    assert "engramory.js loads in kilo and refuses a growing index write" in kilo.check_passes()
    text = kilo.plugin.read_text(encoding="utf-8")
    kilo.plugin.write_text(text.replace("const GUARDED = new Set([", "const GUARDED = new Set([[", 1), encoding="utf-8")
    index = kilo.project / "memory" / "MEMORY.md"
    scenarios.allowed(kilo, [[kilo.write_call(str(index), common.index_text(300))]])
    assert index.read_text(encoding="utf-8") == common.index_text(300)
    said = kilo.check_fails()
    assert "does not load" in said and "Kilo skips it without a word, so the guard is off" in said


def test_project_install_then_uninstall_leaves_the_project_as_it_was(kilo: Kilo) -> None:
    scenarios.tree_round_trip(kilo, kilo.project, kilo.plugin, skip=(".git",))


def test_user_install_then_uninstall_gives_the_config_folder_back(tmp_path: Path, kilo_cli: Path) -> None:
    """The user's own kilo.json and AGENTS.md in ~/.config/kilo/: install adds the plugin and
    the bundle beside them, uninstall leaves the folder byte for byte as it was."""
    kilo = UserKilo(tmp_path)
    own = {"kilo.json": b'{\n  // mine\n  "model": "x/y"\n}\n', "AGENTS.md": b"# rules\r\n"}
    for name, data in own.items():
        (kilo.config / name).parent.mkdir(parents=True, exist_ok=True)
        (kilo.config / name).write_bytes(data)
    before = scenarios.tree(kilo.home)
    kilo.install()
    assert kilo.plugin.is_file() and (kilo.bundle / "hooks" / "engramory_hook.py").is_file()
    kilo.check_passes()
    kilo.uninstall()
    assert scenarios.tree(kilo.home) == before
    assert all((kilo.config / name).read_bytes() == data for name, data in own.items())


def test_an_install_from_before_the_generic_entry_still_denies_and_a_reinstall_moves_it(kilo: Kilo) -> None:
    """The plugin an earlier install wrote (kept byte for byte in tests/fixtures/), running the
    shim hooks/engramory_kilo_hook.py with today's bundle: Kilo still refuses an over-cap write
    through it, --check (which loads it in Kilo's runtime) passes with a note, and a reinstall
    leaves the generic form only, which Kilo refuses through as well."""
    kilo.install()
    legacy.make_old(kilo.plugin, kilo.bundle, "kilo.js", "engramory_kilo_hook.py")
    out = kilo.check_passes()
    assert "was written by an earlier install: it runs hooks/engramory_kilo_hook.py" in out and "problem" not in out
    index = kilo.project / "memory" / "MEMORY.md"
    assert scenarios.over_cap_write(kilo, index, common.index_text(300)).startswith(DENIED + "write")
    kilo.install(first_run=False)
    legacy.assert_moved(kilo.plugin, kilo.bundle, "engramory_kilo_hook.py", "kilo")
    assert "earlier install" not in kilo.check_passes()
    assert scenarios.over_cap_write(kilo, index, common.index_text(300)).startswith(DENIED + "write")


def last_tool_message(request: dict) -> str:  # type: ignore[type-arg]
    tools = [m for m in request.get("messages") or [] if m.get("role") == "tool"]
    content = tools[-1].get("content") if tools else None
    return content if isinstance(content, str) else "".join(str(p.get("text", "")) for p in content or [])

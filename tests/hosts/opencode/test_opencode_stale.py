"""Stale writes on the real opencode CLI (pinned in package.json), offline (issue 22, "Stale
writes, per host"): the agent reads MEMORY.md, another process appends a pointer line, then the
agent writes from what it read. Each case runs without the guard and with it installed
(`engramory install --host opencode`), and asserts the exact bytes on disk afterwards.

What opencode 1.18.33 does: it has no staleness check at all (no read-time record in its
binary; `write` does not even need a prior read). `write` overwrites the file with the
agent's content, dropping the other writer's line; `edit` and `apply_patch` match against the
file as it is when they run and keep it. For gpt-5 style model ids `apply_patch` replaces
`write` and `edit`, and a patch that deletes the file and adds it back (the full-file write
there) drops the foreign line as `write` does.

With the guard installed, its plugin's `tool.execute.after` tells it what `read` showed the
session (engramory.stale), so the two dropping cases are refused by the guard, with the line
they would drop, in the model's next request; after one more read the very same call goes
through. The edit and the Update patch keep the line and the guard lets them through, having
predicted exactly the bytes opencode writes."""

from __future__ import annotations

from pathlib import Path

import pytest
import stale
from hostbase import Call
from opencode_driver import Opencode

GUARD = pytest.mark.parametrize("guard", [False, True], ids=["bare", "guarded"])
PATCH_MODEL = "gpt-5-mock"  # apply_patch replaces write and edit for this id


class StaleOpencode(Opencode):
    """opencode with its read tool named, for the shared stale runner."""

    def read_call(self, path: str) -> Call:
        return ("read", {"filePath": path})


@pytest.fixture
def opencode(tmp_path: Path, opencode_cli: Path) -> StaleOpencode:
    return StaleOpencode(tmp_path)


def index_of(opencode: Opencode) -> Path:
    return opencode.project / "memory" / "MEMORY.md"


def test_stale_write_host_drops_the_foreign_line(opencode: StaleOpencode) -> None:
    """host drops the foreign line: write puts what the agent read plus its line over it."""
    m = stale.measure(opencode, "write", index_of(opencode), False)
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    assert m.seen == "Wrote file successfully."
    assert "(End of file - total 5 lines)" in m.tool_results[0]  # the read showed 5 lines, no foreign one


def assert_refused_then_applied(r: stale.Refused, tool: str, index: Path, applied: str) -> None:
    assert r.outcome == stale.REFUSED and r.after_deny == stale.READ_FOREIGN.encode()
    assert r.seen == stale.stale_message(tool, str(index)), r.seen  # the thrown message, word for word
    assert "(End of file - total 6 lines)" in r.tool_results[2]  # the read the deny asked for
    assert r.tool_results[3] == applied
    assert r.at_end == stale.FULL_WRITE.encode()


def test_stale_write_guard_refuses_and_the_same_write_after_a_read_goes_through(opencode: StaleOpencode) -> None:
    """guard refuses: the stale write would drop the foreign line."""
    opencode.install()
    r = stale.run_refused(opencode, "write", index_of(opencode))
    assert_refused_then_applied(r, "write", index_of(opencode), "Wrote file successfully.")


@GUARD
def test_stale_edit_host_keeps_the_foreign_line(opencode: StaleOpencode, guard: bool) -> None:
    """host keeps the foreign line: edit replaces the line it names in the file as it is."""
    m = stale.measure(opencode, "edit", index_of(opencode), guard)
    assert m.outcome == stale.KEPT
    assert m.on_disk == stale.EDITED_KEPT.encode()
    assert m.seen == "Edit applied successfully."


@GUARD
def test_stale_apply_patch_host_keeps_the_foreign_line(opencode: StaleOpencode, guard: bool) -> None:
    """host keeps the foreign line: the Update's context matches the file as it is."""
    m = stale.measure(opencode, "patch", index_of(opencode), guard, model=PATCH_MODEL)
    assert "apply_patch" in m.tools and "write" not in m.tools and "edit" not in m.tools
    assert m.outcome == stale.KEPT
    assert m.on_disk == stale.EDITED_KEPT.encode()
    assert m.seen == "Success. Updated the following files:\nM memory/MEMORY.md"


def test_stale_rewrite_patch_host_drops_the_foreign_line(opencode: StaleOpencode) -> None:
    """host drops the foreign line: Delete File + Add File in one apply_patch (the full-file
    write of a gpt-5 style session) writes what the agent read plus its line."""
    m = stale.measure(opencode, "rewrite", index_of(opencode), False, model=PATCH_MODEL)
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    assert m.seen == "Success. Updated the following files:\nD memory/MEMORY.md\nA memory/MEMORY.md"


def test_stale_rewrite_patch_guard_refuses_and_the_same_patch_after_a_read_goes_through(
        opencode: StaleOpencode) -> None:
    """guard refuses: the Delete + Add would drop the foreign line."""
    opencode.install()
    r = stale.run_refused(opencode, "rewrite", index_of(opencode), model=PATCH_MODEL)
    assert_refused_then_applied(r, "apply_patch", index_of(opencode),
                                "Success. Updated the following files:\nD memory/MEMORY.md\nA memory/MEMORY.md")


def test_a_fresh_write_with_the_guard_goes_through(opencode: StaleOpencode) -> None:
    """The control: read, then write, nothing else writing in between: applied."""
    opencode.install()
    assert stale.run_fresh(opencode, "write", index_of(opencode)) == stale.fresh_result("write")


def test_an_older_plugin_fails_check_and_reinstall_upgrades_it(opencode: StaleOpencode) -> None:
    """A plugin file from before the stale rule (no `read` in tool.execute.after) tells the guard
    nothing of what was read: --check says so, and install writes the current one back."""
    opencode.install(first_run=False)
    plugin = opencode.project / ".opencode" / "plugins" / "engramory.js"  # the suite installs in project scope
    text = plugin.read_text(encoding="utf-8")
    assert 'event: "read"' in text
    start = text.index("        if (input && READ.has(input.tool)) {")
    plugin.write_text(text[:start] + text[text.index("        if (!input || !SHELL.has"):], encoding="utf-8")
    check = opencode.engramory("install", "--host", "opencode", *opencode.scope, "--check")
    assert check.returncode == 1
    assert ("is not the plugin this engramory writes (an older or edited copy): an older one does not tell the "
            "guard what `read` showed, so a stale write is not refused") in check.stdout
    opencode.install(first_run=False)
    assert plugin.read_text(encoding="utf-8") == text
    assert opencode.engramory("install", "--host", "opencode", *opencode.scope, "--check").returncode == 0

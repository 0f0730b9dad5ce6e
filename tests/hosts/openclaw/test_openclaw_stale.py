"""Stale writes on the real OpenClaw CLI (pinned in package.json), offline under `openclaw
agent --local` (issue 22, "Stale writes, per host"): the agent reads its workspace MEMORY.md,
another process appends a pointer line, then the agent writes from what it read. Each case runs
without the guard and with it installed (`engramory install --host openclaw`), and asserts the
exact bytes on disk afterwards.

What OpenClaw 2026.9.6 does: it has no staleness check at all. `write` overwrites the file with
the agent's content, and so does a patch that deletes the file and adds it back: both drop the
other writer's line. `edit` and an Update patch match against the file as it is when they run
and keep it.

With the guard installed, its plugin's `before_tool_call` of `read` tells it what the session is
shown (engramory.stale), so the two dropping cases are blocked by the guard, with the line they
would drop; after one more read the very same call goes through. The edit and the Update patch
keep the line and the guard lets them through, having predicted exactly the bytes OpenClaw
writes."""

from __future__ import annotations

from pathlib import Path

import pytest
import stale
from hostbase import Call
from openclaw_driver import Openclaw

GUARD = pytest.mark.parametrize("guard", [False, True], ids=["bare", "guarded"])


class StaleOpenclaw(Openclaw):
    """OpenClaw with its read tool named, for the shared stale runner."""

    def read_call(self, path: str) -> Call:
        return ("read", {"path": path})


@pytest.fixture
def openclaw(tmp_path: Path, openclaw_cli: Path) -> StaleOpenclaw:
    return StaleOpenclaw(tmp_path)


def test_stale_write_host_drops_the_foreign_line(openclaw: StaleOpenclaw) -> None:
    """host drops the foreign line: write puts what the agent read plus its line over it."""
    m = stale.measure(openclaw, "write", openclaw.index, False)
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    assert m.seen == "Successfully wrote %d bytes to %s" % (len(stale.FULL_WRITE.encode()), openclaw.index)


def assert_refused_then_applied(r: stale.Refused, tool: str, index: Path, applied: str) -> None:
    assert r.outcome == stale.REFUSED and r.after_deny == stale.READ_FOREIGN.encode()
    assert stale.stale_message(tool, str(index)) in r.seen, r.seen  # the block reason, word for word
    assert stale.FOREIGN.rstrip("\n") in r.tool_results[2]  # the read the deny asked for shows the line
    assert r.tool_results[3] == applied
    assert r.at_end == stale.FULL_WRITE.encode()


def test_stale_write_guard_refuses_and_the_same_write_after_a_read_goes_through(openclaw: StaleOpenclaw) -> None:
    """guard refuses: the stale write would drop the foreign line."""
    openclaw.install()
    r = stale.run_refused(openclaw, "write", openclaw.index)
    assert_refused_then_applied(r, "write", openclaw.index,
                                "Successfully wrote %d bytes to %s" % (len(stale.FULL_WRITE.encode()), openclaw.index))


@GUARD
def test_stale_edit_host_keeps_the_foreign_line(openclaw: StaleOpenclaw, guard: bool) -> None:
    """host keeps the foreign line: edit replaces the block it names in the file as it is."""
    m = stale.measure(openclaw, "edit", openclaw.index, guard)
    assert m.outcome == stale.KEPT
    assert m.on_disk == stale.EDITED_KEPT.encode()
    assert m.seen == "Successfully replaced 1 block(s) in %s." % openclaw.index


@GUARD
def test_stale_apply_patch_host_keeps_the_foreign_line(openclaw: StaleOpenclaw, guard: bool) -> None:
    """host keeps the foreign line: the Update's context matches the file as it is."""
    m = stale.measure(openclaw, "patch", openclaw.index, guard)
    assert m.outcome == stale.KEPT
    assert m.on_disk == stale.EDITED_KEPT.encode()
    assert m.seen == "Success. Updated the following files:\nM MEMORY.md"


def test_stale_rewrite_patch_host_drops_the_foreign_line(openclaw: StaleOpenclaw) -> None:
    """host drops the foreign line: Delete File + Add File in one apply_patch writes what the
    agent read plus its line."""
    m = stale.measure(openclaw, "rewrite", openclaw.index, False)
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    assert m.seen == "Success. Updated the following files:\nA MEMORY.md\nD MEMORY.md"


def test_stale_rewrite_patch_guard_refuses_and_the_same_patch_after_a_read_goes_through(
        openclaw: StaleOpenclaw) -> None:
    """guard refuses: the Delete + Add (predicted exactly: OpenClaw runs the two in order, so
    the file ends as the Add's content) would drop the foreign line."""
    openclaw.install()
    r = stale.run_refused(openclaw, "rewrite", openclaw.index)
    assert_refused_then_applied(r, "apply_patch", openclaw.index,
                                "Success. Updated the following files:\nA MEMORY.md\nD MEMORY.md")


def test_a_fresh_write_with_the_guard_goes_through(openclaw: StaleOpenclaw) -> None:
    """The control: read, then write, nothing else writing in between: applied."""
    openclaw.install()
    assert stale.run_fresh(openclaw, "write", openclaw.index) == stale.fresh_result("write")


def test_an_older_plugin_fails_check_and_reinstall_upgrades_it(openclaw: StaleOpenclaw) -> None:
    """A plugin file from before the stale rule (no `read` in before_tool_call) tells the guard
    nothing of what was read: --check says so, and install writes the current one back."""
    openclaw.install(first_run=False)
    plugin = openclaw.home / ".openclaw" / "engramory-plugin" / "index.mjs"
    text = plugin.read_text(encoding="utf-8")
    assert 'event: "read"' in text
    start = text.index("        if (event && READ.has(event.toolName)) {")
    plugin.write_text(text[:start] + text[text.index("        if (!event || !GUARDED.has"):], encoding="utf-8")
    check = openclaw.check()
    assert check.returncode == 1
    assert ("is not the plugin this engramory writes (an older or edited copy): what it does is not what is "
            "checked here (an older one does not tell the guard what `read` showed, so a stale write is not "
            "refused)") in check.stdout
    openclaw.install(first_run=False)
    assert plugin.read_text(encoding="utf-8") == text
    assert openclaw.check().returncode == 0

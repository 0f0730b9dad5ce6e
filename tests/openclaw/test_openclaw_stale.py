"""Stale writes on the real OpenClaw CLI (pinned in package.json), offline under `openclaw
agent --local` (issue 22, "Stale writes, per host"): the agent reads its workspace MEMORY.md,
another process appends a pointer line, then the agent writes from what it read. Each case runs
without the guard and with it installed (`engramory install --host openclaw`), and asserts the
exact bytes on disk afterwards.

What OpenClaw 2026.9.6 does: it has no staleness check at all. `write` overwrites the file with
the agent's content, and so does a patch that deletes the file and adds it back: both drop the
other writer's line. `edit` and an Update patch match against the file as it is when they run
and keep it. The guard, installed, judged every call and let each through (the Delete + Add it
cannot predict exactly: it judges that one by its worst case, the whole new text added)."""

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


@GUARD
def test_stale_write_host_drops_the_foreign_line(openclaw: StaleOpenclaw, guard: bool) -> None:
    """host drops the foreign line: write puts what the agent read plus its line over it."""
    m = stale.measure(openclaw, "write", openclaw.index, guard)
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    assert m.seen == "Successfully wrote %d bytes to %s" % (len(stale.FULL_WRITE.encode()), openclaw.index)


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


@GUARD
def test_stale_rewrite_patch_host_drops_the_foreign_line(openclaw: StaleOpenclaw, guard: bool) -> None:
    """host drops the foreign line: Delete File + Add File in one apply_patch writes what the
    agent read plus its line. The guard traced no exact prediction (worst case instead)."""
    m = stale.measure(openclaw, "rewrite", openclaw.index, guard, predicted=[None])
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    assert m.seen == "Success. Updated the following files:\nA MEMORY.md\nD MEMORY.md"

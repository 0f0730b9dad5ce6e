"""Stale writes on the real opencode CLI (pinned in package.json), offline (issue 22, "Stale
writes, per host"): the agent reads MEMORY.md, another process appends a pointer line, then the
agent writes from what it read. Each case runs without the guard and with it installed
(`engramory install --host opencode`), and asserts the exact bytes on disk afterwards.

What opencode 1.18.33 does: it has no staleness check at all (no read-time record in its
binary; `write` does not even need a prior read). `write` overwrites the file with the
agent's content, dropping the other writer's line; `edit` and `apply_patch` match against the
file as it is when they run and keep it. For gpt-5 style model ids `apply_patch` replaces
`write` and `edit`, and a patch that deletes the file and adds it back (the full-file write
there) drops the foreign line as `write` does. The guard, installed, judged every call and
predicted exactly those bytes: it had the dropped line in front of it and let it through."""

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


@GUARD
def test_stale_write_host_drops_the_foreign_line(opencode: StaleOpencode, guard: bool) -> None:
    """host drops the foreign line: write puts what the agent read plus its line over it."""
    m = stale.measure(opencode, "write", index_of(opencode), guard)
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    assert m.seen == "Wrote file successfully."
    assert "(End of file - total 5 lines)" in m.tool_results[0]  # the read showed 5 lines, no foreign one


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


@GUARD
def test_stale_rewrite_patch_host_drops_the_foreign_line(opencode: StaleOpencode, guard: bool) -> None:
    """host drops the foreign line: Delete File + Add File in one apply_patch (the full-file
    write of a gpt-5 style session) writes what the agent read plus its line."""
    m = stale.measure(opencode, "rewrite", index_of(opencode), guard, model=PATCH_MODEL)
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    assert m.seen == "Success. Updated the following files:\nD memory/MEMORY.md\nA memory/MEMORY.md"

"""Stale writes on the real Cline CLI (pinned in package.json), offline (issue 22, "Stale
writes, per host"): the agent reads MEMORY.md with read_files, another process appends a
pointer line, then the agent writes from what it read. Each case runs without the guard and
with it installed (`engramory install --host cline`), and asserts the exact bytes on disk.

What Cline CLI 3.0.65 does: it has no staleness check, and no full-file overwrite either. The
`editor` refuses `new_text` without `old_text` on an existing file, and its `apply_patch` (which
replaces `editor` for gpt/codex model ids) refuses an Add of an existing file and a Delete + Add
of one file in one patch ("Duplicate add"), stale or not (the controls show both refusals with
no foreign write). An edit or an Update patch matches the file as it is: the foreign line
survives. The guard, installed, judged every call the host can apply and refused none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest
import stale
from cline_driver import Cline
from hostbase import Call

GUARD = pytest.mark.parametrize("guard", [False, True], ids=["bare", "guarded"])
PATCH_MODEL = "gpt-5-mock"  # apply_patch replaces the editor for this id
NO_OLD_TEXT = ("Editor operation failed: %s already exists, but `old_text` was omitted. To edit an existing file, "
               "set `old_text` to the exact text in the file that `new_text` should replace (read the file first if "
               "needed). To insert instead, provide `insert_line`. Do not re-send this call unchanged.")


class StaleCline(Cline):
    """Cline with its read tool named, for the shared stale runner."""

    def read_call(self, path: str) -> Call:
        return ("read_files", {"files": [{"path": path}]})


@pytest.fixture
def cline(tmp_path: Path, cline_cli: Path) -> StaleCline:
    return StaleCline(tmp_path)


def index_of(cline: Cline) -> Path:
    return cline.project / "memory" / "MEMORY.md"


def result(m: stale.Measured) -> Dict[str, Any]:
    """Cline's tool results are JSON: {query, result, error?, success}."""
    value = json.loads(m.seen)
    assert isinstance(value, dict)
    return value


@GUARD
def test_stale_full_write_host_refuses_because_the_editor_never_overwrites(cline: StaleCline, guard: bool) -> None:
    """host refuses, though not for staleness: editor with only `new_text` refuses an existing
    file (the control shows the same with no foreign write). The guard predicts the refusal."""
    index = index_of(cline)
    m = stale.measure(cline, "write", index, guard, predicted=[None])
    assert m.outcome == stale.REFUSED
    assert m.on_disk == stale.READ_FOREIGN.encode()
    assert result(m)["error"] == NO_OLD_TEXT % index


@GUARD
def test_stale_edit_host_keeps_the_foreign_line(cline: StaleCline, guard: bool) -> None:
    """host keeps the foreign line: the editor replaces the text it names in the file as it is."""
    index = index_of(cline)
    m = stale.measure(cline, "edit", index, guard)
    assert m.outcome == stale.KEPT
    assert m.on_disk == stale.EDITED_KEPT.encode()
    assert result(m)["result"].startswith("Edited %s\n" % index)


@GUARD
def test_stale_apply_patch_host_keeps_the_foreign_line(cline: StaleCline, guard: bool) -> None:
    """host keeps the foreign line: the Update's context matches the file as it is."""
    index = index_of(cline)
    m = stale.measure(cline, "patch", index, guard, model=PATCH_MODEL)
    assert "apply_patch" in m.tools and "editor" not in m.tools
    assert m.outcome == stale.KEPT
    assert m.on_disk == stale.EDITED_KEPT.encode()
    assert result(m)["result"] == "Successfully applied patch to the following files:\n%s" % index


@GUARD
def test_stale_rewrite_patch_host_refuses_a_delete_and_add(cline: StaleCline, guard: bool) -> None:
    """host refuses, though not for staleness: Cline's patch parser takes Delete + Add of one
    path as a duplicate. The guard traced no prediction for it."""
    index = index_of(cline)
    m = stale.measure(cline, "rewrite", index, guard, predicted=[], model=PATCH_MODEL)
    assert m.outcome == stale.REFUSED
    assert m.on_disk == stale.READ_FOREIGN.encode()
    assert result(m)["error"] == "apply_patch failed: Duplicate add for file: %s" % index


@pytest.mark.parametrize("case", ["write", "rewrite"])
def test_control_the_whole_file_refusals_are_not_staleness(cline: StaleCline, case: str) -> None:
    """With nothing written since the read, the editor's full write and the Delete + Add
    patch are refused all the same: the file keeps its bytes."""
    model = PATCH_MODEL if case == "rewrite" else "mock-model"
    assert stale.run_fresh(cline, case, index_of(cline), model=model) == stale.SEED.encode()

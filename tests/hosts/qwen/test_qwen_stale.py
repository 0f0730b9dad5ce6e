"""Stale writes on the real Qwen Code CLI (pinned in package.json), offline (issue 22, "Stale
writes, per host"): the agent reads MEMORY.md with read_file, another process appends a pointer
line, then the agent writes from what it read. Each case runs without the guard and with it
installed (`engramory install --host qwen`), and asserts the exact bytes on disk afterwards.

What Qwen Code 0.24.4 does (packages/core/src/tools/priorReadEnforcement.ts and
services/fileReadCache.ts in its bundle): every read_file records the file's (dev, inode) with
its mtime and size, per session; write_file and edit compare them with a fresh stat after the
PreToolUse hook ran and refuse a changed file. So both cases are `host refuses`, the foreign
line survives, and the model is told to read again. Qwen Code has no patch tool (case 3)."""

from __future__ import annotations

from typing import Dict

import common
import pytest
import stale
from qwen_driver import Qwen

GUARD = pytest.mark.parametrize("guard", [False, True], ids=["bare", "guarded"])
REREAD = ("File %s has been modified since you last read it (mtime or size changed). Re-read it with the "
          "read_file tool before %s it to ensure your changes are based on current content.")
VERB: Dict[str, str] = {"write": "overwriting", "edit": "editing"}


@GUARD
@pytest.mark.parametrize("case", ["write", "edit"])
def test_stale_write_file_and_edit_host_refuses(qwen: Qwen, guard: bool, case: str) -> None:
    """host refuses, write_file and edit alike: the foreign line survives, the agent's change
    does not land, and the model reads why (the guard, installed, predicted the write and let
    it through: the host's own check stops it after the hook)."""
    index = qwen.project / "memory" / "MEMORY.md"
    m = stale.measure(qwen, case, index, guard)
    assert m.outcome == stale.REFUSED
    assert m.on_disk == stale.READ_FOREIGN.encode()
    assert m.seen == REREAD % (index, VERB[case])


def test_qwen_offers_no_patch_tool(qwen: Qwen) -> None:
    """Case 3 does not exist on Qwen Code: it offers write_file and edit, no patch tool."""
    m = stale.measure(qwen, "edit", qwen.project / "memory" / "MEMORY.md", guard=False)
    assert {"write_file", "edit", "read_file"} <= set(m.tools)
    assert not [t for t in m.tools if "patch" in t], m.tools


@pytest.mark.parametrize("case", ["write", "edit"])
def test_control_without_a_foreign_write_the_same_calls_apply(qwen: Qwen, case: str) -> None:
    """The refusal above is the staleness check: with nothing written since the read, the
    same write_file / edit lands."""
    assert stale.run_fresh(qwen, case, qwen.project / "memory" / "MEMORY.md") == stale.fresh_result(case)



NOT_READ = {
    "write": ("File %s has not been read in this session. Use the read_file tool first to load the current content "
              "(read the full file \u2014 overwriting replaces every byte, so any unseen bytes would be discarded) "
              "before overwriting it."),
    "edit": ("File %s has not been read in this session. Use the read_file tool first to load the current content "
             "(a partial read with offset / limit is fine \u2014 you only need to have seen the bytes you intend to "
             "edit) before editing it."),
}


@pytest.mark.parametrize("case", ["write", "edit"])
def test_stale_after_engramory_new_host_refuses_as_never_read(qwen: Qwen, case: str) -> None:
    """host refuses, when the other writer is `engramory new` (an atomic rename: a new inode):
    Qwen keys its read record by inode, so it no longer knows the file was read, and says so."""
    index = qwen.project / "memory" / "MEMORY.md"
    m = stale.measure(qwen, case, index, guard=False, foreign=stale.ENGRAMORY_NEW)
    assert m.outcome == stale.REFUSED
    assert m.on_disk == stale.NEW_LEFT.encode()
    assert m.seen == NOT_READ[case] % index


def test_a_hook_on_read_file_sees_the_session_and_the_content_read(qwen: Qwen) -> None:
    """What a staleness check in the guard could know here: PreToolUse and PostToolUse fire
    for read_file (matcher `read_file`), with the session id the later write carries, and the
    PostToolUse payload holds the text the model was shown (tool_response.llmContent)."""
    log = qwen.tmp / "probe.jsonl"
    hook = [{"matcher": "read_file|write_file|edit", "hooks": [{"type": "command", "command": stale.probe_command(log)}]}]
    common.write_json(qwen.settings, {"hooks": {"PreToolUse": hook, "PostToolUse": hook}})
    stale.run_case(qwen, "edit", qwen.project / "memory" / "MEMORY.md")
    events = [(p["hook_event_name"], p["tool_name"]) for p in stale.probed(log)]
    assert events == [("PreToolUse", "read_file"), ("PostToolUse", "read_file"), ("PreToolUse", "edit")]
    pre_read, post_read, pre_edit = stale.probed(log)
    assert pre_read["session_id"] == post_read["session_id"] == pre_edit["session_id"]
    assert post_read["tool_response"]["llmContent"] == stale.SEED

"""Stale writes on the real Factory droid CLI (pinned in package.json), offline (issue 22,
"Stale writes, per host"): the agent Reads MEMORY.md, another process appends a pointer line,
then the agent writes from what it read. Each case runs without the guard and with it
installed (`engramory install --host droid`), and asserts the exact bytes on disk afterwards.

What droid 0.225.2 does (its FileTimestampTracker, per session, compares the file's mtime with
the one its last Read recorded): Edit and ApplyPatch refuse a file changed since the Read;
Create has no such check and overwrites it, so a stale Create drops the other writer's line.
With the guard installed, its PostToolUse hook on Read records what the agent saw
(engramory.stale) and the guard refuses that Create, naming the line it would drop; after one
more Read the same Create goes through.

droid offers ApplyPatch instead of Create and Edit when the model's file-edit profile is
"apply-patch": the default for its OpenAI-provider models, and set here on the BYOK model with
`fileEditToolProfile`. Its ApplyPatch is a freeform tool: the call's arguments text IS the
patch (a JSON `{"input": ...}` is taken as the patch text and refused as "Cannot authorize
ApplyPatch without valid file operations")."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import common
import pytest
import stale
from droid_driver import Droid
from hostbase import Call

GUARD = pytest.mark.parametrize("guard", [False, True], ids=["bare", "guarded"])
CHANGED = ('File "%s" has been modified externally since it was last read. Please use the Read tool to get the '
           "latest version before editing.")


class PatchDroid(Droid):
    """droid with the apply-patch file-edit profile: ApplyPatch replaces Create and Edit."""

    def prepare(self, mock: Any, env: Dict[str, str]) -> None:
        common.write_json(self.home / ".factory" / "settings.json", {"customModels": [{
            "model": "mock-model", "displayName": "Mock", "baseUrl": mock.base_url, "apiKey": "dummy",
            "provider": "generic-chat-completion-api", "maxOutputTokens": 4096, "fileEditToolProfile": "apply-patch",
        }]})

    def patch_call(self, text: str) -> Call:
        return ("ApplyPatch", text)  # type: ignore[return-value]  # freeform: the arguments text is the patch


def index_of(droid: Droid) -> Path:
    return droid.project / "memory" / "MEMORY.md"


def test_stale_create_host_drops_the_foreign_line(droid: Droid) -> None:
    """host drops the foreign line: Create overwrites the file with what the agent read plus
    its line, and the model is told it succeeded."""
    index = index_of(droid)
    m = stale.measure(droid, "write", index, False)
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    assert m.seen == "The file %s has been created successfully." % index


@pytest.mark.parametrize("foreign", [stale.APPEND, stale.ENGRAMORY_NEW], ids=["append", "engramory-new"])
def test_stale_create_guard_refuses_and_the_same_create_after_a_read_goes_through(
        droid: Droid, foreign: stale.Foreign) -> None:
    """guard refuses: the stale Create would drop the other writer's lines; the model reads why
    (`Error: <the deny>`), and after one more Read the same Create is applied."""
    index = index_of(droid)
    droid.install()
    r = stale.run_refused(droid, "write", index, foreign=foreign)
    assert r.outcome == stale.REFUSED and r.after_deny == foreign.left.encode()
    assert r.seen == "Error: " + stale.stale_message("Create", str(index), foreign.left), r.seen
    assert r.tool_results[3] == "The file %s has been created successfully." % index
    assert r.at_end == stale.FULL_WRITE.encode()


def test_a_fresh_create_with_the_guard_goes_through(droid: Droid) -> None:
    """The control: Read, then Create, nothing else writing in between: applied."""
    droid.install()
    assert stale.run_fresh(droid, "write", index_of(droid)) == stale.fresh_result("write")


@GUARD
def test_stale_edit_host_refuses(droid: Droid, guard: bool) -> None:
    """host refuses: Edit checks the mtime its Read recorded; the foreign line survives."""
    index = index_of(droid)
    m = stale.measure(droid, "edit", index, guard)
    assert m.outcome == stale.REFUSED
    assert m.on_disk == stale.READ_FOREIGN.encode()
    assert m.seen == "Error: Error: " + CHANGED % index


@GUARD
def test_stale_apply_patch_host_refuses(tmp_path: Path, droid_cli: Path, guard: bool) -> None:
    """host refuses: ApplyPatch reads the file through the same check. The guard, installed,
    judged the call first (matcher Create|Edit|ApplyPatch) and predicted the patch applied to
    the file as the other writer left it (droid refuses after the hook)."""
    droid = PatchDroid(tmp_path)
    index = index_of(droid)
    m = stale.measure(droid, "patch", index, guard)
    assert "ApplyPatch" in m.tools and "Create" not in m.tools and "Edit" not in m.tools
    assert m.outcome == stale.REFUSED
    assert m.on_disk == stale.READ_FOREIGN.encode()
    assert m.seen == "Error: Error reading file content: Error: " + CHANGED % index


@pytest.mark.parametrize("case", ["edit", "patch"])
def test_control_without_a_foreign_write_the_same_calls_apply(tmp_path: Path, droid_cli: Path, case: str) -> None:
    """The refusals above are the staleness check: with nothing written since the Read, the
    same Edit / ApplyPatch lands."""
    droid = PatchDroid(tmp_path) if case == "patch" else Droid(tmp_path)
    assert stale.run_fresh(droid, case, index_of(droid)) == stale.fresh_result(case)



def test_stale_create_after_engramory_new_host_drops_its_section(droid: Droid) -> None:
    """host drops the foreign line when the other writer is `engramory new` too (an atomic
    rename): the stale Create puts the agent's content over its new section and pointer."""
    m = stale.measure(droid, "write", index_of(droid), guard=False, foreign=stale.ENGRAMORY_NEW)
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()


def test_stale_edit_after_engramory_new_host_refuses(droid: Droid) -> None:
    """host refuses: droid's check is the path's mtime, so a new inode is caught the same way."""
    index = index_of(droid)
    m = stale.measure(droid, "edit", index, guard=False, foreign=stale.ENGRAMORY_NEW)
    assert m.outcome == stale.REFUSED
    assert m.on_disk == stale.NEW_LEFT.encode()
    assert m.seen == "Error: Error: " + CHANGED % index


def test_a_hook_on_read_sees_the_session_and_the_content_read(droid: Droid) -> None:
    """What a staleness check in the guard could know here: PreToolUse and PostToolUse fire
    for Read (matcher `Read`), with the session id the later Create carries, and the
    PostToolUse payload holds the text the model was shown (tool_response, a string)."""
    log = droid.tmp / "probe.jsonl"
    hook = [{"matcher": "Read|Create|Edit", "hooks": [{"type": "command", "command": stale.probe_command(log)}]}]
    common.write_json(droid.settings, {"hooks": {"PreToolUse": hook, "PostToolUse": hook}})
    stale.run_case(droid, "write", index_of(droid))
    events = [(p["hook_event_name"], p["tool_name"]) for p in stale.probed(log)]
    assert events == [("PreToolUse", "Read"), ("PostToolUse", "Read"), ("PreToolUse", "Create"), ("PostToolUse", "Create")]
    assert len({p["session_id"] for p in stale.probed(log)}) == 1
    assert stale.probed(log)[1]["tool_response"] == stale.SEED


def test_an_over_cap_apply_patch_is_denied_and_the_model_reads_why(tmp_path: Path, droid_cli: Path) -> None:
    """droid's default edit tool for OpenAI-provider models is ApplyPatch: the installed guard
    sees it (matcher Create|Edit|ApplyPatch) and denies a 300-line Add of the index (before
    this, it went through: 300 lines on disk)."""
    droid = PatchDroid(tmp_path)
    droid.install()
    index = index_of(droid)
    body = "".join("+%s\n" % line for line in common.index_text(300).splitlines())
    result, model = droid.run([[droid.patch_call("*** Begin Patch\n*** Add File: %s\n%s*** End Patch\n" % (index, body))],
                               "done"])
    droid.assert_completed(result)
    assert not index.exists()
    (denied,) = model.tool_messages()
    assert denied.startswith("Error: engramory blocked this ApplyPatch"), denied
    assert "grow from 0 to 300 lines (hard cap 200: 100 over)" in denied

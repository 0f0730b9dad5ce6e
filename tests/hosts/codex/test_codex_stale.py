"""Stale writes on the real Codex CLI 0.171.0, offline (issue 22, "Stale writes, per host"):
the agent reads MEMORY.md (Codex has no read tool: `cat` through exec_command), another process
appends a pointer line, then the agent writes from what it read with apply_patch, Codex's only
file tool. Each case runs without the guard and with it installed (`engramory install --host
codex`), and asserts the exact bytes on disk afterwards.

What Codex does: it has no staleness check (it keeps no record of reads, and a read is only a
shell command). The full-file write is an Add File over the existing index, which Codex applies
silently (reported as `A`): the other writer's line is dropped. An Update patch (Codex's edit;
there is no separate edit tool) matches the file as it is and keeps it. Delete + Add of one
file in one patch is refused for any file ("multiple operations target"), stale or not.

With the guard installed, its PostToolUse on Bash records what a `cat` showed of the index
(only when the output holds the file's bytes whole: a `head` records nothing), so the stale Add
over the index, through the tool or as an `apply_patch` heredoc in the shell, is refused with the
stale rule's message (the lines it would drop, "Read MEMORY.md again"); after one more `cat`
the same Add goes through. The Update keeps the foreign line and is let through.

A plain shell write of the whole index (`cat > MEMORY.md <<'EOF'`, `printf ... > MEMORY.md`,
`tee MEMORY.md <<'EOF'`) after the stale `cat` drops the foreign line with no guard. With the
guard, all three are refused (engramory.shellwrite predicts their bytes; the rest of that case is
test_codex_shellwrite.py); a shell write it does not predict (`printf '%d'`, a variable) still
drops the line guarded or not, with no notice after it: the PostToolUse notice speaks of caps
only.

The Codex guard predicts its own bytes and writes no trace, so the guarded runs that it lets
through prove the guard was live another way: the same session's next call, an over-cap Add to
a second index, is denied by it."""

from __future__ import annotations

from typing import Any, Callable, List

import codex_driver
import codex_model
import common  # noqa: E402
import pytest
import stale  # noqa: E402
from codex_model import patch_call, shell_call

pytestmark = pytest.mark.e2e

GUARD = pytest.mark.parametrize("guard", [False, True], ids=["bare", "guarded"])
BLOCKED = "Command blocked by PreToolUse hook: engramory blocked this apply_patch"


class StaleModel(codex_model.ScriptedModel):
    """The scripted model, where a step may be a function of the request (called when the
    request arrives: the foreign write happens then, between the read and the patch)."""

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        with self._lock:
            n = len(self.requests)
            step = self.steps[n] if codex_model.is_turn(body) and n < len(self.steps) else None
            if callable(step):
                self.steps[n] = step(body)
        return super().answer(body)


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codex_driver, "ScriptedModel", StaleModel)


def over_cap_add(home: codex_driver.Home) -> str:
    """A 300-line Add File to a second index: what the guard, when live, denies."""
    body = "".join("+%s\n" % line for line in common.index_text(300).splitlines())
    return "*** Begin Patch\n*** Add File: %s\n%s*** End Patch\n" % (home.work / "other" / "MEMORY.md", body)


def stale_case(home: codex_driver.Home, case: str, guard: bool) -> stale.Measured:
    """cat, foreign append, the agent's patch for `case`; with the guard, then the over-cap
    Add it must deny (so the stale patch met a live guard and was let through)."""
    index = home.work / "memory" / "MEMORY.md"
    stale.seed(index)
    if guard:
        done = codex_driver.engramory(home, "install", "--host", "codex")
        assert done.returncode == 0, done.stdout + done.stderr
    steps: List[Any] = [[shell_call("cat %s" % index)]]
    write: Callable[[], List[Any]] = lambda: [patch_call(stale.case_patch(case, str(index)))]  # noqa: E731
    steps.append(stale.after_foreign(index, write))
    if guard:
        steps.append([patch_call(over_cap_add(home))])
    result = codex_driver.run(home, steps)
    assert result.returncode == 0, result.stderr[-2000:]
    outputs = result.tool_outputs()
    assert stale.SEED in outputs[0]  # the read showed the index as seeded, before the foreign line
    if guard:
        assert outputs[-1].startswith(BLOCKED), outputs[-1]
        assert not (home.work / "other" / "MEMORY.md").exists()
        outputs = outputs[:-1]
    measured = stale.Measured(index.read_bytes(), case, outputs)
    if not (guard and case in stale.WHOLE and case != "rewrite"):
        stale.assert_guard_silent(measured)
    return measured


def test_stale_add_file_over_the_index_host_drops_the_foreign_line(home: codex_driver.Home, scripted: None) -> None:
    """host drops the foreign line: Add File over the index (Codex's full-file write) puts
    what the agent read plus its line over it."""
    index = home.work / "memory" / "MEMORY.md"
    m = stale_case(home, "add", False)
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    assert m.seen.endswith("Output:\nSuccess. Updated the following files:\nA %s\n" % index)


def refused_case(home: codex_driver.Home, call: Callable[[str], Any]) -> None:
    """Guarded: cat, the other writer, the stale whole-file `call` (refused by the guard with
    the stale rule's message, the foreign line kept), one more cat, the same call (applied)."""
    index = home.work / "memory" / "MEMORY.md"
    stale.seed(index)
    done = codex_driver.engramory(home, "install", "--host", "codex")
    assert done.returncode == 0, done.stdout + done.stderr
    between: List[bytes] = []

    def reread(_body: Any) -> List[Any]:
        between.append(index.read_bytes())
        return [shell_call("cat %s" % index)]

    steps: List[Any] = [[shell_call("cat %s" % index)], stale.after_foreign(index, lambda: [call(str(index))]),
                        reread, [call(str(index))]]
    result = codex_driver.run(home, steps)
    assert result.returncode == 0, result.stderr[-2000:]
    outputs = result.tool_outputs()
    assert between == [stale.READ_FOREIGN.encode()]  # refused: the other writer's line is there
    tool = "apply_patch" if call is add_call else "apply_patch (through the shell)"
    assert outputs[1].startswith("Command blocked by PreToolUse hook: " + stale.stale_message(tool, str(index))), outputs[1]
    assert stale.READ_FOREIGN in outputs[2]  # the read the deny asked for showed the line
    assert index.read_bytes() == stale.FULL_WRITE.encode()  # after that read, the same call goes through
    assert "Success. Updated the following files:\nA %s" % index in outputs[3], outputs[3]


def add_call(path: str) -> Any:
    return patch_call(stale.add_text(path))


def shell_add_call(path: str) -> Any:
    return shell_call("apply_patch <<'EOF'\n%sEOF\n" % stale.add_text(path))


def test_guarded_stale_add_file_is_refused_until_the_agent_reads_again(home: codex_driver.Home, scripted: None) -> None:
    """With the guard, the `cat` PostToolUse recorded what the agent saw, so the stale Add
    over the index is refused with the lines it would drop; one more `cat` clears it."""
    refused_case(home, add_call)


def test_guarded_stale_add_through_the_shell_is_refused_too(home: codex_driver.Home, scripted: None) -> None:
    """The same Add as an `apply_patch` heredoc run through the shell (Codex applies it itself,
    only the Bash PreToolUse sees it): refused the same way."""
    refused_case(home, shell_add_call)


def test_a_partial_read_records_nothing(home: codex_driver.Home, scripted: None) -> None:
    """`head -n 3` shows part of the index: nothing is recorded, so the stale Add is judged as
    before the rule (the guard lets it through and the foreign line is lost, as bare)."""
    index = home.work / "memory" / "MEMORY.md"
    stale.seed(index)
    done = codex_driver.engramory(home, "install", "--host", "codex")
    assert done.returncode == 0, done.stdout + done.stderr
    result = codex_driver.run(home, [[shell_call("head -n 3 %s" % index)],
                                     stale.after_foreign(index, lambda: [add_call(str(index))])])
    assert result.returncode == 0, result.stderr[-2000:]
    assert index.read_bytes() == stale.FULL_WRITE.encode()
    assert not (index.parent / ".engramory" / "seen").exists()


@GUARD
def test_stale_update_patch_host_keeps_the_foreign_line(home: codex_driver.Home, scripted: None, guard: bool) -> None:
    """host keeps the foreign line: the Update (Codex's edit) matches the file as it is."""
    index = home.work / "memory" / "MEMORY.md"
    m = stale_case(home, "patch", guard)
    assert m.outcome == stale.KEPT
    assert m.on_disk == stale.EDITED_KEPT.encode()
    assert m.seen.endswith("Output:\nSuccess. Updated the following files:\nM %s\n" % index)


@GUARD
def test_stale_delete_and_add_host_refuses_any_two_operations_on_one_file(home: codex_driver.Home, scripted: None,
                                                                         guard: bool) -> None:
    """host refuses, though not for staleness: two operations on one file in one patch are
    refused for every file (the control below: with no foreign write too)."""
    index = home.work / "memory" / "MEMORY.md"
    m = stale_case(home, "rewrite", guard)
    assert m.outcome == stale.REFUSED
    assert m.on_disk == stale.READ_FOREIGN.encode()
    assert m.seen == "apply_patch verification failed: invalid patch: multiple operations target %s" % index


def test_control_delete_and_add_is_refused_with_no_foreign_write(home: codex_driver.Home) -> None:
    index = home.work / "memory" / "MEMORY.md"
    stale.seed(index)
    result = codex_driver.run(home, [[shell_call("cat %s" % index)], [patch_call(stale.rewrite_text(str(index)))]])
    assert result.returncode == 0, result.stderr[-2000:]
    assert index.read_bytes() == stale.SEED.encode()
    assert "multiple operations target" in result.tool_outputs()[-1]


# --- plain shell writes of the whole index (not apply_patch) -------------------------------------
# Measured on 0.171.0: after a stale `cat`, a whole-index write through the shell lands as it
# would with no other writer (the foreign line dropped), bare. Guarded, the forms whose bytes
# engramory.shellwrite predicts are refused; one it does not (`printf '%b'`, whose bytes here are
# those of `%s`) lands as bare, and the PostToolUse notice speaks of caps only: the model is told
# nothing.


def _printf_write(path: str, directive: str = "%s") -> str:
    return "printf '%s\\n' %s > %s" % (directive, " ".join('"%s"' % line for line in stale.FULL_WRITE.splitlines()),
                                       path)


SHELL_WRITES = {
    "cat-heredoc": lambda path: "cat > %s <<'EOF'\n%sEOF\n" % (path, stale.FULL_WRITE),
    "printf": _printf_write,
    "printf-b-unread": lambda path: _printf_write(path, "%b"),
    "tee-heredoc": lambda path: "tee %s <<'EOF'\n%sEOF\n" % (path, stale.FULL_WRITE),
}


def _added_messages(before: dict[str, Any], after: dict[str, Any]) -> List[str]:
    """The message texts (developer or user: where a hook's context goes) that `after`, a
    request, holds past what `before` held: what Codex added around one tool call."""
    old = before.get("input", [])
    new = after.get("input", [])
    assert new[:len(old)] == old, "Codex's input is not append-only here"
    return [str(part.get("text")) for item in new[len(old):] if item.get("type") == "message"
            for part in item.get("content", []) if isinstance(part, dict)]


READ_FORMS = ("cat-heredoc", "printf", "tee-heredoc")  # the forms the guard reads (engramory.shellwrite)


@GUARD
@pytest.mark.parametrize("how", sorted(SHELL_WRITES))
def test_stale_shell_write_of_the_whole_index(home: codex_driver.Home, scripted: None, guard: bool, how: str) -> None:
    """host drops the foreign line: `cat > MEMORY.md <<'EOF'`, `printf ... > MEMORY.md` and
    `tee MEMORY.md <<'EOF'` after a stale `cat` put what the agent read plus its line over the
    index, and no notice follows the write. Guarded, all three are refused (the foreign line
    stays). With the guard, the same session's over-cap Add to a second index is denied (the
    guard was live)."""
    index = home.work / "memory" / "MEMORY.md"
    stale.seed(index)
    if guard:
        done = codex_driver.engramory(home, "install", "--host", "codex")
        assert done.returncode == 0, done.stdout + done.stderr
    write = SHELL_WRITES[how](str(index))
    steps: List[Any] = [[shell_call("cat %s" % index)], stale.after_foreign(index, lambda: [shell_call(write)])]
    if guard:
        steps.append([patch_call(over_cap_add(home))])
    result = codex_driver.run(home, steps)
    assert result.returncode == 0, result.stderr[-2000:]
    outputs = result.tool_outputs()
    assert stale.SEED in outputs[0]
    if guard and how in READ_FORMS:
        tool = "write through the shell (heredoc, printf or echo)"
        assert outputs[1].startswith("Command blocked by PreToolUse hook: " + stale.stale_message(tool, str(index))), \
            outputs[1]
        assert index.read_bytes() == stale.READ_FOREIGN.encode()  # refused: the foreign line stays
    else:
        assert index.read_bytes() == stale.FULL_WRITE.encode()  # the foreign line is gone
        assert stale.outcome(index.read_bytes(), "write") == stale.DROPPED
        shown = "Process exited with code 0\nOriginal token count: %d\nOutput:\n%s" % (
            (49, stale.FULL_WRITE) if how == "tee-heredoc" else (0, ""))
        assert outputs[1].endswith(shown), outputs[1]  # tee echoes what it wrote; the rest print nothing
        assert _added_messages(result.requests[1], result.requests[2]) == []  # no notice, no context
    if guard:
        assert outputs[2].startswith(BLOCKED), outputs[2]
        assert not (home.work / "other" / "MEMORY.md").exists()

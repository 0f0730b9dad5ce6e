"""Stale writes on the real Kilo Code CLI (pinned in package.json), offline (issue 22, "Stale
writes, per host"): the agent reads MEMORY.md, another process appends a pointer line, then the
agent writes from what it read (hostkit/stale.py). Each case runs without the guard and with it
installed, and asserts the exact bytes on disk. A Kilo run costs ~15-30 s, so one session
measures two cases, each on its own index (`a/memory/MEMORY.md`, `b/memory/MEMORY.md`): write
and edit with the default model, apply_patch Update and Delete+Add with a `gpt-` model id
(there apply_patch replaces edit; write stays).

What Kilo 7.7.9 does, as opencode does: no staleness check at all (the tools' descriptions ask
for a prior read; nothing enforces it). `write` overwrites the file with the agent's content,
dropping the other writer's line; `edit` and an apply_patch Update match against the file as
it is when they run and keep it; a Delete+Add patch drops it as `write` does.

With the guard installed (the opencode plugin, whose `tool.execute.after` tells the guard what
`read` showed the session: engramory.stale), the stale `write` and Delete+Add are refused by
the guard with the line they would drop, and after one more read the same call goes through;
`edit` and the Update patch keep the line, and the guard predicted their bytes and let them
through."""

from __future__ import annotations

from typing import Any, List, Sequence, Tuple

import pytest
import stale
from kilo_driver import PATCH_MODEL, Kilo

EXPECTED = {"write": stale.DROPPED, "edit": stale.KEPT, "patch": stale.KEPT, "rewrite": stale.DROPPED}
SEEN = {
    "write": "Wrote file successfully.", "edit": "Edit applied successfully.",
    "patch": "Success. Updated the following files:\nM %s",
    "rewrite": "Success. Updated the following files:\nD %s\nA %s",
}


def measure_pair(kilo: Kilo, cases: Sequence[str], guard: bool, **run_args: Any) -> List[Tuple[stale.Measured, str]]:
    """One session: for each case its own index, read, the foreign append, the agent's call.
    Each case's Measured and the path the agent named, after the guard's trace is checked."""
    trace = kilo.trace_file()
    if guard:
        kilo.install()
    turns: List[Any] = []
    indexes = []
    for letter, case in zip("ab", cases):
        rel = "%s/memory/MEMORY.md" % letter
        index = stale.seed(kilo.project / rel)
        indexes.append((case, index, rel))
        turns.append([kilo.read_call(str(index))])
        turns.append(stale.after_foreign(index, lambda c=case, i=index, r=rel: [stale.agent_call(kilo, c, i, r)]))
    result, model = kilo.run([*turns, "done"], ENGRAMORY_TRACE_FILE=str(trace), **run_args)
    kilo.assert_completed(result)
    messages = model.tool_messages()
    tools = stale.offered_tools(model.turn_requests)
    out = []
    for n, (case, index, rel) in enumerate(indexes):
        m = stale.Measured(index.read_bytes(), case, messages[2 * n: 2 * n + 2], tools)
        stale.assert_guard_silent(m)
        stale.assert_predicted(trace, index, guard, case)
        out.append((m, rel))
    return out


def test_stale_write_drops_and_edit_keeps_the_foreign_line(kilo: Kilo) -> None:
    (write, _), (edit, _) = measure_pair(kilo, ("write", "edit"), False)
    assert "edit" in write.tools and "apply_patch" not in write.tools
    assert (write.outcome, edit.outcome) == (EXPECTED["write"], EXPECTED["edit"])
    assert write.on_disk == stale.FULL_WRITE.encode() and write.seen == SEEN["write"]
    assert edit.on_disk == stale.EDITED_KEPT.encode() and edit.seen == SEEN["edit"]
    assert "(End of file - total 5 lines)" in write.tool_results[0]  # the read showed 5 lines, no foreign one


def test_stale_patch_keeps_and_rewrite_patch_drops_the_foreign_line(kilo: Kilo) -> None:
    (patch, prel), (rewrite, rrel) = measure_pair(kilo, ("patch", "rewrite"), False, model=PATCH_MODEL)
    assert "apply_patch" in patch.tools and "write" in patch.tools and "edit" not in patch.tools
    assert (patch.outcome, rewrite.outcome) == (EXPECTED["patch"], EXPECTED["rewrite"])
    assert patch.on_disk == stale.EDITED_KEPT.encode() and patch.seen == SEEN["patch"] % prel
    assert rewrite.on_disk == stale.FULL_WRITE.encode() and rewrite.seen == SEEN["rewrite"] % (rrel, rrel)



@pytest.mark.parametrize("case", ["edit", "patch"])
def test_guarded_stale_edit_and_patch_keep_the_foreign_line(kilo: Kilo, case: str) -> None:
    """The guard lets through the stale calls that keep the other writer's line."""
    ((m, rel),) = measure_pair(kilo, (case,), True, **({"model": PATCH_MODEL} if case == "patch" else {}))
    assert m.outcome == stale.KEPT and m.on_disk == stale.EDITED_KEPT.encode()
    assert m.seen == (SEEN[case] % rel if case == "patch" else SEEN[case])


@pytest.mark.parametrize("case", ["write", "rewrite"])
def test_guard_refuses_the_stale_write_and_rewrite_and_after_a_read_the_same_call_goes_through(
        kilo: Kilo, case: str) -> None:
    """guard refuses: the stale write (or Delete+Add) would drop the foreign line; Kilo hands
    the thrown reason to the model word for word; one more read, and the same call lands."""
    index = kilo.project / "memory" / "MEMORY.md"
    kilo.install()
    r = stale.run_refused(kilo, case, index, **({"model": PATCH_MODEL} if case == "rewrite" else {}))
    assert r.outcome == stale.REFUSED and r.after_deny == stale.READ_FOREIGN.encode()
    assert r.seen == stale.stale_message("write" if case == "write" else "apply_patch", str(index)), r.seen
    assert "(End of file - total 6 lines)" in r.tool_results[2]
    applied = SEEN["write"] if case == "write" else "Success. Updated the following files:\nD "
    assert r.tool_results[3].startswith(applied), r.tool_results[3]
    assert r.at_end == stale.FULL_WRITE.encode()

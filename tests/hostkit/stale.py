"""The stale-write cases every real-CLI suite measures (issue 22, "Stale writes, per host"):
the agent reads MEMORY.md with its host's read tool, another process appends a pointer line,
then the agent writes from what it read: a full-file write of that content plus one line, an
edit of a line it read, or a patch of that line (and, where a patch is the host's only way to
write a whole file, the full-file write as a patch: Delete + Add of the file, or an Add over
it). What the host does is one of three outcomes, told apart by the exact bytes on disk:

- REFUSED: the file still holds what the other writer left (the read content and its line);
  the agent's write did not land.
- KEPT: the agent's change landed and the foreign line survived.
- DROPPED: the agent's change landed and the foreign line is gone (a lost update).

The other process is a real one, started by the scripted model when the request after the
read arrives, so it runs between the host's read and the host's write exactly as a second
session would: APPEND (`sh -c "printf ... >> MEMORY.md"`, the same file grown in place) or
ENGRAMORY_NEW (`engramory new`, which rewrites the index by an atomic rename: a new inode, as
engramory's own curation commands and most sync clients leave it). Standard library only.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

import common
import scenarios

SEED = common.index_text(5)
FOREIGN = "- [foreign](foreign.md) - added by another session\n"
AGENT = "- [mine](mine.md) - the agent's own line\n"
OLD_LINE = "- [note 2](note-2.md) - hook 2\n"
NEW_LINE = "- [note 2](note-2.md) - hook 2, revised\n"

READ_FOREIGN = SEED + FOREIGN  # what the other process leaves: nothing of the agent's
FULL_WRITE = SEED + AGENT  # case 1: the content the agent read, plus one line
FULL_KEPT = SEED + FOREIGN + AGENT  # a host that merged (none was seen doing it)
EDITED = SEED.replace(OLD_LINE, NEW_LINE)  # cases 2 and 3 applied to what the agent read
EDITED_KEPT = EDITED + FOREIGN  # ... applied to the file on disk

REFUSED, KEPT, DROPPED = "host refuses", "host keeps the foreign line", "host drops the foreign line"
CASES = ("write", "edit", "patch", "rewrite", "add")
WHOLE = ("write", "rewrite", "add")  # the cases that write the whole file


def patch_text(path: str) -> str:
    """Case 3 as an apply_patch (V4A) of the line the agent read, with the lines around it."""
    return ("*** Begin Patch\n*** Update File: %s\n@@\n - [note 1](note-1.md) - hook 1\n-%s+%s"
            " - [note 3](note-3.md) - hook 3\n*** End Patch\n" % (path, OLD_LINE, NEW_LINE))


def rewrite_text(path: str) -> str:
    """Case 1 as a patch: delete the file and add it back with what the agent read plus one
    line (what a model does with a patch tool when it means to write the whole file)."""
    body = "".join("+%s\n" % line for line in FULL_WRITE.splitlines())
    return "*** Begin Patch\n*** Delete File: %s\n*** Add File: %s\n%s*** End Patch\n" % (path, path, body)


def add_text(path: str) -> str:
    """Case 1 as a patch that adds the file over the one there (Codex overwrites silently)."""
    body = "".join("+%s\n" % line for line in FULL_WRITE.splitlines())
    return "*** Begin Patch\n*** Add File: %s\n%s*** End Patch\n" % (path, body)


def case_patch(case: str, path: str) -> str:
    """The patch text of a patch case: "patch" (an Update of the line read), "rewrite"
    (Delete + Add) or "add" (Add over the file)."""
    return {"patch": patch_text, "rewrite": rewrite_text, "add": add_text}[case](path)


def outcome(on_disk: bytes, case: str, left: str = READ_FOREIGN) -> str:
    """REFUSED, KEPT or DROPPED for the bytes on disk after `case` (write, edit or a patch),
    `left` being what the other writer left; an AssertionError naming the bytes when they are
    none of the three."""
    text = on_disk.decode("utf-8")
    if text == left:
        return REFUSED
    if case not in WHOLE and text == left.replace(OLD_LINE, NEW_LINE):
        return KEPT
    if case in WHOLE and text == FULL_KEPT and left == READ_FOREIGN:
        return KEPT
    if text == (FULL_WRITE if case in WHOLE else EDITED):
        return DROPPED
    raise AssertionError("after the %s the index holds neither outcome: %r" % (case, on_disk))


@dataclass(frozen=True)
class Foreign:
    """Another writer: how it writes the index (a process of its own), and what it leaves."""

    name: str
    write: Callable[[Path], None]
    left: str


def _append(index: Path) -> None:
    command = scenarios.append_command(index, FOREIGN.rstrip("\n"))
    subprocess.run(["sh", "-c", command], check=True, timeout=30)


def _engramory_new(index: Path) -> None:
    done = common.engramory(["new", str(index.parent), "--type", "user", "--description", NEW_DESCRIPTION,
                             "--body", "The other session's fact."], index.parent, index.parent)
    assert done.returncode == 0, done.stdout + done.stderr


NEW_DESCRIPTION = "added by another session"
NEW_LEFT = SEED + "\n## user\n- [added by another session](added-another-session.md)\n"  # the name `new` derives
APPEND = Foreign("append", _append, READ_FOREIGN)
ENGRAMORY_NEW = Foreign("engramory new", _engramory_new, NEW_LEFT)


def append_foreign(index: Path) -> None:
    """Another process appends the foreign pointer line, as a second session's shell would."""
    _append(index)


def after_foreign(index: Path, make: Callable[[], Sequence[Any]], foreign: Foreign = APPEND) -> Callable[[Any], Sequence[Any]]:
    """A scripted turn: the other writer writes the index (once, even if the CLI retries the
    request), then the turn's calls (`make()`) are returned to the CLI."""
    done = threading.Event()
    lock = threading.Lock()

    def turn(_request: Any) -> Sequence[Any]:
        with lock:
            if not done.is_set():
                foreign.write(index)
                assert index.read_text(encoding="utf-8") == foreign.left
                done.set()
        return list(make())

    return turn


def seed(index: Path) -> Path:
    return scenarios.seed_index(index, SEED)


def agent_call(host: Any, case: str, index: Path, arg: Optional[str] = None) -> Any:
    """The agent's write for `case` in the host's own tools (`arg`: the path as it names it)."""
    where = arg or str(index)
    if case == "write":
        return host.write_call(where, FULL_WRITE)
    if case == "edit":
        return host.edit_call(where, OLD_LINE, NEW_LINE)
    return host.patch_call(case_patch(case, where))


def run_case(host: Any, case: str, index: Path, arg: Optional[str] = None, foreign: Foreign = APPEND,
             **run_args: Any) -> Measured:
    """A hostbase.Host session: read, the foreign write, the agent's `case` write, then "done".
    The bytes on disk, the outcome and what the model was sent after its write."""
    seed(index)
    result, model = host.run([[host.read_call(arg or str(index))],
                              after_foreign(index, lambda: [agent_call(host, case, index, arg)], foreign), "done"],
                             **run_args)
    host.assert_completed(result)
    return Measured(index.read_bytes(), case, list(model.tool_messages()), offered_tools(model.turn_requests),
                    foreign.left)


def run_fresh(host: Any, case: str, index: Path, arg: Optional[str] = None, **run_args: Any) -> bytes:
    """The control: the same session with no foreign write in between. The bytes on disk
    after it (they show the agent's call itself is one the host applies)."""
    seed(index)
    result, _ = host.run([[host.read_call(arg or str(index))], [agent_call(host, case, index, arg)], "done"], **run_args)
    host.assert_completed(result)
    return index.read_bytes()


def fresh_result(case: str) -> bytes:
    """What `case` leaves when nothing else wrote the file since the read."""
    return (FULL_WRITE if case in WHOLE else EDITED).encode("utf-8")


class Measured:
    """One stale case as it ended: the exact bytes, the outcome, the tool results the model
    was sent (the read's first, the write's last)."""

    def __init__(self, on_disk: bytes, case: str, tool_results: List[str], tools: Sequence[str] = (),
                 left: str = READ_FOREIGN) -> None:
        self.on_disk = on_disk
        self.case = case
        self.tool_results = tool_results
        self.tools = list(tools)  # the tools the host offered the model
        self.outcome = outcome(on_disk, case, left)

    @property
    def seen(self) -> str:
        """What the model was sent for its write (the last tool result)."""
        assert self.tool_results, "the model was sent no tool result"
        return self.tool_results[-1]

    def summary(self) -> Dict[str, Any]:
        return {"case": self.case, "outcome": self.outcome, "bytes": self.on_disk, "seen": self.tool_results[-1:]}


def offered_tools(requests: Sequence[Dict[str, Any]]) -> List[str]:
    """The tool names of the first chat-completions turn request."""
    if not requests:
        return []
    return sorted(str((t.get("function") or t).get("name")) for t in requests[0].get("tools") or [])


def would_write(case: str, left: str = READ_FOREIGN) -> bytes:
    """What the host writes when it applies `case` to the file on disk (`left` by the other
    writer): the bytes a guard's prediction shows at PreToolUse."""
    return (FULL_WRITE if case in WHOLE else left.replace(OLD_LINE, NEW_LINE)).encode("utf-8")


def measure(host: Any, case: str, index: Path, guard: bool, arg: Optional[str] = None,
            predicted: Optional[List[Optional[bytes]]] = None, foreign: Foreign = APPEND, **run_args: Any) -> Measured:
    """run_case with the guard installed (`guard`) or not, and ENGRAMORY_TRACE_FILE set: with
    the guard, it judged the agent's one call, predicting the host's bytes against the disk as
    the foreign write left it (`predicted`, by default [would_write(case)]; [] for a tool its
    hook does not see, [None] where it predicts the host refuses), and refused nothing;
    without it, nothing judged anything."""
    trace = host.trace_file()
    if guard:
        host.install()
    measured = run_case(host, case, index, arg, foreign, ENGRAMORY_TRACE_FILE=str(trace), **run_args)
    assert_guard_silent(measured)
    assert_predicted(trace, index, guard, case, predicted, foreign.left)
    return measured


def assert_predicted(trace: Path, index: Path, guard: bool, case: str,
                     predicted: Optional[List[Optional[bytes]]] = None, left: str = READ_FOREIGN) -> None:
    """The guard's trace for `index` (see measure)."""
    expected = ([would_write(case, left)] if predicted is None else predicted) if guard else []
    assert guard_predictions(trace, index) == expected


def assert_guard_silent(measured: Measured) -> None:
    """The guard (installed) did not refuse: the stale write is not something it looks at."""
    assert not any(scenarios.REFUSED in m for m in measured.tool_results), measured.tool_results


def guard_predictions(trace: Path, index: Path) -> List[Optional[bytes]]:
    """What the guard predicted for `index`, one entry per call it judged (from
    ENGRAMORY_TRACE_FILE): the bytes it expected the host to write, None when it refused."""
    seen = []
    for entry in common.read_trace(trace):
        if Path(str(entry["path"])).resolve() == index.resolve():
            after = entry.get("after")
            seen.append(bytes.fromhex(str(after)) if isinstance(after, str) else None)
    return seen


def probe_command(log: Path) -> str:
    """A hook command that appends its stdin (one JSON payload) as a line to `log` and
    answers nothing: what a guard hook on the read tool would be given."""
    code = "import sys; open(sys.argv[1], 'ab').write(sys.stdin.buffer.read().replace(b'\\n', b' ') + b'\\n')"
    return "%s -c \"%s\" %s" % (sys.executable, code, log)


def probed(log: Path) -> List[Dict[str, Any]]:
    """The payloads a probe hook logged, in order."""
    return common.read_trace(log)


# -- with the stale-write rule (engramory.stale): the guard refuses what the host would drop ----


def stale_message(tool: str, path: str, left: str = READ_FOREIGN) -> str:
    """The guard's deny of a whole-file `tool` call on `path` from a read of SEED, the other
    writer having left `left` (every line past SEED is one it added and the write drops)."""
    added = [(n, line) for n, line in enumerate(left.splitlines(), 1) if n > SEED.count("\n") and line.strip()]
    shown = "; ".join('line %d: "%s"' % (n, line) for n, line in added[:3])
    many = len(added) != 1
    return ("engramory blocked this %s: %s changed since this session last read it: another writer added %d line%s "
            "(%s), and this %s would drop %s. Read MEMORY.md again and redo your change on what is there now. "
            "Nothing was written; compacting is allowed after that read." % (
                tool, path, len(added), "s" if many else "", shown, tool, "them" if many else "it"))


class Refused:
    """A stale whole-file case with the guard installed: the bytes on disk after the agent's
    first (stale) write, the outcome, the tool results the model was sent (read, write, the
    second read, the same write again), and the bytes at the end."""

    def __init__(self, after_deny: bytes, case: str, tool_results: List[str], at_end: bytes, left: str) -> None:
        self.after_deny = after_deny
        self.outcome = outcome(after_deny, case, left)
        self.tool_results = tool_results
        self.at_end = at_end

    @property
    def seen(self) -> str:
        """What the model was sent for its stale write."""
        assert len(self.tool_results) >= 2, self.tool_results
        return self.tool_results[1]


def run_refused(host: Any, case: str, index: Path, arg: Optional[str] = None, foreign: Foreign = APPEND,
                **run_args: Any) -> Refused:
    """A hostbase.Host session with the guard installed: read, the other writer, the agent's
    whole-file `case` (which the guard must refuse), one more read (what the deny asks for),
    and the very same call again (now an informed one: applied), then "done"."""
    seed(index)
    between: List[bytes] = []

    def reread(_request: Any) -> Sequence[Any]:
        between.append(index.read_bytes())
        return [host.read_call(arg or str(index))]

    result, model = host.run([[host.read_call(arg or str(index))],
                              after_foreign(index, lambda: [agent_call(host, case, index, arg)], foreign),
                              reread, [agent_call(host, case, index, arg)], "done"], **run_args)
    host.assert_completed(result)
    assert between, "the model was not asked for the turn after the stale write"
    return Refused(between[0], case, list(model.tool_messages()), index.read_bytes(), foreign.left)

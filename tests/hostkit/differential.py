"""The differential prediction check every real-CLI suite runs: many generated edits in one
session, the guard recording each prediction (ENGRAMORY_TRACE_FILE), then each file's bytes on
disk compared with what the guard predicted.

- a predicted refusal leaves the file exactly as it was (absent if it was absent);
- an exact prediction (bound 0) equals the bytes the host wrote;
- a bounded prediction (the host matches loosely where the guard cannot reproduce it) has the
  host's line count exactly and its size within `bound` bytes.

A suite says only how its host calls its tools (`Edit.call`) and, where it has one, the bound.
Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence, Tuple

import common
import edit_cases

Call = Any  # a host's tool call: (name, arguments), or a Responses item


@dataclass
class Edit:
    path: Path
    seed: Optional[bytes]  # the file before; None: it does not exist
    call: Call
    bound: int = 0  # 0: the prediction is exact


@dataclass
class Outcome:
    exact: int  # allowed edits whose prediction was exact (and held)
    refused: int  # edits the guard refused (and the file stayed as it was)
    changed: int  # files whose bytes differ from their seed


def case_paths(root: Path, cases: Sequence[edit_cases.Case]) -> List[Path]:
    """One index per case, `<root>/<case name>/MEMORY.md` (a MEMORY.md is guarded as an index)."""
    return [root / case.name / "MEMORY.md" for case in cases]


def case_edits(host: Any, root: Path, cases: Sequence[edit_cases.Case], bound: Optional[Callable[[Edit], int]] = None,
               seed_writes: bool = True) -> List[Edit]:
    """The generated cases as the host's calls (`host.write_call`, `host.edit_call`), one
    index each under `root`; `seed_writes=False` leaves a whole-file write's path absent (for a
    create tool that refuses an existing file); `bound` gives a loosely matching host's bound."""
    edits = []
    for case, path in zip(cases, case_paths(root, cases)):
        if case.kind == "write":
            edit = Edit(path, case.seed if seed_writes else None, host.write_call(str(path), case.content))
        else:
            edit = Edit(path, case.seed, host.edit_call(str(path), case.old, case.new, case.replace_all))
        if bound is not None:
            edit.bound = bound(edit)
        edits.append(edit)
    return edits


def plant(edits: Sequence[Edit]) -> None:
    """Create each edit's folder and, where it has one, its seed file."""
    for edit in edits:
        edit.path.parent.mkdir(parents=True, exist_ok=True)
        if edit.seed is not None:
            edit.path.write_bytes(edit.seed)


def judge(edits: Sequence[Edit], trace: Path, host: str) -> Outcome:
    """Compare the files on disk with the guard's recorded predictions; every problem is
    listed in one failure."""
    predicted = {str(r["path"]): r for r in common.read_trace(trace)}
    seen = sum(1 for e in edits if str(e.path) in predicted)
    assert seen == len(edits) == len(predicted), "the guard saw %d of %d edits (and %d other paths)" % (
        seen, len(edits), len(predicted) - seen)
    problems: List[str] = []
    exact = refused = changed = 0
    for edit in edits:
        record = predicted[str(edit.path)]
        name = edit.path.parent.name
        got = edit.path.read_bytes() if edit.path.exists() else None
        changed += got != edit.seed
        if record["refused"]:
            refused += 1
            if got != edit.seed:
                problems.append("%s: predicted a refusal, %s wrote %r" % (name, host, got))
            continue
        want = bytes.fromhex(str(record["after"]))
        if got is None:
            problems.append("%s: predicted %r, %s wrote nothing" % (name, want, host))
        elif edit.bound == 0:
            exact += 1
            if got != want:
                problems.append("%s: predicted %r, %s wrote %r" % (name, want, host, got))
        elif got.count(b"\n") != want.count(b"\n") or abs(len(got) - len(want)) > edit.bound:
            problems.append("%s: predicted %r (bound %d bytes), %s wrote %r" % (name, want, edit.bound, host, got))
    assert not problems, "\n".join(problems)
    return Outcome(exact, refused, changed)


def run(host: Any, edits: Sequence[Edit], before: Sequence[Sequence[Call]] = (), timeout: float = 300,
        **run_args: Any) -> Outcome:
    """Plant the seeds, run one session (the `before` turns, then every edit's call in one
    turn), and judge the result. `host` is a hostbase.Host."""
    plant(edits)
    trace = host.trace_file()
    result, _ = host.run([*before, [e.call for e in edits], "done"], timeout=timeout, ENGRAMORY_TRACE_FILE=str(trace),
                         **run_args)
    host.assert_completed(result)
    return judge(edits, trace, host.title)


def patches(root: Path, count: int = 12, strip_context: bool = False) -> List[Tuple[Path, bytes, str]]:
    """`count` generated Codex-style patches, one per file `<root>/<case>/MEMORY.md` (LF, CRLF,
    mixed, BOM, no final newline): every other one swaps the file's second line, the rest add a
    line after it (as context, right-stripped with `strip_context`). (path, seed, patch text)."""
    out = []
    for n, case in enumerate(edit_cases.cases(count)):
        path = root / case.name / "MEMORY.md"
        first = case.seed.decode("utf-8").lstrip("\ufeff").replace("\r\n", "\n").split("\n")[1]
        if n % 2:
            body = "@@\n %s\n+- [added](added.md) by patch\n" % (first.rstrip() if strip_context else first)
        else:
            body = "@@\n-%s\n+- [swap](s.md) x\n" % first
        out.append((path, case.seed, "*** Begin Patch\n*** Update File: %s\n%s*** End Patch" % (path, body)))
    return out


def patch_edits(root: Path, call: Callable[[str], Call], bound: Callable[[bytes, str], int] = lambda seed, text: 0,
                count: int = 12, strip_context: bool = False) -> List[Edit]:
    """patches() as Edits: `call` makes the host's patch call of a text, `bound` its bound."""
    return [Edit(path, seed, call(text), bound(seed, text)) for path, seed, text in patches(root, count, strip_context)]

"""Hermes's V4A patches (the `patch` tool's patch mode): its file operations replayed on a copy
held in memory, with Hermes's own code inside Hermes, else with an emulation of it.

The emulation is not engramory.patches.parse_v4a: Hermes 0.19.0 reads its own dialect of V4A
(tools/patch_parser.py), which differs from Codex's that engramory.patches follows. The Begin /
End markers are optional, empty lines are dropped, every other unprefixed line is context,
`*** Move File: a -> b` moves a file unchanged, an added file is its `+` lines joined by
newlines (no final one), `@@ <line> @@` inserts after that line, and the whole patch is applied
or nothing is. Only the data types (FileOp, Hunk, PatchError) are shared with engramory.patches.

Loaded only for a patch-mode call that names a guarded file (engramory.hosts.hermes imports it
lazily): the ignored path and the replace-mode deny never load it. What it needs of the dialect
(path resolution, Hermes's reads and writes, its exact matcher, the requests) it takes from the
package as an argument, `hermes`: the package passes itself, so this module never imports it back
and the two form no import cycle.
"""

from __future__ import annotations

import os
import re

from engramory import patches

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any, Protocol

    from engramory.edits import Request

    class Hermes(Protocol):
        """What the V4A code takes from engramory.hosts.hermes (mypy checks the module against
        it where the package passes itself)."""

        TAG: str
        REFUSED: str
        UNKNOWN: str

        def resolve(self, raw: str, bases: Sequence[str]) -> str: ...
        def guarded(self, path: str, env: Mapping[str, str]) -> bool: ...
        def read_file(self, path: str) -> bytes | None: ...
        def text_of(self, raw: bytes) -> str: ...
        def write_bytes(self, before: bytes | None, content: str) -> bytes: ...
        def replace_exact(self, text: str, old: str, new: str, replace_all: bool) -> str: ...
        def replace_estimate(self, text: str, old: str, new: str) -> str: ...
        def write_request(self, tool: str, path: str, after: bytes) -> Request: ...
        def delete_request(self, tool: str, path: str) -> Request: ...

HEADER = re.compile(r"\*\*\*\s*(Update|Add|Delete)\s+File:\s*(.+)")
MOVE = re.compile(r"\*\*\*\s*Move\s+File:\s*(.+?)\s*->\s*(.+)")
HINT = re.compile(r"@@\s*(.+?)\s*@@")
KINDS = {"Update": patches.UPDATE, "Add": patches.ADD, "Delete": patches.DELETE}


# -- Hermes's file operations, dry run -----------------------------------------------------------


class _Result:
    """The shape Hermes's V4A code reads back from file operations."""

    def __init__(self, content: str | None = None, error: str | None = None) -> None:
        self.content = content
        self.error = error
        self.lsp_diagnostics = None


class DryRunFiles:
    """Hermes's file operations for its V4A code, on a copy held in memory: reads see the
    files as they are (and as earlier operations left them); nothing is written to disk."""

    def __init__(self, hermes: Hermes, bases: Sequence[str]) -> None:
        self.hermes = hermes
        self.bases = list(bases)
        self.state: dict[str, bytes | None] = {}
        self.order: list[str] = []
        self.made_dirs: set[str] = set()  # write_file makes missing parents (mkdir -p)

    def path(self, raw: str) -> str:
        return self.hermes.resolve(raw, self.bases)

    def current(self, path: str) -> bytes | None:
        if path in self.state:
            return self.state[path]
        return self.hermes.read_file(path)

    def _set(self, path: str, data: bytes | None) -> None:
        if path not in self.order:
            self.order.append(path)
        self.state[path] = data

    def read_file_raw(self, raw: str) -> _Result:
        data = self.current(self.path(raw))
        if data is None:
            return _Result(error="File not found: %s" % raw)
        return _Result(content=self.hermes.text_of(data))

    def write_file(self, raw: str, content: str) -> _Result:
        path = self.path(raw)
        self._set(path, self.hermes.write_bytes(self.current(path), content))
        parent = os.path.dirname(path)
        while parent and parent not in self.made_dirs and os.path.dirname(parent) != parent:
            self.made_dirs.add(parent)
            parent = os.path.dirname(parent)
        return _Result()

    def delete_file(self, raw: str) -> _Result:
        self._set(self.path(raw), None)
        return _Result()

    def move_file(self, src: str, dst: str) -> _Result:
        source, target = self.path(src), self.path(dst)
        data = self.current(source)
        if data is None:
            return _Result(error="source not found: %s" % src)
        folder = os.path.dirname(target)
        if folder not in self.made_dirs and not os.path.isdir(folder):
            # Hermes moves with a plain `mv`: into a folder that does not exist it fails
            return _Result(error="cannot move %s to %s: no such folder" % (src, dst))
        self._set(source, None)
        self._set(target, data)
        return _Result()


# -- Hermes's V4A dialect, outside Hermes --------------------------------------------------------


# -- Hermes's V4A dialect, outside Hermes --------------------------------------------------------


def _span(lines: list[str]) -> tuple[int, int]:
    """Hermes's markers, both optional: (the line before the body, the line after it)."""
    start, end = -1, len(lines)
    for i, line in enumerate(lines):
        if "*** Begin Patch" in line or "***Begin Patch" in line:
            start = i
        elif "*** End Patch" in line or "***End Patch" in line:
            end = i
            break
    return start, end


class _Parser:
    """Hermes's parse_v4a_patch, one line at a time: `feed` every body line, then `finish`."""

    def __init__(self) -> None:
        self.ops: list[Any] = []
        self.added: dict[int, list[str]] = {}  # an added file's `+` lines, by id of its FileOp
        self.op: Any = None
        self.hunk: Any = None

    def flush(self) -> None:
        op, hunk = self.op, self.hunk
        if op is not None:
            if hunk is not None and (hunk.old or hunk.new) and hunk not in op.hunks:
                op.hunks.append(hunk)
            if op not in self.ops:
                self.ops.append(op)

    def feed(self, line: str) -> None:
        if self.header(line):
            return
        if line.startswith("@@"):
            self.hint(line)
            return
        self.body(line)

    def header(self, line: str) -> bool:
        """A `*** Update/Add/Delete File:` or `*** Move File:` line starts the next operation."""
        m = HEADER.match(line)
        mm = None if m else MOVE.match(line)
        if m is None and mm is None:
            return False
        self.flush()
        self.op, self.hunk = None, None
        if mm is not None:
            moved = patches.FileOp(patches.UPDATE, mm.group(1).strip(), patches.V4A)
            moved.move_to = mm.group(2).strip()
            self.ops.append(moved)
            return True
        assert m is not None
        op = patches.FileOp(KINDS[m.group(1)], m.group(2).strip(), patches.V4A)
        if op.kind == patches.DELETE:
            self.ops.append(op)
            return True
        self.op = op
        if op.kind == patches.ADD:
            self.hunk = patches.Hunk()
            self.added[id(op)] = []
        return True

    def hint(self, line: str) -> None:
        """`@@` (with an optional line to seek to) starts a hunk of the current operation."""
        op, hunk = self.op, self.hunk
        if op is None:
            return
        if hunk is not None and (hunk.old or hunk.new) and hunk not in op.hunks:
            op.hunks.append(hunk)
        m = HINT.match(line)
        self.hunk = patches.Hunk()
        self.hunk.context = m.group(1) if m else None

    def body(self, line: str) -> None:
        """`+` new, `-` old, `\\` ignored, anything else context; empty lines are dropped."""
        op = self.op
        if op is None or not line:
            return
        if self.hunk is None:
            self.hunk = patches.Hunk()
        hunk = self.hunk
        tag, rest = line[0], line[1:]
        if tag == "+":
            hunk.new.append(rest)
            if op.kind == patches.ADD:
                self.added[id(op)].append(rest)
        elif tag == "-":
            hunk.old.append(rest)
        elif tag != "\\":
            content = rest if tag == " " else line
            hunk.old.append(content)
            hunk.new.append(content)

    def finish(self) -> list[Any]:
        self.flush()
        for o in self.ops:
            if not o.path:
                raise patches.PatchError("an operation with an empty file path")
            if o.kind == patches.ADD:
                o.content = "\n".join(self.added.get(id(o), []))
            elif o.kind == patches.UPDATE and not o.move_to and not o.hunks:
                raise patches.PatchError("UPDATE %r: no hunks found" % o.path)
        return self.ops


def parse_v4a(text: str) -> list[Any]:
    """Hermes's parse_v4a_patch, into engramory.patches FileOps: markers optional, empty lines
    dropped, other unprefixed lines are context, `*** Move File: a -> b` is an UPDATE with
    `move_to` and no hunks, an added file is its `+` lines joined by newlines (no final one).
    Raises patches.PatchError where Hermes reports a parse error."""
    lines = text.split("\n")
    start, end = _span(lines)
    parser = _Parser()
    for line in lines[start + 1 : end]:
        parser.feed(line)
    return parser.finish()


def _count_overlapping(text: str, pattern: str) -> int:
    count, start = 0, 0
    while True:
        pos = text.find(pattern, start)
        if pos == -1:
            return count
        count += 1
        start = pos + 1


def apply_update(hermes: Hermes, text: str, op: Any) -> tuple[str | None, bool]:
    """Hermes's _apply_update on `text`, exact matches only: (new text, estimated). None:
    Hermes refuses the patch. Hunks only a fuzzy match could place are sized by their text."""
    estimated = False
    for hunk in op.hunks:
        if hunk.old and hunk.old == hunk.new:
            continue
        if hunk.old:
            search, replacement = "\n".join(hunk.old), "\n".join(hunk.new)
            result = hermes.replace_exact(text, search, replacement, False)
            if result is hermes.REFUSED:
                return None, False
            if result is hermes.UNKNOWN:
                result = hermes.replace_estimate(text, search, replacement)
                estimated = True
            text = result
            continue
        insert = "\n".join(hunk.new)
        if hunk.context:
            found = _count_overlapping(text, hunk.context)
            if found != 1:
                return None, False  # Hermes's validation refuses a missing or ambiguous hint
            eol = text.find("\n", text.find(hunk.context))
            text = text[: eol + 1] + insert + "\n" + text[eol + 1 :] if eol != -1 else text + "\n" + insert
        else:
            text = text.rstrip("\n") + "\n" + insert + "\n"
    return text, estimated


# -- requests ---------------------------------------------------------------------------------------


def _requests(tool: str, files: DryRunFiles, env: Mapping[str, str], estimated: set[str]) -> list[tuple[Request, bool]]:
    """(request, estimated) for every guarded file the dry run wrote or deleted, in order."""
    out: list[tuple[Request, bool]] = []
    for path in files.order:
        if not files.hermes.guarded(path, env):
            continue
        data = files.state[path]
        if data is None:
            out.append((files.hermes.delete_request(tool, path), False))
        else:
            out.append((files.hermes.write_request(tool, path, data), path in estimated))
    return out


def patch_with_hermes(
    hermes: Hermes, tool: str, text: str, bases: Sequence[str], env: Mapping[str, str], internals: dict[str, Any]
) -> list[tuple[Request, bool]]:
    """Inside Hermes: its own parser and apply code, on DryRunFiles."""
    ops, error = internals["parse"](text)
    if error or not ops:
        return []  # Hermes reports the parse error and writes nothing
    files = DryRunFiles(hermes, bases)
    # When validation fails nothing is written and files.order stays empty; when one operation
    # fails in the apply phase, Hermes still carries out the others: judge what they write.
    internals["apply"](ops, files)
    return _requests(tool, files, env, set())


def _move(files: DryRunFiles, op: Any, estimated: set[str]) -> bool:
    source, target = files.path(op.path), files.path(op.move_to)
    if files.current(source) is None or files.current(target) is not None:
        return False  # Hermes refuses a move from nowhere or onto an existing file
    if files.move_file(op.path, op.move_to).error is None and source in estimated:
        estimated.add(target)
    return True


def _update(files: DryRunFiles, op: Any, estimated: set[str]) -> bool:
    source = files.path(op.path)
    before = files.current(source)
    if before is None:
        return False
    after, guess = apply_update(files.hermes, files.hermes.text_of(before), op)
    if after is None:
        return False
    files.write_file(op.path, after)
    if guess:
        estimated.add(source)
    return True


def _apply(files: DryRunFiles, op: Any, estimated: set[str]) -> bool:
    """One operation on the dry run; False where Hermes refuses the whole patch."""
    if op.kind == patches.ADD:
        files.write_file(op.path, op.content or "")
        return True
    if op.kind == patches.DELETE:
        if files.current(files.path(op.path)) is None:
            return False  # Hermes: "file not found for deletion", nothing written
        files.delete_file(op.path)
        return True
    return _move(files, op, estimated) if op.move_to else _update(files, op, estimated)


def _no_changes(ops: list[Any]) -> bool:
    return all(op.kind == patches.UPDATE and not op.move_to and all(h.old == h.new for h in op.hunks) for op in ops)


def patch_emulated(
    hermes: Hermes, tool: str, text: str, bases: Sequence[str], env: Mapping[str, str], notes: list[str]
) -> list[tuple[Request, bool]]:
    """Outside Hermes (the shell hook): the emulation above, on DryRunFiles."""
    try:
        ops = parse_v4a(text)
    except patches.PatchError as exc:
        notes.append("%s: Hermes would refuse this patch (%s); nothing to check" % (hermes.TAG, exc))
        return []
    if _no_changes(ops):
        return []  # Hermes: "Patch contains no changes"
    files = DryRunFiles(hermes, bases)
    estimated: set[str] = set()
    for op in ops:
        if not _apply(files, op, estimated):
            return []
    return _requests(tool, files, env, estimated)

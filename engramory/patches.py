"""Patch texts that name their own files: V4A (`*** Begin Patch`, as Codex apply_patch,
Hermes patch mode, OpenClaw, Copilot CLI, Cline and opencode apply_patch write them) and
unified diffs (`--- a/x`, `+++ b/x`, `@@ -1,2 +1,3 @@`). Host-neutral: parse into one FileOp
per file, then predict each file's bytes after the patch.

There is one V4A parser and one applier here, and a host's real differences are its `Rules`:
- CODEX, measured on the real Codex CLI 0.171.0 (tests/codex differential suites): the parser
  refuses what Codex refuses; the file must be UTF-8; CRLF, LF and a lone CR each end a line and
  every line keeps its own ending; new lines get the file's first ending, and an unterminated
  last line gets one; old lines are looked for from where the previous hunk ended, first exactly,
  then ignoring trailing whitespace, then surrounding whitespace (Rust's White_Space), then
  with typographic dashes, quotes and spaces made plain; only the `-`/`+` lines are rewritten
  (context lines keep the file's bytes); a pure insertion goes after the last line.
- LF, for callers that fold CRLF and restore their host's endings themselves
  (claudelike.patch_keeping_endings for Copilot CLI, Cline): the applier of the
  JavaScript ports (opencode's source, which tests/opencode measures, and codex-rs before it
  kept line endings): a lone CR is text, whitespace is Python's, the whole matched span is
  rewritten from the hunk, a pure insertion goes before a final empty line and a final empty
  line is lost (the lines are split on LF and joined back), a Move needs no hunk, bytes that
  are not UTF-8 pass through. Their real-CLI suites pass patches whose old lines match
  exactly, where these choices agree. opencode declares its own Rules (hosts/opencode/__init__.py).
- OpenClaw's own parser and applier are ported as they are (parse_openclaw, openclaw_update,
  at the end of this module): its new lines take the endings of the lines they replace, which
  the applier here does not carry.
- EXACT, for hosts that cannot be measured (Cursor): CODEX's reading with exact matching only,
  so that a result is given only where every plausible matcher agrees on the lines.
A unified diff is applied only where its old lines match exactly, nearest to the line number
the hunk names. Where the old lines are not found the prediction is None: the host either
refuses the patch or applies it fuzzily, and `size_delta` then gives the change the patch text
itself states.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    Seek = Callable[[Sequence[str], Sequence[str], int, bool], "int | None"]

ADD = "add"
UPDATE = "update"
DELETE = "delete"

V4A = "v4a"
UNIFIED = "unified"

BEGIN = "*** Begin Patch"
END = "*** End Patch"
_ADD = "*** Add File: "
_DELETE = "*** Delete File: "
_UPDATE = "*** Update File: "
_MOVE = "*** Move to: "
_EOF = "*** End of File"

# Rust's char::is_whitespace (Unicode White_Space): what Codex's trim()/trim_end() remove.
RUST_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)


class PatchError(ValueError):
    """The text is not a patch this module can read, or the host would refuse it."""


# Where `*** End of File` looks for its old lines.
EOF_END = "end"  # only where they would end the file
EOF_FORWARD = "forward"  # there, and never before the previous hunk's end (Codex)
EOF_OR_SCAN = "end-or-scan"  # there if not before the previous hunk's end, else anywhere after it


class Rules:
    """How one host reads and applies a V4A patch; the defaults are Codex's (measured), and
    a host names only what differs (see the module docstring)."""

    __slots__ = ("name", "strict", "lf_only", "space", "plain", "keep_context", "after_blank", "blank_tail", "eof",
                 "fuzzy", "empty_matches", "retry_blank", "insert_here", "joined", "seek", "anchor")

    def __init__(
        self, name: str, *, strict: bool = False, lf_only: bool = False, space: str | None = RUST_SPACE,
        plain: dict[int, str] | None = None, keep_context: bool = True, after_blank: bool = True,
        blank_tail: bool = True, eof: str = EOF_FORWARD, fuzzy: bool = True, empty_matches: bool = True,
        retry_blank: bool = True, insert_here: bool = False, joined: bool = False,
        seek: Seek | None = None, anchor: Seek | None = None,
    ) -> None:
        self.name = name
        self.strict = strict  # refuse what Codex refuses (parse errors, text that is not UTF-8)
        self.lf_only = lf_only  # only LF ends a line (a CR stays in the line's text)
        self.space = space  # the whitespace the loose matches strip (None: Python's)
        self.plain = PLAIN if plain is None else plain  # the last loose match: characters made plain
        self.keep_context = keep_context  # context lines keep the file's bytes
        self.after_blank = after_blank  # a pure insertion goes after a final empty line
        self.blank_tail = blank_tail  # a final empty line survives (else lost, as in a "\n".join)
        self.eof = eof  # EOF_END, EOF_FORWARD or EOF_OR_SCAN
        self.fuzzy = fuzzy  # the loose matches are tried after the exact one
        self.empty_matches = empty_matches  # old lines that are empty after the retry match where the search starts
        self.retry_blank = retry_blank  # old lines not found are looked for again without a final empty one
        self.insert_here = insert_here  # a pure insertion goes where the search stands (else at the end)
        # the text is split on LF into lines that are joined back as they are (a final newline
        # gives a last empty line; none is added): the JavaScript appliers that keep no endings
        self.joined = joined
        # a host's own matcher for the old lines, and for an `@@ <anchor>` (None if not found,
        # and a missing anchor then leaves the search where it was): (lines, wanted, start, at
        # end of file) -> index or None
        self.seek = seek
        self.anchor = anchor

    def __repr__(self) -> str:
        return "Rules(%s)" % self.name


# Codex's seek_sequence: typographic dashes, quotes and spaces made plain.
PLAIN = {
    0x2010: "-", 0x2011: "-", 0x2012: "-", 0x2013: "-", 0x2014: "-", 0x2015: "-", 0x2212: "-",
    0x2018: "'", 0x2019: "'", 0x201A: "'", 0x201B: "'",
    0x201C: '"', 0x201D: '"', 0x201E: '"', 0x201F: '"',
    0x00A0: " ", 0x2002: " ", 0x2003: " ", 0x2004: " ", 0x2005: " ", 0x2006: " ",
    0x2007: " ", 0x2008: " ", 0x2009: " ", 0x200A: " ", 0x202F: " ", 0x205F: " ", 0x3000: " ",
}

CODEX = Rules("codex", strict=True)
LF = Rules("lf", lf_only=True, space=None, keep_context=False, after_blank=False, blank_tail=False, eof=EOF_END)
EXACT = Rules("exact", fuzzy=False)


class Hunk:
    """One change inside a file: `old` lines become `new` lines (no line terminators)."""

    __slots__ = ("context", "old", "new", "at_eof", "start", "old_no_eol", "new_no_eol", "kept")

    def __init__(self) -> None:
        self.context: str | None = None  # V4A `@@ <line>`: seek to this line first
        self.old: list[str] = []
        self.new: list[str] = []
        self.at_eof = False  # V4A `*** End of File`: the old lines end the file
        self.start: int | None = None  # unified: 1-based old start line, a hint
        self.old_no_eol = False  # unified `\ No newline at end of file` on each side
        self.new_no_eol = False
        self.kept: list[tuple[int, int]] = []  # (old index, new index) of each context line

    def __repr__(self) -> str:
        return "Hunk(-%d +%d)" % (len(self.old), len(self.new))


class FileOp:
    """What a patch does to one file. `content` is the whole new text for ADD."""

    __slots__ = ("kind", "path", "move_to", "content", "hunks", "format")

    def __init__(self, kind: str, path: str, fmt: str) -> None:
        self.kind = kind
        self.path = path
        self.move_to: str | None = None
        self.content: str | None = None
        self.hunks: list[Hunk] = []
        self.format = fmt

    @property
    def target(self) -> str:
        """The file that holds the result (the destination of a move)."""
        return self.move_to or self.path

    def __repr__(self) -> str:
        return "FileOp(%r, %r%s, %d hunks)" % (
            self.kind, self.path, ", move_to=%r" % self.move_to if self.move_to else "", len(self.hunks),
        )


# --- parsing --------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _patch_lines(text: str) -> list[str]:
    # Codex strips one `\r` from the end of every patch line (measured: `+c\r` writes `c`).
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    # Models often wrap the patch as a shell heredoc: <<'EOF' ... EOF. Codex accepts that.
    if len(lines) >= 2 and lines[0].strip() in ("<<EOF", "<<'EOF'", '<<"EOF"') and lines[-1].strip() == "EOF":
        lines = lines[1:-1]
    return lines


def parse_v4a(text: str, rules: Rules = LF) -> list[FileOp]:
    """The file operations of a V4A patch, in order. Raises PatchError when it is not one
    (with `rules.strict`: when Codex would refuse it; otherwise read a little more leniently,
    which can only make a guard judge more)."""
    lines = _patch_lines(text)
    if not lines or lines[0].strip() != BEGIN:
        raise PatchError("the first line of the patch must be %r" % BEGIN)
    if lines[-1].strip() != END:
        raise PatchError("the last line of the patch must be %r" % END)
    body = lines[1:-1]
    ops: list[FileOp] = []
    i = 0
    while i < len(body):
        line = body[i]
        if line.startswith(_ADD):
            op = FileOp(ADD, _path(line[len(_ADD):]), V4A)
            i += 1
            added: list[str] = []
            while i < len(body) and body[i].startswith("+"):
                added.append(body[i][1:])
                i += 1
            op.content = "".join(a + "\n" for a in added)
            ops.append(op)
        elif line.startswith(_DELETE):
            ops.append(FileOp(DELETE, _path(line[len(_DELETE):]), V4A))
            i += 1
        elif line.startswith(_UPDATE):
            op = FileOp(UPDATE, _path(line[len(_UPDATE):]), V4A)
            i += 1
            if i < len(body) and body[i].startswith(_MOVE):
                op.move_to = _path(body[i][len(_MOVE):])
                i += 1
            i = _v4a_hunks(body, i, op, rules.strict)
            if not op.hunks and (rules.strict or not op.move_to):
                raise PatchError("update file hunk for path %r is empty" % op.path)
            ops.append(op)
        elif not line.strip():
            i += 1
        else:
            raise PatchError("%r is not a valid hunk header (line %d)" % (line[:80], i + 2))
    if not ops:
        raise PatchError("no files were modified")
    return ops


def _path(raw: str) -> str:
    path = raw.strip()
    if not path or "\x00" in path:
        raise PatchError("a file operation names no usable path")
    return path


def _v4a_hunks(body: list[str], i: int, op: FileOp, strict: bool) -> int:
    hunk: Hunk | None = None
    while i < len(body):
        line = body[i]
        if line.strip() == _EOF:
            if hunk is None or (strict and not (hunk.old or hunk.new)):
                raise PatchError("update hunk does not contain any lines (%r in %s)" % (_EOF, op.path))
            hunk.at_eof = True
            if strict:
                hunk = None  # Codex: the marker ends its chunk
            i += 1
            continue
        if line.startswith("*** "):
            break
        if (line == "@@" or line.startswith("@@ ")) if strict else line.startswith("@@"):
            hunk = Hunk()
            # Codex takes the text after "@@ " as it is; it is looked for loosely anyway.
            hunk.context = (line[3:] if line.startswith("@@ ") else None) if strict else (line[2:].strip() or None)
            op.hunks.append(hunk)
            i += 1
            continue
        if hunk is None:  # the first hunk may leave out its @@ line
            hunk = Hunk()
            op.hunks.append(hunk)
        if line == "" or line[0] == " ":
            hunk.kept.append((len(hunk.old), len(hunk.new)))
            hunk.old.append(line[1:])
            hunk.new.append(line[1:])
        elif line[0] == "-":
            hunk.old.append(line[1:])
        elif line[0] == "+":
            hunk.new.append(line[1:])
        else:
            raise PatchError("unexpected line found in update hunk of %s: %r" % (op.path, line[:80]))
        i += 1
    op.hunks = [h for h in op.hunks if h.old or h.new]
    return i


def _diff_path(raw: str) -> str | None:
    path = raw.split("\t", 1)[0].strip()
    if path == "/dev/null":
        return None
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return _path(path)


def parse_unified(text: str) -> list[FileOp]:
    """The file operations of a unified diff (git or plain). Raises PatchError."""
    lines = _lines(text)
    ops: list[FileOp] = []
    i = 0
    while i < len(lines):
        if not (lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")):
            i += 1
            continue
        old_path = _diff_path(lines[i][4:])
        new_path = _diff_path(lines[i + 1][4:])
        i += 2
        if old_path is None and new_path is None:
            raise PatchError("a diff from /dev/null to /dev/null")
        if old_path is None:
            assert new_path is not None
            op = FileOp(ADD, new_path, UNIFIED)
        elif new_path is None:
            op = FileOp(DELETE, old_path, UNIFIED)
        else:
            op = FileOp(UPDATE, old_path, UNIFIED)
            if new_path != old_path:
                op.move_to = new_path
        while i < len(lines) and lines[i].startswith("@@"):
            i = _unified_hunk(lines, i, op)
        if op.kind == ADD:
            new_text = "\n".join(h for hk in op.hunks for h in hk.new)
            no_eol = any(h.new_no_eol for h in op.hunks)
            op.content = new_text + ("" if no_eol or not new_text else "\n")
            op.hunks = []
        ops.append(op)
    if not ops:
        raise PatchError("no '--- ' / '+++ ' file header found")
    return ops


def _count(spec: str) -> tuple[int, int]:
    start, _, count = spec.partition(",")
    try:
        return int(start), int(count) if count else 1
    except ValueError:
        raise PatchError("bad hunk range %r" % spec[:40]) from None


def _unified_hunk(lines: list[str], i: int, op: FileOp) -> int:
    header = lines[i].split()
    if len(header) < 3 or not header[1].startswith("-") or not header[2].startswith("+"):
        raise PatchError("bad hunk header %r" % lines[i][:80])
    old_start, old_count = _count(header[1][1:])
    _, new_count = _count(header[2][1:])
    hunk = Hunk()
    hunk.start = old_start
    i += 1
    old_left, new_left = old_count, new_count
    last = ""
    while i < len(lines) and (old_left > 0 or new_left > 0 or lines[i].startswith("\\")):
        line = lines[i]
        if line.startswith("\\"):
            if last in (" ", "-"):
                hunk.old_no_eol = True
            if last in (" ", "+"):
                hunk.new_no_eol = True
            i += 1
            continue
        tag, rest = (line[0], line[1:]) if line else (" ", "")
        if tag == " ":
            hunk.kept.append((len(hunk.old), len(hunk.new)))
            hunk.old.append(rest)
            hunk.new.append(rest)
            old_left -= 1
            new_left -= 1
        elif tag == "-":
            hunk.old.append(rest)
            old_left -= 1
        elif tag == "+":
            hunk.new.append(rest)
            new_left -= 1
        else:
            raise PatchError("unexpected line in a hunk of %s: %r" % (op.path, line[:80]))
        last = tag
        i += 1
    if old_left != 0 or new_left != 0:
        raise PatchError("a hunk of %s is shorter than its header says" % op.path)
    op.hunks.append(hunk)
    return i


def parse(text: str, rules: Rules = LF) -> list[FileOp]:
    """V4A or unified diff, whichever `text` is. Raises PatchError for neither."""
    if BEGIN in text[:4096]:
        return parse_v4a(text, rules)
    return parse_unified(text)


# --- applying -------------------------------------------------------------------------------

def _keys(rules: Rules) -> tuple[Callable[[str], str], ...]:
    # Codex's order: exact, then trailing whitespace ignored, then both ends, then typography.
    space = rules.space
    if not rules.fuzzy:
        return (_exact,)
    return (
        _exact,
        lambda s: s.rstrip(space),
        lambda s: s.strip(space),
        lambda s: s.strip(space).translate(rules.plain),
    )


def _exact(s: str) -> str:
    return s


def seek(lines: Sequence[str], pattern: Sequence[str], start: int, at_eof: bool, rules: Rules = CODEX) -> int | None:
    """Codex's seek_sequence: where `pattern` first occurs at or after `start` (at the end
    when `at_eof`), matching ever more loosely."""
    if not pattern:
        return start if rules.empty_matches else None
    n, m = len(lines), len(pattern)
    if m > n:
        return None
    last = n - m
    tries: Sequence[int] = range(start, last + 1)
    if at_eof:
        at_end = [last] if rules.eof == EOF_END or last >= start else []
        tries = at_end + list(tries) if rules.eof == EOF_OR_SCAN else at_end
    for key in _keys(rules):
        want = [key(p) for p in pattern]
        for i in tries:
            if all(key(lines[i + k]) == want[k] for k in range(m)):
                return i
    return None


def _decode(before: bytes) -> str:
    # surrogateescape: bytes that are not UTF-8 come back out unchanged
    return before.decode("utf-8", "surrogateescape")


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def split_lines(text: str, lf_only: bool = False) -> list[tuple[str, str | None]]:
    """(text, ending) for every line: CRLF, LF and a lone CR end a line (with `lf_only`, LF
    alone, and a CR stays in the text); an unterminated last line has ending None. A BOM is
    part of the first line."""
    out: list[tuple[str, str | None]] = []
    start = i = 0
    n = len(text)
    while i < n:
        nl = text.find("\n", i)
        cr = -1 if lf_only else text.find("\r", i)
        if nl < 0 and cr < 0:
            break
        if cr < 0 or (0 <= nl < cr):
            end, ending = nl, "\n"
        else:
            end, ending = cr, "\r\n" if text.startswith("\n", cr + 1) else "\r"
        out.append((text[start:end], ending))
        i = start = end + len(ending)
    if start < n:
        out.append((text[start:], None))
    return out


def _replacements(texts: list[str], hunks: list[Hunk], rules: Rules, path: str) -> list[tuple[int, int, list[str]]]:
    out: list[tuple[int, int, list[str]]] = []
    index = 0
    for hunk in hunks:
        if hunk.context is not None and rules.anchor is not None:
            found = rules.anchor(texts, [hunk.context], index, False)
            index = index if found is None else found + 1
        elif hunk.context is not None:
            found = seek(texts, [hunk.context], index, False, rules)
            if found is None:
                raise PatchError("failed to find context %r in %s" % (hunk.context[:80], path))
            index = found + 1
        if not hunk.old:
            end = index if rules.insert_here else len(texts)
            if not rules.insert_here and not rules.after_blank and texts and texts[-1] == "":
                end -= 1
            out.append((end, 0, list(hunk.new)))
            continue
        pattern, new = hunk.old, hunk.new
        at = (rules.seek or _seek_with(rules))(texts, pattern, index, hunk.at_eof)
        if at is None and rules.retry_blank and pattern[-1] == "":
            # Codex retries without a final empty old line the file may not have.
            pattern = pattern[:-1]
            if new and new[-1] == "":
                new = new[:-1]
            at = seek(texts, pattern, index, hunk.at_eof, rules)
        if at is None:
            raise PatchError("failed to find expected lines in %s" % path)
        if rules.keep_context:
            # only the runs between context lines are rewritten: context keeps the file's bytes
            old_start = new_start = 0
            for old_ctx, new_ctx in hunk.kept:
                if old_ctx >= len(pattern) or new_ctx >= len(new):
                    break
                if old_start != old_ctx or new_start != new_ctx:
                    out.append((at + old_start, old_ctx - old_start, list(new[new_start:new_ctx])))
                old_start, new_start = old_ctx + 1, new_ctx + 1
            if old_start != len(pattern) or new_start != len(new):
                out.append((at + old_start, len(pattern) - old_start, list(new[new_start:])))
        else:
            out.append((at, len(pattern), list(new)))
        index = at + len(pattern)
    out.sort(key=lambda r: r[0])
    return out


def update(before: bytes, hunks: list[Hunk], rules: Rules = CODEX, path: str = "the file") -> bytes:
    """The bytes of a file holding `before` after a V4A update's hunks. PatchError when the
    host refuses (with `rules.strict`: not UTF-8; any rules: old lines or context not found).
    Without `rules.strict`, bytes that are not UTF-8 come back out unchanged."""
    if rules.strict:
        try:
            text = before.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PatchError("%s is not UTF-8 (byte %d)" % (path, exc.start)) from None
    else:
        text = _decode(before)
    return _encode(update_text(text, hunks, rules, path))


def _seek_with(rules: Rules) -> Seek:
    return lambda lines, pattern, start, at_eof: seek(lines, pattern, start, at_eof, rules)


def update_text(text: str, hunks: list[Hunk], rules: Rules = CODEX, path: str = "the file") -> str:
    """`update` on text already decoded."""
    if rules.joined:
        texts = text.split("\n")
        joined: list[str] = []
        source = 0
        for at, length, segment in _replacements(texts, hunks, rules, path):
            if at < source or at > len(texts):
                raise PatchError("overlapping chunks in %s" % path)
            joined.extend(texts[source:at])
            joined.extend(segment)
            source = at + length
        return "\n".join(joined + texts[source:])
    lines = split_lines(text, rules.lf_only)
    pref = next((e for _, e in lines if e is not None), "\n")
    out: list[tuple[str, str | None]] = []
    source = 0
    for at, length, segment in _replacements([t for t, _ in lines], hunks, rules, path):
        if at < source or at > len(lines):
            raise PatchError("overlapping chunks in %s" % path)
        out.extend(lines[source:at])
        out.extend((s, pref) for s in segment)
        source = at + length
    out.extend(lines[source:])
    if not rules.blank_tail and out and out[-1][0] == "":
        out[-1] = ("", "")  # split("\n"), pop the final "", ..., "\n".join(): the blank line is lost
    # an updated file always ends with a line ending (an unterminated last line gets one)
    return "".join(t + (e if e is not None else pref) for t, e in out)


def apply_v4a_to(before: bytes | None, op: FileOp, rules: Rules = LF) -> bytes | None:
    """The bytes of `op.target` after a V4A op, or None when that cannot be predicted (the old
    lines are not in the file, or the file is missing for an update). DELETE gives b""."""
    return _apply(before, op, lambda old: update(old, op.hunks, rules))


def _apply(before: bytes | None, op: FileOp, updated: Callable[[bytes], bytes | None]) -> bytes | None:
    if op.kind == ADD:
        assert op.content is not None
        return _encode(op.content)
    if op.kind == DELETE:
        return b"" if before is not None else None
    if before is None:
        return None
    try:
        return updated(before)
    except PatchError:
        return None


def _apply_unified(before: bytes | None, op: FileOp) -> bytes | None:
    return _apply(before, op, lambda old: _unified_update(old, op))


def _unified_update(before: bytes, op: FileOp) -> bytes | None:
    text = _decode(before)
    had_eol = text.endswith("\n")
    lines = text.split("\n") if text else []
    if had_eol:
        lines.pop()
    offset = 0
    eol = had_eol
    floor = 0
    for hunk in op.hunks:
        hint = max((hunk.start or 1) - 1 + offset, floor)
        at = _nearest(lines, hunk.old, hint, floor)
        if at is None:
            return None
        touches_end = at + len(hunk.old) == len(lines)
        lines = lines[:at] + list(hunk.new) + lines[at + len(hunk.old):]
        offset += len(hunk.new) - len(hunk.old)
        floor = at + len(hunk.new)
        if touches_end:
            # the new side's last line ends the file: it has a newline unless the diff says not;
            # when the hunk removed the tail, the line now last kept its newline
            eol = not hunk.new_no_eol if hunk.new else True
    out = "\n".join(lines)
    if eol and lines:
        out += "\n"
    return _encode(out)


def _nearest(lines: list[str], pattern: list[str], hint: int, floor: int) -> int | None:
    n, m = len(lines), len(pattern)
    if m == 0:
        return min(max(hint, floor), n)
    for delta in range(0, n + 1):
        for at in (hint - delta, hint + delta) if delta else (hint,):
            if floor <= at <= n - m and lines[at:at + m] == pattern:
                return at
    return None


def apply_to(before: bytes | None, op: FileOp, rules: Rules = LF) -> bytes | None:
    """`op.target`'s bytes after the op, whichever format it came from; None = not exact."""
    if op.format == V4A:
        return apply_v4a_to(before, op, rules)
    return _apply_unified(before, op)


def size_delta(op: FileOp) -> tuple[int, int]:
    """(lines, bytes) the op's text says it adds to the file (negative: removes), counting
    each hunk line with its newline. The estimate for when the exact result is unknown."""
    if op.kind == ADD:
        assert op.content is not None
        return op.content.count("\n"), len(_encode(op.content))
    lines = 0
    size = 0
    for hunk in op.hunks:
        lines += len(hunk.new) - len(hunk.old)
        size += sum(len(_encode(x)) + 1 for x in hunk.new) - sum(len(_encode(x)) + 1 for x in hunk.old)
    return lines, size


# --- OpenClaw ---------------------------------------------------------------------------------
# OpenClaw 2026.9.6's own apply_patch (src/agents/apply-patch.ts, apply-patch-update.ts in its
# npm package), ported line by line: its parser, and an applier that keeps every line's own
# ending. It is not a `Rules` of the applier above because its new lines take their endings
# from the lines they replace (buildChangedLines), which that applier does not carry.

# What JavaScript's String.prototype.trim() removes: WhiteSpace (with U+FEFF) and LineTerminator.
JS_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
           "\u2028\u2029\u202f\u205f\u3000\ufeff"

_HEREDOC = ("<<EOF", "<<'EOF'", '<<"EOF"')


def _oc_bounds_error(lines: list[str]) -> str | None:
    first, last = lines[0].strip(JS_SPACE), lines[-1].strip(JS_SPACE)
    if first == BEGIN and last == END:
        return None
    if first != BEGIN:
        return "the first line of the patch must be %r" % BEGIN
    return "the last line of the patch must be %r" % END


def parse_openclaw(text: str) -> list[FileOp]:
    """The file operations of a patch as OpenClaw's parsePatchText reads them, in order.
    PatchError where OpenClaw refuses the patch (then it changes nothing)."""
    trimmed = text.strip(JS_SPACE)
    if not trimmed:
        raise PatchError("the patch is empty")
    lines = [line[:-1] if line.endswith("\r") else line for line in trimmed.split("\n")]  # split(/\r?\n/)
    error = _oc_bounds_error(lines)
    if error is not None:
        if len(lines) < 4 or not (lines[0] in _HEREDOC and lines[-1].endswith("EOF")):
            raise PatchError(error)
        lines = lines[1:-1]
        error = _oc_bounds_error(lines)
        if error is not None:
            raise PatchError(error)
    rest = lines[1:-1]
    ops: list[FileOp] = []
    i = 0
    while i < len(rest):
        op, i = _oc_file_op(rest, i)
        ops.append(op)
    if not ops:
        raise PatchError("no files were modified")
    return ops


def _oc_path(raw: str) -> str:
    if not raw or "\x00" in raw:
        raise PatchError("a file operation names no usable path")
    return raw


def _oc_file_op(lines: list[str], i: int) -> tuple[FileOp, int]:
    first = lines[i].strip(JS_SPACE)
    if first.startswith(_ADD):
        op = FileOp(ADD, _oc_path(first[len(_ADD):]), V4A)
        i += 1
        added = []
        while i < len(lines) and lines[i].startswith("+"):
            added.append(lines[i][1:] + "\n")
            i += 1
        op.content = "".join(added)
        return op, i
    if first.startswith(_DELETE):
        return FileOp(DELETE, _oc_path(first[len(_DELETE):]), V4A), i + 1
    if not first.startswith(_UPDATE):
        raise PatchError("%r is not a valid hunk header" % lines[i][:80])
    op = FileOp(UPDATE, _oc_path(first[len(_UPDATE):]), V4A)
    i += 1
    if i < len(lines) and lines[i].strip(JS_SPACE).startswith(_MOVE):
        op.move_to = _oc_path(lines[i].strip(JS_SPACE)[len(_MOVE):])
        i += 1
    while i < len(lines):
        if lines[i].strip(JS_SPACE) == "":
            i += 1
            continue
        if lines[i].startswith("***"):
            break
        i = _oc_chunk(lines, i, op)
    if not op.hunks:
        raise PatchError("update file hunk for path %r is empty" % op.path)
    return op, i


def _oc_chunk(lines: list[str], i: int, op: FileOp) -> int:
    hunk = Hunk()
    first = lines[i]
    if first == "@@":
        i += 1
    elif first.startswith("@@ "):
        hunk.context = first[3:] or None  # `if (chunk.changeContext)`: an empty one is none
        i += 1
    elif op.hunks:
        raise PatchError("expected update hunk to start with a @@ context marker, got %r" % first[:80])
    if i >= len(lines):
        raise PatchError("update hunk does not contain any lines")
    parsed = 0
    while i < len(lines):
        line = lines[i]
        if line == _EOF:
            if parsed == 0:
                raise PatchError("update hunk does not contain any lines")
            hunk.at_eof = True
            i += 1
            break
        marker = line[:1]
        if marker in ("", " "):
            hunk.kept.append((len(hunk.old), len(hunk.new)))
            hunk.old.append(line[1:])
            hunk.new.append(line[1:])
        elif marker == "+":
            hunk.new.append(line[1:])
        elif marker == "-":
            hunk.old.append(line[1:])
        elif parsed == 0:
            raise PatchError("unexpected line found in update hunk: %r" % line[:80])
        else:
            break
        parsed += 1
        i += 1
    op.hunks.append(hunk)
    return i


FOUND, MISSING, AMBIGUOUS = "found", "missing", "ambiguous"


def openclaw_seek(lines: Sequence[str], pattern: Sequence[str], start: int, eof: bool) -> tuple[str, int]:
    """OpenClaw's seekSequence: (FOUND, index), (MISSING, 0) or (AMBIGUOUS, occurrences). The
    first of its four normalisers that matches anywhere decides, and must match once."""
    if not pattern:
        return FOUND, start
    if len(pattern) > len(lines):
        return MISSING, 0
    last = len(lines) - len(pattern)
    begin = max(start, last) if eof else start
    if begin > last:
        return MISSING, 0
    keys: tuple[Callable[[str], str], ...] = (
        _exact,
        lambda s: s.rstrip(JS_SPACE),
        lambda s: s.strip(JS_SPACE),
        lambda s: s.strip(JS_SPACE).translate(PLAIN),
    )
    for key in keys:
        want = [key(p) for p in pattern]
        found = [i for i in range(begin, last + 1) if all(key(lines[i + k]) == want[k] for k in range(len(want)))]
        if found:
            return (FOUND, found[0]) if len(found) == 1 else (AMBIGUOUS, len(found))
    return MISSING, 0


def _oc_ending(lines: list[list[str]], i: int) -> str:
    # JavaScript's lines.at(i)?.ending: a negative index counts from the end
    return lines[i][1] if -len(lines) <= i < len(lines) else ""


def _oc_changed(lines: list[list[str]], start: int, count: int, new: Sequence[str], pref: str) -> list[list[str]]:
    # buildChangedLines: each new line's ending comes from the line it replaces, else nearby
    replaced = lines[start:start + count]
    nearby = (next((r[1] for r in replaced if r[1]), "") or _oc_ending(lines, start) or _oc_ending(lines, start - 1)
              or pref)
    out = []
    for k, text in enumerate(new):
        ending = nearby
        if len(replaced) == len(new):
            ending = replaced[k][1]
        elif k == len(new) - 1 and replaced:
            ending = replaced[-1][1]
        elif k < len(replaced) - 1:
            ending = replaced[k][1]
        out.append([text, ending])
    return out


def _oc_norm(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text if not text or text.endswith("\n") else text + "\n"


def openclaw_update_text(text: str, hunks: Sequence[Hunk], path: str = "the file", moved: bool = False) -> str:
    """The text OpenClaw's applyUpdateHunk makes of `text` (the file as read, BOM included);
    unless `moved` (to another file), `text` itself where the result differs from it only in
    line endings (OpenClaw then writes nothing). PatchError where OpenClaw refuses."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines = [[t, e or ""] for t, e in split_lines(text[len(bom):])]
    pref = next((e for _, e in lines if e), "\n")
    missing_final = bool(lines) and lines[-1][1] == ""
    texts = [t for t, _ in lines]
    reps: list[tuple[int, int, list[list[str]]]] = []
    index = 0
    for hunk in hunks:
        if hunk.context:
            kind, at = openclaw_seek(texts, [hunk.context], index, False)
            if kind != FOUND:
                raise PatchError("context %r is %s in %s" % (hunk.context[:80], kind, path))
            index = at + 1
        if not hunk.old:
            at = index if hunk.context and not hunk.at_eof else len(lines)
            added = _oc_changed(lines, at, 0, hunk.new, pref)
            if missing_final and at == len(lines) and added:
                added[-1][1] = ""
            reps.append((at, 0, added))
            index = at
            continue
        pattern, new = list(hunk.old), list(hunk.new)
        kind, at = openclaw_seek(texts, pattern, index, hunk.at_eof)
        if kind == MISSING and pattern[-1] == "":
            pattern = pattern[:-1]
            if new and new[-1] == "":
                new = new[:-1]
            kind, at = openclaw_seek(texts, pattern, index, hunk.at_eof)
        if kind != FOUND:
            raise PatchError("the old lines are %s in %s" % (kind, path))
        # buildChunkLines: context lines are the file's own lines, text and ending
        out: list[list[str]] = []
        old_start = new_start = 0
        for old_ctx, new_ctx in hunk.kept:
            if old_ctx >= len(pattern) or new_ctx >= len(new):
                continue
            out.extend(_oc_changed(lines, at + old_start, old_ctx - old_start, new[new_start:new_ctx], pref))
            out.append(lines[at + old_ctx])
            old_start, new_start = old_ctx + 1, new_ctx + 1
        out.extend(_oc_changed(lines, at + old_start, len(pattern) - old_start, new[new_start:], pref))
        reps.append((at, len(pattern), out))
        index = at + len(pattern)
    reps.sort(key=lambda r: r[0])
    result = list(lines)
    for at, length, segment in reversed(reps):
        result[at:at + length] = segment
    for line in result[:-1]:  # ensureInteriorEndings
        line[1] = line[1] or pref
    after = bom + "".join(t + e for t, e in result)
    return text if not moved and _oc_norm(after) == _oc_norm(text) else after


def openclaw_update(before: bytes, hunks: Sequence[Hunk], path: str = "the file", moved: bool = False) -> bytes:
    """openclaw_update_text on a file's bytes: PatchError where it is not UTF-8 (OpenClaw
    refuses it); a lone surrogate from the patch is written as U+FFFD, as Node writes it."""
    try:
        text = before.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PatchError("%s is not UTF-8 (byte %d)" % (path, exc.start)) from None
    after = openclaw_update_text(text, hunks, path, moved)
    try:
        return after.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in after).encode("utf-8")

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
- OpenClaw's own parser and applier are ported as they are (hosts/openclaw/patchmodel.py): its
  new lines take the endings of the lines they replace, which the applier here does not carry.
- EXACT, for hosts that cannot be measured (Cursor): CODEX's reading with exact matching only,
  so that a result is given only where every plausible matcher agrees on the lines.
A unified diff (engramory/unified.py) is applied only where its old lines match exactly,
nearest to the line number the hunk names. Where the old lines are not found the prediction is None: the host either
refuses the patch or applies it fuzzily, and `size_delta` then gives the change the patch text
itself states.
"""

# the shapes both formats share, re-exported (engramory.unified imports them from there, not from here)
from engramory.patchops import ADD as ADD
from engramory.patchops import DELETE as DELETE
from engramory.patchops import UNIFIED as UNIFIED
from engramory.patchops import UPDATE as UPDATE
from engramory.patchops import V4A as V4A
from engramory.patchops import FileOp as FileOp
from engramory.patchops import Hunk as Hunk
from engramory.patchops import PatchError as PatchError
from engramory.patchops import _apply as _apply
from engramory.patchops import _decode as _decode
from engramory.patchops import _encode as _encode
from engramory.patchops import _lines as _lines
from engramory.patchops import _path as _path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    Seek = Callable[[Sequence[str], Sequence[str], int, bool], "int | None"]

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
        self, name: "str", *, strict: "bool" = False, lf_only: "bool" = False, space: "str | None" = RUST_SPACE,
        plain: "dict[int, str] | None" = None, keep_context: "bool" = True, after_blank: "bool" = True,
        blank_tail: "bool" = True, eof: "str" = EOF_FORWARD, fuzzy: "bool" = True, empty_matches: "bool" = True,
        retry_blank: "bool" = True, insert_here: "bool" = False, joined: "bool" = False,
        seek: "Seek | None" = None, anchor: "Seek | None" = None,
    ) -> "None":
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

    def __repr__(self) -> "str":
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


# --- parsing --------------------------------------------------------------------------------


def _patch_lines(text: "str") -> "list[str]":
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


def parse_v4a(text: "str", rules: "Rules" = LF) -> "list[FileOp]":
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
        op, i = _v4a_op(body, i, rules)
        if op is not None:
            ops.append(op)
    if not ops:
        raise PatchError("no files were modified")
    return ops


def _v4a_add(body: "list[str]", i: "int", rules: "Rules") -> "tuple[FileOp, int]":
    op = FileOp(ADD, _path(body[i][len(_ADD):]), V4A)
    i += 1
    added: list[str] = []
    while i < len(body) and body[i].startswith("+"):
        added.append(body[i][1:])
        i += 1
    op.content = "".join(a + "\n" for a in added)
    return op, i


def _v4a_delete(body: "list[str]", i: "int", rules: "Rules") -> "tuple[FileOp, int]":
    return FileOp(DELETE, _path(body[i][len(_DELETE):]), V4A), i + 1


def _v4a_update(body: "list[str]", i: "int", rules: "Rules") -> "tuple[FileOp, int]":
    op = FileOp(UPDATE, _path(body[i][len(_UPDATE):]), V4A)
    i += 1
    if i < len(body) and body[i].startswith(_MOVE):
        op.move_to = _path(body[i][len(_MOVE):])
        i += 1
    i = _v4a_hunks(body, i, op, rules.strict)
    if not op.hunks and (rules.strict or not op.move_to):
        raise PatchError("update file hunk for path %r is empty" % op.path)
    return op, i


_V4A_OPS = ((_ADD, _v4a_add), (_DELETE, _v4a_delete), (_UPDATE, _v4a_update))


def _v4a_op(body: "list[str]", i: "int", rules: "Rules") -> "tuple[FileOp | None, int]":
    """The file operation whose header is body[i] and the index after it; None for a blank line."""
    line = body[i]
    for prefix, read in _V4A_OPS:
        if line.startswith(prefix):
            return read(body, i, rules)
    if not line.strip():
        return None, i + 1
    raise PatchError("%r is not a valid hunk header (line %d)" % (line[:80], i + 2))


def _v4a_hunks(body: "list[str]", i: "int", op: "FileOp", strict: "bool") -> "int":
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
        _hunk_line(hunk, line, op.path)
        i += 1
    op.hunks = [h for h in op.hunks if h.old or h.new]
    return i


def _hunk_line(hunk: "Hunk", line: "str", path: "str") -> "None":
    if line == "" or line[0] == " ":
        hunk.kept.append((len(hunk.old), len(hunk.new)))
        hunk.old.append(line[1:])
        hunk.new.append(line[1:])
    elif line[0] == "-":
        hunk.old.append(line[1:])
    elif line[0] == "+":
        hunk.new.append(line[1:])
    else:
        raise PatchError("unexpected line found in update hunk of %s: %r" % (path, line[:80]))


def parse(text: "str", rules: "Rules" = LF) -> "list[FileOp]":
    """V4A or unified diff, whichever `text` is. Raises PatchError for neither."""
    if BEGIN in text[:4096]:
        return parse_v4a(text, rules)
    # lazy: unified diffs only for a patch in that form; a V4A patch never loads them
    from engramory import unified

    return unified.parse_unified(text)


# --- applying -------------------------------------------------------------------------------

def _keys(rules: "Rules") -> "tuple[Callable[[str], str], ...]":
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


def _exact(s: "str") -> "str":
    return s


def seek(lines: "Sequence[str]", pattern: "Sequence[str]", start: "int", at_eof: "bool", rules: "Rules" = CODEX) -> "int | None":
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


def split_lines(text: "str", lf_only: "bool" = False) -> "list[tuple[str, str | None]]":
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


def _context_index(texts: "list[str]", hunk: "Hunk", rules: "Rules", index: "int", path: "str") -> "int":
    """Where a hunk's old lines are looked for from, after its `@@ context` line if any."""
    if hunk.context is None:
        return index
    if rules.anchor is not None:
        found = rules.anchor(texts, [hunk.context], index, False)
        return index if found is None else found + 1
    found = seek(texts, [hunk.context], index, False, rules)
    if found is None:
        raise PatchError("failed to find context %r in %s" % (hunk.context[:80], path))
    return found + 1


def _insertion_point(texts: "list[str]", rules: "Rules", index: "int") -> "int":
    if rules.insert_here:
        return index
    if not rules.after_blank and texts and texts[-1] == "":
        return len(texts) - 1
    return len(texts)


def _old_lines(texts: "list[str]", hunk: "Hunk", rules: "Rules", index: "int", path: "str") -> "tuple[int, list[str], list[str]]":
    """(where the hunk's old lines are, the old lines, the new lines) as the hunk is applied."""
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
    return at, pattern, new


def _between_context(at: "int", pattern: "list[str]", new: "list[str]", kept: "list[tuple[int, int]]") -> "list[tuple[int, int, list[str]]]":
    """Only the runs between context lines, rewritten: context keeps the file's bytes."""
    out: list[tuple[int, int, list[str]]] = []
    old_start = new_start = 0
    for old_ctx, new_ctx in kept:
        if old_ctx >= len(pattern) or new_ctx >= len(new):
            break
        if old_start != old_ctx or new_start != new_ctx:
            out.append((at + old_start, old_ctx - old_start, list(new[new_start:new_ctx])))
        old_start, new_start = old_ctx + 1, new_ctx + 1
    if old_start != len(pattern) or new_start != len(new):
        out.append((at + old_start, len(pattern) - old_start, list(new[new_start:])))
    return out


def _replacements(texts: "list[str]", hunks: "list[Hunk]", rules: "Rules", path: "str") -> "list[tuple[int, int, list[str]]]":
    out: list[tuple[int, int, list[str]]] = []
    index = 0
    for hunk in hunks:
        index = _context_index(texts, hunk, rules, index, path)
        if not hunk.old:
            out.append((_insertion_point(texts, rules, index), 0, list(hunk.new)))
            continue
        at, pattern, new = _old_lines(texts, hunk, rules, index, path)
        if rules.keep_context:
            out.extend(_between_context(at, pattern, new, hunk.kept))
        else:
            out.append((at, len(pattern), list(new)))
        index = at + len(pattern)
    out.sort(key=lambda r: r[0])
    return out


def update(before: "bytes", hunks: "list[Hunk]", rules: "Rules" = CODEX, path: "str" = "the file") -> "bytes":
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


def _seek_with(rules: "Rules") -> "Seek":
    return lambda lines, pattern, start, at_eof: seek(lines, pattern, start, at_eof, rules)


def update_text(text: "str", hunks: "list[Hunk]", rules: "Rules" = CODEX, path: "str" = "the file") -> "str":
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


def apply_v4a_to(before: "bytes | None", op: "FileOp", rules: "Rules" = LF) -> "bytes | None":
    """The bytes of `op.target` after a V4A op, or None when that cannot be predicted (the old
    lines are not in the file, or the file is missing for an update). DELETE gives b""."""
    return _apply(before, op, lambda old: update(old, op.hunks, rules))


def apply_to(before: "bytes | None", op: "FileOp", rules: "Rules" = LF) -> "bytes | None":
    """`op.target`'s bytes after the op, whichever format it came from; None = not exact."""
    if op.format == V4A:
        return apply_v4a_to(before, op, rules)
    # lazy: unified diffs only for a patch in that form; a V4A patch never loads them
    from engramory import unified

    return unified.apply_unified(before, op)


def size_delta(op: "FileOp") -> "tuple[int, int]":
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


# What JavaScript's String.prototype.trim() removes: WhiteSpace (with U+FEFF) and LineTerminator.
JS_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
           "\u2028\u2029\u202f\u205f\u3000\ufeff"

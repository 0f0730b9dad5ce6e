"""Factory droid's ApplyPatch, ported line by line from droid 0.225.2 (its bundled JavaScript:
the splitter that cuts a patch into one hunk per file operation, the parser's section reader and
its five context matchers, the chunk applier, and the file codec), so the guard predicts the
bytes droid writes. None of patches.Rules describes it: droid applies each operation of a patch
on its own, in order, against the file as the operations before it left it; it finds a
section's context lines exactly, then without trailing whitespace, then trimmed (each after NFC
and plain dashes, quotes and spaces), then as an ordered subsequence of at least 75 % of them
(raw, then trimmed), and it deletes and inserts lines by their position in that context, not by
their text; a file is read with every CRLF and lone CR made LF and written back with its
majority line ending and its BOM.

What is not ported is reported as not predictable (the guard then judges the worst case):
droid matches against a copy of the file with credentials masked (its log scrubber), so a
file holding text engramory.store.secrets takes for a credential; files droid decodes as a legacy
code page or UTF-16 (not UTF-8, a NUL byte, a UTF-16 BOM).
"""

from engramory import patches

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

BEGIN, END = "*** Begin Patch", "*** End Patch"
UPDATE, ADD, DELETE = "*** Update File: ", "*** Add File: ", "*** Delete File: "
MOVE, EOF = "*** Move to: ", "*** End of File"
BOM = b"\xef\xbb\xbf"
SPACE = patches.JS_SPACE
_HEADERS = ((UPDATE, "update"), (ADD, "create"), (DELETE, "delete"))
# what ends a section or an operation's lines (each marker as JavaScript's trim() leaves it)
_STOPS = ("@@", END, UPDATE.strip(), ADD.strip(), DELETE.strip(), EOF)
_PLAIN = str.maketrans({
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\xab": '"', "\xbb": '"',
    "\u2018": "'", "\u2019": "'", "\u201b": "'", "\xa0": " ", "\u202f": " ",
})


class Op:
    """One file operation of a patch: `kind` create, delete or update, the path as written,
    the move target, and its lines (the header first) as droid's splitter cut them."""

    __slots__ = ("kind", "path", "move_to", "lines")

    def __init__(self, kind: str, path: str, first: str) -> None:
        self.kind = kind
        self.path = path
        self.move_to: str | None = None
        self.lines = [first]

    def added(self) -> str:
        """Every line this operation writes (the worst case of what it adds)."""
        return "".join(line[1:] + "\n" for line in self.lines[1:] if line.startswith("+"))


def _after(line: str, prefix: str) -> "str | None":
    if not line.startswith(prefix):
        return None
    rest = line[len(prefix):].strip(SPACE)
    return rest or None


def _header(line: str) -> "Op | None":
    for prefix, kind in _HEADERS:
        path = _after(line, prefix)
        if path is not None:
            return Op(kind, path, line)
    return None


def _structural(line: str) -> bool:
    return line in (BEGIN, END, EOF) or _header(line) is not None or _after(line, MOVE) is not None


def split(text: str) -> "list[Op]":
    """The operations of a patch as droid's splitter cuts them (strict: a line starting with
    `*** ` that is no marker refuses the whole patch). PatchError when droid refuses it."""
    ops: list[Op] = []
    current: Op | None = None
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line.startswith("*** ") and not _structural(line):
            raise patches.PatchError("Malformed patch structural line: %r" % line)
        if line.startswith(BEGIN) or line.startswith(END):
            continue
        op = _header(line)
        if op is not None:
            ops.append(op)
            current = op
            continue
        if current is None:
            continue
        if current.kind == "update" and len(current.lines) == 1:
            current.move_to = _after(line, MOVE) or current.move_to
        current.lines.append(line)
    for op in ops:
        while op.lines and op.lines[-1] == "":
            op.lines.pop()
    if not ops:
        raise patches.PatchError("Failed to extract any file entries from patch.")
    return ops


# --- one update's sections ------------------------------------------------------------------


def norm(text: str) -> str:
    """droid's normalizeTextForComparison: NFC, then typographic dashes, quotes and two
    spaces made plain."""
    import unicodedata

    return unicodedata.normalize("NFC", text).translate(_PLAIN)


def _norm_end(text: str) -> str:
    return norm(text.rstrip(SPACE))


def _norm_trim(text: str) -> str:
    return norm(text.strip(SPACE))


class Chunk:
    __slots__ = ("at", "delete", "insert")

    def __init__(self, at: int, delete: "list[str]", insert: "list[str]") -> None:
        self.at, self.delete, self.insert = at, delete, insert


def section(lines: "Sequence[str]", i: int) -> "tuple[list[str], list[Chunk], int, bool]":
    """parseNextChangeSection: (context and deleted lines, chunks, next line, end of file)."""
    old: list[str] = []
    dels: list[str] = []
    ins: list[str] = []
    chunks: list[Chunk] = []
    mode = "context"
    while i < len(lines):
        line = lines[i]
        if line.startswith(_STOPS) or line == "***":
            break
        if line.startswith("***"):
            raise patches.PatchError("Invalid line format: %r" % line)
        i += 1
        before = mode
        mode = {"+": "addition", "-": "deletion"}.get(line[:1], "context")
        body = line[1:] if line[:1] in ("+", "-", " ") else line
        if mode == "context" and before != mode:
            if ins or dels:
                chunks.append(Chunk(len(old) - len(dels), dels, ins))
            dels, ins = [], []
        if mode == "deletion":
            dels.append(body)
            old.append(body)
        elif mode == "addition":
            ins.append(body)
        else:
            old.append(body)
    if ins or dels:
        chunks.append(Chunk(len(old) - len(dels), dels, ins))
    eof = i < len(lines) and lines[i] == EOF
    return old, chunks, i + 1 if eof else i, eof


def _subsequence(file: "list[str]", want: "list[str]", start: int) -> "tuple[int, int]":
    """findOrderedSubsequenceMatch over lines already normalised: (first index or -1, score).
    A negative start reads `undefined` in droid and throws: the patch fails."""
    if not want:
        return start, 0
    first, gaps, misses, cursor, found = -1, 0, 0, start, 0
    for line in want:
        if cursor >= len(file):
            misses += 50
            continue
        if cursor < 0:
            raise patches.PatchError("droid reads before the first line and fails")
        hit = next((cursor + m for m in range(100) if cursor + m < len(file) and file[cursor + m] == line), -1)
        if hit < 0:
            misses += 50
            continue
        first = hit if first < 0 else first
        found += 1
        if found > 1:
            gaps += hit - cursor
        cursor = hit + 1
    if found / len(want) < 0.75:
        return -1, 0
    return first, gaps * 5 + misses


def find(file: "list[str]", want: "list[str]", start: int) -> int:
    """findExactContextMatch: where droid puts `want` among `file`'s lines, from `start`
    (Python slices read a negative start from the end, as JavaScript's slice does)."""
    if not want:
        return start
    keys = (norm, _norm_end, _norm_trim)
    for key in keys:
        have = [key(x) for x in file]
        goal = [key(x) for x in want]
        for w in range(start, len(file)):
            if have[w: w + len(want)] == goal:
                return w
    for key in keys[0], keys[2]:
        hit, _ = _subsequence([key(x) for x in file], [key(x) for x in want], start)
        if hit >= 0:
            return hit
    return -1


def _context_line(file: "list[str]", anchor: str, start: int) -> int:
    """findContextLineInFile: an `@@ line` moves the search past it, unless it is already
    behind (then the search stays where it is); not found, nothing moves."""
    for key in (norm, _norm_trim):
        want = key(anchor)
        if any(key(x) == want for x in file[:start]):
            continue
        for a in range(start, len(file)):
            if key(file[a]) == want:
                return a + 1
    return start


def update_chunks(lines: "Sequence[str]", content: str) -> "list[Chunk]":
    """parseFileUpdateAction: the chunks of an update's lines (after its header and move
    line), placed in `content` (LF text). PatchError where droid fails the operation."""
    file = content.split("\n")
    chunks: list[Chunk] = []
    i, search = 0, 0
    while i < len(lines) and not lines[i].startswith(_STOPS[1:]):
        start = i
        anchor = ""
        if lines[i].startswith("@@ "):  # consumed even when nothing follows the space
            anchor, i = lines[i][3:], i + 1
        bare = not anchor and i < len(lines) and lines[i] == "@@"
        i += 1 if bare else 0
        if not (anchor or bare or search == 0):
            raise patches.PatchError("Invalid section start: %r" % lines[i])
        if anchor.strip(SPACE):
            search = _context_line(file, anchor, search)
        old, found, nxt, eof = section(lines, i)
        if nxt == start:
            raise patches.PatchError("no progress: droid loops on %r" % lines[i])
        at = find(file, old, len(file) - len(old)) if eof else -1
        if at < 0:
            at = find(file, old, search)
        if at < 0:
            raise patches.PatchError("Invalid context")
        for chunk in found:
            chunk.at += at
            chunks.append(chunk)
        search, i = at + len(old), nxt
    if i < len(lines):
        raise patches.PatchError("Unexpected line encountered: %r" % lines[i])
    return chunks


def apply_chunks(content: str, chunks: "Sequence[Chunk]") -> str:
    """droid's applier: each chunk deletes as many lines as it names at its position, whatever
    they hold, and inserts its lines there."""
    lines = content.split("\n")
    out: list[str] = []
    pos = 0
    for chunk in chunks:
        if chunk.at > len(lines) or pos > chunk.at:
            raise patches.PatchError("chunk position exceeds file length or chunks out of order")
        out.extend(lines[pos: chunk.at])
        out.extend(chunk.insert)
        pos = chunk.at + len(chunk.delete)
    out.extend(lines[pos:])
    return "\n".join(out)


# --- the file codec and one patch, operation by operation ------------------------------------

NOT_TEXT = "droid reads this file as a legacy code page or UTF-16 (not UTF-8, or a NUL byte), which engramory does not port"
MASKED = ("droid matches the patch against a copy of the file with credentials masked, and this file holds "
          "text that looks like one")


def decode(data: bytes) -> "tuple[str, str, bool] | None":
    """droid's reader: (text with CRLF and lone CR made LF, the majority line ending, BOM);
    None for what it reads as another encoding."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    bom = data.startswith(BOM)
    if bom:
        text = text[1:]
    crlf = text.count("\r\n")
    lf, cr = text.count("\n") - crlf, text.count("\r") - crlf
    ending = "\r" if cr > crlf and cr > lf else "\r\n" if crlf > lf else "\n"
    return text.replace("\r\n", "\n").replace("\r", "\n"), ending, bom


def encode(text: str, ending: str, bom: bool) -> bytes:
    """droid's writer: every line break in `ending`, the BOM put back."""
    # lazy: edits loads only for a call that reaches prediction, never on the ignored path
    from engramory.edits import encode as utf8

    if ending != "\n":
        text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", ending)
    return (BOM if bom else b"") + utf8(text)


class Run:
    """One patch applied the way droid applies it, on what the files hold (`read`), with
    the bytes the operations before left (`files`) and what could not be predicted (`unsure`)."""

    def __init__(self, resolve: "Callable[[str], str]", read: "Callable[[str], bytes | None]",
                 known: "Mapping[str, bytes | None]") -> None:
        self.resolve, self.read = resolve, read
        self.files: dict[str, bytes | None] = dict(known)
        self.unsure: dict[str, str] = {}

    def get(self, path: str) -> "bytes | None":
        if path not in self.files:
            self.files[path] = self.read(path)
        return self.files[path]

    def put(self, path: str, data: "bytes | None", why: str = "") -> None:
        self.files[path] = data
        if why:
            self.unsure[path] = why
        else:
            self.unsure.pop(path, None)

    def apply(self, op: Op) -> None:
        """One operation; one droid fails (a missing file, a context not found) changes nothing."""
        path = self.resolve(op.path)
        if op.kind == "delete":
            if self.get(path) is not None:
                self.put(path, None)
        elif op.kind == "create":
            self._create(op, path)
        else:
            try:
                self._update(op, path)
            except patches.PatchError:
                pass

    def _create(self, op: Op, path: str) -> None:
        if any(not line.startswith("+") for line in op.lines[1:]):
            return  # "Invalid Add File line (missing '+')"
        content = "\n".join(line[1:] for line in op.lines[1:])
        old = self.get(path)
        if old is None:  # a new file gets a final line break, LF, no BOM
            self.put(path, encode(content if content.endswith("\n") else content + "\n", "\n", False))
            return
        shape = decode(old)
        if shape is None or path in self.unsure:
            self.put(path, old, self.unsure.get(path, NOT_TEXT))
        else:  # over an existing file: its ending and BOM, and no final line break added
            self.put(path, encode(content, shape[1], shape[2]))

    def _update(self, op: Op, path: str) -> None:
        old = self.get(path)
        header_path = op.lines[0][len(UPDATE):]
        if old is None or header_path != op.path:
            return  # a missing file, or a path with spaces around it: "File not found"
        body = op.lines[2:] if len(op.lines) > 1 and op.lines[1].startswith(MOVE) else op.lines[1:]
        dest = self.resolve(op.move_to) if op.move_to else path
        if dest != path and self.get(dest) is not None:
            return  # "Move destination already exists"
        why = self.unsure.get(path, "")
        shape = decode(old)
        new = old
        if shape is None:
            why = why or NOT_TEXT
        else:
            text, ending, bom = shape
            if not why and _masked(text):
                why = MASKED
            changed = apply_chunks(text, update_chunks(body, text)) if not why else text
            # a moved file is rewritten only when its text changed; an update in place always
            new = old if dest != path and changed == text else encode(changed, ending, bom)
        if dest != path:
            self.put(path, None)
        self.put(dest, new, why)


# What every match of engramory.store.secrets's patterns contains: a token's own start (its
# patterns are case-sensitive) or an assignment's key (matched in any case). Text with none of
# them holds no secret, and the hook skips importing the scanner and `re` (about 30 ms).
TOKEN_HINTS = ("-----BEGIN", "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox",
               "sk_live_", "rk_live_", "sk-", "AIza", "eyJ")
KEY_HINTS = ("pass", "pwd", "token", "secret", "key")


def _masked(text: str) -> bool:
    folded = text.casefold()
    if not any(h in text for h in TOKEN_HINTS) and not any(k in folded for k in KEY_HINTS):
        return False
    # lazy: the secret patterns load only for a message that shows a line
    from engramory.store import secrets as secretscan

    return secretscan.has_secret(text)


def predict(ops: "Sequence[Op]", resolve: "Callable[[str], str]", target: str, before: "bytes | None",
            read: "Callable[[str], bytes | None]") -> "tuple[bytes | None, str]":
    """(the bytes droid leaves at `target` after the patch, None when it writes nothing new
    there; why that is not predicted, "" when it is). `resolve` makes a patch path absolute."""
    run = Run(resolve, read, {target: before})
    for op in ops:
        run.apply(op)
    if target in run.unsure:
        return None, run.unsure[target]
    after = run.files[target]
    return (None if after is None or after == before else after), ""


def added_to(ops: "Sequence[Op]", resolve: "Callable[[str], str]", target: str,
             read: "Callable[[str], bytes | None]") -> str:
    """The worst case of what the patch adds to `target`: every line each operation that
    writes it adds, and the whole text of a file moved onto it."""
    out = []
    for op in ops:
        dest = resolve(op.move_to) if op.move_to else resolve(op.path)
        if dest != target:
            continue
        out.append(op.added())
        if op.move_to and resolve(op.path) != target:
            moved = read(resolve(op.path))
            out.append(moved.decode("utf-8", "replace") if moved else "")
    return "".join(out)

"""A memory store, read once: the index and its pointers, every note, the archive, the links.

Reading is separate from judging: this module records what is there (including what could
not be read, and why) and `doctor` turns it into findings. Nothing here writes.

- ROOT is the folder that holds the index (MEMORY.md).
- Notes are the `.md` files under ROOT, any case of the extension, except the index itself.
  Folders and files whose name starts with "." (.git, editor folders) are not walked.
  Symlinked folders are not followed; a symlinked note is read only if it resolves inside ROOT.
- `archive/` (directly under ROOT) holds retired notes: read and parsed, kept out of the live
  checks that do not apply to them.
- Index pointers are the markdown links `[label](target)` in the index whose target ends in
  `.md`, outside fenced code blocks and the HTML comments the host drops (layout.comment_lines:
  an unclosed `<!--` is no comment); URLs with a scheme are not pointers.
  A line's pointer is its first such link; the others on it are references (`pointers.note_links`).
- `[[slug]]` links in note bodies name another note by file name or by `name:`.
"""

from __future__ import annotations

import operator
import os
import posixpath
import re
import stat
import time
import unicodedata

from engramory import config, scope
from engramory.config import caps_for
from engramory.scope import index_name_for
from engramory.store import frontmatter
from engramory.store.pointers import (
    Pointer,
    note_links,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Callable

    from engramory.size import Caps

ARCHIVE = "archive"
TEMPLATES = "templates"  # copies of the bundle's own templates: never live notes
TYPES = ("user", "feedback", "project", "reference")
READ_MAX = 4 << 20  # a note past this is not read: it is reported by size alone
INDEX_READ_MAX = 1 << 20  # an index is read this far at most; its size tells the rest
PARSE_FACTOR = 4  # pointers are parsed only this many times the hard caps into the index

WIKI_RE = re.compile(r"\[\[([^\[\]\n|#]+)(?:#[^\[\]\n|]*)?(?:\|[^\[\]\n]*)?\]\]")
HEADING_RE = re.compile(r"#{1,6}[ \t]+(.*?)[ \t#]*\Z")
_SPECIAL_FIRST = "`~<#"


def fold(name: str) -> str:
    """A name as a case-insensitive, normalizing disk (macOS, Windows) compares it."""
    return unicodedata.normalize("NFC", name).casefold()

# The two frontmatter forms (see `form_of`).
PROTOCOL = "protocol"
CLAUDE = "claude"


def form_of(fm: frontmatter.Frontmatter) -> str:
    """Which schema a note is held to. A note that uses anything only this protocol defines
    (a top-level `type`, `created` or `updated`) is a protocol note and must carry all five
    fields; otherwise it is in the form Claude Code's auto memory writes (`name`,
    `description`, `metadata.type`, no dates)."""
    f = fm.fields
    if "type" in f or "created" in f or "updated" in f:
        return PROTOCOL
    return CLAUDE


class Note:
    """One `.md` file under ROOT. `error` says why it could not be read (then `text` is
    None). When the store is streamed (`load(..., visit=...)`) the text, body and parsed
    frontmatter are dropped after the visit: what stays is what the whole-store checks use."""

    __slots__ = (
        "path", "rel", "slug", "archived", "size", "text", "error", "fm", "form",
        "body", "links", "real", "type", "name", "description", "mtime", "body_key", "host_reads",
    )

    def __init__(self, path: str, rel: str, archived: bool) -> None:
        self.path = path
        self.rel = rel
        stem = rel.rsplit("/", 1)[-1]
        self.slug = stem[:-3]
        self.archived = archived
        self.size = 0
        self.text: str | None = None
        self.error: tuple[str, str] | None = None  # (code, reason)
        self.fm: frontmatter.Frontmatter | None = None
        self.form = CLAUDE
        self.body = ""
        self.links: tuple[str | int, ...] = ()  # [[target]], line, [[target]], line, ... (flat: less memory)
        self.real = path
        self.type: str | None = None  # in either form; None when absent or not text
        self.name: str | None = None
        self.description: str | None = None
        self.mtime = 0.0
        self.body_key: int | None = None  # hash of the normalised body (near duplicates)
        # whether the host's recall scan sees the frontmatter: it reads only the first
        # HOST_SCAN_LINES lines / HOST_SCAN_BYTES bytes of a note
        self.host_reads = True

    def link_list(self) -> list[tuple[str, int]]:
        """The [[links]] as (target, 1-based line) pairs."""
        it = iter(self.links)
        return [(str(t), int(line)) for t, line in zip(it, it)]

    def line_at(self, offset: int) -> int:
        """1-based line of a character offset in the body."""
        assert self.fm is not None
        return self.fm.body_line + self.body.count("\n", 0, offset)


# Claude Code 2.1.332's recall scan (measured): it reads the first 30 lines and 65,536 bytes
# of each note; a frontmatter block not closed inside that gives it no description or type.
HOST_SCAN_LINES = 30
HOST_SCAN_BYTES = 65536
HOST_CANDIDATES = 200  # the newest notes by modification time it offers its selector
_TYPE_STR = {t: t for t in TYPES}


class Store:
    __slots__ = (
        "root", "real_root", "index_name", "index_path", "index_raw", "index_text", "index_error",
        "pointers", "references", "notes", "by_rel", "unlistable", "skipped", "escaping_links", "config", "caps",
        "cap_notes", "index_size", "index_bad_bytes", "index_parsed_lines", "index_cut",
        "case_insensitive", "streamed", "stopped",
    )

    def __init__(self, root: str, index_name: str) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.index_name = index_name
        self.index_path = os.path.join(root, index_name)
        self.index_raw: bytes | None = None  # at most INDEX_READ_MAX bytes of it
        self.index_text: str | None = None  # decoded leniently when it is not UTF-8
        self.index_error: tuple[str, str] | None = None
        self.index_size = 0  # the file size, whether or not all of it was read
        self.index_bad_bytes: list[tuple[int, int]] = []  # (byte offset, line) not UTF-8
        self.index_parsed_lines = 0  # lines searched for pointers
        self.index_cut = False  # pointers past the parse limit were not read
        self.pointers: list[Pointer] = []  # one per index line: its first note link (note_links)
        self.references: list[Pointer] = []  # the other note links on those lines
        self.notes: list[Note] = []
        self.by_rel: dict[str, Note] = {}
        self.unlistable: list[tuple[str, str]] = []  # (rel folder, reason)
        self.skipped: list[tuple[str, str]] = []  # (rel, reason): .md entries that are not files
        self.escaping_links: list[tuple[str, str]] = []  # (rel, resolved target)
        self.config: config.StoreConfig = config.StoreConfig(os.path.join(root, config.CONFIG_NAME))
        self.caps: Caps | None = None
        self.cap_notes: list[str] = []
        self.case_insensitive = False
        self.streamed = False  # texts were dropped after the visit
        self.stopped = False  # the deadline passed: later notes were not read

    @property
    def live(self) -> list[Note]:
        return [n for n in self.notes if not n.archived]

    @property
    def index_read(self) -> bool:
        """Whether the index was read (fully or its first part)."""
        return self.index_text is not None


def _reason(exc: OSError) -> str:
    return exc.strerror or exc.__class__.__name__


def inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def case_insensitive(folder: str, probe: str = "") -> bool:
    """Whether the filesystem holding `folder` compares names without case (macOS, Windows):
    the folder's own name, or failing that `probe` (a file in it), spelled in another case
    names the same file."""
    real = os.path.realpath(folder)
    for parent, name in ((os.path.dirname(real), os.path.basename(real)), (real, probe)):
        swapped = name.lower() if name != name.lower() else name.upper()
        if not name or swapped == name:
            continue
        try:
            return os.path.samefile(os.path.join(parent, name), os.path.join(parent, swapped))
        except OSError:
            continue
    return False


def _walk(store: Store, deadline: float | None = None) -> None:
    """Collect every note under ROOT without following symlinked folders. `templates/` at
    the top and any index file in a subfolder are not notes (the bundle's own templates,
    copied in, must not be audited as live memory)."""
    stack = [""]
    while stack:
        if deadline is not None and time.monotonic() > deadline:
            store.stopped = True
            return
        rel_dir = stack.pop()
        folder = os.path.join(store.root, rel_dir) if rel_dir else store.root
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            store.unlistable.append((rel_dir or ".", _reason(exc)))
            continue
        if not _walk_entries(store, rel_dir, entries, stack, deadline):
            store.stopped = True
            return


def _walk_entries(store: Store, rel_dir: str, entries: list[os.DirEntry[str]], stack: list[str],
                  deadline: float | None) -> bool:
    """One folder's entries: notes into the store, folders onto `stack`; False past the deadline."""
    for k, entry in enumerate(entries):
        if deadline is not None and k & 255 == 255 and time.monotonic() > deadline:
            return False
        name = entry.name
        if name.startswith("."):
            continue
        rel = rel_dir + "/" + name if rel_dir else name
        note = _entry_note(store, entry, rel, rel_dir, stack)
        if note is not None:
            store.notes.append(note)
    return True


def _entry_note(store: Store, entry: os.DirEntry[str], rel: str, rel_dir: str, stack: list[str]) -> Note | None:
    """The note one folder entry is, if it is one (a folder goes onto `stack`)."""
    try:
        if entry.is_dir(follow_symlinks=False):
            if rel != TEMPLATES:
                stack.append(rel)
            return None
        low = entry.name.lower()
        if not low.endswith(".md") or rel == store.index_name or (rel_dir and low == store.index_name.lower()):
            return None
        is_link = entry.is_symlink()
        if not is_link and not entry.is_file(follow_symlinks=False):
            store.skipped.append((rel, "not a regular file"))
            return None
    except OSError as exc:
        store.skipped.append((rel, _reason(exc)))
        return None
    note = Note(entry.path, rel, rel.startswith(ARCHIVE + "/"))
    if is_link:
        real = os.path.realpath(entry.path)
        if not inside(real, store.real_root):
            store.escaping_links.append((rel, real))
            return None
        note.real = real
        if os.path.isdir(real):
            return None
    return note


def read_bounded(path: str, limit: int, check_regular: bool = True) -> tuple[bytes, os.stat_result]:
    """scope.read_bounded, the one bounded reader (kept here under its old name)."""
    data, st = scope.read_bounded(path, limit, check_regular)
    return data, st


def _read_bytes(note: Note) -> bytes | None:
    """The note's bytes (at most READ_MAX + 1), or None with `note.error` set. Plain os.read
    is used because it costs a third less than a buffered file object over 10,000 files."""
    try:
        data, st = scope.read_bounded(note.path, READ_MAX)
    except OSError as exc:
        note.error = ("file-unreadable", _reason(exc))
        return None
    note.mtime = st.st_mtime
    if len(data) > READ_MAX:
        note.size = max(len(data), st.st_size)
    return data


def _read_note(note: Note) -> None:
    raw = _read_bytes(note)
    if raw is None:
        return
    if len(raw) > READ_MAX:
        note.error = ("note-too-large", "larger than %s bytes; not read" % "{:,}".format(READ_MAX))
        return
    note.size = len(raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        note.error = ("file-not-utf8", "byte %d is not UTF-8 (%s)" % (exc.start, exc.reason))
        return
    parse_note(note, text)
    fm = note.fm
    if fm is not None and fm.closed:
        # the closing fence must lie inside what the host reads of the note; a character is at
        # most 4 bytes, so a short frontmatter needs no encoding to tell
        start = fm.body_start
        note.host_reads = fm.end_line <= HOST_SCAN_LINES and (
            4 * start <= HOST_SCAN_BYTES or len(text[:start].encode()) <= min(len(raw), HOST_SCAN_BYTES))


def parse_note(note: Note, text: str) -> Note:
    """Fill in what a note's text says: frontmatter, form, body and [[links]]."""
    note.text = text
    fm = frontmatter.parse(text)
    note.fm = fm
    fields = fm.fields
    note.form = PROTOCOL if "type" in fields or "created" in fields or "updated" in fields else CLAUDE  # form_of
    t = fields.get("type")
    if t is None:
        t = fm.nested("metadata", "type")
    # one shared string per type and for a name equal to the slug: 50,000 notes, 6 MB less
    note.type = _TYPE_STR.get(t, t) if isinstance(t, str) else None
    name, desc = fields.get("name"), fields.get("description")
    note.name = (note.slug if name == note.slug else name) if isinstance(name, str) else None
    note.description = desc if isinstance(desc, str) else None
    note.body = body = text[fm.body_start:]
    if "[[" in body:
        base = fm.body_line
        pos = 0
        line = base
        links: list[str | int] = []
        for m in WIKI_RE.finditer(body):
            target = m.group(1).strip()
            if target:
                line += body.count("\n", pos, m.start())  # counted on from the last link: linear
                pos = m.start()
                links += (target, line)
        note.links = tuple(links)
    words = body.lower().split()
    if len(words) >= 8:
        # a 64-bit hash, compared only within this run: importing hashlib alone costs 4 MB
        note.body_key = hash(" ".join(words))
    return note


def forget_text(note: Note) -> None:
    """Drop what only the per-note checks need (the store streams: no bodies are kept). The
    path goes too: it is ROOT joined with `rel`, and `real` says where a symlink leads."""
    note.text = None
    note.body = ""
    note.fm = None
    if note.real == note.path:
        note.real = note.path = ""


def heading_type(title: str) -> str | None:
    """The type a heading names ("## feedback", "## Feedback notes", "## Users"), or None."""
    word = title.strip().split(" ", 1)[0].lower() if title.strip() else ""
    if word in TYPES:
        return word
    if word.endswith("s") and word[:-1] in TYPES:
        return word[:-1]
    return None


def _read_index(store: Store) -> None:
    """Stat first, then read a bounded head of the index. A symlink leading outside the
    store is refused unread (`symlink-escape`); a FIFO, device or folder is never opened
    for reading (`not-a-file`). Non-UTF-8 bytes are recorded and the text decoded leniently,
    so every pointer check still runs."""
    path = store.index_path
    try:
        lst = os.lstat(path)
    except FileNotFoundError:
        store.index_error = ("index-missing", "no such file")
        return
    except OSError as exc:
        store.index_error = ("file-unreadable", _reason(exc))
        return
    if stat.S_ISLNK(lst.st_mode):
        real = os.path.realpath(path)
        if not inside(real, store.real_root):
            store.index_error = ("symlink-escape", "a symlink to a file outside the store")
            return
        path = real
    try:
        st = os.stat(path)
    except OSError as exc:
        store.index_error = ("file-unreadable", _reason(exc))
        return
    if not stat.S_ISREG(st.st_mode):
        store.index_error = ("not-a-file", "not a regular file (%s)" % _kind(st.st_mode))
        return
    try:
        raw, st = read_bounded(path, INDEX_READ_MAX)
    except OSError as exc:
        store.index_error = ("file-unreadable", _reason(exc))
        return
    store.index_size = max(st.st_size, len(raw))
    if len(raw) > INDEX_READ_MAX:
        raw = raw[:INDEX_READ_MAX]
    store.index_raw = raw
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = _lenient(store, raw)
    store.index_text = text
    _parse_pointers(store, text)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


_MAX_BAD = 50


def _lenient(store: Store, raw: bytes) -> str:
    """Decode with U+FFFD for bad bytes, recording where the first few are. A cut at the
    read limit may split the last character: that one is not the file's fault."""
    bad: list[tuple[int, int]] = []
    end = len(raw)
    pos = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    line = 1
    counted = 0
    while pos < end and len(bad) < _MAX_BAD:
        try:
            raw[pos:].decode("utf-8")
            break
        except UnicodeDecodeError as exc:
            at = pos + exc.start
            if exc.reason == "unexpected end of data" and len(raw) >= INDEX_READ_MAX:
                break
            line += raw.count(b"\n", counted, at)
            counted = at
            bad.append((at, line))
            pos = pos + exc.end
    store.index_bad_bytes = bad
    start = 3 if raw.startswith(b"\xef\xbb\xbf") else 0
    return raw[start:].decode("utf-8", "replace")


def _parse_pointers(store: Store, text: str) -> None:
    assert store.caps is not None
    # a cap can be absurdly high (a config may say 10**30): the text itself bounds the lines
    max_lines = min(PARSE_FACTOR * store.caps.hard_lines, text.count("\n") + 1)
    max_chars = PARSE_FACTOR * store.caps.hard_bytes
    heading: str | None = None
    in_fence = False
    hidden = _comment_lines(text)
    number = 0
    consumed = 0
    for line in text.split("\n", max_lines)[:max_lines]:
        number += 1
        consumed += len(line) + 1
        if consumed > max_chars:
            store.index_cut = True
            number -= 1
            break
        if hidden and number - 1 in hidden:
            line = hidden[number - 1]  # what the host keeps of a line in a comment block
        stripped = line.strip()
        if not stripped:
            continue
        if stripped[0] in _SPECIAL_FIRST:
            skip, in_fence, heading = _special_line(stripped, in_fence, heading)
            if skip:
                continue
        elif in_fence:
            continue
        _add_links(store, line, number, heading)
    store.index_parsed_lines = number
    if consumed < len(text) and number >= max_lines:
        store.index_cut = True
    if store.index_size > len(store.index_raw or b""):
        store.index_cut = True


def _special_line(stripped: str, in_fence: bool, heading: str | None) -> tuple[bool, bool, str | None]:
    """(skip the line, in a fence after it, the heading's type after it) for a line that starts
    with a fence or heading character."""
    if stripped.startswith("```") or stripped.startswith("~~~"):
        return True, not in_fence, heading
    if in_fence:
        return True, in_fence, heading
    if stripped[0] == "#":
        m = HEADING_RE.match(stripped)
        if m:
            return True, in_fence, heading_type(m.group(1))
    return False, in_fence, heading


def _add_links(store: Store, line: str, number: int, heading: str | None) -> None:
    """An index line's note links: the first is its pointer, the rest references."""
    links = note_links(line)
    if not links:
        return
    (m, target) = links[0]
    store.pointers.append(Pointer(number, m.group(1), target, heading))
    for m, target in links[1:]:
        store.references.append(Pointer(number, m.group(1), target, heading))


def _comment_lines(text: str) -> dict[int, str]:
    """layout.comment_lines, the one comment model (imported only for an index with one)."""
    if "<!--" not in text:
        return {}
    # lazy: only an index with an HTML comment needs the layout model
    from engramory.layout import comment_lines

    return comment_lines(text)


def _resolve(store: Store, p: Pointer, by_fold: dict[str, Note] | None) -> None:
    target = p.target
    # the common case needs no system call: a plain relative path to a note the walk found
    # (the walk does not follow symlinked folders, so its paths cannot leave ROOT)
    norm = posixpath.normpath(target)
    note = store.by_rel.get(norm)
    if note is None and by_fold is not None:
        note = by_fold.get(fold(norm))  # the disk ignores case: so does the pointer
    if (note is not None and note.real == note.path and "\\" not in target and ".." not in target
            and not target.startswith("/")):
        p.path = os.path.join(store.root, note.rel)
        p.rel = note.rel
        p.exists = p.is_file = True
        return
    if os.path.isabs(target) or target.startswith("~"):
        joined = os.path.expanduser(target)
    else:
        joined = os.path.join(store.root, target)
    p.path = joined
    real = os.path.realpath(joined)
    if not inside(real, store.real_root):
        p.escapes = True
        return
    p.rel = os.path.relpath(real, store.real_root).replace(os.sep, "/")
    if by_fold is not None and p.rel not in store.by_rel:
        hit = by_fold.get(fold(p.rel))
        if hit is not None:
            p.rel = hit.rel
    try:
        st = os.stat(real)
    except OSError:
        return
    p.exists = True
    p.is_file = stat.S_ISREG(st.st_mode)


_REL = operator.attrgetter("rel")  # the notes' sort key, read in C


def load(root: str, env: Mapping[str, str] | None = None, visit: Callable[[Note], None] | None = None,
         deadline: float | None = None) -> Store:
    """Read the store at `root`. Raises OSError only when `root` itself is not a folder
    that can be listed; everything below is recorded, never raised.

    With `visit`, the notes stream: each is read, parsed, handed to `visit`, and its text
    dropped, so memory does not grow with the notes' bodies. With `deadline` (a
    time.monotonic() value) reading stops once it passes: `stopped` is then set and the
    notes not read yet are left out."""
    store = Store(root, index_name_for(root, env))
    os.listdir(root)  # the one failure that stops the doctor: the root itself
    store.config = config.load_store_config(root)
    store.caps, store.cap_notes = caps_for(store.index_path, env)
    store.case_insensitive = case_insensitive(root, store.index_name)
    _read_index(store)
    _walk(store, deadline)
    store.notes.sort(key=_REL)
    store.streamed = visit is not None
    by_rel = store.by_rel
    for note in store.notes:
        by_rel[note.rel] = note  # all of them: a pointer to a note not read yet still resolves
    kept: list[Note] = []
    for i, note in enumerate(store.notes):
        if deadline is not None and i % 64 == 0 and time.monotonic() > deadline:
            store.stopped = True
            break
        _read_note(note)
        kept.append(note)
        if visit is not None:
            visit(note)
            forget_text(note)
    store.notes = kept
    by_fold = {fold(n.rel): n for n in store.notes} if store.case_insensitive else None
    for p in store.pointers + store.references:
        _resolve(store, p, by_fold)
    return store

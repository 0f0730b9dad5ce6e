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
  `.md`, outside fenced code blocks and HTML comments; URLs with a scheme are not pointers.
- `[[slug]]` links in note bodies name another note by file name or by `name:`.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from urllib.parse import unquote

from engramory import config, frontmatter
from engramory.config import caps_for
from engramory.guard import READ_LIMIT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from engramory.size import Caps

ARCHIVE = "archive"
TYPES = ("user", "feedback", "project", "reference")
READ_MAX = 4 << 20  # a note past this is not read: it is reported by size alone

LINK_RE = re.compile(r"\[([^\]\n]*)\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)")
WIKI_RE = re.compile(r"\[\[([^\[\]\n|#]+)(?:#[^\[\]\n|]*)?(?:\|[^\[\]\n]*)?\]\]")
HEADING_RE = re.compile(r"#{1,6}[ \t]+(.*?)[ \t#]*\Z")
_SPECIAL_FIRST = "`~<#"
SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")

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
    None); `raw` is kept only for the size and for byte-level checks."""

    __slots__ = (
        "path", "rel", "slug", "archived", "size", "text", "error", "fm", "form",
        "body", "links", "real", "type", "name", "description",
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
        self.links: list[tuple[str, int]] = []  # ([[target]], line)
        self.real = path
        self.type: str | None = None  # in either form; None when absent or not text
        self.name: str | None = None
        self.description: str | None = None

    def line_at(self, offset: int) -> int:
        """1-based line of a character offset in the body."""
        assert self.fm is not None
        return self.fm.body_line + self.body.count("\n", 0, offset)


class Pointer:
    """One index link to a `.md` target. `rel` is the target relative to ROOT (posix) when
    it stays inside ROOT; `escapes` when it (or a symlink on the way) leads outside."""

    __slots__ = ("line", "label", "target", "path", "rel", "heading", "escapes", "exists", "is_file")

    def __init__(self, line: int, label: str, target: str, heading: str | None) -> None:
        self.line = line
        self.label = label
        self.target = target
        self.heading = heading  # the type named by the heading above, if any
        self.path = ""
        self.rel = ""
        self.escapes = False
        self.exists = False
        self.is_file = False


class Store:
    __slots__ = (
        "root", "real_root", "index_name", "index_path", "index_raw", "index_text", "index_error",
        "pointers", "notes", "by_rel", "unlistable", "skipped", "escaping_links", "config", "caps",
        "cap_notes", "index_size",
    )

    def __init__(self, root: str, index_name: str) -> None:
        self.root = root
        self.real_root = os.path.realpath(root)
        self.index_name = index_name
        self.index_path = os.path.join(root, index_name)
        self.index_raw: bytes | None = None
        self.index_text: str | None = None
        self.index_error: tuple[str, str] | None = None
        self.index_size = 0  # set only when the index is too large to read
        self.pointers: list[Pointer] = []
        self.notes: list[Note] = []
        self.by_rel: dict[str, Note] = {}
        self.unlistable: list[tuple[str, str]] = []  # (rel folder, reason)
        self.skipped: list[tuple[str, str]] = []  # (rel, reason): .md entries that are not files
        self.escaping_links: list[tuple[str, str]] = []  # (rel, resolved target)
        self.config: config.StoreConfig = config.StoreConfig(os.path.join(root, config.CONFIG_NAME))
        self.caps: Caps | None = None
        self.cap_notes: list[str] = []

    @property
    def live(self) -> list[Note]:
        return [n for n in self.notes if not n.archived]


def _reason(exc: OSError) -> str:
    return exc.strerror or exc.__class__.__name__


def inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def _walk(store: Store) -> None:
    """Collect every note under ROOT without following symlinked folders."""
    stack = [""]
    index_rel = store.index_name
    while stack:
        rel_dir = stack.pop()
        folder = os.path.join(store.root, rel_dir) if rel_dir else store.root
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            store.unlistable.append((rel_dir or ".", _reason(exc)))
            continue
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue
            rel = rel_dir + "/" + name if rel_dir else name
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(rel)
                    continue
                if not name.lower().endswith(".md") or rel == index_rel:
                    continue
                is_link = entry.is_symlink()
                if not is_link and not entry.is_file(follow_symlinks=False):
                    store.skipped.append((rel, "not a regular file"))
                    continue
            except OSError as exc:
                store.skipped.append((rel, _reason(exc)))
                continue
            note = Note(entry.path, rel, rel.startswith(ARCHIVE + "/"))
            if is_link:
                real = os.path.realpath(entry.path)
                if not inside(real, store.real_root):
                    store.escaping_links.append((rel, real))
                    continue
                note.real = real
                if os.path.isdir(real):
                    continue
            store.notes.append(note)


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 16


def _read_bytes(note: Note) -> bytes | None:
    """The note's bytes, or None with `note.error` set. O_NONBLOCK keeps a FIFO that
    appears between the walk and the read from hanging the doctor; plain os.read is used
    because it costs a third less than a buffered file object over 10,000 small files."""
    try:
        fd = os.open(note.path, _OPEN_FLAGS)
    except OSError as exc:
        note.error = ("file-unreadable", _reason(exc))
        return None
    try:
        if note.real != note.path and not stat.S_ISREG(os.fstat(fd).st_mode):
            note.error = ("file-unreadable", "not a regular file")
            return None
        data = os.read(fd, _CHUNK)
        if len(data) == _CHUNK:
            parts = [data]
            total = len(data)
            while total <= READ_MAX:
                more = os.read(fd, _CHUNK)
                if not more:
                    break
                parts.append(more)
                total += len(more)
            data = b"".join(parts)
    except OSError as exc:
        note.error = ("file-unreadable", _reason(exc))
        return None
    finally:
        os.close(fd)
    return data


def _read_note(note: Note) -> None:
    raw = _read_bytes(note)
    if raw is None:
        return
    note.size = len(raw)
    if len(raw) > READ_MAX:
        try:
            note.size = max(note.size, os.path.getsize(note.path))
        except OSError:
            pass
        note.error = ("note-too-large", "larger than %s bytes; not read" % "{:,}".format(READ_MAX))
        return
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        note.error = ("file-not-utf8", "byte %d is not UTF-8 (%s)" % (exc.start, exc.reason))
        return
    parse_note(note, text)


def parse_note(note: Note, text: str) -> Note:
    """Fill in what a note's text says: frontmatter, form, body and [[links]]."""
    note.text = text
    fm = frontmatter.parse(text)
    note.fm = fm
    note.form = form_of(fm)
    fields = fm.fields
    t = fields.get("type")
    if t is None:
        t = fm.nested("metadata", "type")
    note.type = t if isinstance(t, str) else None
    name, desc = fields.get("name"), fields.get("description")
    note.name = name if isinstance(name, str) else None
    note.description = desc if isinstance(desc, str) else None
    note.body = text[fm.body_start:]
    if "[[" in note.body:
        body = note.body
        base = fm.body_line
        for m in WIKI_RE.finditer(body):
            target = m.group(1).strip()
            if target:
                note.links.append((target, base + body.count("\n", 0, m.start())))
    return note


def heading_type(title: str) -> str | None:
    """The type a heading names ("## feedback", "## Feedback notes", "## Users"), or None."""
    word = title.strip().split(" ", 1)[0].lower() if title.strip() else ""
    if word in TYPES:
        return word
    if word.endswith("s") and word[:-1] in TYPES:
        return word[:-1]
    return None


def _read_index(store: Store) -> None:
    try:
        # Stat first: opening a FIFO named MEMORY.md would hang the doctor (install branch, issue 10).
        if not stat.S_ISREG(os.stat(store.index_path).st_mode):
            store.index_error = ("file-unreadable", "not a regular file (a FIFO or device is never opened)")
            return
        with open(store.index_path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > READ_LIMIT:
                store.index_size = size
                store.index_error = ("index-too-large", "%s bytes; judged by its size alone" % "{:,}".format(size))
                return
            raw = f.read()
    except FileNotFoundError:
        store.index_error = ("index-missing", "no such file")
        return
    except OSError as exc:
        store.index_error = ("file-unreadable", _reason(exc))
        return
    store.index_raw = raw
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        store.index_error = ("file-not-utf8", "byte %d is not UTF-8 (%s)" % (exc.start, exc.reason))
        return
    store.index_text = text
    heading: str | None = None
    in_fence = False
    in_comment = False
    pointers = store.pointers
    for number, line in enumerate(text.split("\n"), 1):
        if in_comment:
            if "-->" in line:
                in_comment = False
            continue
        stripped = line.strip()
        first = stripped[:1]
        if first in _SPECIAL_FIRST and first:
            if stripped.startswith("```") or stripped.startswith("~~~"):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            if stripped.startswith("<!--"):
                if "-->" not in stripped[4:]:
                    in_comment = True
                continue
            if first == "#":
                m = HEADING_RE.match(stripped)
                if m:
                    heading = heading_type(m.group(1))
                    continue
        elif in_fence:
            continue
        if "](" not in line:
            continue
        for m in LINK_RE.finditer(line):
            target = m.group(2)
            if target.startswith("<"):
                target = target[1:-1]
            if "#" in target or "?" in target:
                target = target.split("#", 1)[0].split("?", 1)[0]
            if not target[-3:].lower() == ".md" or (":" in target and SCHEME_RE.match(target)):
                continue
            pointers.append(Pointer(number, m.group(1), unquote(target) if "%" in target else target, heading))


def _resolve(store: Store, p: Pointer) -> None:
    target = p.target
    # the common case needs no system call: a plain relative path to a note the walk found
    # (the walk does not follow symlinked folders, so its paths cannot leave ROOT)
    norm = posixpath.normpath(target)
    note = store.by_rel.get(norm)
    if (note is not None and note.real == note.path and "\\" not in target and ".." not in target
            and not target.startswith("/")):
        p.path = note.path
        p.rel = norm
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
    try:
        st = os.stat(real)
    except OSError:
        return
    p.exists = True
    p.is_file = stat.S_ISREG(st.st_mode)


def load(root: str, env: Mapping[str, str] | None = None) -> Store:
    """Read the store at `root`. Raises OSError only when `root` itself is not a folder
    that can be listed; everything below is recorded, never raised."""
    settings = config.from_env(env)
    store = Store(root, settings.index_name)
    os.listdir(root)  # the one failure that stops the doctor: the root itself
    store.config = config.load_store_config(root)
    store.caps, store.cap_notes = caps_for(store.index_path, env)
    _read_index(store)
    _walk(store)
    store.notes.sort(key=lambda n: n.rel)
    for note in store.notes:
        _read_note(note)
        store.by_rel[note.rel] = note
    for p in store.pointers:
        _resolve(store, p)
    return store

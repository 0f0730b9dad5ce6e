"""The doctor's checks of the store as a whole, its index and pointers, and the graph of notes."""

from __future__ import annotations

import os

from engramory import config
from engramory import size as size_mod
from engramory.doctor.codes import ERROR, INDEX_LINE_MAX, MAX_PER_NOTE, Context, Finding, shown
from engramory.size import OVER, WARN, verdict
from engramory.size import n as _n
from engramory.store import pointers
from engramory.store import reader as store_mod
from engramory.store.pointers import Pointer
from engramory.store.reader import ARCHIVE, TYPES, Note, Store
from engramory.store.secrets import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Hashable, Iterator

# -- the store and the index -----------------------------------------------------------------

def host_window(caps: size_mod.Caps) -> size_mod.Window:
    """Claude Code's load window (engramory.size's, which hosts.claude returns too), held to the
    caps in force."""
    return size_mod.claude_code_window().limited(caps.hard_lines, caps.hard_bytes)


def check_config(st: Store, ctx: Context) -> Iterator[Finding]:
    cfg = st.config
    if not cfg.exists:
        return
    keys = sorted(cfg.line_of, key=len, reverse=True)
    for err in cfg.errors:
        line = 1
        for key in keys:
            if repr(key) in err or '"%s"' % key in err:
                line = cfg.line_of[key]
                break
        yield Finding("config-invalid", config.CONFIG_NAME, line,
                      "%s; the file is ignored until fixed (caps fall back to the defaults)" % err)


# the config protects itself (install branch, issue 10; the rule is config.window_problems) --

def check_config_window(st: Store, ctx: Context) -> Iterator[Finding]:
    if st.caps is None:
        return
    for message in config.window_problems(st.caps, st.config):
        key = "hardLines" if " lines is above" in message else "hardBytes"
        yield Finding("config-above-window", config.CONFIG_NAME, st.config.line_of.get(key, 0), message)


def git_exposure(root: str, paths: list[str]) -> tuple[str, list[str]] | None:
    """(work tree, paths git does not ignore) when `root` lies inside another git work tree;
    None when it is not in one, is the top of its own repository, or git is unavailable."""
    import subprocess  # only here: the hook's quick audit never starts git

    def run(args: list[str], data: str | None = None) -> subprocess.CompletedProcess[str] | None:
        try:
            return subprocess.run(["git", "-C", root] + args, input=data, capture_output=True,
                                  text=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return None

    top = run(["rev-parse", "--show-toplevel"])
    if top is None or top.returncode != 0 or not top.stdout.strip():
        return None
    work_tree = os.path.realpath(top.stdout.strip())
    if work_tree == os.path.realpath(root):
        return None  # a store kept in its own repository: committing it is the point
    res = run(["check-ignore", "--stdin"], "".join(p + "\n" for p in ["."] + paths))
    if res is None or res.returncode not in (0, 1):
        return None
    ignored = set(res.stdout.splitlines())
    if "." in ignored:
        return None
    exposed = [p for p in paths if p not in ignored]
    return (work_tree, exposed) if exposed else None


def check_git(st: Store, ctx: Context) -> Iterator[Finding]:
    if not ctx.git:
        return
    paths = ([st.index_name] if st.index_read else []) + [n.rel for n in st.notes]
    found = git_exposure(st.root, paths)
    if found and not _shared_by_sync(st.root, st.index_name):
        work_tree, exposed = found
        yield Finding("store-in-git", ".", 0,
                      "the store is inside the git work tree %s and git does not ignore %d of its "
                      "files (e.g. %s); memories hold machine-local detail: add the store folder to "
                      "that repository's .gitignore" % (work_tree, len(exposed), shown(exposed[0])))


def _shared_by_sync(root: str, index_name: str) -> bool:
    """A store `engramory sync init` set up is in its repository on purpose (engramory.sync)."""
    # lazy: only a store inside a git repository asks; the sync package is not loaded otherwise
    from engramory.sync.checks import shared_by_sync

    return shared_by_sync(root, index_name)


def check_walk(st: Store, ctx: Context) -> Iterator[Finding]:
    for rel, reason in st.unlistable:
        yield Finding("dir-unlistable", rel, 0,
                      "cannot list this folder (%s): notes in it were not checked; fix its permissions" % reason)
    for rel, reason in st.skipped:
        yield Finding("not-a-file", rel, 0, "%s; not read: a note must be a regular file" % reason)
    for rel, _real in st.escaping_links:
        yield Finding("symlink-escape", rel, 0,
                      "a symlink to a file outside the store; not read: copy the note into the store "
                      "or remove the link")


_INDEX_ERRORS = {
    "index-missing": "no index in this folder: create %(name)s with one pointer line per note "
                     "(see templates/MEMORY.md)",
    "symlink-escape": "the index is a symlink to a file outside the store; not read: keep the index "
                      "inside ROOT (replace the link with the file itself)",
    "not-a-file": "%(reason)s; not read: the index must be a regular file",
}


def _index_error(st: Store) -> Finding:
    """The one finding for an index that could not be read."""
    assert st.index_error is not None
    code, reason = st.index_error
    message = _INDEX_ERRORS.get(code, "the index cannot be read (%(reason)s); recall starts from it: fix it first")
    text = message % {"name": st.index_name, "reason": reason}
    if code == "not-a-file":
        return Finding(code, st.index_name, 0, text, severity=ERROR)
    return Finding(code, st.index_name, 0, text)


def _index_size(st: Store, raw: bytes, caps: size_mod.Caps) -> Iterator[Finding]:
    """The index sized as the host counts it, through the registry's window (issue 9)."""
    name = st.index_name
    window = host_window(caps)
    unit = window.unit
    lines: int | None
    if len(raw) >= st.index_size:
        lines, units = window.measure(raw)
        size_text = "%s %s" % (_n(units), unit)
    else:
        # read only in part: a UTF-8 character is at most 4 bytes and 2 UTF-16 units, so the
        # file size alone proves a floor far over any cap (the 60 MB index: 0.1 s)
        lines, units = None, st.index_size // 3
        size_text = "%s bytes (at least %s %s)" % (_n(st.index_size), _n(units), unit)
    status = verdict(lines, units, caps)
    sizes = "%s, %s (warn %s lines / %s %s, hard %s / %s)" % (
        "%s lines" % _n(lines) if lines is not None else "lines not all counted (read its first %s bytes)" % _n(len(raw)),
        size_text, _n(caps.warn_lines), _n(caps.warn_bytes), unit, _n(caps.hard_lines), _n(caps.hard_bytes))
    if status == OVER:
        outside = []
        for number, text in window.outside(raw):
            outside.append("line %d %s" % (number, quote(text, 50)))
            if len(outside) == 3:
                break
        first = int(outside[0].split(" ", 2)[1]) if outside else 0
        yield Finding("index-over-cap", name, first,
                      "%s; the host does not load past the window, so these entries are never recalled: "
                      "%s; compact now (pointer-ify long lines, merge, archive)" % (sizes, "; ".join(outside) or "none"))
    elif status == WARN:
        yield Finding("index-warn-zone", name, 0, "%s; plan a compaction pass before it reaches the hard cap" % sizes)


def _index_lines(st: Store, text: str) -> Iterator[Finding]:
    """The parse limit, and index lines too long to be a pointer."""
    name = st.index_name
    if st.index_cut:
        yield Finding("index-parse-limit", name, st.index_parsed_lines + 1,
                      "pointers were searched only in the first %s lines (%d times the caps); the rest lies "
                      "far outside what the host loads: notes pointed to only from there count as unindexed"
                      % (_n(st.index_parsed_lines), store_mod.PARSE_FACTOR))
    for number, text_line in enumerate(text.split("\n", st.index_parsed_lines)[:st.index_parsed_lines], 1):
        if len(text_line) > INDEX_LINE_MAX:
            yield Finding("index-long-line", name, number,
                          "%s characters (keep a pointer under %d): move the content into its note "
                          "and leave one hook + link: %s" % (_n(len(text_line)), INDEX_LINE_MAX, quote(text_line, 50)))


def check_index(st: Store, ctx: Context) -> Iterator[Finding]:
    if st.index_error is not None:
        yield _index_error(st)
        return
    raw = st.index_raw
    assert raw is not None and st.caps is not None and st.index_text is not None
    for offset, line in st.index_bad_bytes[:MAX_PER_NOTE]:
        yield Finding("file-not-utf8", st.index_name, line,
                      "byte %s is not UTF-8; the host reads it as U+FFFD: save the index as UTF-8 "
                      "(pointers were still checked)" % _n(offset))
    yield from _index_size(st, raw, st.caps)
    yield from _index_lines(st, st.index_text)


def hidden_pointers(st: Store) -> dict[int, str]:
    """line -> where, for each pointer on a line the host skips as frontmatter or an HTML
    comment (layout.py's model of what it loads): the line is in the file, never in a session."""
    raw = st.index_raw
    if not raw or st.caps is None or not (raw.lstrip(b"\xef\xbb\xbf").startswith(b"---") or b"<!--" in raw):
        return {}
    # lazy: only an index with frontmatter or an HTML comment needs the layout model
    from engramory import layout

    window = host_window(st.caps)
    counted: dict[int, list[str]] = {}
    for number, text, _whole, _loaded in layout.counted_lines(window, raw):
        counted.setdefault(number, []).append(text)
    spans = layout.skipped_spans(window, raw)
    out: dict[int, str] = {}
    for p in st.pointers:
        if any(pointers.line_pointer(text) == p.target for text in counted.get(p.line, ())):
            continue
        where = layout.why_skipped(spans, p.line)
        if where:
            out[p.line] = where
    return out


def _reference_findings(st: Store) -> Iterator[Finding]:
    """Links on pointer lines, besides the pointer, that lead nowhere."""
    for p in st.references:
        if p.escapes or not p.exists or not p.is_file:
            yield Finding("pointer-escapes-root" if p.escapes else "pointer-broken", st.index_name, p.line,
                          "%s, a link on this line besides its pointer, %s: fix the path or drop the link"
                          % (quote(p.target, 80), "leads outside the store" if p.escapes else
                             "does not exist" if not p.exists else "is not a file"))


def _pointer_type(st: Store, p: Pointer) -> str | None:
    note = st.by_rel.get(p.rel)
    return note.type if note is not None else None


def _unusable_pointer(st: Store, p: Pointer, target: str) -> Finding | None:
    """A pointer that leads outside, nowhere, or to something not a file."""
    if p.escapes:
        return Finding("pointer-escapes-root", st.index_name, p.line,
                       "%s leads outside the store: keep notes inside ROOT and point to them by "
                       "relative path" % target)
    if not p.exists:
        return Finding("pointer-broken", st.index_name, p.line,
                       "%s does not exist: fix the path, restore the note, or remove the line" % target)
    if not p.is_file:
        return Finding("pointer-broken", st.index_name, p.line, "%s is not a file: point to a note" % target)
    return None


def _pointer_findings(st: Store, p: Pointer, first_line: dict[str, int]) -> Iterator[Finding]:
    """One pointer that is not plainly healthy: archived, repeated, or under another type's heading."""
    name = st.index_name
    target = quote(p.target, 80)
    unusable = _unusable_pointer(st, p, target)
    if unusable is not None:
        yield unusable
        return
    if p.rel.startswith(ARCHIVE + "/"):
        yield Finding("pointer-into-archive", name, p.line,
                      "%s is archived: drop this line from the index, or move the note back out "
                      "of archive/ if it is live again" % target)
    if p.rel in first_line:
        yield Finding("pointer-duplicate", name, p.line,
                      "%s is already pointed to on line %d: keep one line" % (target, first_line[p.rel]))
    else:
        first_line[p.rel] = p.line
    t = _pointer_type(st, p)
    if p.heading and t in TYPES and t != p.heading:
        yield Finding("index-heading-type", name, p.line,
                      "%s is a %s note under the %s heading: move the line under ## %s"
                      % (target, t, p.heading, t))


def check_pointers(st: Store, ctx: Context) -> Iterator[Finding]:
    hidden = hidden_pointers(st)
    for line, where in sorted(hidden.items()):
        yield Finding("index-hidden-pointer", st.index_name, line,
                      "this pointer lies %s, so no session loads it: close the block where it should end (a stray "
                      "\"---\" or \"-->\" ends it early, a missing one lets it run on) or move the line out of it"
                      % where)
    yield from _reference_findings(st)
    first_line: dict[str, int] = {}
    for p in st.pointers:
        if p.is_file and not p.escapes and p.rel not in first_line and not p.rel.startswith(ARCHIVE + "/"):
            t = _pointer_type(st, p)
            if not p.heading or t not in TYPES or t == p.heading:
                first_line[p.rel] = p.line  # the usual, healthy pointer: nothing to say
                continue
        yield from _pointer_findings(st, p, first_line)


# -- the graph ---------------------------------------------------------------------------------

def _link_key(target: str) -> str:
    t = target.strip().lower()
    return t[:-3] if t.endswith(".md") else t


class _Groups:
    """key -> notes, holding a lone note bare and a list only where keys collide: at 50,000
    notes a list per key was most of the doctor's peak memory. Keys are hashed (a 64-bit
    int instead of the text): a false collision is as unlikely as it is harmless here."""

    __slots__ = ("by",)

    def __init__(self) -> None:
        self.by: dict[int, Note | list[Note]] = {}

    def add(self, key: Hashable, n: Note) -> None:
        h = hash(key)
        had = self.by.setdefault(h, n)  # one lookup for the usual key, seen first here
        if had is n:
            return
        if isinstance(had, list):
            if had[-1] is not n:
                had.append(n)
        else:
            self.by[h] = [had, n]

    def get(self, key: str) -> list[Note]:
        had = self.by.get(hash(key))
        return [] if had is None else had if isinstance(had, list) else [had]

    def groups(self) -> Iterator[list[Note]]:
        """Every key shared by two or more notes."""
        for had in self.by.values():
            if isinstance(had, list):
                yield had


def _slug_map(st: Store) -> _Groups:
    by = _Groups()
    for n in st.notes:
        slug = n.slug.lower()
        by.add(slug, n)
        nm = n.name
        if nm and nm.strip().lower() != slug:
            by.add(nm.strip().lower(), n)
    return by


def _note_links(n: Note, slugs: _Groups, linked: set[str]) -> Iterator[Finding]:
    """One note's [[links]]: the notes they reach land in `linked`; the rest dangle."""
    dangling = 0
    for target, line in n.link_list():
        hits = slugs.get(_link_key(target))
        if hits:
            for h in hits:
                if h is not n:
                    linked.add(h.rel)
            continue
        dangling += 1
        if dangling <= MAX_PER_NOTE:
            yield Finding("link-dangling", n.rel, line,
                          "[[%s]] names no note yet (allowed: write it when it is worth keeping)"
                          % quote(target, 60)[1:-1])
    if dangling > MAX_PER_NOTE:
        yield Finding("link-dangling", n.rel, 0, "and %s more [[links]] to notes not written yet in this note"
                      % _n(dangling - MAX_PER_NOTE))


def check_graph(st: Store, ctx: Context) -> Iterator[Finding]:
    slugs = _slug_map(st)
    indexed = {p.rel for p in st.pointers if p.exists and not p.escapes}
    linked: set[str] = set()
    for n in st.live:
        if n.links:  # most notes link nowhere: no generator made for them
            yield from _note_links(n, slugs, linked)
    if not st.index_read:
        return  # with no index every note would be an orphan: index-missing says it once
    orphan = ("neither in the index nor [[linked]]: a session never loads it (at best the host's selector may "
              "pick it from its description); add a pointer line to %s, or move it to archive/ if it is retired"
              % st.index_name)  # one message for every orphan, formatted once
    for n in st.live:
        if n.rel in indexed:
            continue
        if n.rel in linked:
            yield Finding("note-link-only", n.rel, 0,
                          "reachable only through [[links]]: add an index line if recall should find it directly")
        else:
            yield Finding("note-orphan", n.rel, 0, orphan)


def check_slugs(st: Store, ctx: Context) -> Iterator[Finding]:
    """Names that collide on a case-insensitive, normalizing disk: `Deploy.md` and
    `deploy.md`, or `café.md` in NFC and in NFD (one file on macOS)."""
    by = _Groups()
    for n in st.live:
        slug = n.slug
        key = store_mod.fold(slug) if not slug.isascii() else slug.lower()
        by.add(key, n)
        nm = n.name
        if nm and nm is not slug and nm.strip():
            by.add(store_mod.fold(nm.strip()), n)
    for group in by.groups():
        def keys(n: Note) -> set[str]:
            return {store_mod.fold(n.slug)} | ({store_mod.fold(n.name.strip())} if n.name and n.name.strip() else set())

        common = keys(group[0]) & keys(group[1])
        key = min(common) if common else store_mod.fold(group[0].slug)
        for n in group:
            others = ", ".join(shown(o.rel) for o in group if o is not n)
            yield Finding("slug-duplicate", n.rel, 0,
                          "the slug %s is also used by %s ([[links]] and case-insensitive or normalizing disks "
                          "cannot tell them apart): rename one, or merge them" % (quote(key, 60), others))

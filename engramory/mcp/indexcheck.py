"""What an edit of the index itself must not do besides growing it past the window (the
guard's rule, engramory.guard): leave the doctor an error it did not have. So an edit is refused
when it adds a pointer to no note (or one outside the store), takes out the only way recall
reaches a note (its pointer, with no [[link]] to it either: `note-orphan`), or adds a conflict
marker line (`index-conflict-markers`). Hiding entries under frontmatter or an HTML comment is
curate_index.judge's layout rule, applied by the caller."""

from __future__ import annotations

import posixpath

from engramory.curate import notes
from engramory.mcp import paths
from engramory.store.secrets import quote
from engramory.sync.checks import marker_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    from engramory.store.reader import Store


def pointers(text: str) -> dict[str, int]:
    """The notes the index points at (normalised relative paths; "" for one that leaves the
    store) and the 1-based line of each first pointer."""
    lines = notes.IndexLines(text.encode("utf-8"))
    out: dict[str, int] = {}
    for i, targets in lines.scan()[1]:
        target = targets[0]
        norm = posixpath.normpath(target) if not target.startswith(("/", "~")) else ""
        if norm.startswith("../") or norm == "..":
            norm = ""
        out.setdefault(norm if norm else "\x00" + target, i + 1)
    return out


def _linked(st: Store) -> set[str]:
    """The live notes some other live note [[links]] to."""
    by: dict[str, list[str]] = {}
    for n in st.live:
        for key in {n.slug.lower(), (n.name or "").strip().lower()} - {""}:
            by.setdefault(key, []).append(n.rel)
    out: set[str] = set()
    for n in st.live:
        for target, _ in n.link_list():
            key = target.strip().lower()
            key = key[:-3] if key.endswith(".md") else key
            out.update(r for r in by.get(key, []) if r != n.rel)
    return out


def problems(st: Store, before: str, after: str) -> list[str]:
    was, now = pointers(before), pointers(after)
    out = []
    live = {n.rel for n in st.live}
    for rel, line in now.items():
        if rel in was:
            continue
        if rel.startswith("\x00"):
            out.append("line %d points outside the store (%s): an index points at notes in /memories"
                       % (line, _q(rel[1:])))
        elif rel not in live:
            out.append("line %d points at %s, which is no live note: create the note instead (memory_edit create "
                       "adds its pointer), or point at one that exists" % (line, paths.shown(rel)))
    linked = _linked(st)
    for rel, line in was.items():
        if rel in now or rel not in live or rel in linked:
            continue
        out.append("it takes out the pointer of %s (line %d), the only way recall reaches that note: memory_edit "
                   "delete %s archives the note together with its line" % (paths.shown(rel), line, paths.shown(rel)))
    old_markers = len(marker_lines(before))
    new_markers = marker_lines(after)
    if len(new_markers) > old_markers:
        out.append("line %d is a merge conflict marker (<<<<<<<, =======, >>>>>>>): the host would load it into every "
                   "session" % new_markers[-1])
    return out


def _q(text: str) -> str:

    return quote(text, 60)

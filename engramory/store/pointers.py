"""What an index line points at, decided once: the note links of a line (`note_links`), of
which the FIRST is the line's pointer and any other a reference, and what a link's target
names (a remote URL, a local path). The store's parse, the commands' IndexLines, compact and
the doctor all read lines through this module. Standard library only.
"""

from __future__ import annotations

import re


def unquote(target: str) -> str:
    """urllib.parse.unquote, imported only for a target that has a %-escape: urllib.parse and
    the ipaddress module it pulls in cost a process some 3 ms to import."""
    import urllib.parse

    return urllib.parse.unquote(target)


# Only these schemes leave the machine; any other "scheme:" (file://, vscode://, and C:/ on
# Windows) names a local path and is held to the same escape check as a plain path.
REMOTE_SCHEMES = frozenset(["http", "https", "ftp", "ftps", "ssh", "mailto"])
LINK_RE = re.compile(r"\[([^\]\n]*)\]\(\s*(<[^>\n]*>|[^)\s]+)(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)")
SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


def is_remote(target: str) -> bool:
    """Whether a link target is a remote URL (http, https, ftp, ftps, ssh, mailto, git+...)."""
    m = SCHEME_RE.match(target)
    if m is None:
        return False
    scheme = m.group(1).lower()
    return scheme in REMOTE_SCHEMES or scheme.startswith("git+")


def local_path(target: str) -> str:
    """The local path a non-remote target names: file:// URLs lose their scheme."""
    if target[:7].lower() == "file://":
        rest = target[7:]
        if rest.startswith("localhost/"):
            rest = rest[9:]
        return rest if rest.startswith("/") else "/" + rest
    return target


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


def note_links(line: str) -> list[tuple[re.Match[str], str]]:
    """The links on one index line that name a note, in line order, as (match, target): a
    `.md` target that is not a remote URL, with `<>` removed, `#...`/`?...` cut, a file://
    URL made a path and %-escapes decoded. The one rule of what an index line points at: its
    FIRST such link is the line's pointer; any other is a reference, which names a note
    without being its entry (`- [Owner](owner.md) \u2014 runs the [dashboard](dash.md)` is
    owner.md's line)."""
    if "](" not in line:
        return []
    out = []
    for m in LINK_RE.finditer(line):
        target = m.group(2)
        if target.startswith("<"):
            target = target[1:-1]
        if "#" in target or "?" in target:
            target = target.split("#", 1)[0].split("?", 1)[0]
        if not target[-3:].lower() == ".md":
            continue
        if ":" in target and SCHEME_RE.match(target):
            if is_remote(target):
                continue
            target = local_path(target)
        out.append((m, unquote(target) if "%" in target else target))
    return out


def line_pointer(line: str) -> str | None:
    """The target of the note an index line is the entry of (its first note link), or None."""
    links = note_links(line)
    return links[0][1] if links else None

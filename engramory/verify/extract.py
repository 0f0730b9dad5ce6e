"""Anchors of a whole note: which lines are scanned and how, with the note file's own line
numbers (frontmatter counted).

Scanned: the frontmatter's `description:` line and every line after the frontmatter. In
prose, code spans (backticks) are read as code and the rest as prose (engramory.verify.anchors
says which shapes count where); `[[links]]` name notes, not code. Fenced code blocks are
scanned too: shell lines (and blocks without a language) in full, other languages only for
quoted file names. Each (line, kind, text) is one anchor; those naming one of the store's own
notes (`skip_names`) or archive/ are left out. Pure functions over text.
"""

from __future__ import annotations

import re

from engramory.verify.anchors import (
    LINE,
    PATH,
    Anchor,
    code_anchors,
    path_anchor,
    prose_anchors,
    uses_anchors,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterator

FENCE_RE = re.compile(r"(`{3,}|~{3,})\s*([\w+#.-]*)")
WIKI_RE = re.compile(r"\[\[[^\]]*\]\]")
SPAN_RE = re.compile(r"(`+)(.+?)\1")
SHELL_INFO = frozenset("sh bash zsh fish shell console terminal text txt powershell ps1 pwsh cmd bat make".split())
QUOTED_RE = re.compile(r"""["']([^"'\s]{2,200})["']""")


def _fence(stripped: str) -> tuple[str, str] | None:
    if stripped[:3] not in ("```", "~~~"):
        return None
    m = FENCE_RE.match(stripped)
    return (m.group(1), m.group(2).lower()) if m else None


def _line_anchors(number: int, line: str) -> list[Anchor]:
    out: list[Anchor] = []
    prose = []
    pos = 0
    for m in SPAN_RE.finditer(line):
        prose.append(line[pos:m.start()] + " " * (m.end() - m.start()))
        for a in code_anchors(number, m.group(2)):
            a.col = m.start()
            out.append(a)
        pos = m.end()
    prose.append(line[pos:])
    text = "".join(prose)
    if "[[" in text:  # [[links]] name notes, not code
        text = WIKI_RE.sub(lambda m: " " * len(m.group()), text)
    out += prose_anchors(number, text)
    out += uses_anchors(number, line)
    out.sort(key=lambda a: a.col)
    return out


def _body_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for the lines to scan: the frontmatter's description and
    everything after the frontmatter."""
    lines = text.split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, min(len(lines), 400)):
            if lines[i].strip() == "---":
                start = i + 1
                break
            if lines[i].startswith("description:"):
                yield i + 1, lines[i][len("description:"):]
    for i in range(start, len(lines)):
        yield i + 1, lines[i].rstrip("\r")


def extract(text: str, skip_names: Collection[str] = ()) -> list[Anchor]:
    """Every anchor of a note's text, in line order, each (line, kind, text) once. Path and
    line anchors whose file name is in `skip_names` (the store's notes and index) are left out."""
    out: list[Anchor] = []
    fence: tuple[str, str] | None = None
    for number, line in _body_lines(text):
        stripped = line.strip()
        if fence is not None:
            if _closes(stripped, fence[0]):
                fence = None
                continue
            out += _fenced_line(number, line, fence[1])
            continue
        opened = _fence(stripped)
        if opened is not None:
            fence = opened
            continue
        out += _line_anchors(number, line)
    return _unique(out, skip_names)


def _closes(stripped: str, opening: str) -> bool:
    """A closing fence: the opening's character, at least as many times, nothing else."""
    return len(stripped) >= len(opening) and stripped == opening[0] * len(stripped)


def _fenced_line(number: int, line: str, info: str) -> list[Anchor]:
    stripped = line.strip()
    if info in SHELL_INFO or not info:
        if stripped.startswith("#"):
            return prose_anchors(number, stripped.lstrip("# "))
        return code_anchors(number, stripped)
    out = []
    for m in QUOTED_RE.finditer(line):
        found = path_anchor(number, m.group(1), True)
        if found is not None and found.form not in ("abs", "home"):
            out.append(found)
    return out


def _unique(found: list[Anchor], skip_names: Collection[str]) -> list[Anchor]:
    seen = set()
    out = []
    skip = set(skip_names)
    for a in found:
        if a.kind in (PATH, LINE) and a.form != "url":
            base = a.path.rstrip("/").rsplit("/", 1)[-1]
            if base in skip or a.path.startswith("archive/"):
                continue
        k = (a.line, a.kind, a.text)
        if k in seen:
            continue
        seen.add(k)
        out.append(a)
    return out

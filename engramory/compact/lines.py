"""How the compaction planner cuts and regroups index lines: a long pointer line cut to its
title and a short hook, the words a dropped line says that its note does not (kept in the
note), and the index's pointer lines gathered under one heading per type."""

from __future__ import annotations

from engramory.compact.work import Line, normalized_words
from engramory.store.reader import TYPES, Store

HOOK_MAX = 60  # characters of the hook kept on a cut line
SEP_CHARS = " \t-\u2014\u2013:|,;"


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(SEP_CHARS + ".")
    return cut or text[:limit]


def hook_of(body: str) -> str:
    for stop in (". ", "; ", "! ", "? "):
        pos = body.find(stop)
        if 0 < pos <= HOOK_MAX:
            body = body[:pos]
    return clip(body, HOOK_MAX)


def leftover(ln: Line, against: list[str]) -> str:
    """What a pointer line says (its title, its hook) that none of `against` already says:
    the text to keep in the note when the line goes."""
    m = ln.matches[0]
    parts = [m.group(1).strip(), ln.text[m.end():].strip().lstrip(SEP_CHARS).strip()]
    known = [normalized_words(a) for a in against]
    out = [p for p in parts if normalized_words(p) and not any(normalized_words(p) in k for k in known)]
    return " \u2014 ".join(out)


def sections_of(lines: list[Line], store: Store
              ) -> tuple[list[Line], dict[str | None, list[Line]], dict[str, str]] | None:
    """The index's lines as (the preamble before the first heading or pointer, its trailing
    blank lines dropped; pointer lines by their note's type, else the heading they sit under;
    each heading's first text), or None when prose sits among the pointers."""
    preamble: list[Line] = []
    groups: dict[str | None, list[Line]] = {}
    titles: dict[str, str] = {}
    seen_section = False
    heading: str | None = None
    for ln in lines:
        if ln.kind == "heading" and ln.heading is not None:
            seen_section = True
            heading = ln.heading
            titles.setdefault(ln.heading, ln.text.strip())
            continue
        if ln.kind == "pointer":
            seen_section = True
            note = store.by_rel.get(ln.pointers[0].rel)
            t = note.type if note is not None and note.type in TYPES else heading
            groups.setdefault(t, []).append(ln)
            continue
        if ln.kind == "blank":
            if not seen_section:
                preamble.append(ln)
            continue
        if seen_section:
            return None
        preamble.append(ln)
    while preamble and preamble[-1].kind == "blank":
        preamble.pop()
    return preamble, groups, titles


def grouped(preamble: list[Line], groups: dict[str | None, list[Line]], titles: dict[str, str]) -> list[str]:
    """The index's text lines grouped: the preamble, then one section per type (None first)."""
    out: list[str] = [ln.text for ln in preamble]
    for t in (None,) + TYPES:
        members = groups.get(t)
        if not members:
            continue
        if out:
            out.append("")
        if t is not None:
            out.append(titles.get(t, "## " + t))
        out.extend(ln.text for ln in members)
    return out

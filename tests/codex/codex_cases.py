"""Generated apply_patch edits for the differential check: each case is one file (its bytes
before, or None) and one patch that edits it, mixing the things Codex's patcher treats
specially: CRLF, mixed and missing line endings, a BOM, typographic quotes and dashes, odd
spaces, whitespace-only differences, repeated lines (first match wins), pure insertions,
`@@` anchors, `*** End of File`, Add File over an existing file, Move onto one, `\\r` inside
the patch, and patches Codex must refuse. Deterministic: the same seed gives the same cases."""

from __future__ import annotations

import random

BOM = "\ufeff"
POOL = [
    "- [Build](build.md) how to build",
    "- [Style](style.md) — use tabs, not spaces",
    "- [Quotes](quotes.md) it’s “quoted”",
    "- [Range](range.md) pages 1–10 − minus",
    "- [Space](space.md) non\u00a0breaking\u2009thin",
    "    - [Indented](indented.md) nested entry",
    "- [Trailing](trailing.md) spaces after   ",
    "\t- [Tab](tab.md) tab first",
    "- [Dup](dup.md) repeated line",
    "- [Dup](dup.md) repeated line",
    "",
    "# Memory index",
    "- [Unicode](uni.md) naïve café 日本語",
    "- [Emoji](emoji.md) 🚀 launch",
]
PLAIN = str.maketrans({
    "—": "-", "–": "-", "−": "-", "’": "'", "“": '"', "”": '"', "\u00a0": " ", "\u2009": " ",
})


class Case:
    def __init__(self, name: str, before: bytes | None, patch: str, note: str, extra: dict[str, bytes] | None = None):
        self.name = name  # the file the patch writes (relative)
        self.before = before
        self.patch = patch
        self.note = note
        self.extra = extra or {}  # other files to create first (a move's source)

    def __repr__(self) -> str:
        return "Case(%s: %s)" % (self.name, self.note)


def _file(lines: list[str], eol: str, final: bool, bom: bool, first_eol: str | None = None) -> bytes:
    out = []
    for i, line in enumerate(lines):
        ending = first_eol if (i == 0 and first_eol) else eol
        out.append(line + (ending if (i < len(lines) - 1 or final) else ""))
    text = "".join(out)
    return ((BOM if bom else "") + text).encode("utf-8")


def _spell(line: str, rng: random.Random) -> str:
    """The line as a model might quote it: exact, or loosely (whitespace, plain punctuation)."""
    choice = rng.randrange(5)
    if choice == 0:
        return line
    if choice == 1:
        return line.rstrip()
    if choice == 2:
        return line.strip()
    if choice == 3:
        return line.translate(PLAIN)
    return "  " + line.strip().translate(PLAIN) + " "


def generate(n: int = 120, seed: int = 14) -> list[Case]:
    rng = random.Random(seed)
    cases: list[Case] = []
    kinds = ["replace", "insert_after", "append", "append_bare", "delete", "anchor", "eof", "multi",
             "add_over", "move_onto", "cr_in_patch", "delete_all", "missing", "bom_ctx",
             "interleave", "trailing_blank", "insert_before_last", "blank_context"]
    for i in range(n):
        name = "c%03d.md" % i
        kind = kinds[i % len(kinds)]
        k = rng.randrange(2, 7)
        lines = [rng.choice(POOL) for _ in range(k)]
        eol = rng.choice(["\n", "\r\n"])
        first_eol = rng.choice([None, None, "\r\n" if eol == "\n" else "\n"])
        final = rng.random() < 0.7
        bom = rng.random() < 0.25
        before = _file(lines, eol, final, bom, first_eol)
        text_lines = list(lines)
        if bom:
            text_lines[0] = BOM + text_lines[0]
        new_line = "- [New %d](new-%d.md) added — “fresh” entry" % (i, i)
        hdr = "*** Begin Patch\n*** Update File: %s\n" % name
        extra: dict[str, bytes] = {}
        if kind == "replace":
            j = rng.randrange(len(lines))
            patch = hdr + "@@\n-%s\n+%s\n*** End Patch\n" % (_spell(text_lines[j], rng), new_line)
        elif kind == "insert_after":
            j = rng.randrange(len(lines))
            patch = hdr + "@@\n %s\n+%s\n*** End Patch\n" % (_spell(text_lines[j], rng), new_line)
        elif kind == "append":
            patch = hdr + "@@\n+%s\n+second %d\n*** End Patch\n" % (new_line, i)
        elif kind == "append_bare":
            patch = hdr + "+%s\n*** End Patch\n" % new_line
        elif kind == "delete":
            j = rng.randrange(len(lines))
            ctx = " %s\n" % _spell(text_lines[j - 1], rng) if j > 0 and rng.random() < 0.5 else ""
            patch = hdr + "@@\n%s-%s\n*** End Patch\n" % (ctx, _spell(text_lines[j], rng))
        elif kind == "anchor":
            j = rng.randrange(len(lines) - 1)
            patch = hdr + "@@ %s\n-%s\n+%s\n*** End Patch\n" % (
                _spell(text_lines[j], rng), _spell(text_lines[j + 1], rng), new_line)
        elif kind == "eof":
            patch = hdr + "@@\n %s\n+%s\n*** End of File\n*** End Patch\n" % (_spell(text_lines[-1], rng), new_line)
        elif kind == "multi":
            patch = hdr + "@@\n-%s\n+%s\n@@\n %s\n+tail %d\n*** End Patch\n" % (
                _spell(text_lines[0], rng), new_line, _spell(text_lines[-1], rng), i)
        elif kind == "add_over":
            patch = "*** Begin Patch\n*** Add File: %s\n+%s\n+%s\n*** End Patch\n" % (name, new_line, lines[0].strip())
        elif kind == "move_onto":
            src = "c%03d-src.md" % i
            extra[src] = _file(["# moved", "- [Src](src.md) source line"], eol, True, False)
            patch = "*** Begin Patch\n*** Update File: %s\n*** Move to: %s\n@@\n # moved\n+%s\n*** End Patch\n" % (
                src, name, new_line)
        elif kind == "cr_in_patch":
            j = rng.randrange(len(lines))
            patch = (hdr + "@@\r\n %s\r\n+%s\r\n*** End Patch\r\n") % (_spell(text_lines[j], rng), new_line)
        elif kind == "delete_all":
            patch = hdr + "@@\n" + "".join("-%s\n" % ln for ln in text_lines) + "*** End Patch\n"
        elif kind == "missing":
            patch = hdr + "@@\n-no such line %d\n+%s\n*** End Patch\n" % (i, new_line)
        elif kind == "interleave" and len(lines) >= 4:
            # context, change, context, change: only the changed lines are rewritten
            patch = hdr + "@@\n %s\n-%s\n+%s\n %s\n-%s\n+second %d\n*** End Patch\n" % (
                _spell(text_lines[0], rng), _spell(text_lines[1], rng), new_line,
                _spell(text_lines[2], rng), _spell(text_lines[3], rng), i)
        elif kind == "trailing_blank":
            # the old lines end in an empty line the file may not have: Codex retries without it
            j = rng.randrange(len(lines))
            patch = hdr + "@@\n-%s\n+%s\n \n*** End Patch\n" % (_spell(text_lines[j], rng), new_line)
        elif kind == "insert_before_last":
            patch = hdr + "@@\n+%s\n %s\n*** End Patch\n" % (new_line, _spell(text_lines[-1], rng))
        elif kind == "blank_context":
            j = rng.randrange(len(lines))
            patch = hdr + "@@\n %s\n\n+%s\n*** End Patch\n" % (_spell(text_lines[j], rng), new_line)
        elif kind == "interleave":
            patch = hdr + "@@\n %s\n+%s\n*** End Patch\n" % (_spell(text_lines[0], rng), new_line)
        else:  # bom_ctx: context naming the first line, with or without its BOM
            first = lines[0] if rng.random() < 0.5 else text_lines[0]
            patch = hdr + "@@\n-%s\n+%s\n*** End Patch\n" % (first, new_line)
        cases.append(Case(name, before, patch, "%s eol=%r first=%r final=%s bom=%s" % (kind, eol, first_eol, final, bom), extra))
    return cases


def fixed() -> list[Case]:
    """Hand-picked edges, each measured on the real CLI: refusals and the unusual writes."""
    def upd(name: str, body: str) -> str:
        return "*** Begin Patch\n*** Update File: %s\n%s*** End Patch\n" % (name, body)

    return [
        Case("f-bom.md", "\ufeffa\nb\n".encode(), upd("f-bom.md", "@@\n-a\n+x\n"), "bom context without the BOM: refused"),
        Case("f-bom2.md", "\ufeffa\nb\n".encode(), upd("f-bom2.md", "@@\n-\ufeffa\n+x\n"), "bom context with the BOM"),
        Case("f-latin1.md", b"caf\xe9\n", upd("f-latin1.md", "@@\n+x\n"), "not UTF-8: refused"),
        Case("f-empty.md", b"", upd("f-empty.md", "@@\n+first\n"), "insertion into an empty file"),
        Case("f-noeol.md", b"a\r\nb", upd("f-noeol.md", "@@\n+c\n"), "append after an unterminated CRLF line"),
        Case("f-lonecr.md", b"a\rb\nc\n", upd("f-lonecr.md", "@@\n-c\n+d\n"), "a lone CR stays inside its line"),
        Case("f-add0.md", b"old\n", "*** Begin Patch\n*** Add File: f-add0.md\n*** End Patch\n", "Add File with no lines over a file"),
        Case("f-del.md", b"x\n", "*** Begin Patch\n*** Delete File: f-del.md\n*** End Patch\n", "Delete File"),
        Case("f-nodel.md", None, "*** Begin Patch\n*** Delete File: f-nodel.md\n*** End Patch\n", "Delete of a missing file: refused"),
        Case("f-order.md", b"a\nb\nc\n", upd("f-order.md", "@@\n-c\n+C\n@@\n-a\n+A\n"), "chunks out of order: refused"),
        Case("f-nbsp.md", "a\u00a0b\n".encode(), upd("f-nbsp.md", "@@\n-a b\n+ab\n"), "NBSP matched by a space"),
    ]

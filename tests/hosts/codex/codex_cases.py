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


def endings() -> list[Case]:
    """Line endings, BOM, missing final newline, loose matching and several hunks, each a
    patch whose bytes a wrong model gets wrong: CRLF (kept on every untouched line, given to
    new lines when the file starts with it), a lone CR (a line ending of its own in Codex),
    mixed files (the first ending decides), a BOM (text of the first line), an unterminated
    last line (always terminated after), whitespace Rust strips and Python does too or not."""
    def upd(name: str, body: str) -> str:
        return "*** Begin Patch\n*** Update File: %s\n%s*** End Patch\n" % (name, body)

    raw: list[tuple[str, bytes, str, str]] = [
        # CRLF
        ("e-crlf-replace", b"a\r\nb\r\nc\r\n", "@@\n-b\n+B\n+B2\n", "CRLF: new lines get CRLF"),
        ("e-crlf-loose", b"  a  \r\nb\r\n", "@@\n a\n-b\n+B\n", "CRLF, context matched loosely keeps its bytes"),
        ("e-crlf-append", b"a\r\nb\r\n", "@@\n+c\n", "CRLF: pure insertion at the end"),
        ("e-crlf-noeol", b"a\r\nb", "@@\n-a\n+A\n", "CRLF, unterminated last line gets CRLF"),
        ("e-crlf-patch", b"a\nb\n", "@@\r\n-a\r\n+A\r\n", "a CRLF patch on an LF file"),
        ("e-crlf-delete", b"a\r\nb\r\nc\r\n", "@@\n a\n-b\n c\n", "CRLF: a deleted middle line"),
        # lone CR
        ("e-cr-ends", b"a\rb\n", "@@\n-b\n+B\n", "a lone CR ends a line and is the first ending"),
        ("e-cr-only", b"a\rb\rc", "@@\n-b\n+B\n", "a file of lone CRs, unterminated"),
        ("e-cr-append", b"x\r", "@@\n+z\n", "insertion after a CR-terminated line"),
        ("e-cr-crlf", b"a\r\r\nb\n", "@@\n a\n+n\n", "CR then CRLF: an empty line between"),
        ("e-cr-inpatch", b"a\rb\n", "@@\n-a\rb\n+X\n", "a lone CR inside a patch line is not a break: refused"),
        # mixed endings
        ("e-mixed-lf-first", b"a\nb\r\nc\r\n", "@@\n-b\n+B\n", "mixed, LF first: the new line gets LF"),
        ("e-mixed-crlf-first", b"a\r\nb\nc\n", "@@\n-c\n+C\n+D\n", "mixed, CRLF first: new lines get CRLF"),
        ("e-mixed-cr-middle", b"a\r\nb\rc\n", "@@\n b\n-c\n+C\n", "CRLF, CR, LF in one file"),
        ("e-mixed-keep", b"a\nb\r\nc\n", "@@\n-a\n+A\n", "untouched lines keep their own endings"),
        # BOM
        ("e-bom-crlf", b"\xef\xbb\xbfa\r\nb\r\n", "@@\n-b\n+B\n", "BOM and CRLF: both kept"),
        ("e-bom-only", b"\xef\xbb\xbf", "@@\n+x\n", "a file holding only a BOM"),
        ("e-bom-delete-all", b"\xef\xbb\xbfa\nb\n", "@@\n-\ufeffa\n-b\n", "every line deleted, BOM with them"),
        ("e-bom-anchor", "\ufeff# T\nx\ny\n".encode(), "@@ \ufeff# T\n-y\n+Y\n", "an anchor that names the BOM"),
        # missing final newline
        ("e-noeol-append", b"a\nb", "@@\n+c\n", "insertion after an unterminated line"),
        ("e-noeol-last", b"a\nb", "@@\n-b\n+B\n", "the unterminated line replaced"),
        ("e-noeol-first", b"a\nb", "@@\n-a\n", "first line deleted: the last gets its newline"),
        ("e-noeol-all", b"a", "@@\n-a\n", "the only line deleted"),
        ("e-noeol-eof", b"x\r\ny\r\nx", "@@\n x\n+z\n*** End of File\n", "End of File on an unterminated CRLF file"),
        # loose matching
        ("e-ws-tabs", b"\ta\t\n", "@@\n a\n+n\n", "tabs around the context"),
        ("e-ws-ideographic", "a\u3000\nb\n".encode(), "@@\n-a\n+A\n", "U+3000 after the line: Rust strips it"),
        ("e-ws-nel", "a\x85\nb\n".encode(), "@@\n-a\n+A\n", "NEL after the line: Rust strips it"),
        ("e-ws-fs", b"\x1ca\nb\n", "@@\n-a\n+A\n", "U+001C: Python strips it, Rust does not: refused"),
        ("e-ws-zwsp", "a\u200b\nb\n".encode(), "@@\n-a\n+A\n", "zero-width space is not whitespace: refused"),
        ("e-ws-emquad", "a\u2001b\n".encode(), "@@\n-a b\n+ab\n", "U+2001 is not made plain: refused"),
        ("e-ws-figure", "a\u2007b\n".encode(), "@@\n-a b\n+ab\n", "U+2007 is made plain"),
        ("e-ws-ellipsis", "wait\u2026\n".encode(), "@@\n-wait...\n+done\n", "an ellipsis is not three dots: refused"),
        ("e-ws-dash-ctx", "x \u2014 y\nz\n".encode(), "@@\n x - y\n-z\n+Z\n", "a dash in loose context keeps its bytes"),
        ("e-ws-rstrip-first", b"a \nb\na\n", "@@\n-a\n+A\n", "the trailing-space pass finds the first a"),
        # several hunks
        ("e-multi-crlf", b"# h\r\na\r\nb\r\nc\r\nd\r\n", "@@ # h\n-a\n+A\n@@\n c\n-d\n+D\n+E\n", "two hunks in a CRLF file"),
        ("e-multi-insert", b"a\nb\n", "@@\n-a\n+A\n@@\n+tail\n", "a change, then a pure insertion"),
        ("e-multi-loose", "a\nb \u2019q\u2019\nc\n".encode(), "@@\n-a\n+A\n@@\n-b 'q'\n+B\n", "exact, then loose"),
        ("e-multi-eof-then", b"a\nb\nc\n", "@@\n-c\n+C\n*** End of File\n@@\n-a\n+A\n", "a hunk after End of File: refused"),
        ("e-multi-overlap", b"a\nb\nc\n", "@@\n-b\n+B\n@@\n b\n c\n+d\n*** End of File\n", "End of File never looks before the last hunk: refused"),
        ("e-multi-eof-after", b"a\nb\nc\nd\n", "@@\n-a\n+A\n@@\n c\n d\n+e\n*** End of File\n", "End of File after a hunk"),
        ("e-multi-eof-same", b"a\nb\nc\n", "@@\n-c\n+C\n@@\n c\n+y\n*** End of File\n", "End of File on a line already changed: refused"),
        ("e-multi-three", b"1\n2\n3\n4\n5\n6\n", "@@\n-1\n+one\n@@ 3\n-4\n+four\n@@\n 5\n-6\n", "three hunks, one anchored"),
    ]
    return [Case(name + ".md", before, upd(name + ".md", body), note) for name, before, body, note in raw]

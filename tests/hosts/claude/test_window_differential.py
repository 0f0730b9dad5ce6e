"""The differential window test: for generated indexes, the entries the real Claude Code
CLI shows the model equal the entries engramory's window (engramory.hosts.claude.window())
says are loaded, every case.

Each line of a generated index ends in a unique marker (M00001, ...); frontmatter and comment
lines carry markers too, so a line the host shows but engramory dropped (or the reverse) is a
mismatch. The host's view is the auto-memory block of the first model request, up to its
truncation warning; engramory's view is `Window.layout(data).entries()`.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest
from harness import Text, run_claude
from test_installed_claude import auto_memory_index

ROOT = Path(__file__).resolve().parents[3]

from engramory.hosts import claude  # noqa: E402

pytestmark = pytest.mark.e2e
MARK = re.compile(r"M\d{5}")
WINDOW = claude.window()


class Gen:
    """Lines with unique markers at their end."""

    def __init__(self) -> None:
        self.n = 0

    def line(self, body: str = "- [note](note.md) \u2014 hook ", pad: int = 0, fill: str = "x") -> str:
        self.n += 1
        return "%s%sM%05d" % (body, fill * pad, self.n)

    def lines(self, count: int, **kw: object) -> str:
        return "".join(self.line(**kw) + "\n" for _ in range(count))  # type: ignore[arg-type]


def _width_to(total: int, count: int, unit_of: Callable[[str], int], g: Gen, char: str) -> str:
    """`count` lines whose trimmed text is `total` units: pads the last line to fit."""
    base = [g.line("- ", 0) for _ in range(count)]
    out = "\n".join(base)
    missing = total - unit_of(out)
    per = unit_of(char)
    assert missing >= 0
    lines = out.split("\n")
    # spread the padding over the lines, before each marker
    q, r = divmod(missing // per, count)
    padded = []
    for i, ln in enumerate(lines):
        k = q + (1 if i < r else 0)
        padded.append(ln[:2] + char * k + ln[2:])
    text = "\n".join(padded)
    rest = total - unit_of(text)
    if rest:
        text = text[:2] + "x" * rest + text[2:]
    assert unit_of(text) == total, (unit_of(text), total)
    return text + "\n"


def utf16(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def cases() -> Dict[str, str]:
    c: Dict[str, str] = {}
    g = Gen()
    c["ascii-199"] = g.lines(199)
    c["ascii-200"] = g.lines(200)
    c["ascii-201"] = g.lines(201)
    c["ascii-25000-units"] = _width_to(25_000, 150, utf16, g, "y")
    c["ascii-25001-units"] = _width_to(25_001, 150, utf16, g, "y")
    c["ascii-break-at-25000"] = _width_to(25_000, 150, utf16, g, "y") + g.line() + "\n"
    c["cjk-120-lines-29660-bytes"] = "".join(g.line("- \u8a18\u61b6" * 20 + " ", 0) + "\n" for _ in range(120))
    c["cjk-25001-units"] = _width_to(25_001, 120, utf16, g, "\u8a18")
    c["emdash-25002-bytes"] = g.lines(195, body="- [n](n.md) \u2014 \u2014 ", pad=60)
    c["emoji-25001-units"] = _width_to(25_000, 100, utf16, g, "\U0001f600")[:-1] + "z\n"
    c["emoji-one-short"] = _width_to(24_998, 100, utf16, g, "\U0001f600")
    c["leading-blank-lines"] = "\n" * 50 + g.lines(200)
    c["leading-blank-lines-201"] = "\n \n\t\n" * 10 + g.lines(201)
    c["trailing-blank-lines"] = g.lines(200) + "\n" * 40 + "   \n"
    c["frontmatter-200"] = "---\nname: idx %s\ndescription: d %s\n---\n" % (g.line(""), g.line("")) + g.lines(200)
    c["frontmatter-201"] = "---\nname: idx %s\n---\n\n\n" % g.line("") + g.lines(201)
    c["comment-60-lines"] = g.lines(100) + "<!--\n" + g.lines(58, body="note ") + "-->\n" + g.lines(100)
    c["comment-then-201"] = "<!-- %s -->\n" % g.line("c") + g.lines(201)
    c["comment-with-text-after"] = "<!-- %s --> %s\n" % (g.line("c"), g.line("kept ")) + g.lines(200)
    c["comment-in-fence"] = "```\n<!-- %s -->\n```\n" % g.line("f") + g.lines(198)
    c["crlf-200"] = g.lines(200).replace("\n", "\r\n")
    c["crlf-201"] = g.lines(201).replace("\n", "\r\n")
    c["crlf-units"] = _width_to(24_900, 150, utf16, g, "y").replace("\n", "\r\n")
    c["crlf-comment-units"] = "<!-- x -->\r\n" + _width_to(24_900, 150, utf16, g, "y").replace("\n", "\r\n")
    c["first-line-too-long"] = g.line("- ", 30_000) + "\n" + g.lines(3)
    c["bom-and-indent"] = "\ufeff   " + g.lines(200)
    c["frontmatter-dashes-in-value"] = "---\nname: a---b %s\n---\n" % g.line("") + g.lines(199)
    c["comment-after-paragraph"] = "Some text %s\n<!-- %s -->\n" % (g.line(""), g.line("c")) + g.lines(199)
    c["comment-indented-in-list"] = g.lines(5) + "  <!-- %s -->\n" % g.line("c") + g.lines(195)
    c["comment-unterminated"] = g.lines(5) + "<!-- %s\n" % g.line("c") + g.lines(195)
    c["comment-blank-lines-after"] = g.lines(5) + "<!-- %s -->\n\n\n\n" % g.line("c") + g.lines(196)
    c["comment-two-in-block"] = "<!-- a --> %s <!-- b -->\n" % g.line("mid") + g.lines(200)
    c["comment-after-html-block"] = "<div>\n%s\n<!-- %s -->\n</div>\n\n" % (g.line(""), g.line("c")) + g.lines(195)
    c["comment-inline"] = g.lines(3) + "- entry <!-- %s --> %s\n" % (g.line("c"), g.line("t")) + g.lines(197)
    c["lone-cr"] = g.lines(100).replace("\n", "\r", 10) + g.lines(100)
    return c


def host_view(body: str, index: Path) -> List[str]:
    head = "Contents of %s (user's auto-memory, persists across conversations):" % index
    at = body.find(head)
    assert at >= 0, "the auto-memory index was not shown to the model"
    rest = body[at + len(head):]
    end = rest.find("</system-reminder>")
    rest = rest[: end if end >= 0 else None]
    warn = rest.find("\n\n> WARNING: MEMORY.md is")
    if warn >= 0:
        rest = rest[:warn]
    return MARK.findall(rest)


def our_view(data: bytes) -> List[str]:
    out: List[str] = []
    for _, text, loaded in WINDOW.layout(data).entries():
        if loaded:
            out.extend(MARK.findall(text))
    return out


def _one(cli: Path, tmp: Path, name: str, text: str) -> Tuple[str, List[str], List[str], bytes]:
    home = tmp / name / "home"
    project = tmp / name / "project"
    home.mkdir(parents=True)
    project.mkdir()
    index = auto_memory_index(home, project)
    index.parent.mkdir(parents=True)
    data = text.encode("utf-8")
    index.write_bytes(data)
    result = run_claude([Text("ok")], home=home, cwd=project, cli=cli, timeout=120)
    shown = host_view(texts(result.turn_requests()[0].body), index)
    return name, shown, our_view(data), data


def texts(body: Any) -> str:
    """Every text block of a request's messages, joined (the index arrives in one)."""
    out: List[str] = []
    for msg in body.get("messages", []) if isinstance(body, dict) else []:
        content = msg.get("content")
        for block in content if isinstance(content, list) else [content]:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                out.append(block["text"])
            elif isinstance(block, str):
                out.append(block)
    return "\n".join(out)


def test_entries_shown_equal_entries_engramory_says_are_loaded(claude_cli: Path, tmp_path: Path) -> None:
    all_cases = cases()
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda kv: _one(claude_cli, tmp_path, kv[0], kv[1]), all_cases.items()))
    mismatches = []
    for name, shown, ours, data in results:
        if shown != ours:
            extra = sorted(set(shown) - set(ours))[:5]
            missing = sorted(set(ours) - set(shown))[:5]
            mismatches.append(
                "%s (%d bytes, measured %r): host shows %d entries, engramory says %d; only host: %s; only engramory: %s"
                % (name, len(data), WINDOW.measure(data), len(shown), len(ours), extra, missing)
            )
    assert not mismatches, "\n".join(mismatches)
    # The cases cross the limits they are named after.
    assert len(results) == len(all_cases)

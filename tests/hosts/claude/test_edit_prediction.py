"""Differential check: the bytes the real Claude Code CLI writes for an Edit or a Write
equal the bytes the guard predicted (engramory.edits.predict), or both refuse.

One CLI session plays every case in CASES. Each case has its own folder and its own
MEMORY.md (so the guard treats it as an index and the host has never read it before).
The scripted model writes the case's starting bytes from a turn callback just before it
asks for the tool call, and the next turn's callback, which runs after the tool and its
hooks finished, snapshots what the host left on disk. The guard hook runs from the
checkout with ENGRAMORY_TRACE_FILE set, so every prediction it made is on record, and a
second hook logs the payload, so the prediction is recomputed from the input the guard
was actually handed (the host rewrites some inputs first; see HOST_REWRITES).

The host validates an edit before it runs PreToolUse hooks, so an edit it refuses in
validation never reaches the guard; for those the recomputed prediction must be a refusal
too, except for files Claude Code will not decode, which the guard sizes leniently on
purpose (edits.decode). Add a case by appending a row to CASES.

GROWTH then checks what the differences would cost: full indexes that an Edit only
matches through the host's normalisations must still be refused.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional

import pytest
from harness import RunClaude, Text, ToolUse, pretooluse_hook_settings, write_json

from engramory import edits

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]
GUARD = ROOT / "hooks" / "engramory_index_guard.py"

BOM = b"\xef\xbb\xbf"
PAYLOAD_LOGGER = "import sys; f = open(sys.argv[1], 'ab'); f.write(sys.stdin.buffer.read().strip() + b'\\n')"
LQ, RQ = "\u201c", "\u201d"  # curly double quotes
LS, RS = "\u2018", "\u2019"  # curly single quotes / apostrophe


@dataclass(frozen=True)
class Case:
    """One tool call on a fresh MEMORY.md.

    ``before`` is the file's starting bytes (None: the file does not exist). ``input`` is
    the tool input without ``file_path``. ``applied`` is what the host is expected to do,
    so the table cannot silently turn into a list of refusals that trivially agree.
    """

    id: str
    before: Optional[bytes]
    tool: str
    input: Mapping[str, Any]
    applied: Optional[bool] = True  # None: either (generated cases)


def E(cid: str, before: Optional[bytes], old: str, new: str, applied: bool = True, replace_all: bool = False) -> Case:
    inp: Dict[str, Any] = {"old_string": old, "new_string": new}
    if replace_all:
        inp["replace_all"] = True
    return Case(cid, before, "Edit", inp, applied)


def W(cid: str, before: Optional[bytes], content: str, applied: bool = True) -> Case:
    return Case(cid, before, "Write", {"content": content}, applied)


def u(text: str) -> bytes:
    return text.encode("utf-8")


CURLY = u(f"it{RS}s {LQ}hi{RQ} and {LS}bye{RS}\n")
CONTEXTS = u(f"call({LQ}x{RQ}) [{LS}y{RS}] {{{LQ}z{RQ}}} \u2014{LQ}w{RQ}\n")

CASES: List[Case] = [
    # -- line endings
    E("crlf-lf-old", b"alpha\r\nbeta\r\ngamma\r\n", "beta", "BETA"),
    E("crlf-multiline-lf-old", b"alpha\r\nbeta\r\ngamma\r\n", "alpha\nbeta", "A\nB\nC"),
    E("crlf-new-mixed", b"alpha\r\nbeta\r\ngamma\r\n", "beta", "b1\r\nb2\nb3\r\n"),
    E("crlf-old-with-crlf", b"alpha\r\nbeta\r\ngamma\r\n", "alpha\r\nbeta", "x", applied=False),
    E("lf-old-with-crlf", b"alpha\nbeta\ngamma\n", "alpha\r\nbeta", "x", applied=False),
    E("lf-new-with-crlf", b"alpha\nbeta\ngamma\n", "beta", "b1\r\nb2"),
    E("crlf-replace-all", b"k\r\nx\r\nk\r\n", "k", "kk\nk2", replace_all=True),
    E("crlf-no-final-newline", b"a\r\nb", "b", "b\nc"),
    E("mixed-half-crlf", b"a\r\nb\nc\r\nd\n", "b", "B\nB2"),
    E("mixed-mostly-crlf", b"a\r\nb\r\nc\nd\r\n", "c", "C\nC2"),
    E("mixed-mostly-lf", b"a\nb\nc\r\nd\n", "a", "A\r\nA2"),
    E("lone-cr", b"a\rb\nc\n", "c", "C"),
    E("crlf-old-ends-in-cr", b"a\r\nb\r\n", "a\r", "x", applied=False),
    E("crlf-new-with-lone-cr", b"a\r\nb\r\n", "a", "x\ry\nz"),
    E("lf-first-then-crlf", b"a\n" + b"x\r\n" * 20, "a", "A\nA2"),
    E("crlf-first-then-lf", b"a\r\n" + b"x\n" * 20, "a", "A\nA2"),
    E("crlf-majority-late", b"a\n" * 5 + b"b\r\n" * 6 + b"c", "c", "C\nD"),
    E("crlf-curly-multiline", u(f"x\r\n{LQ}a{RQ}\r\nit{RS}s\r\n"), '"a"\nit\'s', '"b"\nit\'ll "c"'),
    E("escape-upper-new-letters", u("a \\u00E9 b\n"), "a \u00e9 b", "a \u00ff c"),
    E("escape-replace-all", u("\\u00e9 x \\u00e9\n"), "\u00e9", "\u00e8", replace_all=True),
    E("crlf-curly-escape-mix", u(f"x\r\n{LQ}a{RQ} \\u00e9\r\n"), '"a" \u00e9', '"b" \u00e8', applied=False),
    # -- quotes: curly file, straight strings
    E("curly-apostrophe", CURLY, "it's", "it's not"),
    E("curly-double", CURLY, '"hi"', '"hello" "there"'),
    E("curly-single", CURLY, "'bye'", "'ciao' 'now'"),
    E("curly-whole-line", CURLY, "it's \"hi\" and 'bye'", "it's \"yo\" and 'ok' (\"p\") ['q'] {\"r\"} \u2014\"s\""),
    E("curly-double-new-single", CURLY, '"hi"', "\"it's\" 'x'"),
    E("curly-contexts", CONTEXTS, 'call("x")', 'call("x", "y") [\'a\'] {"b"}'),
    E("curly-after-dash", CONTEXTS, '\u2014"w"', '\u2014"w" \u2013"v" -"u"'),
    E("curly-trailing-apostrophe", CURLY, "'bye'", "'dogs' bone' and '90s"),
    E("curly-quote-at-start", CURLY, 'and \'bye\'', "'start' end'"),
    E("curly-ambiguous-normalized", u(f"it{RS}s it{RS}s\n"), "it's", "it is", applied=False),
    E("curly-exact-preferred", u(f"it's it{RS}s\n"), f"it{RS}s", "its"),
    E("curly-replace-all", u(f"{LQ}a{RQ} {LQ}a{RQ}\n"), '"a"', '"b"', replace_all=True),
    E("curly-after-digit-punct", CURLY, '"hi"', '5" and 6\' say:"x" a,"y" .\'z\''),
    E("curly-nested", CURLY, "\"hi\" and 'bye'", "\"a 'b' c\" x's 'y' \"'q'\" \"\""),
    E("curly-unicode-letters", CURLY, "it's", "caf\u00e9's na\u00efve' \u00fcn'\u00df \u65e5'\u672c"),
    E("curly-after-nbsp-newline", CURLY, '"hi"', '\u00a0"x"\n"y"\t"z"'),
    E("curly-replace-all-mixed", u(f"'a' {LS}a{RS}\n"), "'a'", "'b'", replace_all=True),
    # -- quotes: straight file, curly strings
    E("straight-file-curly-old", b"it's \"hi\"\n", f"it{RS}s {LQ}hi{RQ}", "it's \"yo\""),
    E("straight-file-curly-both", b"it's \"hi\"\n", f"it{RS}s", f"it{RS}ll"),
    # -- BOM
    W("bom-write-plain", BOM + b"old\n", "new\n"),
    W("bom-write-with-bom", BOM + b"old\n", "\ufeffnew\n"),
    W("plain-write-with-bom", b"old\n", "\ufeffnew\n"),
    E("bom-edit", BOM + b"a\nb\n", "b", "c"),
    E("bom-edit-first-line", BOM + b"a\nb\n", "a", "A"),
    E("bom-edit-old-has-bom", BOM + b"a\nb\n", "\ufeffa", "A", applied=False),
    E("bom-crlf-edit", BOM + b"a\r\nb\r\n", "a\nb", "x\ny"),
    # -- multi-byte
    E("cjk", u("記憶の索引\n- [メモ](a.md)\n"), "メモ", "覚え書き"),
    E("emoji", u("- 🧠 brain\n- 👩‍💻 dev\n"), "👩‍💻", "🧑🏽‍🚀 astro"),
    E("combining", u("cafe\u0301\n"), "cafe\u0301", "caf\u00e9"),
    # -- deletions
    E("delete-line", b"a\nb\nc\n", "b", ""),
    E("delete-line-with-newline", b"a\nb\nc\n", "b\n", ""),
    E("delete-last-line-no-newline", b"a\nb", "b", ""),
    E("delete-inside-line", b"ab\nc\n", "b", ""),
    E("delete-crlf-line", b"a\r\nb\r\nc\r\n", "b", ""),
    E("delete-replace-all", b"x\nk\nx\nk\n", "k", "", replace_all=True),
    E("delete-replace-all-mixed", b"k x\nk\n", "k", "", replace_all=True),
    E("delete-crlf-last-no-newline", b"a\r\nb", "b", ""),
    E("delete-everything", b"a\n", "a\n", ""),
    E("delete-everything-bom", BOM + b"a\n", "a\n", ""),
    E("replace-whole-file", b"a\nb\n", "a\nb\n", "c"),
    E("cr-only-file", b"a\rb\rc", "b", "B\nB2"),
    E("cr-cr-lf-file", b"a\r\r\nb\r\r\n", "b", "c"),
    E("lone-surrogate-new", b"a\nb\n", "b", "x\ud800y"),
    # -- replacement patterns are literal
    E("dollar-patterns", b"a\nkey\nc\n", "key", "$& $1 $$ $` $' $<n>"),
    # -- whitespace is not normalised
    E("trailing-space-new", b"a\nb\n", "b", "b  \nc\t"),
    E("trailing-space-mismatch", b"a \nb\n", "a\nb", "x", applied=False),
    E("tab-vs-spaces", b"\tx\n", "    x", "y", applied=False),
    # -- host-specific input fix-ups
    E("sanitized-tag", b"<name>x</name>\n", "<n>x</n>", "<n>y</n>"),
    # -- creating and refusing
    E("create-missing", None, "", "- [a](a.md)\r\n- [b](b.md)\n"),
    E("create-empty-existing", b"", "", "new\n"),
    E("refuse-empty-old-existing", b"a\n", "", "x", applied=False),
    E("refuse-ambiguous", b"a\na\n", "a", "b", applied=False),
    E("refuse-absent", b"a\n", "zzz", "b", applied=False),
    E("refuse-same", b"a\n", "a", "a", applied=False),
    E("refuse-missing-file", None, "a", "b", applied=False),
    E("create-whitespace-existing", b"\n \n", "", "new\n"),
    E("create-bom-only-existing", BOM, "", "new\n"),
    # -- \\uXXXX escapes versus the characters they stand for
    E("escape-in-file", u("a \\u2014 b\n"), "a \u2014 b", "a \u2014 c"),
    E("escape-in-old", u("a \u2014 b\n"), "a \\u2014 b", "a \\u2014 c"),
    E("escape-in-old-new-plain", u("a \u2014 b\n"), "a \\u2014 b", "a \u2013 c"),
    E("escape-in-file-new-extra", u("a \\u2014 b\n"), "a \u2014 b", "a \u2014 c \u2192 d\u00e9 \U0001f9e0"),
    E("escape-in-file-upper-hex", u("a \\u00E9 b\n"), "a \u00e9 b", "a \u00e9 c"),
    E("escape-in-file-partial", u("\u00e9 \\u2014 b\n"), "\u00e9 \u2014 b", "\u00e9 \u2014 c", applied=False),
    E("escape-in-file-astral", u("x \\ud83e\\udde0 y\n"), "x \U0001f9e0 y", "x \U0001f9e0 z"),
    E("escape-in-old-and-file-char", u("a \u2014 b\n"), "a \\u2014 b", "a \\u2014 \\n c"),
    # -- encodings
    E("latin1-edit-elsewhere", b"caf\xe9\nbar\n", "bar", "baz", applied=False),
    W("latin1-write", b"caf\xe9\n", "cafe\n", applied=False),
    E("nul-byte", b"a\x00b\nc\n", "c", "C", applied=False),
    W("nul-byte-write", b"a\x00b\n", "c\n", applied=False),
    E("nul-byte-late", b"a" * 9000 + b"\x00\nc\n", "c", "C"),
    E("latin1-late", b"a" * 9000 + b"\xe9\nc\n", "c", "C", applied=False),
    E("create-crlf-whitespace-existing", b"\r\n\r\n", "", "a\nb\n"),
    W("utf16-write-with-bom", b"\xff\xfe" + "a\n".encode("utf-16-le"), "\ufeffx\n"),
    W("crlf-file-write-lf", b"a\r\nb\r\n", "x\ny\n"),
    E("surrogate-bytes", b"a\xed\xa0\x80\nc\n", "c", "C", applied=False),
    E("truncated-utf8", b"c\nabc\xe2\x82", "c\n", "C\n", applied=False),
    E("utf16be-edit", b"\xfe\xff" + "a\nb\n".encode("utf-16-be"), "b", "c", applied=False),
    E("utf16-crlf-edit", b"\xff\xfe" + "a\r\nb\r\n".encode("utf-16-le"), "a\nb", "x\ny"),
    E("utf16-edit", b"\xff\xfe" + "a\nb\n".encode("utf-16-le"), "b", "c"),
    W("utf16-write", b"\xff\xfe" + "a\n".encode("utf-16-le"), "x\n"),
    W("write-empty-into-bom", BOM + b"a\n", ""),
    W("write-lone-surrogate", None, "a\udc00b\n"),
    W("write-empty-into-utf16", b"\xff\xfe" + "a\n".encode("utf-16-le"), ""),
    W("write-crlf", b"a\nb\n", "x\r\ny\n"),
    W("write-missing-dir", None, "- [a](a.md)\n"),
]


# Cases whose input the host rewrites before PreToolUse hooks see it (so the guard predicts
# from the rewritten strings): "<n>" and friends become "<name>", and \\uXXXX escapes in
# old_string (and new_string) become the characters the file holds.
HOST_REWRITES = ["sanitized-tag", "escape-in-old", "escape-in-old-new-plain", "escape-in-old-and-file-char"]


def _json_lines(path: Path) -> List[str]:
    # Split on LF only: JSON text may hold a raw U+2028 or U+0085, which splitlines() breaks on.
    return [line for line in path.read_bytes().decode("utf-8").split("\n") if line]


def _show(data: Optional[bytes], limit: int = 300) -> str:
    if data is None:
        return "<missing>"
    text = repr(data)
    return text if len(text) <= limit else f"{text[:limit // 2]}...{text[-limit // 2:]} ({len(data)} bytes)"


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 30


class Outcome:
    """What one session made of a list of cases."""

    def __init__(self) -> None:
        self.problems: List[str] = []  # each a mismatch between host and guard, with bytes
        self.rewrites: List[str] = []  # ids of cases whose input reached the hook rewritten
        self.applied: List[str] = []  # ids of cases the host applied


def play_cases(claude: RunClaude, project: Path, tmp_path: Path, cases: List[Case]) -> Outcome:
    """Run every case through one CLI session with the guard hook installed in the project
    and compare, case by case, what the host did with what the guard predicted."""
    trace, payloads = tmp_path / "trace.jsonl", tmp_path / "payloads.jsonl"
    settings = pretooluse_hook_settings(f'"{sys.executable}" -I -S "{GUARD}"')
    # A second hook records each payload, to see the tool input the guard was handed
    # (the host may have rewritten it before hooks run).
    settings["hooks"]["PreToolUse"][0]["hooks"].append(
        {"type": "command", "command": f'"{sys.executable}" -I -S -c "{PAYLOAD_LOGGER}" "{payloads}"'}
    )
    write_json(project / ".claude" / "settings.json", settings)
    paths = [project / "cases" / f"{i:02d}-{c.id}" / "MEMORY.md" for i, c in enumerate(cases)]
    after: Dict[int, Optional[bytes]] = {}

    def snapshot(i: int) -> None:
        p = paths[i]
        after[i] = p.read_bytes() if p.exists() else None

    def turn(i: int) -> Any:
        def play(body: Dict[str, Any]) -> Any:
            if i > 0:
                snapshot(i - 1)
            if i == len(cases):
                return Text("done")
            case, path = cases[i], paths[i]
            if case.before is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(case.before)
            elif case.id != "write-missing-dir":  # that one checks Write creates the folder
                path.parent.mkdir(parents=True, exist_ok=True)
            return ToolUse(case.tool, {"file_path": str(path), **case.input}, id=f"toolu_case{i:03d}")

        return play

    result = claude([turn(i) for i in range(len(cases) + 1)], env={"ENGRAMORY_TRACE_FILE": str(trace)}, timeout=240)

    results = {r.tool_use_id: r for r in result.tool_results()}
    traced: Dict[str, List[Dict[str, Any]]] = {}
    if trace.exists():
        for line in _json_lines(trace):
            entry = json.loads(line)
            traced.setdefault(entry["path"], []).append(entry)

    hook_inputs: Dict[str, Dict[str, Any]] = {}
    if payloads.exists():
        for line in _json_lines(payloads):
            payload = json.loads(line)
            hook_inputs[payload["tool_input"]["file_path"]] = payload["tool_input"]

    out = Outcome()
    problems = out.problems
    for i, case in enumerate(cases):
        path = paths[i]
        tr = results.get(f"toolu_case{i:03d}")
        assert tr is not None, f"no tool result for case {case.id}\n{result.describe()}"
        assert "hook error" not in tr.text, f"the guard refused case {case.id}: {tr.text}"
        host_after = after[i]
        host_applied = not tr.is_error
        if host_applied:
            out.applied.append(case.id)
        sent = {"file_path": str(path), **case.input}
        hook_input = hook_inputs.get(str(path), sent)
        req = edits.normalise(case.tool, hook_input, str(path.parent))
        assert req is not None, case.id
        predicted = edits.predict(req, case.before)
        seen = traced.get(str(path), [])
        head = f"[{case.id}] {case.tool} {dict(case.input)!r} on {_show(case.before, 120)}"
        if str(path) in hook_inputs and {k: v for k, v in hook_input.items() if v is not False} != sent:
            out.rewrites.append(case.id)
        if case.applied is not None and host_applied != case.applied:
            problems.append(f"{head}: host {'applied' if host_applied else 'refused'} it, table expects the opposite ({tr.text[:200]})")
        if len(seen) > 1:
            problems.append(f"{head}: the guard ran {len(seen)} times")
        if host_applied:
            if not seen:
                problems.append(f"{head}: the host applied it but the guard was never asked")
            elif seen[0]["refused"] or bytes.fromhex(seen[0]["after"]) != host_after:
                hook_pred = None if seen[0]["refused"] else bytes.fromhex(seen[0]["after"])
                problems.append(f"{head}:\n    host wrote     {_show(host_after)}\n    hook predicted {_show(hook_pred)}")
            if predicted != host_after:
                problems.append(f"{head}:\n    host wrote     {_show(host_after)}\n    predict() says {_show(predicted)}")
        else:
            if host_after != case.before:
                problems.append(f"{head}: host refused ({tr.text[:120]}) but the file changed to {_show(host_after)}")
            # A file Claude Code will not decode is still sized from a lenient reading
            # (edits.decode): deliberate, since other hosts may write it.
            lenient = case.before is not None and edits.decode(case.before)[1] == edits.UNREADABLE
            if predicted is not None and not lenient:
                problems.append(f"{head}: host refused ({tr.text[:160]}) but predict() says {_show(predicted)}")
            if seen and not seen[0]["refused"] and not lenient:
                problems.append(f"{head}: host refused but the hook predicted {seen[0]['after']}")
    return out


def test_guard_predicts_what_the_host_writes(claude: RunClaude, e2e_project: Path, tmp_path: Path) -> None:
    out = play_cases(claude, e2e_project, tmp_path, CASES)
    assert not out.problems, f"{len(out.problems)} mismatch(es) between the host and the guard:\n" + "\n".join(out.problems)
    assert sorted(out.rewrites) == sorted(HOST_REWRITES), "the host rewrote other inputs before hooks than measured"


def _lines(count: int, template: str = "- [note {i}](note-{i}.md) \u2014 hook {i}\n") -> str:
    return "".join(template.format(i=i) for i in range(count))


# Indexes at exactly the hard cap (200 lines) written in a form the host normalises before
# matching, and an Edit that only matches through that normalisation and adds lines. A guard
# that predicted "the host will refuse this" would stay silent while the host grows the index.
GROWTH: List[Case] = [
    E("crlf", _lines(200).replace("\n", "\r\n").encode(), "hook 5\n- [note 6]", "hook 5\n- [x](x.md)\n- [note 6]"),
    E("curly", _lines(200, "- [it\u2019s {i}](n{i}.md)\n").encode(), "- [it's 5]", "- [it's 5a]\n- [it's 5b]"),
    E("escaped", _lines(200).replace("\u2014", "\\u2014").encode(), "\u2014 hook 7\n", "\u2014 hook 7\n- [y](y.md) \u2014 z\n"),
    E("bom", BOM + _lines(200).encode(), "hook 0\n", "hook 0\n- [z](z.md)\n"),
    E("utf16le", b"\xff\xfe" + _lines(200).encode("utf-16-le"), "hook 9\n", "hook 9\n- [w](w.md)\n"),
    E("blank-fill", b"\n" * 200, "", _lines(201)),
]


def test_guard_denies_growth_that_only_matches_through_host_normalisation(
    claude: RunClaude, e2e_project: Path
) -> None:
    settings = pretooluse_hook_settings(f'"{sys.executable}" -I -S "{GUARD}"')
    write_json(e2e_project / ".claude" / "settings.json", settings)
    paths = [e2e_project / "growth" / c.id / "MEMORY.md" for c in GROWTH]
    for case, path in zip(GROWTH, paths):
        path.parent.mkdir(parents=True)
        assert case.before is not None
        path.write_bytes(case.before)
        req = edits.normalise(case.tool, {"file_path": str(path), **case.input}, str(path.parent))
        assert req is not None
        predicted = edits.predict(req, case.before)
        assert predicted is not None and predicted.count(b"\n") > 200, case.id

    result = claude(
        [ToolUse(c.tool, {"file_path": str(p), **c.input}) for c, p in zip(GROWTH, paths)] + [Text("done")]
    )
    for case, path, tr in zip(GROWTH, paths, result.tool_results()):
        assert tr.is_error, f"{case.id}: the host applied an edit that grows the index: {tr.text}"
        assert tr.text.startswith("PreToolUse:Edit hook error: engramory blocked this Edit"), (case.id, tr.text)
        # Counted as the host loads it: 200 blank lines trim to none (blank-fill grows from 0).
        grew = re.search(r"grow from (\d+) to (\d+) lines \(hard cap 200: ", tr.text)
        assert grew is not None and int(grew[1]) < int(grew[2]) and int(grew[2]) > 200, (case.id, tr.text)
        assert path.read_bytes() == case.before, case.id


# -- generated cases -------------------------------------------------------------------------

# Pieces that exercise the quote-style rules: straight and curly quotes after letters, digits,
# spaces, brackets, dashes and other quotes, plus CRLF and non-ASCII text.
_ATOMS = [
    "it's", "don't", "'90s", "dogs'", "'quoted'", '"double"', "(", ")", "[", "]", "{", "}",
    " ", "\t", "\u2014", "\u2013", "-", ":", ",", ".", "5", "x", "\u00e9", "\u65e5", "'", '"',
    "\u2019", "\u201c", "\u201d", "\u2018", "\u00a0", "/", "*", "_", "a'b", '"\'', "'\"",
]


def _generated(seed: int, count: int) -> List[Case]:
    """Edits whose old_string only matches after straightening quotes in a curly file,
    with random quote contexts in new_string. Deterministic for a given seed."""
    import random

    rng = random.Random(seed)
    out: List[Case] = []
    for n in range(count):
        words = [rng.choice(_ATOMS) for _ in range(rng.randint(6, 14))]
        line = "".join(words).replace("\n", " ")
        curly = line.replace("'", RS).replace('"', RQ)
        if rng.random() < 0.5:
            curly = curly.replace(RQ, LQ, 1).replace(RS, LS, 1)
        eol = "\r\n" if rng.random() < 0.3 else "\n"
        before = f"- first{eol}{curly}{eol}- last{eol}"
        straight = curly.translate({0x2018: "'", 0x2019: "'", 0x201C: '"', 0x201D: '"'})
        start = rng.randrange(0, max(1, len(straight) - 3))
        old = straight[start : start + rng.randint(3, 12)]
        if not any(q in old for q in "'\"") or before.count(old) or old.strip() == "":
            old = straight  # the whole line: sure to need quote matching
        new = "".join(rng.choice(_ATOMS) for _ in range(rng.randint(2, 10)))
        out.append(Case(f"gen-{seed}-{n}", before.encode("utf-8"), "Edit", {"old_string": old, "new_string": new}, None))
    return out


GENERATED_SEED = 20261130


def test_guard_predicts_generated_quote_edits(claude: RunClaude, e2e_project: Path, tmp_path: Path) -> None:
    cases = _generated(GENERATED_SEED, 40)
    out = play_cases(claude, e2e_project, tmp_path, cases)
    assert not out.problems, f"{len(out.problems)} mismatch(es) between the host and the guard:\n" + "\n".join(out.problems)
    # Most generated edits must go through, or the check says little.
    assert len(out.applied) >= 30, out.applied


def test_host_refuses_to_write_through_a_symlinked_index(
    claude: RunClaude, e2e_project: Path, tmp_path: Path
) -> None:
    # Measured on 2.1.332: Edit and Write refuse a path that is a symbolic link ("Write to
    # the link's target path instead"), so a linked index only ever changes through its
    # real path, which the guard sees as the index.
    trace = tmp_path / "trace.jsonl"
    write_json(e2e_project / ".claude" / "settings.json", pretooluse_hook_settings(f'"{sys.executable}" -I -S "{GUARD}"'))
    store = e2e_project / "store"
    store.mkdir()
    target = store / "MEMORY.md"
    target.write_bytes(b"- [a](a.md)\n")
    link = e2e_project / "MEMORY.md"
    link.symlink_to(target)
    result = claude(
        [
            ToolUse("Edit", {"file_path": str(link), "old_string": "- [a]", "new_string": "- [b]"}),
            ToolUse("Write", {"file_path": str(link), "content": "- [c](c.md)\n"}),
            ToolUse("Edit", {"file_path": str(target), "old_string": "- [a]", "new_string": "- [d]"}),
            Text("done"),
        ],
        env={"ENGRAMORY_TRACE_FILE": str(trace)},
    )
    edit_link, write_link, edit_target = result.tool_results()
    for refused in (edit_link, write_link):
        assert refused.is_error and "it is a symbolic link" in refused.text, refused.text
    assert not edit_target.is_error, edit_target.text
    assert link.is_symlink() and target.read_bytes() == b"- [d](a.md)\n"
    # The refusal comes after the PreToolUse hooks: the guard was asked all three times.
    assert [json.loads(line)["path"] for line in _json_lines(trace)] == [str(link), str(link), str(target)]

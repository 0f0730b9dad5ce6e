"""The one validation of text on an index line (engramory.curate.indexline), the one rule of what a
line points at (pointers.note_links), and the layout's account of what the host loads."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engramory import layout
from engramory.curate import indexline, notes
from engramory.hosts import claude
from engramory.store import pointers
from engramory.store import reader as store

WINDOW = claude.window()
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


# -- what a line points at -------------------------------------------------------------------------

def test_a_lines_pointer_is_its_first_note_link() -> None:
    line = "- [Billing maintainer](billing-owner.md) \u2014 owns the [deploy dashboard](deploy-dashboard.md)"
    assert [t for _, t in pointers.note_links(line)] == ["billing-owner.md", "deploy-dashboard.md"]
    assert pointers.line_pointer(line) == "billing-owner.md"
    # a remote link names no note, so the first note link is the pointer
    assert pointers.line_pointer("- [wiki](https://x.example/a.md) then [b](b.md)") == "b.md"
    assert pointers.line_pointer("- [b](<my%20note.md#part>)") == "my note.md"
    assert pointers.line_pointer("no link here") is None


def test_index_lines_map_pointers_and_references_apart() -> None:
    idx = notes.IndexLines(b"# I\n\n## reference\n- [A](a.md) \xe2\x80\x94 see [B](b.md)\n- [B](b.md)\n"
                           b"<!--\n- [B](b.md)\n-->\n")
    assert idx.pointer_lines("a.md") == [3]
    assert idx.pointer_lines("b.md") == [4]
    assert idx.reference_lines("b.md") == [3]


def test_store_keeps_references_apart(tmp_path: pytest.TempPathFactory) -> None:
    root = tmp_path  # type: ignore[assignment]
    (root / "MEMORY.md").write_text("- [A](a.md) \u2014 see [B](b.md) and [C](c.md)\n")  # type: ignore[operator]
    st_ = store.load(str(root))
    assert [(p.line, p.target) for p in st_.pointers] == [(1, "a.md")]
    assert [(p.line, p.target) for p in st_.references] == [(1, "b.md"), (1, "c.md")]


# -- the text that goes on a line ------------------------------------------------------------------

def test_label_shows_what_was_typed_but_what_markdown_needs() -> None:
    assert indexline.label("D:\\ci\\logs") == "D:\\ci\\logs"
    assert indexline.label("C:\\temp\\") == "C:\\temp\\\\"  # a lone trailing backslash would escape "]"
    assert indexline.label("C:\\temp\\\\") == "C:\\temp\\\\"
    assert indexline.label("[WIP]  draft") == "(WIP) draft"
    assert indexline.label("split by --- lines") == "split by --\\- lines"
    assert indexline.label("a ----- b") == "a --\\-\\-\\- b"
    assert indexline.escape("x --> y <!-- z") == "x --\\> y \\<!-- z"
    assert indexline.escape("a -- b - c") == "a -- b - c"


@given(st.text(alphabet="-<!>\\ ab", max_size=40))
def test_escaped_text_opens_and_closes_no_block(text: str) -> None:
    out = indexline.escape(text)
    assert "---" not in out and "-->" not in out and "<!--" not in out.replace("\\<!--", "")
    assert out.replace("\\", "") == text.replace("\\", "")  # only backslashes were added


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="-<!>[]()\\ ab\u2014", min_size=1, max_size=60))
def test_no_label_or_hook_hides_an_earlier_entry(text: str) -> None:
    for head in (b"---\n# Memory Index\n- [a](a.md)\n", b"# Memory Index\n<!-- open\n- [a](a.md)\n"):
        line = indexline.pointer_line("x", text, text)
        after = head + line.encode() + b"\n"
        lost, missing = layout.lost_entries(WINDOW, head, after, [], [line])
        assert lost == [] and missing == [], (text, after)


@pytest.mark.parametrize("value,needle", [
    ("red \x1b[31m", "U+001B"), ("del \x7f", "U+007F"), ("csi \x9b2J", "U+009B"), ("bidi \u202e", "U+202E"),
    ("zero\u200bwidth", "U+200B"), ("joined a\u200db", "U+200D"), ("bad \udcff", "not valid UTF-8"),
    ("see [x](x.md)", "markdown link"), ("token " + TOKEN, "ghp_\u2026 (40 chars, masked)"),
])
def test_field_refuses_with_the_field_and_what(value: str, needle: str) -> None:
    with pytest.raises(notes.Refusal) as exc:
        indexline.field("--hook", value)
    message = str(exc.value)
    assert message.startswith("the --hook ") and needle in message, message
    assert TOKEN not in message


def test_field_keeps_plain_text_and_emoji_joins() -> None:
    assert indexline.field("--title", "  two\twords\n ") == "two words"
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert indexline.field("--title", family) == family
    assert indexline.field("--hook", "[WIP] not a link") == "[WIP] not a link"


def test_check_line_counts_the_windows_unit_and_lets_an_old_long_line_be() -> None:
    indexline.check_line("- [" + "x" * 180 + "](a.md)", WINDOW.unit)
    with pytest.raises(notes.Refusal, match="210 UTF-16 units"):
        indexline.check_line("- [" + "\U0001f600" * 100 + "](a.md)", WINDOW.unit)
    old = "- [" + "x" * 300 + "](a.md)"
    indexline.check_line(old.replace("x" * 10, "y" * 10), WINDOW.unit, old)  # not longer than it was
    with pytest.raises(notes.Refusal, match="secret"):
        indexline.check_line("- [a](a.md) \u2014 " + TOKEN, WINDOW.unit, "- [a](a.md)")
    indexline.check_line("- [a](a.md) \u2014 " + TOKEN, WINDOW.unit, "- [b](a.md) \u2014 " + TOKEN)  # not ours


def test_relabel_changes_only_the_pointers_label() -> None:
    line = "- [wiki](https://x.example/a.md) [Old](a.md) \u2014 see [B](b.md)"
    assert indexline.relabel(line, "New --- one") == "- [wiki](https://x.example/a.md) [New --\\- one](a.md) \u2014 see [B](b.md)"
    assert indexline.label_of(line) == "Old"


# -- what the host loads ---------------------------------------------------------------------------

def test_counted_lines_names_whole_partial_and_skipped_lines() -> None:
    data = b"---\n- [a](a.md) --- old\n- [b](b.md)\n<!-- gone\n- [c](c.md) -->\n- [d](d.md)\n"
    got = list(layout.counted_lines(WINDOW, data))
    assert got == [(2, "old", False, True), (3, "- [b](b.md)", True, True), (6, "- [d](d.md)", True, True)]
    assert layout.skipped_spans(WINDOW, data) == [(1, 2, "frontmatter"), (4, 5, "an HTML comment")]
    assert "lines 4-5" in layout.why_skipped(layout.skipped_spans(WINDOW, data), 5)


def test_counted_lines_marks_lines_past_the_window() -> None:
    data = "".join("- [n%d](n%d.md)\n" % (i, i) for i in range(205)).encode()
    got = list(layout.counted_lines(WINDOW, data))
    assert len(got) == 205 and all(loaded for _, _, _, loaded in got[:200])
    assert not any(loaded for _, _, _, loaded in got[200:])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["- [a](a.md)", "---", "<!-- c", "-->", "x --- y", "", "  - [b](b.md)",
                                 "<!-- one -->", "text -->"]), max_size=12))
def test_counted_lines_agree_with_the_measured_size(lines: list[str]) -> None:
    data = ("\n".join(lines) + "\n").encode()
    lay = layout.layout(WINDOW, data)
    counted = list(layout.counted_lines(WINDOW, data))
    words = [w for line in lay.text.split("\n") for w in [line.strip(layout.JS_SPACE)] if w]
    assert [t for _, t, _, _ in counted] == words


def test_lost_entries_matches_moves_and_removals() -> None:
    before = b"## a\n- [x](x.md)\n## b\n"
    after = b"## a\n## b\n- [x](x.md)\n"
    assert layout.lost_entries(WINDOW, before, after, ["- [x](x.md)"], ["- [x](x.md)"]) == ([], [])
    assert layout.lost_entries(WINDOW, before, b"## a\n## b\n", [], []) == ([(2, "- [x](x.md)")], [])
    assert layout.lost_entries(WINDOW, b"---\n", b"---\n- [y](y.md) ---\n", [], ["- [y](y.md) ---"]) == (
        [(1, "---")], ["- [y](y.md) ---"])

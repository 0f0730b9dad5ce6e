"""The index merge driver's rules, one case each (issue 24): keyed by the note a line points
at; flat and sectioned indexes; conflicts in one block after the title; ours' bytes kept."""

from __future__ import annotations

from engramory.sync import indexmerge, indexparse

BASE = (b"# Memory Index\n\n## user\n- [A](a.md) - alpha\n- [B](b.md) - beta\n\n"
        b"## project\n- [C](c.md) - gamma\n")


def merged(ours: bytes, theirs: bytes, base: bytes = BASE, marker: int = 7) -> indexmerge.Result:
    return indexmerge.merge(base, ours, theirs, marker)


def test_added_on_each_side_both_kept_in_their_sections() -> None:
    ours = BASE.replace(b"beta\n", b"beta\n- [D](d.md) - delta\n")
    theirs = BASE + b"- [E](e.md) - eps\n"
    r = merged(ours, theirs)
    assert r.clean
    assert r.data == (b"# Memory Index\n\n## user\n- [A](a.md) - alpha\n- [B](b.md) - beta\n- [D](d.md) - delta\n\n"
                      b"## project\n- [C](c.md) - gamma\n- [E](e.md) - eps\n")


def test_added_on_both_at_the_same_place_ours_first_each_once() -> None:
    ours = BASE + b"- [D](d.md)\n- [F](f.md)\n"
    theirs = BASE + b"- [E](e.md)\n- [F](f.md)\n"
    r = merged(ours, theirs)
    assert r.clean and r.data == BASE + b"- [D](d.md)\n- [F](f.md)\n- [E](e.md)\n"


def test_added_on_both_differently_is_a_conflict_naming_the_note() -> None:
    r = merged(BASE + b"- [D](d.md) - mine\n", BASE + b"- [D](d.md) - yours\n")
    assert r.names() == ["d.md"]
    assert b"- [D](d.md) - mine" in r.data and b"- [D](d.md) - yours" in r.data


def test_added_on_both_under_different_headings_is_a_conflict() -> None:
    ours = BASE.replace(b"beta\n", b"beta\n- [D](d.md)\n")
    r = merged(ours, BASE + b"- [D](d.md)\n")
    assert r.names() == ["d.md"]
    assert b'<!-- d.md, under "## user" -->' in r.data and b'<!-- d.md, under "## project" -->' in r.data


def test_deleted_on_one_side_unchanged_on_the_other_is_deleted() -> None:
    r = merged(BASE.replace(b"- [B](b.md) - beta\n", b""), BASE + b"- [E](e.md)\n")
    assert r.clean and b"b.md" not in r.data and b"e.md" in r.data


def test_deleted_on_one_side_changed_on_the_other_is_a_conflict() -> None:
    r = merged(BASE.replace(b"- [B](b.md) - beta\n", b""), BASE.replace(b"beta", b"BETA"))
    assert r.names() == ["b.md"]
    assert b"<!-- b.md: deleted on this side -->" in r.data and b"- [B](b.md) - BETA" in r.data
    assert r.data.count(b"b.md") == 4  # the block's first line, the two comments, theirs' line: not the body


def test_moved_on_one_side_and_changed_on_the_other_both_apply() -> None:
    ours = BASE.replace(b"- [A](a.md) - alpha\n", b"") + b"- [A](a.md) - alpha\n"
    theirs = BASE.replace(b"alpha", b"ALPHA")
    r = merged(ours, theirs)
    assert r.clean
    assert r.data == BASE.replace(b"- [A](a.md) - alpha\n", b"") + b"- [A](a.md) - ALPHA\n"


def test_changed_on_both_the_same_way_is_not_a_conflict() -> None:
    r = merged(BASE.replace(b"alpha", b"ALPHA") + b"- [X](x.md)\n", BASE.replace(b"alpha", b"ALPHA"))
    assert r.clean and r.data == BASE.replace(b"alpha", b"ALPHA") + b"- [X](x.md)\n"


def test_flat_index_merges_like_a_sectioned_one() -> None:
    flat = b"- [A](a.md)\n- [B](b.md)\n"
    r = indexmerge.merge(flat, flat + b"- [C](c.md)\n", b"- [D](d.md)\n" + flat)
    assert r.clean and r.data == b"- [D](d.md)\n- [A](a.md)\n- [B](b.md)\n- [C](c.md)\n"
    r = indexmerge.merge(flat, flat.replace(b"- [B](b.md)\n", b"- [B](b.md) v2\n"), flat + b"- [C](c.md)\n")
    assert r.clean and r.data == b"- [A](a.md)\n- [B](b.md) v2\n- [C](c.md)\n"


def test_only_one_side_changed_gives_that_side_byte_for_byte() -> None:
    odd = b"\xef\xbb\xbf- [A](a.md)\r\n\r\n- [Z](z.md)"
    assert indexmerge.merge(BASE, BASE, odd).data == odd
    assert indexmerge.merge(BASE, odd, BASE).data == odd
    assert indexmerge.merge(BASE, odd, odd).data == odd


def test_bom_crlf_and_final_newline_are_ours() -> None:
    ours = b"\xef\xbb\xbf" + (BASE + b"- [D](d.md)").replace(b"\n", b"\r\n")
    theirs = BASE + b"- [E](e.md)\n"
    r = merged(ours, theirs)
    assert r.clean
    assert r.data.startswith(b"\xef\xbb\xbf") and not r.data.endswith(b"\n")
    assert r.data.count(b"\r\n") == r.data.count(b"\n")
    assert r.data.endswith(b"- [D](d.md)\r\n- [E](e.md)")


def test_conflicts_go_in_one_block_after_the_title_with_the_marker_size() -> None:
    ours = BASE.replace(b"alpha", b"A1").replace(b"gamma", b"C1")
    theirs = BASE.replace(b"alpha", b"A2").replace(b"gamma", b"C2")
    r = merged(ours, theirs, marker=9)
    lines = r.data.split(b"\n")
    assert lines[0] == b"# Memory Index"
    assert lines[1].startswith(b"<" * 9 + b" ours: engramory merge-index: 2 conflicts (a.md, c.md)")
    assert b"=" * 9 in lines and any(line == b">" * 9 + b" theirs" for line in lines)
    assert sum(line.startswith(b"<<<<<<<") for line in lines) == 1
    assert r.names() == ["a.md", "c.md"]


def test_a_flat_index_gets_the_block_before_its_first_entry() -> None:
    flat = b"Some notes.\n- [A](a.md)\n"
    r = indexmerge.merge(flat, flat.replace(b"(a.md)", b"(a.md) 1"), flat.replace(b"(a.md)", b"(a.md) 2"))
    assert r.data.split(b"\n")[0] == b"Some notes." and r.data.split(b"\n")[1].startswith(b"<<<<<<<")


def test_the_first_link_is_the_key() -> None:
    base = b"- [Owner](owner.md) - runs the [dashboard](dash.md)\n- [Dash](dash.md)\n"
    r = indexmerge.merge(base, base.replace(b"- [Dash](dash.md)\n", b""), base + b"- [New](new.md)\n")
    assert r.clean and r.data == b"- [Owner](owner.md) - runs the [dashboard](dash.md)\n- [New](new.md)\n"
    assert indexparse.first_pointer("- [site](https://x.io/a.md) and [n](./notes/n.md#x)") == "notes/n.md"
    assert indexparse.first_pointer("- [a](<my%20note.md>)") == "my note.md"


def test_a_pointer_in_a_fence_or_comment_is_text() -> None:
    base = b"# Memory Index\n```\n- [A](a.md)\n```\n<!--\n- [B](b.md)\n-->\n- [C](c.md)\n"
    index = indexparse.parse(base)
    assert [k for k, _ in index.entries()] == ["c.md"]
    r = indexmerge.merge(base, base + b"- [D](d.md)\n", base.replace(b"- [C](c.md)\n", b""))
    assert r.clean and r.data == base.replace(b"- [C](c.md)\n", b"") + b"- [D](d.md)\n"


def test_a_duplicate_is_a_line_of_its_own() -> None:
    base = b"- [A](a.md)\n- [A again](a.md)\n"
    r = indexmerge.merge(base, base + b"- [B](b.md)\n", base.replace(b"again", b"twice"))
    assert r.clean and r.data == b"- [A](a.md)\n- [A twice](a.md)\n- [B](b.md)\n"


def test_bytes_that_are_not_utf8_survive() -> None:
    base = b"- [A](a.md) caf\xe9\n"
    r = indexmerge.merge(base, base + b"- [B](b.md)\n", b"- [Z](z.md)\n" + base)
    assert r.clean and r.data == b"- [Z](z.md)\n- [A](a.md) caf\xe9\n- [B](b.md)\n"


def test_prose_changed_on_both_sides_is_a_conflict_and_kept_in_the_block() -> None:
    base = b"# Memory Index\nRead me first.\n- [A](a.md)\n"
    r = indexmerge.merge(base, base.replace(b"first", b"1st"), base.replace(b"first", b"at once"))
    assert r.names() == ["prose under \"# Memory Index\""]
    assert b"Read me 1st." in r.data and b"Read me at once." in r.data and b"Read me first." not in r.data


def test_prose_added_on_each_side_is_all_kept() -> None:
    base = b"# Memory Index\n- [A](a.md)\n"
    r = indexmerge.merge(base, base + b"Note one.\n", base + b"Note two.\n")
    assert r.clean and r.data == base + b"Note one.\nNote two.\n"


def test_a_section_one_side_deleted_stays_while_the_other_added_to_it() -> None:
    ours = BASE.replace(b"\n## project\n- [C](c.md) - gamma\n", b"")
    theirs = BASE + b"- [E](e.md)\n"
    r = merged(ours, theirs)
    assert r.clean and b"## project\n- [E](e.md)\n" in r.data and b"c.md" not in r.data


def test_reordered_on_one_side_keeps_that_order() -> None:
    """Theirs' addition stays after its own predecessor (C), wherever ours moved C to."""
    base = b"- [A](a.md)\n- [B](b.md)\n- [C](c.md)\n"
    r = indexmerge.merge(base, b"- [C](c.md)\n- [A](a.md)\n- [B](b.md)\n", base + b"- [D](d.md)\n")
    assert r.clean and r.data == b"- [C](c.md)\n- [D](d.md)\n- [A](a.md)\n- [B](b.md)\n"


def test_empty_sides() -> None:
    """An empty ours has no line ends to keep: theirs' are used."""
    assert indexmerge.merge(b"", b"- [A](a.md)\n", b"- [B](b.md)\n").data == b"- [A](a.md)\n- [B](b.md)\n"
    r = indexmerge.merge(b"- [A](a.md)\n", b"", b"- [A](a.md)\n- [B](b.md)\n")
    assert r.clean and r.data == b"- [B](b.md)\n"

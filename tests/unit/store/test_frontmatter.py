"""The restricted frontmatter reader: never crashes, and whatever it accepts means the same
to a real YAML parser (PyYAML) on generated frontmatter."""

from __future__ import annotations

import datetime
import json
import os
import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engramory.store import frontmatter
from engramory.store.frontmatter import parse

ROOT = str(Path(__file__).resolve().parents[3])


def block_of(text: str) -> str:
    """The lines between the fences, as YAML would be given them."""
    fm = parse(text)
    lines = text.lstrip("\ufeff").split("\n")
    return "\n".join(lines[1:fm.end_line - 1])


def normalise(obj):
    """YAML's view, with dates as the ISO text the reader keeps and an empty document as {}."""
    if obj is None:
        return {}
    if isinstance(obj, dict):
        return {k: normalise_value(v) for k, v in obj.items()}
    return obj


def normalise_value(v):
    if isinstance(v, dict):
        return {k: normalise_value(x) for k, x in v.items()}
    if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime):
        return v.isoformat()
    return v


def accepted(text: str) -> frontmatter.Frontmatter:
    fm = parse(text)
    assert fm.present and fm.closed and not fm.problems, fm.problems
    return fm


# -- the forms the project relies on -------------------------------------------------------

def test_protocol_form():
    fm = accepted(
        "---\nname: verify-before-done\ndescription: grep the change first\ntype: feedback\n"
        "created: 2026-01-15\nupdated: 2026-02-01\n---\nbody\n"
    )
    assert fm.fields == {
        "name": "verify-before-done", "description": "grep the change first", "type": "feedback",
        "created": "2026-01-15", "updated": "2026-02-01",
    }
    assert fm.line_of["type"] == 4
    assert fm.body_line == 8


def test_claude_code_form_with_nested_metadata():
    text = "---\nname: testing-approach\ndescription: real DB in tests\nmetadata:\n  type: feedback\n---\n\nx\n"
    fm = accepted(text)
    assert fm.fields["metadata"] == {"type": "feedback"}
    assert fm.nested("metadata", "type") == "feedback"
    assert fm.line_of["metadata.type"] == 5
    assert text[fm.body_start:] == "\nx\n"


def test_bom_crlf_comments_and_quotes():
    text = (
        "\ufeff---\r\n# a comment\r\nname: a\r\ndescription: \"says \\\"hi\\\": twice\"  # c\r\n"
        "type: 'it''s: user'\r\n---\r\nbody"
    )
    fm = accepted(text)
    assert fm.fields == {"name": "a", "description": 'says "hi": twice', "type": "it's: user"}
    assert yaml.safe_load(block_of(text).replace("\r", "")) == fm.fields


@pytest.mark.parametrize(
    "line, fragment",
    [
        ("description: a: b", "': '"),
        ("description: see #3 and # that", "' #'"),
        ("description: [a, b]", "lists"),
        ("type: yes", "number, boolean, null or timestamp"),
        ("name: 2024", "number, boolean, null or timestamp"),
        ("description: 'open", "not closed"),
        ('description: "bad \\q"', "unknown escape"),
        ("description:value", "one space after the colon"),
        ("- item", "not a `key: value` line"),
        ("description: |", "must be quoted"),
        ("\tname: x", "tab"),
        ("description: a\x07b", "U+0007"),
    ],
)
def test_rejected_lines_name_the_problem(line, fragment):
    fm = parse("---\n%s\n---\n" % line)
    assert fm.closed
    assert [p.line for p in fm.problems] == [2]
    assert fragment in fm.problems[0].message
    assert fm.problems[0].code == "fm-malformed"


def test_duplicate_keys_and_impossible_dates():
    fm = parse("---\nname: a\nname: b\ncreated: 2026-02-30\nmetadata:\n  type: x\n  type: y\n---\n")
    assert [(p.code, p.line) for p in fm.problems] == [
        ("fm-duplicate-key", 3), ("fm-bad-date", 4), ("fm-duplicate-key", 7),
    ]
    assert fm.fields["name"] == "a"


def test_missing_and_unclosed():
    assert [p.code for p in parse("name: a\n").problems] == ["fm-missing"]
    assert [p.code for p in parse("").problems] == ["fm-missing"]
    fm = parse("---\nname: a\n")
    assert [p.code for p in fm.problems] == ["fm-unclosed"]
    assert not fm.closed and fm.fields == {"name": "a"}


def test_nesting_is_one_level_with_one_indent():
    fm = parse("---\nmetadata:\n  type: user\n    deeper: x\nname: a\n  stray: x\n---\n")
    assert [p.line for p in fm.problems] == [4, 6]
    assert parse("---\nmetadata:\n---\n").fields == {"metadata": None}


# -- properties ----------------------------------------------------------------------------

@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.text(max_size=300))
def test_never_crashes_on_any_text(text):
    fm = parse(text)
    for p in fm.problems:
        assert p.line >= 1 and p.code.startswith("fm-")
    parse("---\n" + text)
    parse("---\n" + text + "\n---\n")


VALUE_CHARS = st.sampled_from(
    list("abcXYZ019 -_:#'\"\\.,[]{}!&*|>%@`?~=+/\t") + ["\u00e9", "\u4e2d", "\uff1a", "\u00a0", "\x85", "\u2028", "\x07"]
)
raw_values = st.one_of(
    st.text(VALUE_CHARS, max_size=20),
    st.sampled_from(["yes", "No", "null", "~", "1.5", "0x1F", "2026-01-15", "2026-02-30", "2026-1-5",
                     "1:20", ".inf", "<<", "=", "-", "- a", "-a", "?x", ":x", "2026-01-15 10:00:00",
                     "'a''b'", '"a\\tb"', '"\\u00e9"', '"\\x41"', "''", '""', "a # b", "a#b"]),
    st.text(VALUE_CHARS, max_size=12).map(lambda s: '"%s"' % s),
    st.text(VALUE_CHARS, max_size=12).map(lambda s: "'%s'" % s),
)
keys = st.sampled_from(["name", "description", "type", "created", "updated", "metadata", "x_y", "yes", "null"])
# mostly-valid values, so that plenty of generated blocks are accepted and compared
word_values = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ,.!?'%()/:#-]{0,24}", fullmatch=True)
lines = st.one_of(
    st.tuples(keys, word_values).map(lambda kv: "%s: %s" % kv),
    st.tuples(keys, word_values).map(lambda kv: "  %s: %s" % kv),
    st.tuples(keys, raw_values).map(lambda kv: "%s: %s" % kv),
    st.tuples(keys, raw_values).map(lambda kv: "  %s: %s" % kv),
    keys.map(lambda k: k + ":"),
    st.sampled_from(["", "# comment", "  # indented comment", "   ", "\t", "...", "- a", "key:x", "  - b"]),
)


@settings(max_examples=1000, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(lines, max_size=8), st.booleans(), st.booleans())
def test_accepted_frontmatter_means_the_same_to_yaml(body_lines, crlf, bom):
    block = "\n".join(body_lines)
    nl = "\r\n" if crlf else "\n"
    text = ("\ufeff" if bom else "") + nl.join(["---"] + body_lines + ["---", "body"])
    fm = parse(text)
    if fm.problems:
        return
    assert normalise(yaml.safe_load(block)) == fm.fields


def test_schema_file_is_valid_draft_2020_12():
    with open(os.path.join(ROOT, "schemas", "frontmatter.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)


def summary(fm: frontmatter.Frontmatter):
    return (fm.present, fm.closed, fm.fields, fm.line_of, [(p.code, p.line, p.message) for p in fm.problems],
            fm.body_start, fm.body_line, fm.end_line)


@settings(max_examples=800, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(lines, max_size=8), st.booleans(), st.booleans(), st.sampled_from(["body", "", "\n\nx"]))
def test_fast_path_reads_exactly_like_the_careful_reader(body_lines, crlf, bom, tail):
    nl = "\r\n" if crlf else "\n"
    text = ("\ufeff" if bom else "") + nl.join(["---"] + body_lines + ["---", tail])
    assert summary(parse(text)) == summary(frontmatter._parse_lines(text, 1 if bom else 0))


# -- the five-field block `engramory new` writes, read in one match ------------------------------

canon_values = st.one_of(word_values, raw_values, st.sampled_from(["yes", "No", "OFF", "null", "True", "on", "a b ", "a  b",
                                                                    "a:b", "a #b", "a#", "\u00e9", "a\tb", "-a", ""]),
                         word_values.map(lambda v: v + " "), word_values.map(lambda v: " " + v))
canon_dates = st.one_of(st.sampled_from(["2025-01-01", "2026-02-28", "2024-02-29", "2025-02-29", "2026-13-01",
                                         "0000-01-01", "2026-01-01 ", "2026-1-01", "yes"]), raw_values)


CANON_GOOD = ("user-a", "what the note is about", "feedback", "2025-01-01", "2026-01-01", "---\n")


@st.composite
def five_field_blocks(draw: st.DrawFn) -> tuple[str, bool]:
    """(text, bom): the block `engramory new` writes with one or two of its parts odd."""
    odd = draw(st.sets(st.sampled_from(range(6)), max_size=2))
    hostile = (canon_values, canon_values, st.one_of(st.sampled_from(["user", "project", "reference"]), canon_values),
               canon_dates, canon_dates, st.sampled_from(["---", "--- \n", "---\r\n", "---x\n"]))
    name, desc, type_, created, updated, close = (draw(hostile[k]) if k in odd else CANON_GOOD[k] for k in range(6))
    bom = draw(st.booleans())
    tail = draw(st.sampled_from(["body\n", "", "\n---\nname: x\n---\n"]))
    return ("%s---\nname: %s\ndescription: %s\ntype: %s\ncreated: %s\nupdated: %s\n%s%s" % (
        "\ufeff" if bom else "", name, desc, type_, created, updated, close, tail)), bom


@settings(max_examples=2000, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(five_field_blocks())
def test_the_five_field_block_reads_as_the_line_loop_reads_it(block):
    text, bom = block
    fast = summary(parse(text))
    real = frontmatter._CANON_BLOCK
    frontmatter._CANON_BLOCK = re.compile(r"(?!)")  # never matches: the line loop reads every block
    try:
        loop = summary(parse(text))
    finally:
        frontmatter._CANON_BLOCK = real
    assert fast == loop
    assert fast == summary(frontmatter._parse_lines(text, 1 if bom else 0))


def test_the_five_field_block_is_read_in_one_match(monkeypatch):
    """The one-match path is taken for the usual note (else the test above holds vacuously)."""
    def refuse(lines):
        raise AssertionError("the line loop ran")

    monkeypatch.setattr(frontmatter, "_parse_flat", refuse)
    block = "---\nname: user-a\ndescription: what it is about, in words\ntype: user\ncreated: 2025-01-01\n" \
            "updated: 2026-01-01\n---\n"
    fm = parse(block + "body\n")
    assert fm.fields["description"] == "what it is about, in words" and fm.line_of["updated"] == 6
    assert fm.body_start == len(block) and fm.body_line == 8 and not fm.problems

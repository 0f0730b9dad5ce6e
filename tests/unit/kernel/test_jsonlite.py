"""jsonlite (the hook's import-free JSON) is held to the json module on generated input."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engramory import jsonlite

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
documents = st.recursive(
    scalars, lambda c: st.lists(c, max_size=5) | st.dictionaries(st.text(), c, max_size=5), max_leaves=30
)


@settings(max_examples=1500, deadline=None)
@given(documents, st.booleans(), st.sampled_from([None, 0, 2]))
def test_loads_matches_json_on_valid_documents(doc: object, ascii: bool, indent: int | None) -> None:
    text = json.dumps(doc, ensure_ascii=ascii, indent=indent)
    assert jsonlite.loads(text) == json.loads(text)
    assert jsonlite.loads(" \r\n" + text + "\t\n") == json.loads(text)


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet='{}[]",:0123456789.eE+-tfnrul\\ abx\u00e9', max_size=30))
def test_loads_rejects_what_json_rejects_and_agrees_on_the_rest(text: str) -> None:
    try:
        expected = json.loads(text)
    except ValueError:
        expected = ValueError
    try:
        got = jsonlite.loads(text)
    except ValueError:
        got = ValueError
    if isinstance(expected, float) and (math.isnan(expected) or math.isinf(expected)) and "n" in text:
        assert got is ValueError  # NaN and Infinity are not JSON; json.loads accepts them
    else:
        assert got == expected, text


@pytest.mark.parametrize(
    "text",
    ['"\\ud83d\\ude00"', '"\\ud800"', '"\\udc00x"', '"a\\u00e9\\n\\t\\"\\\\\\/"', '"\\u00E9"'],
)
def test_escapes(text: str) -> None:
    assert jsonlite.loads(text) == json.loads(text)


@pytest.mark.parametrize("bad", ["", "{", '{"a"}', '{"a":1,}', "[1,]", '"abc', '"\\x"', '"\\u12g4"', "tru", "[1 2]", "{}x", "[" * 5000])
def test_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        jsonlite.loads(bad)


@settings(max_examples=1000, deadline=None)
@given(documents.filter(lambda d: not isinstance(d, float)))
def test_dumps_matches_json(doc: object) -> None:
    def no_floats(x: object) -> bool:
        if isinstance(x, float):
            return False
        if isinstance(x, list):
            return all(no_floats(i) for i in x)
        if isinstance(x, dict):
            return all(no_floats(v) for v in x.values())
        return True

    if no_floats(doc):
        assert jsonlite.dumps(doc) == json.dumps(doc, ensure_ascii=True, separators=(",", ":"))

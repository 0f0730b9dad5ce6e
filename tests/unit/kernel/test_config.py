from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engramory import config
from engramory.size import Caps

SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "schemas" / "store-config.schema.json").read_text())

VALID = [
    {"version": 1},
    {"version": 1, "hardLines": 120, "warnLines": 100, "hardBytes": 20000, "warnBytes": 15000},
    {"version": 1, "noteMaxBytes": 4096, "readOnly": ["user-*.md", "archive/*"]},
]
INVALID = [
    {},
    {"version": 2},
    {"version": True},
    {"version": 1, "hardLines": 0},
    {"version": 1, "hardLines": -3},
    {"version": 1, "hardLines": 1.5},
    {"version": 1, "hardLines": True},
    {"version": 1, "hardLines": "200"},
    {"version": 1, "readOnly": "user.md"},
    {"version": 1, "readOnly": [""]},
    {"version": 1, "readonly": []},
    [],
]


@pytest.mark.parametrize("obj", VALID)
def test_valid_examples_agree_with_schema(obj: dict[str, Any]) -> None:
    jsonschema.validate(obj, SCHEMA)
    assert config.validate(obj) == []


@pytest.mark.parametrize("obj", INVALID)
def test_invalid_examples_agree_with_schema(obj: Any) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(obj, SCHEMA)
    assert config.validate(obj) != []


def test_warn_above_hard_is_an_error() -> None:
    assert any("above" in e for e in config.validate({"version": 1, "warnLines": 300, "hardLines": 200}))


_values = st.one_of(st.integers(-5, 300), st.booleans(), st.text(max_size=3), st.none(), st.floats(allow_nan=False))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(list(config.CONFIG_KEYS) + ["other"]), _values, max_size=5))
def test_validator_matches_schema_on_generated_configs(obj: dict[str, Any]) -> None:
    ours = config.validate(obj) == []
    theirs = jsonschema.Draft202012Validator(SCHEMA).is_valid(obj)
    # The code is stricter in one way the schema cannot express: warn must not exceed hard.
    if theirs and not ours:
        assert all("above" in e for e in config.validate(obj))
    else:
        assert ours == theirs


def test_env_parsing() -> None:
    s = config.from_env({"ENGRAMORY_HARD": "300", "ENGRAMORY_WARN_BYTES": "x"})
    assert s.caps == Caps(hard_lines=300)
    assert s.notes and "ENGRAMORY_WARN_BYTES" in s.notes[0]
    assert config.from_env({}).index_name == "MEMORY.md"
    assert config.from_env({"ENGRAMORY_INDEX_NAME": "  "}).index_name == "MEMORY.md"
    assert config.from_env({"ENGRAMORY_INDEX_NAME": "../x"}).index_name == "MEMORY.md"
    assert config.from_env({}).index_paths is None


def test_precedence_default_env_store(tmp_path: Path) -> None:
    (tmp_path / ".engramory.json").write_text(json.dumps({"version": 1, "hardLines": 90}))
    env = config.from_env({"ENGRAMORY_HARD": "300", "ENGRAMORY_WARN": "80"})
    caps = config.load_store_config(str(tmp_path)).caps(env.caps)
    assert caps.hard_lines == 90  # the store wins
    assert caps.warn_lines == 80  # the environment fills what the store leaves out
    assert caps.hard_bytes == 25_000  # the default fills the rest


@pytest.mark.parametrize("raw", [b"\xff\xfe", b"{", b"[1]", b'{"version": 1, "x": 1}', b"{}" + b" " * (1 << 20)])
def test_unusable_store_config(tmp_path: Path, raw: bytes) -> None:
    (tmp_path / ".engramory.json").write_bytes(raw)
    cfg = config.load_store_config(str(tmp_path))
    assert cfg.exists and not cfg.usable
    assert cfg.caps(Caps()) == Caps()
    assert ".engramory.json was ignored" in cfg.problem()


def test_store_config_with_bom_and_line_numbers(tmp_path: Path) -> None:
    (tmp_path / ".engramory.json").write_bytes(b'\xef\xbb\xbf{\n  "version": 1,\n  "colour": 2\n}\n')
    cfg = config.load_store_config(str(tmp_path))
    assert not cfg.usable and cfg.line_of["colour"] == 3

"""Property tests of the guard's rule, with small caps so generated indexes cross them."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engramory.hosts import claude
from tests.conftest import payload, run_hook_subprocess

ENV = {"ENGRAMORY_WARN": "10", "ENGRAMORY_HARD": "20", "ENGRAMORY_WARN_BYTES": "300", "ENGRAMORY_HARD_BYTES": "400"}
HARD_LINES, HARD_BYTES = 20, 400

line = st.text(st.characters(codec="utf-8", exclude_characters="\r\n"), max_size=40)
index = st.lists(line, max_size=30).map(lambda ls: "".join(x + "\n" for x in ls))

PROFILE = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def decide(tmp_path: Path, before: str | None, tool: str, **tool_input: object) -> str:
    path = tmp_path / "MEMORY.md"
    if before is None:
        path.unlink(missing_ok=True)
    else:
        path.write_bytes(before.encode())
    out = claude.handle(json.dumps(payload(tool, path, **tool_input)).encode(), ENV)
    if not out:
        return "silent"
    inner = json.loads(out)["hookSpecificOutput"]
    assert inner.get("permissionDecision") in (None, "deny")
    return "deny" if inner.get("permissionDecision") == "deny" else "nudge"


WINDOW = claude.window()


def measure(data: bytes) -> tuple[int, int]:
    """Lines and UTF-16 units as Claude Code counts them (the window the guard judges by)."""
    return WINDOW.measure(data)


def grows_over(before: bytes, after: bytes) -> bool:
    (bl, bu), (al, au) = measure(before), measure(after)
    return (al > HARD_LINES and al > bl) or (au > HARD_BYTES and au > bu)


@PROFILE
@given(before=st.none() | index, after=index)
def test_write_denied_exactly_when_it_grows_an_over_cap_dimension(tmp_path: Path, before: str | None, after: str) -> None:
    b = (before or "").encode()
    a = after.encode()
    result = decide(tmp_path, before, "Write", content=after)
    if measure(a)[0] <= HARD_LINES and measure(a)[1] <= HARD_BYTES:
        assert result != "deny"  # within the caps: never denied
    assert (result == "deny") == grows_over(b, a)


@PROFILE
@given(before=index, data=st.data())
def test_edit_denied_exactly_when_it_grows_an_over_cap_dimension(tmp_path: Path, before: str, data: st.DataObject) -> None:
    lines = [x + "\n" for x in before.split("\n")[:-1]]
    assume(lines)
    old = data.draw(st.sampled_from(lines))
    assume(old.strip() and before.count(old) == 1)
    assume(not any(q in before for q in "'\"\u2018\u2019\u201c\u201d"))
    new = data.draw(index)
    assume(new != old)
    after = before.replace(old, new, 1)
    if new == "":
        pass  # old ends in "\n" already, so the host's newline rule does not apply
    result = decide(tmp_path, before, "Edit", old_string=old, new_string=new)
    assert (result == "deny") == grows_over(before.encode(), after.encode())


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=2000))
def test_arbitrary_stdin_in_process(raw: bytes) -> None:
    out = claude.handle(raw, ENV)
    assert out == "" or isinstance(json.loads(out), dict)


@settings(max_examples=500, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=12), c, max_size=4),
                    max_leaves=20))
def test_arbitrary_json_shapes_in_process(value: object) -> None:
    for wrapped in (value, {"tool_name": "Write", "tool_input": value}, {"tool_name": "Edit", "tool_input": {"file_path": "/nonexistent/MEMORY.md", "edits": value}}):
        out = claude.handle(json.dumps(wrapped).encode(), ENV)
        assert out == "" or isinstance(json.loads(out), dict)


@settings(max_examples=25, deadline=None)
@given(st.binary(max_size=500) | st.text(max_size=200).map(str.encode))
def test_arbitrary_stdin_to_the_real_script(raw: bytes) -> None:
    proc = run_hook_subprocess(raw, ENV)
    assert proc.returncode == 0
    assert proc.stdout == b"" or isinstance(json.loads(proc.stdout), dict)
    assert b"Traceback" not in proc.stderr

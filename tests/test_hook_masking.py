"""Issue 19, a loose end of items 11 and 12 (one masker for every line anything prints): the
hooks' own messages (the PreToolUse deny and nudge, the PostToolUse and SessionStart notices)
quoted index lines and paths through `layout.quote` unmasked, so a token pasted into MEMORY.md
went into the model's context whole, or cut to its first 16 characters. They go through
engramory.store.secrets now, by way of guard.masked: the masker (re and its patterns, more than a
deny's own work) is imported only for a text that holds what a secret starts with, so the
ignored path imports nothing new and a plain deny does not import it at all.

Every hook runs as installed: `python3 -I -S hooks/<script>`, payload on stdin."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engramory import guard
from engramory.store import secrets as secretscan
from tests.conftest import ROOT, index_text, payload

TOKEN = "ghp_" + "Q7r8A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
AWS = "AKIA" + "Z3K9Q2W8E4R7T6Y1"
PASSWORD = "Zx81qLp0Wm3vTy7uKd42"
SECRETS = (TOKEN, AWS, PASSWORD)
LEAKS = [s[:8] for s in SECRETS]  # the mask shows 4 characters; a cut quote showed 16
HOOKS = ROOT / "hooks"


def secret_lines(start: int, n: int) -> str:
    kinds = ("token %s" % TOKEN, "aws %s" % AWS, "password = %s" % PASSWORD)
    return "".join("- [note %d](note-%d.md) - %s\n" % (i, i, kinds[i % 3]) for i in range(start, start + n))


def hook(script: str, data: dict[str, object], env: dict[str, str] | None = None,
         importtime: bool = False) -> tuple[str, str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "CLAUDE"))}
    full.update(env or {})
    cmd = [sys.executable, "-I", "-S", *(["-X", "importtime"] if importtime else []), str(HOOKS / script)]
    done = subprocess.run(cmd, input=json.dumps(data).encode(), capture_output=True, env=full, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode(), done.stderr.decode()


def assert_masked(text: str) -> None:
    for leak in LEAKS:
        assert leak not in text, (leak, text)


def imported(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / ("mem-" + TOKEN)  # a secret in the path, too
    root.mkdir()
    return root


def test_a_deny_masks_the_lines_it_quotes_and_the_path(store: Path) -> None:
    index = store / "MEMORY.md"
    index.write_text(index_text(190))
    out, err = hook("engramory_index_guard.py", payload("Write", index, content=index_text(190) + secret_lines(190, 20)),
                    importtime=True)
    reason = json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "engramory blocked this Write" in reason and "line 201" in reason
    assert_masked(reason)
    assert "ghp_\u2026 (40 chars, masked)" in reason and "mem-ghp_\u2026" in reason
    assert "engramory.store.secrets" in imported(err)


def test_a_nudge_masks_the_index_name_and_the_configuration_notes(store: Path) -> None:
    index = store / ("notes-" + TOKEN + ".md")
    index.write_text(index_text(170))
    env = {"ENGRAMORY_INDEX_NAME": index.name, "ENGRAMORY_WARN": "token=" + PASSWORD}
    out, _ = hook("engramory_index_guard.py", payload("Write", index, content=index_text(171)), env)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "past the warn cap" in context
    assert_masked(context)


def test_a_plain_deny_does_not_load_the_masker_and_the_ignored_path_loads_nothing_new(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text(index_text(200))
    out, err = hook("engramory_index_guard.py", payload("Write", index, content=index_text(210)), importtime=True)
    assert "engramory blocked this Write" in out
    mods = imported(err)
    assert "engramory.store.secrets" not in mods and "re" not in mods, sorted(mods)
    out, err = hook("engramory_index_guard.py", payload("Write", tmp_path / "app.py", content="x"), importtime=True)
    assert out == ""
    ours = {m for m in imported(err) if m.startswith("engramory")}
    assert ours == {"engramory", "engramory.hosts", "engramory.hosts.claude", "engramory.jsonlite",
                    "engramory.scope", "engramory.automemory"}


def _session(tmp_path: Path, store: Path) -> tuple[dict[str, str], dict[str, object]]:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "TMPDIR": str(tmp_path), "ENGRAMORY_INDEX_PATH": str(store / "MEMORY.md")}
    return env, {"session_id": "s", "transcript_path": "/dev/null", "cwd": str(tmp_path)}


def test_post_tool_use_and_session_start_mask_the_lines_and_the_path(tmp_path: Path, store: Path) -> None:
    env, base = _session(tmp_path, store)
    index = store / "MEMORY.md"
    index.write_text(index_text(10))
    start = dict(base, hook_event_name="SessionStart", source="startup")
    post = dict(base, hook_event_name="PostToolUse", tool_name="Bash", tool_input={"command": "cat >> MEMORY.md"},
                tool_response={"stdout": ""})
    assert_masked(hook("engramory_session_start.py", start, env)[0])  # seeds the state (and names the store)
    index.write_text(index_text(200) + secret_lines(200, 12))  # a shell write past the cap
    out, _ = hook("engramory_post_tool.py", post, env)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "over its hard cap" in context and "line 201" in context
    assert_masked(context)
    out, _ = hook("engramory_session_start.py", start, env)
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "over its hard cap" in context and "line 201" in context
    assert_masked(context)


# -- the gate: guard.masked imports the masker only when a text may hold a secret ----------


def test_the_gate_knows_every_assignment_key_the_masker_has() -> None:
    assert set(guard.SECRET_KEYS) == {key for key, _ in secretscan._ASSIGN_ANYCASE}


@pytest.mark.parametrize("pattern", [rx for _kind, _lit, rx in secretscan.TOKEN_PATTERNS]
                         + [rx for _key, rx in secretscan._ASSIGN_ANYCASE], ids=str)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_text_the_masker_would_change_passes_the_gate(pattern: object, data: st.DataObject) -> None:
    import re

    assert isinstance(pattern, re.Pattern)
    found = data.draw(st.from_regex(pattern, fullmatch=True))
    text = data.draw(st.text(max_size=5)) + " " + found + " " + data.draw(st.text(max_size=5))
    if secretscan.redact(text) != text:
        assert guard.might_hold_secret(text), text
    assert guard.masked(text) == secretscan.redact(text)

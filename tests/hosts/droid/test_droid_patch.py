"""Factory droid's ApplyPatch without the CLI: the port (engramory.hosts.droid.model) on the
facts the real-CLI differential suite measured (tests/hosts/droid/test_droid_patch_model.py), the
installed hook script on ApplyPatch payloads shaped as droid sends them (`tool_input: {"input":
<patch>}`), the worst case where droid's result is not ported, and `install --host droid
--check` on an install whose matcher predates ApplyPatch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

from engramory.hosts.droid import model as droid_patch
from tests.conftest import ROOT, index_text

HOOK = ROOT / "hooks" / "engramory_droid_hook.py"


def _apply(before: Optional[bytes], body: str, known: Optional[dict[str, Optional[bytes]]] = None) -> Optional[bytes]:
    text = "*** Begin Patch\n%s*** End Patch" % body.format(p="/m/MEMORY.md")
    after, why = droid_patch.predict(droid_patch.split(text), str, "/m/MEMORY.md", before, (known or {}).get)
    assert not why, why
    return after


def test_the_port_on_what_droid_does_its_own_way() -> None:
    u = "*** Update File: {p}\n"
    assert _apply(b"x\ny\nx\n", u + "@@\n-x\n+z\n") == b"z\ny\nx\n"  # the first match, no ambiguity refusal
    assert _apply(b"a\nb\nX\nc\nd\ne\n", u + "@@\n a\n b\n c\n d\n-e\n+E\n") == b"a\nb\nX\nc\nE\ne\n"  # by position
    assert _apply(b"a\nb\nc\nd\n", u + "@@\n a\n W1\n W2\n-d\n+D\n") is None  # under 75 % of the context found
    assert _apply(b"a\nb\n", u + "@@\n+top\n") == b"top\na\nb\n"  # an insertion nothing places goes first
    assert _apply(b"a\nb\n", u + "@@\n+z\n*** End of File\n") == b"a\nb\n\nz"  # after the final empty line
    assert _apply("- it\u2019s \u2014 x\n".encode(), u + "@@\n-- it's - x\n+y\n") == b"y\n"
    assert _apply(b"a\r\nb\nc\r\nd\r\n", u + "@@\n-b\n+B\n") == b"a\r\nB\r\nc\r\nd\r\n"  # the majority ending
    assert _apply(b"a\r\nb\nc\r\n", u) == b"a\r\nb\r\nc\r\n"  # even an update that changes no line
    assert _apply(b"\xef\xbb\xbfa\nb", u + "@@\n-b\n+B\n") == b"\xef\xbb\xbfa\nB"
    assert _apply(b"a\rb\r", u + "@@\n-a\n+A\n") == b"A\rb\r"


def test_the_port_applies_operations_one_by_one() -> None:
    assert _apply(b"a\n", "*** Delete File: {p}\n*** Add File: {p}\n+x\n+y\n") == b"x\ny\n"
    assert _apply(b"\xef\xbb\xbfa\r\nb\r\n", "*** Add File: {p}\n+x\n+y\n") == b"\xef\xbb\xbfx\r\ny"  # over a file
    assert _apply(None, "*** Add File: {p}\n") == b"\n"
    assert _apply(None, "*** Add File: {p}\n+a\nb\n") is None  # a line without '+'
    twice = "*** Update File: {p}\n@@\n a\n+1\n*** Update File: {p}\n@@\n a\n+2\n"
    assert _apply(b"a\nb\n", twice) == b"a\n2\n1\nb\n"
    failed_first = "*** Update File: {p}\n@@\n-nope\n+x\n*** Update File: {p}\n@@\n-b\n+B\n"
    assert _apply(b"a\nb\n", failed_first) == b"a\nB\n"  # each operation fails or lands on its own
    move = "*** Update File: /m/s\n*** Move to: {p}\n@@\n-s\n+S\n"
    assert _apply(None, move, {"/m/s": b"s\r\n"}) == b"S\r\n"
    assert _apply(b"old\n", move, {"/m/s": b"s\n"}) is None  # the destination exists: refused
    with pytest.raises(droid_patch.patches.PatchError):
        droid_patch.split("*** Begin Patch\n*** Frobnicate: x\n*** End Patch")


def _hook(tmp_path: Path, patch: str, env: Optional[dict[str, str]] = None) -> Optional[dict[str, Any]]:
    payload = {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "PreToolUse", "tool_name": "ApplyPatch",
               "tool_input": {"input": patch}}
    full = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    full.update(env or {})
    proc = subprocess.run([sys.executable, "-I", "-S", str(HOOK), "PreToolUse"], input=json.dumps(payload).encode(),
                          capture_output=True, env=full, timeout=60)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    out = proc.stdout.decode().strip()
    return json.loads(out)["hookSpecificOutput"] if out else None


def _plus(text: str) -> str:
    return "".join("+%s\n" % line for line in text.splitlines())


def test_the_hook_denies_an_apply_patch_that_grows_the_index_past_its_cap(tmp_path: Path) -> None:
    grow = "*** Begin Patch\n*** Add File: memory/MEMORY.md\n%s*** End Patch\n" % _plus(index_text(300))
    answer = _hook(tmp_path, grow)
    assert answer is not None and answer["permissionDecision"] == "deny"
    assert answer["permissionDecisionReason"].startswith("engramory blocked this ApplyPatch")
    assert "grow from 0 to 300 lines (hard cap 200: 100 over)" in answer["permissionDecisionReason"]
    index = tmp_path / "memory" / "MEMORY.md"
    index.parent.mkdir()
    index.write_text(index_text(150))
    rewrite = "*** Begin Patch\n*** Delete File: %s\n*** Add File: %s\n%s*** End Patch\n" % (index, index, _plus(index_text(300)))
    answer = _hook(tmp_path, rewrite)
    assert answer is not None and "grow from 150 to 300 lines" in answer["permissionDecisionReason"]


def test_the_hook_allows_a_patch_that_shrinks_an_over_cap_index(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text(index_text(230))
    shrink = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n - [note 3](note-3.md) - hook 3\n-- [note 4](note-4.md) - hook 4\n" \
             "*** End Patch\n"
    answer = _hook(tmp_path, shrink)
    assert answer is not None and "permissionDecision" not in answer  # a nudge: still over the cap
    assert "229 lines" in answer["additionalContext"]
    other = "*** Begin Patch\n*** Add File: notes.txt\n%s*** End Patch\n" % _plus(index_text(300))
    assert _hook(tmp_path, other) is None
    assert _hook(tmp_path, "*** Begin Patch\n*** Frobnicate: MEMORY.md\n*** End Patch\n") is None  # droid refuses it


@pytest.mark.parametrize("seed, why", [
    (index_text(199).encode() + b"\xff\n", "legacy code page"),
    ((index_text(199) + "- [aws](aws.md) - AKIAIOSFODNN7EXAMPLQ\n").encode(), "credentials masked"),
])
def test_where_droid_is_not_ported_the_worst_case_is_judged(tmp_path: Path, seed: bytes, why: str) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_bytes(seed)
    patch = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n-- [note 3](note-3.md) - hook 3\n+- [a](a.md) x\n+- [b](b.md) y\n" \
            "*** End Patch\n"
    answer = _hook(tmp_path, patch)
    assert answer is not None and answer["permissionDecision"] == "deny", answer
    assert why in answer["permissionDecisionReason"]


def _engramory(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    env.update(HOME=str(cwd / "home"), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "engramory", *args], cwd=str(cwd), env=env, capture_output=True,
                          text=True, timeout=120)


def test_check_fails_an_install_whose_matcher_misses_apply_patch_and_says_to_reinstall(tmp_path: Path) -> None:
    install = ("install", "--host", "droid", "--scope", "project")
    assert _engramory(tmp_path, *install).returncode == 0
    settings = tmp_path / ".factory" / "settings.json"
    data = json.loads(settings.read_text())
    assert data["hooks"]["PreToolUse"][0]["matcher"] == "Create|Edit|ApplyPatch"
    data["hooks"]["PreToolUse"][0]["matcher"] = "Create|Edit"  # what installs before this one wrote
    settings.write_text(json.dumps(data))
    done = _engramory(tmp_path, *install, "--check")
    assert done.returncode == 1, done.stdout
    assert 'the PreToolUse matcher "Create|Edit" does not select ApplyPatch' in done.stdout
    assert "next step: run `%s -m engramory install --host droid --scope project`" % sys.executable in done.stdout
    assert _engramory(tmp_path, *install).returncode == 0
    assert json.loads(settings.read_text())["hooks"]["PreToolUse"][0]["matcher"] == "Create|Edit|ApplyPatch"
    healthy = _engramory(tmp_path, *install, "--check")
    assert healthy.returncode == 0, healthy.stdout


SAMPLES = (  # a value for each pattern of engramory.store.secrets: its TOKEN_PATTERNS, then its ASSIGN_KEYS
    "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----",
    "AKIAIOSFODNN7EXAMPLQ", "ASIAIOSFODNN7EXAMPLQ", "ghp_" + "a1B2" * 9, "github_pat_" + "a1B2c3" * 7,
    "xoxb-1234567890-abcdef", "sk_live_" + "a1B2" * 5, "rk_live_" + "a1B2" * 5, "sk-" + "a9Z3kQ7xP2" * 4,
    "AIza" + "a1B2c3D4e5" * 3 + "F6g7h", "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4",
    "password = Xq7Lm2Vp9Rt4Zk8", "PWD: Xq7Lm2Vp9Rt4Zk8", "Token=Xq7Lm2Vp9Rt4Zk8", "SECRET=Xq7Lm2Vp9Rt4Zk8",
    "api_key: Xq7Lm2Vp9Rt4Zk8",
)


def test_the_cheap_secret_hint_never_misses_what_secretscan_finds() -> None:
    from engramory.store import secrets as secretscan

    assert len(droid_patch.TOKEN_HINTS) >= len(secretscan.TOKEN_PATTERNS)
    assert len(droid_patch.KEY_HINTS) == len(secretscan.ASSIGN_KEYS)
    for value in SAMPLES:
        line = "- [n](n.md) - %s\n" % value
        assert secretscan.has_secret(line), value
        assert droid_patch._masked(line), value
    assert not droid_patch._masked(index_text(50))

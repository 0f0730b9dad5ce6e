"""engramory.hookrun: the one runtime under every entry script (bounded stdin, the host's
answer, fail open), and guard.judge / judge_bound, the decision adapters call directly."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engramory import guard, size
from engramory.hosts import answer, claude, run
from tests.conftest import ROOT, index_text

HOOKS = sorted((ROOT / "hooks").glob("engramory_*.py"))


class Stdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


def test_every_entry_script_runs_through_the_runtime() -> None:
    assert HOOKS
    for script in HOOKS:
        text = script.read_text()
        assert ("from engramory.hosts import finish, run" in text or "from engramory.hosts import finish, main" in text
                or "from engramory.notices import" in text), script.name
        assert "from engramory.hosts import finish" in text, script.name
        # Each ends the process through finish() (no interpreter teardown), never a bare
        # SystemExit of the answer.
        assert text.rstrip().splitlines()[-1].startswith("finish("), script.name
        assert len(text.splitlines()) < 45, script.name


FINISH = (
    "import sys; sys.path.insert(0, sys.argv[1]); from engramory.hosts import finish\n"
    "sys.stdout.write('x' * int(sys.argv[2]) + 'end'); sys.stderr.write('note'); finish(int(sys.argv[3]))\n"
    "sys.stdout.write('never')\n"
)


@pytest.mark.parametrize("code", [0, 2, 7])
def test_finish_flushes_both_streams_and_keeps_the_exit_code(code: int) -> None:
    # 200,000 characters: past every buffer, so the flush must write them all.
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", FINISH, str(ROOT), "200000", str(code)], capture_output=True, timeout=30
    )
    assert proc.returncode == code
    assert proc.stdout == b"x" * 200_000 + b"end" and proc.stderr == b"note"


def test_finish_with_a_closed_stdout_still_exits_with_its_code() -> None:
    # The host stopped reading before the answer was flushed: finish() still exits with the
    # answer's code, where a normal exit would print "Exception ignored ... BrokenPipeError"
    # and exit 120.
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", FINISH, str(ROOT), "1000", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert err == b"note"


def test_finish_refuses_a_code_a_host_would_misread() -> None:
    # An exit status outside 0..255 would wrap (256 -> 0, -1 -> 255); finish() says 0.
    for code in ("256", "-1"):
        proc = subprocess.run([sys.executable, "-I", "-S", "-c", FINISH, str(ROOT), "0", code], capture_output=True, timeout=30)
        assert proc.returncode == 0, code


def test_answer_fails_open_on_our_own_error() -> None:
    def broken(raw: bytes, env: Any) -> tuple[str, str, int]:
        raise RuntimeError("bug")

    out, err, code = answer(broken, b"{}", "engramory x", fail_open=("{}", 0))
    assert (out, code) == ("{}", 0) and "engramory x: internal error, allowed: RuntimeError('bug')" in err


def test_answer_refuses_a_payload_over_the_limit() -> None:
    seen: list[bytes] = []

    def respond(raw: bytes, env: Any) -> tuple[str, str, int]:
        seen.append(raw)
        return "deny", "", 2

    out, err, code = answer(respond, b"x" * 11, "engramory x", limit=10)
    assert (out, code, seen) == ("", 0, []) and "over 10 bytes" in err
    assert answer(respond, b"x" * 10, "t", limit=10) == ("deny", "", 2)


def test_run_writes_the_host_answer(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import json

    index = tmp_path / "MEMORY.md"
    raw = json.dumps({"tool_name": "Write", "tool_input": {"file_path": str(index), "content": index_text(201)}})
    monkeypatch.setattr(sys, "stdin", Stdin(raw.encode()))
    assert run("claude") == 0
    out = capsys.readouterr().out
    assert out.endswith("}\n") and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    monkeypatch.setattr(sys, "stdin", Stdin(raw.encode()))
    assert run("cursor") == 2  # Cursor's deny is exit 2


def test_run_fails_open_with_the_host_fail_open_answer(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from engramory.hosts import cursor

    def broken(raw: bytes, env: Any) -> tuple[str, str, int]:
        raise MemoryError()

    monkeypatch.setattr(cursor, "respond", broken)
    monkeypatch.setattr(sys, "stdin", Stdin(b"{}"))
    assert run("cursor") == 0
    captured = capsys.readouterr()
    assert captured.out == "{}\n" and "engramory cursor guard: internal error, allowed: MemoryError()" in captured.err
    monkeypatch.setattr(sys, "stdin", Stdin(b"{}"))
    assert run("no_such_host") == 0
    assert "internal error" in capsys.readouterr().err


@pytest.mark.parametrize("script", HOOKS, ids=lambda p: p.name)
def test_entry_scripts_fail_open_on_garbage(script: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-I", "-S", str(script)], input=b"\xff" * 100, capture_output=True, timeout=30
    )
    assert proc.returncode == 0
    assert proc.stdout in (b"", b"{}\n")


def test_broken_bundle_copy_fails_open(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for script in HOOKS:
        (hooks / script.name).write_bytes(script.read_bytes())
        proc = subprocess.run([sys.executable, "-I", "-S", str(hooks / script.name)], input=b"{}", capture_output=True, timeout=30)
        assert proc.returncode == 0, script.name
        assert b"cannot load the bundle" in proc.stderr


# --- judge ------------------------------------------------------------------------------------


def test_judge_decides_on_exact_bytes(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    line = "- " + "a" * 147 + "\n"  # 150 characters
    before = b"\xff\xfe" + (line * 99).encode("utf-16-le")  # a UTF-16LE index: 29,702 bytes
    # An adapter that knows its host rewrites it as UTF-8 hands those exact bytes over:
    # 15,000 bytes, not the 30,002 a UTF-16LE re-encoding would make of them.
    after = (line * 100).encode()
    assert len(after) == 15_000
    assert guard.judge(str(index), before, after, {}) is None
    d = guard.judge(str(index), b"", index_text(201).encode(), {}, claude.window(), "write_file")
    assert d is not None and d.action == guard.DENY and d.unit == size.UTF16
    assert d.after == (201, len(index_text(201)) - 1) and "write_file" in d.message


def test_judge_ignores_other_files_and_keeps_read_only_rules(tmp_path: Path) -> None:
    assert guard.judge(str(tmp_path / "notes.md"), None, b"x" * 100_000, {}) is None
    (tmp_path / ".engramory.json").write_text('{"version": 1, "readOnly": ["user-*.md"]}')
    d = guard.judge(str(tmp_path / "user-role.md"), None, b"x", {})
    assert d is not None and d.action == guard.DENY and "read-only" in d.message


def test_judge_in_the_window_unit(tmp_path: Path) -> None:
    index = str(tmp_path / "MEMORY.md")
    text = ("\u8a18" * 100 + "\n") * 200  # 200 lines, 20,000 units, 60,200 bytes
    assert guard.judge(index, None, text.encode(), {}, claude.window()) is not None  # warn zone nudge
    d = guard.judge(index, None, text.encode(), {}, size.STANDARD)
    assert d is not None and d.action == guard.DENY and "bytes" in d.message


def test_judge_bound_denies_only_growth_of_an_over_cap_dimension(tmp_path: Path) -> None:
    index = str(tmp_path / "MEMORY.md")
    before = index_text(200).encode()
    d = guard.judge_bound(index, before, "- new\n", {}, claude.window(), "Edit", "why not")
    assert d is not None and d.action == guard.DENY and "why not" in d.message and "201 lines" in d.message
    assert guard.judge_bound(index, index_text(100).encode(), "- new\n", {}, claude.window()) is None
    big = guard.judge_bound(index, None, "x", {}, claude.window(), "Edit", "huge", before_size=(None, 33_000_000))
    assert big is not None and big.action == guard.DENY
    shrink = guard.judge_bound(index, None, "", {}, claude.window(), "Edit", "huge", before_size=(None, 33_000_000))
    assert shrink is None or shrink.action == guard.NUDGE

"""Gemini CLI's run_shell_command judged before it runs, without the CLI (fast; the same facts on
the real CLI are in test_gemini_real.py and test_gemini_stale.py): the heredoc, printf and echo
writes engramory.shellwrite predicts go through the core's decision like a write_file (caps, the
stale-write rule), and every other append to an index at its cap is denied as before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

from engramory.hosts import gemini

ROOT = Path(__file__).resolve().parents[3]
FOREIGN = "- [foreign](foreign.md) added by another session\n"


def entries(n: int, start: int = 0) -> str:
    return "".join("- [n%d](n%d.md) fact\n" % (i, i) for i in range(start, start + n))


def payload(cwd: Path, command: str, event: str = "BeforeTool", **extra: Any) -> bytes:
    return json.dumps({"session_id": "s1", "cwd": str(cwd), "hook_event_name": event, "tool_name": "run_shell_command",
                       "tool_input": dict({"command": command, "description": "x"}, **extra)}).encode()


def reason(cwd: Path, command: str, env: Dict[str, str], **extra: Any) -> str:
    out = gemini.respond(payload(cwd, command, **extra), env)[0]
    assert out, "allowed: %r" % command
    answer = json.loads(out)
    assert set(answer) == {"decision", "reason"} and answer["decision"] == "deny"
    return str(answer["reason"])


def allowed(cwd: Path, command: str, env: Dict[str, str], **extra: Any) -> bool:
    return gemini.respond(payload(cwd, command, **extra), env) == ("", "", 0)


@pytest.fixture
def env(tmp_path: Path) -> Dict[str, str]:
    return {"GEMINI_CLI_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "home")}


PREDICTED_APPENDS = [
    "echo '- [x](x.md) one more' >> MEMORY.md",
    "printf '%s\\n' '- [x](x.md) one more' >> MEMORY.md",
    "cat >> MEMORY.md <<'EOF'\n- [x](x.md) one more\nEOF",
    "tee -a MEMORY.md <<'EOF' >/dev/null\n- [x](x.md) one more\nEOF",
]


@pytest.mark.parametrize("command", PREDICTED_APPENDS)
def test_a_predicted_append_past_the_cap_gets_the_cores_deny(tmp_path: Path, env: Dict[str, str], command: str) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text(entries(199))
    assert allowed(tmp_path, command, env)  # 199 -> 200: at the cap, not past it
    index.write_text(entries(200))
    got = reason(tmp_path, command, env)
    assert got.startswith("engramory blocked this run_shell_command write (heredoc, printf or echo): %s would grow "
                          "from 200 to 201 lines (hard cap 200: 1 over)" % index), got
    assert got.endswith(gemini.WINDOW_TEXT + ".")
    assert index.read_text() == entries(200)


def test_a_predicted_write_is_judged_in_dir_path(tmp_path: Path, env: Dict[str, str]) -> None:
    (tmp_path / "sub").mkdir()
    index = tmp_path / "sub" / "MEMORY.md"
    index.write_text(entries(200))
    got = reason(tmp_path, "printf '%s\\n' a b c >> MEMORY.md", env, dir_path="sub")
    assert "%s would grow from 200 to 203 lines" % index in got
    assert allowed(tmp_path, "printf '%s\\n' a b c >> MEMORY.md", env)  # no index in the project folder itself


def test_a_whole_index_write_that_shrinks_is_allowed_and_one_that_grows_is_denied(tmp_path: Path,
                                                                                 env: Dict[str, str]) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text(entries(210))
    shrink = "cat > %s <<'EOF'\n%sEOF\n" % (index, entries(205))
    assert allowed(tmp_path, shrink, env)
    decision = gemini.decide(json.loads(payload(tmp_path, shrink)), env)
    assert decision is not None and decision.action == "nudge" and "still over its hard cap" in decision.message
    grow = "cat > %s <<'EOF'\n%sEOF\n" % (index, entries(211))
    assert "would grow from 210 to 211 lines" in reason(tmp_path, grow, env)
    small = tmp_path / "other" / "MEMORY.md"
    small.parent.mkdir()
    small.write_text(entries(3))
    assert gemini.decide(json.loads(payload(tmp_path, "cd other && echo '- [a](a.md) b' >> MEMORY.md")), env) is None


def test_appends_the_guard_cannot_predict_keep_the_at_cap_rule(tmp_path: Path, env: Dict[str, str]) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text(entries(199))
    for command in ("date >> MEMORY.md", "echo x | tee -a 'MEMORY.md'", "echo \"$HOME\" >> MEMORY.md"):
        assert allowed(tmp_path, command, env), command
    index.write_text(entries(200))
    for command in ("date >> MEMORY.md", "echo x | tee -a 'MEMORY.md'", "echo \"$HOME\" >> MEMORY.md"):
        assert "appends to the memory index %s, which is already at its hard cap" % index in reason(
            tmp_path, command, env), command


def test_an_unpredicted_append_after_a_predicted_one_to_the_same_index_is_still_judged(
        tmp_path: Path, env: Dict[str, str]) -> None:
    """The at-cap rule is set aside only for the appends that were predicted, one by one: the
    empty printf adds nothing (the core lets it through), the `date` after it is denied."""
    index = tmp_path / "MEMORY.md"
    index.write_text(entries(200))
    assert allowed(tmp_path, "printf '' >> MEMORY.md", env)
    got = reason(tmp_path, "printf '' >> MEMORY.md; date >> MEMORY.md", env)
    assert "appends to the memory index %s, which is already at its hard cap" % index in got


def test_a_stale_whole_index_write_is_refused_until_the_agent_reads_again(tmp_path: Path, env: Dict[str, str]) -> None:
    index = tmp_path / "memory" / "MEMORY.md"
    index.parent.mkdir()
    seed = entries(5)
    index.write_text(seed)
    read = json.dumps({"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "AfterTool",
                       "tool_name": "read_file", "tool_input": {"file_path": str(index)}}).encode()
    assert gemini.respond(read, env) == ("", "", 0)
    with index.open("a") as f:
        f.write(FOREIGN)
    write = "cat > %s <<'EOF'\n%s- [mine](mine.md) mine\nEOF\n" % (index, seed)
    got = reason(tmp_path, write, env)
    assert got == (
        "engramory blocked this run_shell_command write (heredoc, printf or echo): %s changed since this session "
        "last read it: another writer added 1 line (line 6: \"- [foreign](foreign.md) added by another session\"), "
        "and this run_shell_command write (heredoc, printf or echo) would drop it. Read MEMORY.md again and redo "
        "your change on what is there now. Nothing was written; compacting is allowed after that read." % index)
    printf = "printf '%%s\\n' %s > %s" % (" ".join("'%s'" % line for line in (seed + "- [m](m.md) m\n").splitlines()),
                                          index)
    assert "changed since this session last read it" in reason(tmp_path, printf, env)
    assert allowed(tmp_path, "echo '- [m](m.md) m' >> %s" % index, env)  # an append drops nothing
    assert "changed since this session last read it" in reason(tmp_path, write, env)  # and it saw nothing new
    assert gemini.respond(read, env) == ("", "", 0)  # the read the message asks for
    assert allowed(tmp_path, write, env)


def test_shell_commands_that_write_no_index_say_nothing(tmp_path: Path, env: Dict[str, str]) -> None:
    (tmp_path / "MEMORY.md").write_text(entries(230))
    for command in ("ls -la", "git status", "cat > notes.txt <<'EOF'\n%sEOF" % entries(300),
                    "printf '%s\\n' a > other.md", "cat MEMORY.md", "wc -l < MEMORY.md"):
        assert allowed(tmp_path, command, env), command


def test_the_ignored_shell_path_loads_no_more_than_an_ignored_read(tmp_path: Path) -> None:
    """A shell command with no write the guard reads (`ls`) loads what the ignored read_file
    of tests/fixtures/hook_modules.json loads, and no more: the string gate comes before any
    import."""
    sys.path.insert(0, str(ROOT))
    try:
        from tests.test_hook_modules import GOLDEN, loaded
    finally:
        sys.path.remove(str(ROOT))
    (tmp_path / "MEMORY.md").write_text(entries(200))
    for command in ("ls -la", "git log --oneline | head -3 > /dev/null", "python3 -m pytest -q 2>&1 | tail -3"):
        got = loaded("gemini", "BeforeTool", payload(tmp_path, command), tmp_path)
        assert got == json.loads(GOLDEN.read_text())["gemini"]["BeforeTool"]["ignored"], command


def test_the_installed_hook_denies_a_printf_append_past_the_cap(tmp_path: Path, env: Dict[str, str]) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text(entries(200))
    hook = ROOT / "hooks" / "engramory_gemini_hook.py"
    proc = subprocess.run([sys.executable, "-I", "-S", str(hook)], input=payload(tmp_path, "printf 'a\\nb\\n' >> MEMORY.md"),
                          capture_output=True, env=dict(env, PATH="/usr/bin:/bin"), timeout=30)
    assert proc.returncode == 0 and proc.stdout.count(b"\n") == 1, proc
    assert "would grow from 200 to 202 lines" in json.loads(proc.stdout)["reason"]

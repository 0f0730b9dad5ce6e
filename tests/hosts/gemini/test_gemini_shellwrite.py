"""Shell writes through Gemini CLI's run_shell_command, on the real CLI (pinned in package.json),
offline, guarded (`engramory install --host gemini`): the heredoc, printf and echo writes whose
bytes the command fixes (engramory.shellwrite, the reading Codex's guard uses) are judged before
they run by the core, as a write_file is:

- an append growing a 200-line index past its cap (printf, echo in the call's `dir_path`, a
  heredoc) is refused with the core's message, which reaches the model, and the file is
  untouched;
- small heredoc, printf and echo writes under the cap are applied, with the bytes predicted;
- a whole-index heredoc write shrinking a 210-line index is applied, and the AfterTool notice
  says it is still over the cap;
- shell commands that write no index run exactly as they do without the guard.

The stale whole-index write (read_file, another writer, then `cat > MEMORY.md <<'EOF'`) is in
test_gemini_stale.py; the at-cap rule for appends the guard cannot predict in test_gemini_real.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from driver import Call, Result, Text, Turn, base_settings, run_gemini, write_json
from test_gemini_real import blocked, entries, install, not_blocked, response

from engramory.hosts.gemini import WINDOW_TEXT

pytestmark = pytest.mark.e2e

BLOCKED = "Tool execution blocked: engramory blocked this run_shell_command write (heredoc, printf or echo): "


def shell(command: str, **extra: Any) -> Call:
    return Call("run_shell_command", dict({"command": command, "description": "edit the memory index"}, **extra))


def run(home: Path, work: Path, calls: List[Call], trace: Optional[Path] = None) -> Result:
    env = {"ENGRAMORY_TRACE_FILE": str(trace)} if trace else None
    r = run_gemini([Turn([c]) for c in calls] + [Turn([Text("ok")])], home, work, extra_env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    return r


def line(n: int) -> str:
    return "- [extra %d](extra-%d.md) one more\n" % (n, n)


GROWING = {
    "printf": ("printf '%%s\\n' '%s' '%s' >> {index}" % (line(0).strip(), line(1).strip()), {}, 202),
    "echo-in-dir_path": ("echo '%s' >> MEMORY.md" % line(0).strip(), {"dir_path": "memory"}, 201),
    "heredoc": ("cat >> MEMORY.md <<'EOF'\n%s%s%sEOF" % (line(0), line(1), line(2)), {"dir_path": "memory"}, 203),
}


@pytest.mark.parametrize("how", sorted(GROWING))
def test_a_shell_append_past_the_cap_is_denied_with_the_reason_reaching_the_model(
        gemini_cli: Path, home: Path, work: Path, how: str) -> None:
    index = work / "memory" / "MEMORY.md"
    index.parent.mkdir()
    index.write_bytes(entries(200))
    install(home, work)
    command, extra, lines = GROWING[how]
    r = run(home, work, [shell(command.format(index=index), **extra)])
    reason = blocked(r)
    assert reason.startswith(BLOCKED + "%s would grow from 200 to %d lines (hard cap 200: %d over)" % (
        index, lines, lines - 200)), reason
    assert reason.endswith(WINDOW_TEXT + "."), reason
    assert index.read_bytes() == entries(200)  # the verdict reached Gemini before the shell ran


def test_small_shell_writes_under_the_cap_are_applied_as_predicted(gemini_cli: Path, home: Path, work: Path) -> None:
    index = work / "memory" / "MEMORY.md"
    index.parent.mkdir()
    index.write_bytes(entries(20))
    install(home, work)
    trace = work.parent / "trace.jsonl"
    seen: List[bytes] = []
    calls = [
        shell("cat >> %s <<'EOF'\n%s%sEOF" % (index, line(0), line(1))),
        shell("cd memory && printf '%%s\\n' '%s' >> MEMORY.md" % line(2).strip()),
        shell("echo '%s' >> MEMORY.md" % line(3).strip(), dir_path="memory"),
    ]
    script = [Turn([c], before=lambda _r: seen.append(index.read_bytes())) for c in calls]
    r = run_gemini(script + [Turn([Text("ok")], before=lambda _r: seen.append(index.read_bytes()))], home, work,
                   extra_env={"ENGRAMORY_TRACE_FILE": str(trace)})
    assert r.returncode == 0, r.stderr[-2000:]
    for turn in range(3):
        not_blocked(r, turn)
    grown = entries(20) + "".join(line(i) for i in range(4)).encode()
    assert index.read_bytes() == grown
    predicted = [bytes.fromhex(json.loads(t)["after"]) for t in trace.read_text().splitlines()]
    assert predicted == seen[1:]  # every prediction is the bytes the shell then wrote
    assert [json.loads(t)["path"] for t in trace.read_text().splitlines()] == [str(index)] * 3


def test_a_shrinking_heredoc_write_of_an_over_cap_index_is_applied_with_the_notice(
        gemini_cli: Path, home: Path, work: Path) -> None:
    index = work / "MEMORY.md"
    index.write_bytes(entries(210))
    install(home, work)
    r = run(home, work, [shell("cat > MEMORY.md <<'EOF'\n%sEOF" % entries(205).decode())])
    output = not_blocked(r)
    assert index.read_bytes() == entries(205)
    assert "<hook_context>engramory: after this run_shell_command call, the memory index %s is over its hard cap: " \
           "205 lines" % index in output


def _outputs(r: Result, calls: int) -> List[Dict[str, Any]]:
    return [json.loads(re.sub(r"PGID: \d+", "PGID: N", json.dumps(response(r, i)))) for i in range(calls)]


def _without_notices(outputs: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    return [{"output": re.sub(r"\n\n<hook_context>.*</hook_context>$", "", o["output"], flags=re.S)} for o in outputs]


def test_shell_commands_that_write_no_index_run_as_without_the_guard(gemini_cli: Path, home: Path, work: Path) -> None:
    """On a full index: a listing, a read, heredoc and printf writes of other files, a count:
    each runs, and the model is shown what it is shown without engramory (but for the AfterTool
    notice, once, that the index it read is past its warn cap: the backstop, not the guard)."""
    calls = [shell("ls"), shell("cat MEMORY.md | tail -1"), shell("cat > notes.txt <<'EOF'\n%sEOF" % entries(300).decode()),
             shell("printf '%s\\n' a b > other.md"), shell("wc -l < MEMORY.md")]
    got = []
    for guard in (False, True):
        write_json(home / ".gemini" / "settings.json", base_settings())
        for name in ("notes.txt", "other.md"):
            (work / name).unlink(missing_ok=True)
        (work / "MEMORY.md").write_bytes(entries(200))
        if guard:
            install(home, work)
        r = run(home, work, calls)
        got.append((_outputs(r, len(calls)), (work / "notes.txt").read_bytes(), (work / "other.md").read_bytes(),
                    (work / "MEMORY.md").read_bytes()))
    notices = [o["output"] for o in got[1][0] if "<hook_context>" in o["output"]]
    assert len(notices) == 1 and "memory index %s is past its warn cap" % (work / "MEMORY.md") in notices[0]
    assert got[0] == (_without_notices(got[1][0]),) + got[1][1:]  # the same, but for that one notice
    assert got[1][1:] == (entries(300), b"a\nb\n", entries(200))
    assert "200" in got[1][0][4]["output"]

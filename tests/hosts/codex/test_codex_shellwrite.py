"""Shell writes through Codex's shell, on the real Codex CLI 0.171.0, offline, guarded: Codex
has no write tool, so an agent replaces a file with `cat > FILE <<'EOF'`, `tee FILE <<'EOF'` or
`printf '%s\\n' LINES... > FILE`, and appends with `>>` (`echo LINE >> FILE`).
The guard predicts those writes exactly (engramory.shellwrite) and judges them as it judges an
apply_patch:

- after a stale `cat` (another writer appended a pointer since), the whole-index write (cat, tee,
  printf) is refused
  with the stale rule's message and the other writer's line stays; after one more `cat` the same
  write goes through;
- an append growing a 200-line index past its cap (`cat >> MEMORY.md <<'EOF'`, `echo ... >>`) is
  refused with the cap's message, the file untouched; a small `printf` append after `cd DIR &&`
  is applied; a whole-index write shrinking a 210-line one is applied;
- a heredoc write to a file that is no index, and one the guard cannot predict (`$VAR` in an
  unquoted heredoc), go through untouched by the guard."""

from __future__ import annotations

from typing import Any, Callable, List

import codex_driver
import codex_model
import common  # noqa: E402
import pytest
import stale  # noqa: E402
from codex_model import shell_call

pytestmark = pytest.mark.e2e

TOOL = "write through the shell (heredoc, printf or echo)"
BLOCKED = "Command blocked by PreToolUse hook: engramory blocked this " + TOOL


class StaleModel(codex_model.ScriptedModel):
    """The scripted model, where a step may be a function of the request (called when the
    request arrives: the foreign write happens then, between the read and the write)."""

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        with self._lock:
            n = len(self.requests)
            step = self.steps[n] if codex_model.is_turn(body) and n < len(self.steps) else None
            if callable(step):
                self.steps[n] = step(body)
        return super().answer(body)


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codex_driver, "ScriptedModel", StaleModel)


def install(home: codex_driver.Home) -> None:
    done = codex_driver.engramory(home, "install", "--host", "codex")
    assert done.returncode == 0, done.stdout + done.stderr


def cat_write(path: str, text: str) -> str:
    return "cat > %s <<'EOF'\n%sEOF\n" % (path, text)


def tee_write(path: str, text: str) -> str:
    return "tee %s <<'EOF' >/dev/null\n%sEOF\n" % (path, text)


def printf_write(path: str, text: str) -> str:
    return "printf '%%s\\n' %s > %s" % (" ".join('"%s"' % line for line in text.splitlines()), path)


WRITES = {"cat": cat_write, "printf": printf_write, "tee": tee_write}


@pytest.mark.parametrize("how", sorted(WRITES))
def test_stale_heredoc_write_of_the_index_is_refused_until_the_agent_reads_again(
        home: codex_driver.Home, scripted: None, how: str) -> None:
    index = home.work / "memory" / "MEMORY.md"
    stale.seed(index)
    install(home)
    write: Callable[[str, str], str] = WRITES[how]
    between: List[bytes] = []

    def reread(_body: Any) -> List[Any]:
        between.append(index.read_bytes())
        return [shell_call("cat %s" % index)]

    call = lambda: [shell_call(write(str(index), stale.FULL_WRITE))]  # noqa: E731
    steps: List[Any] = [[shell_call("cat %s" % index)], stale.after_foreign(index, call), reread, call()]
    result = codex_driver.run(home, steps)
    assert result.returncode == 0, result.stderr[-2000:]
    outputs = result.tool_outputs()
    assert stale.SEED in outputs[0]
    assert between == [stale.READ_FOREIGN.encode()]  # refused: the other writer's line is there
    assert outputs[1].startswith("Command blocked by PreToolUse hook: " + stale.stale_message(TOOL, str(index))), \
        outputs[1]
    assert stale.READ_FOREIGN in outputs[2]
    assert index.read_bytes() == stale.FULL_WRITE.encode()  # after that read, the same write goes through


def test_heredoc_append_growing_the_index_past_its_cap_is_refused(home: codex_driver.Home) -> None:
    index = home.work / "memory" / "MEMORY.md"
    index.parent.mkdir(parents=True, exist_ok=True)
    full = common.index_text(200).encode()
    index.write_bytes(full)
    install(home)
    add = "".join("- [extra %d](extra-%d.md) - one more\n" % (i, i) for i in range(3))
    result = codex_driver.run(home, [[shell_call("cat >> %s <<'EOF'\n%sEOF\n" % (index, add))]])
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.tool_outputs()[0]
    assert out.startswith(BLOCKED), out
    assert "would grow from 200 to 203 lines (hard cap 200: 3 over)" in out
    assert index.read_bytes() == full  # the guard's verdict reached Codex before the shell ran


def test_echo_append_growing_the_index_past_its_cap_is_refused(home: codex_driver.Home) -> None:
    index = home.work / "memory" / "MEMORY.md"
    index.parent.mkdir(parents=True, exist_ok=True)
    full = common.index_text(200).encode()
    index.write_bytes(full)
    install(home)
    result = codex_driver.run(home, [[shell_call("echo '- [extra](extra.md) - one more' >> %s" % index)]])
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.tool_outputs()[0]
    assert out.startswith(BLOCKED), out
    assert "would grow from 200 to 201 lines (hard cap 200: 1 over)" in out
    assert index.read_bytes() == full


def test_small_printf_append_is_applied(home: codex_driver.Home) -> None:
    index = home.work / "memory" / "MEMORY.md"
    index.parent.mkdir(parents=True, exist_ok=True)
    start = common.index_text(20)
    index.write_bytes(start.encode())
    install(home)
    line = "- [extra](extra.md) - one more"
    result = codex_driver.run(home, [[shell_call("cd %s && printf '%%s\\n' '%s' >> MEMORY.md" % (index.parent, line))]])
    assert result.returncode == 0, result.stderr[-2000:]
    assert "blocked" not in result.tool_outputs()[0]
    assert index.read_bytes() == (start + line + "\n").encode()


def test_heredoc_write_shrinking_an_oversized_index_is_applied(home: codex_driver.Home) -> None:
    index = home.work / "memory" / "MEMORY.md"
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_bytes(common.index_text(210).encode())
    install(home)
    smaller = common.index_text(150)
    result = codex_driver.run(home, [[shell_call(cat_write(str(index), smaller))]])
    assert result.returncode == 0, result.stderr[-2000:]
    assert "blocked" not in result.tool_outputs()[0]
    assert index.read_bytes() == smaller.encode()


def test_heredoc_writes_the_guard_does_not_judge_go_through(home: codex_driver.Home) -> None:
    index = home.work / "memory" / "MEMORY.md"
    index.parent.mkdir(parents=True, exist_ok=True)
    full = common.index_text(200).encode()
    index.write_bytes(full)
    other = home.work / "notes.txt"
    install(home)
    grown = common.index_text(260)
    steps: List[Any] = [
        [shell_call(cat_write(str(other), "not an index\n"))],
        # an unquoted heredoc with a variable: only the shell knows the bytes; judged as before (after the fact)
        [shell_call("cat > %s <<EOF\n%s- [home]($HOME.md)\nEOF\n" % (index, grown))],
    ]
    result = codex_driver.run(home, steps)
    assert result.returncode == 0, result.stderr[-2000:]
    outputs = result.tool_outputs()
    assert other.read_bytes() == b"not an index\n"
    assert not any("blocked" in o for o in outputs), outputs
    assert index.read_bytes().startswith(grown.encode())

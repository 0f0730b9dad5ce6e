"""Stale writes in a real headless `hermes chat` session (hermes-agent pinned in
tests/hosts/hermes/requirements.txt), offline against a scripted model on loopback (issue 22, "Stale
writes, per host"): the agent reads MEMORY.md with read_file, another process appends a pointer
line, then the agent writes from what it read. Each case runs without the guard and with it
installed (`engramory install --host hermes`), and asserts the exact bytes on disk afterwards.

What Hermes 0.19.0 does (tools/file_state.py, tools/file_tools.py): read_file stamps the file's
mtime per agent (task); write_file and patch compare it before writing and, on a change, WARN
and write anyway: the tool result carries `_warning: "<path> was modified since you last read
it on disk (external edit or unrecorded writer). Re-read the file before writing."` So a stale
write_file drops the other writer's line (with the warning); a patch, by replace or V4A,
matches the file as it is and keeps it (with the same warning).

With the guard installed, its plugin's `post_tool_call` of read_file records what the agent was
shown (engramory.stale, per Hermes session and task), so the stale write_file is refused before
it runs, with the line it would drop (also when the other writer is `engramory new`); after one
more read the same call goes through. The patches keep the line and are let through, predicted
exactly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import stale  # noqa: E402
from mock_openai import MockModel  # noqa: E402

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]
GUARD = pytest.mark.parametrize("guard", [False, True], ids=["bare", "guarded"])
WARNING = ("%s was modified since you last read it on disk (external edit or unrecorded writer). "
           "Re-read the file before writing.")
# Hermes asks a custom endpoint whether it is Ollama (POST /api/show); the 404 makes it go on.
OLLAMA_PROBE = "unsupported path /api/show"


def agent_call(case: str, index: Path) -> Tuple[str, Dict[str, Any]]:
    if case == "write":
        return ("write_file", {"path": str(index), "content": stale.FULL_WRITE})
    if case == "edit":
        return ("patch", {"mode": "replace", "path": str(index), "old_string": stale.OLD_LINE,
                          "new_string": stale.NEW_LINE})
    return ("patch", {"mode": "patch", "patch": stale.case_patch(case, str(index))})


def chat(python: Path, env: Dict[str, str], script: List[Any], guard: bool) -> MockModel:
    """One `hermes chat -q ... -Q` against the scripted model; the model, once it is done."""
    work = Path(env["TERMINAL_CWD"])
    with MockModel(script, model="fake-model") as mock:
        (Path(env["HERMES_HOME"]) / "config.yaml").write_text(
            "model:\n  provider: custom\n  base_url: %s\n  default: fake-model\n  api_key: sk-test-not-a-secret\n"
            % mock.base_url, encoding="utf-8")
        if guard:
            done = subprocess.run([sys.executable, "-m", "engramory", "install", "--host", "hermes"], cwd=str(ROOT),
                                  env=env, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stdout + done.stderr
        chat = subprocess.run([str(python.parent / "hermes"), "chat", "-q", "please do the task", "-Q"], env=env,
                              cwd=str(work), capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=180)
    assert chat.returncode == 0, chat.stdout[-2000:] + chat.stderr[-2000:]
    assert set(mock.errors) <= {OLLAMA_PROBE}, mock.errors
    return mock


def stale_case(python: Path, hermes_env: Dict[str, str], tmp_path: Path, case: str, guard: bool,
               foreign: stale.Foreign = stale.APPEND) -> stale.Measured:
    """read_file, the foreign append, the agent's call, done."""
    index = Path(hermes_env["TERMINAL_CWD"]) / "memory" / "MEMORY.md"
    stale.seed(index)
    trace = tmp_path / "trace.jsonl"
    env = dict(hermes_env, ENGRAMORY_TRACE_FILE=str(trace))
    script = [[("read_file", {"path": str(index)})], stale.after_foreign(index, lambda: [agent_call(case, index)], foreign),
              "done"]
    mock = chat(python, env, script, guard)
    results: List[str] = list(mock.tool_messages())
    assert json.loads(results[0])["total_lines"] == 5  # the read showed the index before the foreign line
    measured = stale.Measured(index.read_bytes(), case, results, left=foreign.left)
    stale.assert_guard_silent(measured)
    stale.assert_predicted(trace, index, guard, case, left=foreign.left)
    return measured


def seen(m: stale.Measured) -> Dict[str, Any]:
    value = json.loads(m.seen)
    assert isinstance(value, dict)
    return value


def test_stale_write_file_host_warns_and_drops_the_foreign_line(hermes_python: Path, hermes_env: Dict[str, str],
                                                                tmp_path: Path) -> None:
    """host drops the foreign line: write_file writes what the agent read plus its line, and
    tells the model the file had changed since its read, after the fact."""
    m = stale_case(hermes_python, hermes_env, tmp_path, "write", False)
    index = Path(hermes_env["TERMINAL_CWD"]) / "memory" / "MEMORY.md"
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    result = seen(m)
    assert result["bytes_written"] == len(stale.FULL_WRITE.encode()) and "error" not in result
    assert result["_warning"] == WARNING % index


@GUARD
@pytest.mark.parametrize("case", ["edit", "patch"])
def test_stale_patch_host_warns_and_keeps_the_foreign_line(hermes_python: Path, hermes_env: Dict[str, str],
                                                           tmp_path: Path, guard: bool, case: str) -> None:
    """host keeps the foreign line: patch (replace mode, and a V4A Update) matches the file
    as it is; the model gets the same warning."""
    m = stale_case(hermes_python, hermes_env, tmp_path, case, guard)
    index = Path(hermes_env["TERMINAL_CWD"]) / "memory" / "MEMORY.md"
    assert m.outcome == stale.KEPT
    assert m.on_disk == stale.EDITED_KEPT.encode()
    result = seen(m)
    assert result["success"] is True
    assert result["_warning"] == WARNING % index


def test_stale_write_file_after_engramory_new_host_warns_and_drops_its_section(
        hermes_python: Path, hermes_env: Dict[str, str], tmp_path: Path) -> None:
    """host drops the foreign line when the other writer is `engramory new` (an atomic rename):
    Hermes's stamp is the path's mtime, so it warns the same way, after writing."""
    m = stale_case(hermes_python, hermes_env, tmp_path, "write", False, stale.ENGRAMORY_NEW)
    index = Path(hermes_env["TERMINAL_CWD"]) / "memory" / "MEMORY.md"
    assert m.outcome == stale.DROPPED
    assert m.on_disk == stale.FULL_WRITE.encode()
    assert seen(m)["_warning"] == WARNING % index


def refused_case(python: Path, hermes_env: Dict[str, str], foreign: stale.Foreign) -> stale.Refused:
    """With the guard: read, the other writer, the stale write_file (refused), one more read
    (what the deny asks for), the very same write_file again (applied), done."""
    index = Path(hermes_env["TERMINAL_CWD"]) / "memory" / "MEMORY.md"
    stale.seed(index)
    between: List[bytes] = []
    read = ("read_file", {"path": str(index)})

    def reread(_request: Any) -> List[Any]:
        between.append(index.read_bytes())
        return [read]

    script = [[read], stale.after_foreign(index, lambda: [agent_call("write", index)], foreign), reread,
              [agent_call("write", index)], "done"]
    mock = chat(python, hermes_env, script, True)
    assert between, "the model was not asked for the turn after the stale write"
    return stale.Refused(between[0], "write", list(mock.tool_messages()), index.read_bytes(), foreign.left)


@pytest.mark.parametrize("foreign", [stale.APPEND, stale.ENGRAMORY_NEW], ids=["append", "engramory-new"])
def test_stale_write_file_guard_refuses_and_the_same_write_after_a_read_goes_through(
        hermes_python: Path, hermes_env: Dict[str, str], foreign: stale.Foreign) -> None:
    """guard refuses: the stale write_file would drop what the other writer added; the block
    message reaches the model as the tool's error, and after one read the same call is applied
    (Hermes's own stamp is fresh again: no warning)."""
    r = refused_case(hermes_python, hermes_env, foreign)
    index = Path(hermes_env["TERMINAL_CWD"]) / "memory" / "MEMORY.md"
    assert r.outcome == stale.REFUSED and r.after_deny == foreign.left.encode()
    assert json.loads(r.seen) == {"error": stale.stale_message("write_file", str(index), foreign.left)}
    assert foreign.left.splitlines()[-1] in json.loads(r.tool_results[2])["content"]
    done = json.loads(r.tool_results[3])
    assert done["bytes_written"] == len(stale.FULL_WRITE.encode()) and "_warning" not in done, done
    assert r.at_end == stale.FULL_WRITE.encode()



@GUARD
def test_stale_rewrite_patch_host_drops_the_foreign_line_and_the_guard_refuses(
        hermes_python: Path, hermes_env: Dict[str, str], tmp_path: Path, guard: bool) -> None:
    """The full write as a V4A patch (Delete + Add of the index): bare, Hermes applies both
    (its Add leaves no final newline), drops the foreign line and warns twice, after the fact;
    with the guard, its predicted Delete + Add is refused with the line it would drop."""
    index = Path(hermes_env["TERMINAL_CWD"]) / "memory" / "MEMORY.md"
    stale.seed(index)
    env = dict(hermes_env, ENGRAMORY_TRACE_FILE=str(tmp_path / "trace.jsonl"))
    script = [[("read_file", {"path": str(index)})],
              stale.after_foreign(index, lambda: [agent_call("rewrite", index)]), "done"]
    results = list(chat(hermes_python, env, script, guard).tool_messages())
    result = json.loads(results[1])
    if guard:
        assert index.read_bytes() == stale.READ_FOREIGN.encode()
        assert result == {"error": stale.stale_message("patch", str(index))}
        # predicted exactly what Hermes writes bare (Hermes's own V4A code, run on a copy in memory)
        assert stale.guard_predictions(tmp_path / "trace.jsonl", index) == [stale.FULL_WRITE.rstrip("\n").encode()]
    else:
        assert index.read_bytes() == stale.FULL_WRITE.rstrip("\n").encode()
        assert result["success"] is True and result["files_deleted"] == [str(index)]
        assert result["_warning"] == " | ".join([WARNING % index] * 2)

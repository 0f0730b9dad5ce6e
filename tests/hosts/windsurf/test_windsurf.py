"""Windsurf (Cascade), from its hooks docs (not runnable here): the guard on `pre_write_code`
payloads (`tool_info.file_path`, `tool_info.edits`), a deny by exit 2 with the reason on
stderr and no JSON, and its installer (user and workspace hooks.json, byte-exact uninstall)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import contract  # noqa: E402
import pytest
from contract import lines  # noqa: E402

from engramory.hosts import claudelike, windsurf  # noqa: E402


def payload(path: str, edits: Any) -> Dict[str, Any]:
    return {"agent_action_name": "pre_write_code", "trajectory_id": "t1", "execution_id": "e1",
            "timestamp": "2026-10-01T12:00:00Z", "model_name": "m",
            "tool_info": {"file_path": path, "edits": edits}}


def write(path: str, cwd: str, before: str, after: str) -> Dict[str, Any]:
    return payload(path, [{"old_string": before, "new_string": after}])


def settings(scope: str, home: Path, proj: Path) -> Path:
    return home / ".codeium" / "windsurf" / "hooks.json" if scope == "user" else proj / ".windsurf" / "hooks.json"


def bundle(scope: str, home: Path, proj: Path) -> Path:
    return settings(scope, home, proj).parent / "engramory"


CASE = contract.Case("windsurf", "exit", write, "pre_write_code", settings, bundle)


def test_a_growing_write_is_denied_by_exit_2_with_the_reason_on_stderr(tmp_path: Path) -> None:
    contract.check_growing_write_denied(CASE, tmp_path)


def test_a_shrinking_write_passes_in_silence(tmp_path: Path) -> None:
    contract.check_shrink_passes_in_silence(CASE, tmp_path)


def test_an_unrelated_file_is_left_alone(tmp_path: Path) -> None:
    contract.check_unrelated_file_silent(CASE, tmp_path)


def test_broken_payloads_fail_open(tmp_path: Path) -> None:
    contract.check_broken_payloads_fail_open(CASE, tmp_path)


def _ask(tmp: Path, text: str | None, edits: Any, action: str = "pre_write_code") -> tuple[str, str, int]:
    index = tmp / "MEMORY.md"
    if text is not None:
        index.write_text(text)
    raw = dict(payload(str(index), edits), agent_action_name=action)
    return windsurf.respond(json.dumps(raw).encode(), {"HOME": str(tmp)})


def test_the_docs_example_edit_is_applied_in_order(tmp_path: Path) -> None:
    # the docs' example: one line becomes two; a growth under the cap says nothing
    assert _ask(tmp_path, lines(10), [{"old_string": "- [n1](n1.md) - note 1\n",
                                       "new_string": "- [n1](n1.md) - note 1\n- b\n"}]) == ("", "", 0)
    edits = [{"old_string": "- [n1](n1.md) - note 1\n", "new_string": lines(30, "a")},
             {"old_string": "- [a29](a29.md) - note 29\n", "new_string": lines(30, "b")}]
    out, err, code = _ask(tmp_path, lines(190), edits)
    assert (out, code) == ("", 2) and "248 lines" in err  # the second edit saw the first's text
    # another pre-hook of Windsurf's is not a write
    assert _ask(tmp_path, lines(200), edits, "pre_read_code") == ("", "", 0)


def test_a_new_file_and_an_edit_not_found_are_judged_by_their_worst_case() -> None:
    assert windsurf.predict("edit", None, {"edits": [{"old_string": "", "new_string": "x\n"}]}) == b"x\n"
    unknown = windsurf.predict("edit", b"a\n", {"edits": [{"old_string": "zz", "new_string": "y\n"}]})
    assert isinstance(unknown, claudelike.Unknown) and unknown.added == "y\n"
    whole = windsurf.predict("edit", b"a\n", {"edits": [{"old_string": "", "new_string": "all\n"}]})
    assert isinstance(whole, claudelike.Unknown)
    assert windsurf.predict("edit", b"a\n", {"edits": [{"old_string": 1}]}) is None
    assert windsurf.predict("edit", b"a\n", {"edits": []}) is None


def test_an_index_too_long_to_grow_by_an_unplaced_edit_is_denied(tmp_path: Path) -> None:
    out, err, code = _ask(tmp_path, lines(200), [{"old_string": "not there", "new_string": lines(5, "z")}])
    assert code == 2 and "not documented" in err


@pytest.mark.parametrize("scope, existing", [
    ("user", None),
    ("user", b'{"hooks": {"pre_run_command": [{"command": "audit.sh", "show_output": true}]}}\n'),
    ("project", None),
    ("project", b'{\r\n  "hooks": {}\r\n}\r\n'),
])
def test_install_check_uninstall_gives_the_bytes_back(tmp_path: Path, scope: str, existing: bytes | None) -> None:
    contract.check_install_round_trip(CASE, tmp_path, scope, existing)


def test_the_installed_entry_is_windsurfs_shape(tmp_path: Path) -> None:
    assert contract.engramory(tmp_path, "install", "--host", "windsurf").returncode == 0
    data = json.loads(settings("user", tmp_path / "home", tmp_path / "proj").read_text())
    (entry,) = data["hooks"]["pre_write_code"]
    assert list(entry) == ["command"] and "|| true" not in entry["command"]
    assert entry["command"].endswith("engramory_hook.py\" windsurf pre_write_code")


def test_check_fails_on_a_deleted_script_or_removed_wiring(tmp_path: Path) -> None:
    def unwire(path: Path) -> None:
        path.write_text('{"hooks": {}}\n')

    contract.check_check_fails_when_broken(CASE, tmp_path, unwire)

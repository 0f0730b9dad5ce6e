"""Crush, from its source and docs (not runnable here): the guard on payloads of the shape
Crush's BuildPayload sends, deny by exit 2 with the reason on stderr, Crush's edit model, and
its installer (user and project config, byte-exact uninstall, --check)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Dict

import contract  # noqa: E402
import pytest
from contract import lines  # noqa: E402

from engramory.hosts import claudelike, crush  # noqa: E402
from engramory.hosts.crush import model as crush_model  # noqa: E402


def write(path: str, cwd: str, before: str, after: str) -> Dict[str, Any]:
    return {"event": "PreToolUse", "session_id": "313909e", "cwd": cwd, "tool_name": "write",
            "tool_input": {"file_path": path, "content": after}}


def settings(scope: str, home: Path, proj: Path) -> Path:
    return home / ".config" / "crush" / "crush.json" if scope == "user" else proj / ".crush.json"


def bundle(scope: str, home: Path, proj: Path) -> Path:
    return (home / ".config" / "crush" if scope == "user" else proj / ".crush") / "engramory"


CASE = contract.Case("crush", "exit", write, "PreToolUse", settings, bundle)


def test_a_growing_write_is_denied_by_exit_2_with_the_reason_on_stderr(tmp_path: Path) -> None:
    contract.check_growing_write_denied(CASE, tmp_path)


def test_a_shrinking_write_passes_in_silence(tmp_path: Path) -> None:
    contract.check_shrink_passes_in_silence(CASE, tmp_path)


def test_an_unrelated_file_is_left_alone(tmp_path: Path) -> None:
    contract.check_unrelated_file_silent(CASE, tmp_path)


def test_broken_payloads_fail_open(tmp_path: Path) -> None:
    contract.check_broken_payloads_fail_open(CASE, tmp_path)


def _edit(tmp: Path, text: str, tool_input: Dict[str, Any], tool: str = "edit") -> tuple[str, str, int]:
    index = tmp / "MEMORY.md"
    index.write_bytes(text.encode())
    payload = {"event": "PreToolUse", "cwd": str(tmp), "tool_name": tool,
               "tool_input": dict({"file_path": "MEMORY.md"}, **tool_input)}
    return crush.respond(json.dumps(payload).encode(), {"HOME": str(tmp)})


def test_edit_and_multiedit_on_a_relative_path(tmp_path: Path) -> None:
    grow = "- [n0](n0.md) - note 0\n" + lines(40, "m")
    out, err, code = _edit(tmp_path, lines(200), {"old_string": "- [n0](n0.md) - note 0\n", "new_string": grow})
    assert (out, code) == ("", 2) and "240 lines" in err
    # multiedit applies the edits that match and skips the others
    edits = [{"old_string": "not in the file", "new_string": lines(300, "x")},
             {"old_string": "- [n1](n1.md) - note 1\n", "new_string": ""}]
    assert _edit(tmp_path, lines(200), {"edits": edits}, "multiedit") == ("", "", 0)
    edits[0]["old_string"] = "- [n5](n5.md) - note 5\n"
    out, err, code = _edit(tmp_path, lines(200), {"edits": edits}, "multiedit")
    assert code == 2 and "498 lines" in err
    # an edit Crush refuses (not unique, or "" on an existing file) is not judged
    assert _edit(tmp_path, lines(200) * 2, {"old_string": "- [n0](n0.md) - note 0\n", "new_string": grow}) == ("", "", 0)
    assert _edit(tmp_path, lines(200), {"old_string": "", "new_string": grow}) == ("", "", 0)


def test_the_edit_model_ports_crushs_rules() -> None:
    crlf = b"a\r\nb\r\n"
    assert crush_model.apply_edits(crlf, [("a\n", "A\nA2\n", False)], False) == b"A\r\nA2\r\nb\r\n"
    # a CRLF new_string leaves the file mostly LF
    assert crush_model.apply_edits(crlf, [("a\n", "A\r\n", False)], False) == b"A\r\nb\n"
    assert crush_model.apply_edits(b"x\n", [("x", "y", False)], False) == b"y\n"
    assert crush_model.apply_edits(None, [("", "new\n", False)], False) == b"new\n"
    assert crush_model.apply_edits(None, [("x", "y", False)], False) is None
    # the whitespace-normalised fallback re-indents: judged by its worst case
    loose = crush_model.apply_edits(b"    foo   bar\n", [("foo bar", "baz\n", False)], False)
    assert isinstance(loose, claudelike.Unknown) and loose.added == "baz\n"
    assert crush_model.apply_edits(b"foo\n", [("nothing like it", "baz", False)], False) is None


def test_a_whitespace_fallback_match_is_judged_by_its_worst_case(tmp_path: Path) -> None:
    text = lines(199) + "  loose   line  \n"
    out, err, code = _edit(tmp_path, text, {"old_string": "loose line", "new_string": lines(30, "w")})
    assert code == 2 and "230 lines" in err


@pytest.mark.parametrize("scope, existing", [
    ("user", None),
    ("user", b'{\n  "options": {"debug": true},\n  "hooks": {"PreToolUse": [{"matcher": "bash", "command": "mine"}]}\n}\n'),
    ("project", None),
    ("project", b'{"$schema": "https://charm.land/crush.json"}'),
])
def test_install_check_uninstall_gives_the_bytes_back(tmp_path: Path, scope: str, existing: bytes | None) -> None:
    contract.check_install_round_trip(CASE, tmp_path, scope, existing)


def test_the_installed_entry_is_crushs_flat_shape(tmp_path: Path) -> None:
    assert contract.engramory(tmp_path, "install", "--host", "crush").returncode == 0
    data = json.loads(settings("user", tmp_path / "home", tmp_path / "proj").read_text())
    (entry,) = data["hooks"]["PreToolUse"]
    assert set(entry) == {"name", "matcher", "command", "timeout"} and entry["matcher"] == "^(write|edit|multiedit)$"
    assert entry["command"].startswith(sys.executable + " -I -S -c ") and "|| true" not in entry["command"]
    assert entry["command"].endswith("engramory_hook.py\" crush PreToolUse")


def test_check_fails_on_a_deleted_script_or_removed_wiring(tmp_path: Path) -> None:
    def unwire(path: Path) -> None:
        data = json.loads(path.read_text())
        data["hooks"]["PreToolUse"] = []
        path.write_text(json.dumps(data))

    contract.check_check_fails_when_broken(CASE, tmp_path, unwire)

"""The Gemini CLI host end to end, on the real Gemini CLI (pinned in package.json), offline.

Every test installs engramory with `engramory install --host gemini` into a throw-away
GEMINI_CLI_HOME, runs one headless session whose model is scripted, and reads what the CLI
did: the bytes on disk and the requests it sent the model next (the deny reason, the AfterTool
and SessionStart notices are in them, as the model sees them).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import common
import pytest
from driver import Call, Result, Text, Turn, base_settings, run_gemini, write_json

pytestmark = pytest.mark.e2e


def entries(n: int, start: int = 0) -> bytes:
    return "".join("- [note %d](note-%d.md) one fact, kept short\n" % (i, i) for i in range(start, start + n)).encode()


def engramory(home: Path, work: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI_", "ENGRAMORY_"))}
    return common.engramory(list(argv), work, home, dict(env, GEMINI_CLI_HOME=str(home)))


def install(home: Path, work: Path, scope: str = "user") -> None:
    done = engramory(home, work, "install", "--host", "gemini", "--scope", scope)
    assert done.returncode == 0, done.stdout + done.stderr


def response(result: Result, turn: int = 0, call: int = 0) -> Dict[str, Any]:
    found = result.responses_after(turn)
    assert len(found) > call, "no function response %d after turn %d: %r\n%s" % (call, turn, found, result.stderr[-2000:])
    resp = found[call]["response"]
    assert isinstance(resp, dict)
    return resp


def blocked(result: Result, turn: int = 0, call: int = 0) -> str:
    resp = response(result, turn, call)
    error = resp.get("error")
    assert isinstance(error, str) and error.startswith("Tool execution blocked: "), resp
    return error


def not_blocked(result: Result, turn: int = 0, call: int = 0) -> str:
    resp = response(result, turn, call)
    assert "error" not in resp, resp
    return str(resp.get("output", ""))


def replace_call(path: str, old: str, new: str, **extra: Any) -> Call:
    return Call("replace", dict({"file_path": path, "instruction": "edit the memory index", "old_string": old,
                                 "new_string": new}, **extra))


def private_index(home: Path, work: Path) -> Path:
    """Gemini's private memory index for `work`; the slug is the folder's name (as Gemini
    files it on a first run)."""
    return home / ".gemini" / "tmp" / work.name / "memory" / "MEMORY.md"


# -- over-cap growth is denied through every edit route, with numbers ------------------------


def test_write_file_growth_denied_reason_reaches_model(gemini_cli: Path, home: Path, work: Path) -> None:
    install(home, work)
    index = work / "notes" / "MEMORY.md"
    index.parent.mkdir()
    index.write_bytes(entries(200))
    grown = (entries(205)).decode()
    r = run_gemini([Turn([Call("write_file", {"file_path": str(index), "content": grown})]), Turn([Text("ok")])], home, work)
    reason = blocked(r)
    assert "engramory blocked this write_file: %s would grow from 200 to 205 lines (hard cap 200: 5 over)" % index in reason
    assert "loads this index whole into every session" in reason and "fall outside" not in reason
    assert index.read_bytes() == entries(200)


def test_replace_growth_denied_reason_reaches_model(gemini_cli: Path, home: Path, work: Path) -> None:
    install(home, work)
    index = work / "MEMORY.md"
    index.write_bytes(entries(198))
    last = entries(1, 197).decode()
    r = run_gemini([Turn([replace_call(str(index), last, last + entries(4, 500).decode())]), Turn([Text("ok")])], home, work)
    reason = blocked(r)
    assert "would grow from 198 to 202 lines (hard cap 200: 2 over)" in reason
    assert index.read_bytes() == entries(198)


def test_replace_bytes_growth_denied(gemini_cli: Path, home: Path, work: Path) -> None:
    install(home, work)
    index = work / "MEMORY.md"
    long_line = "- [big](big.md) " + "x" * 240 + "\n"
    index.write_bytes((long_line * 99).encode())  # 99 lines, 25,443 bytes: over the byte cap already
    r = run_gemini([Turn([replace_call(str(index), "[big]", "[bigger]", allow_multiple=True)]), Turn([Text("ok")])],
                   home, work)
    reason = blocked(r)
    assert "grow from 25,443 to 25,740 bytes (hard cap 25,000: 740 over)" in reason
    assert index.read_bytes() == (long_line * 99).encode()


def test_relative_path_corrected_to_the_index_is_denied(gemini_cli: Path, home: Path, work: Path) -> None:
    """`replace MEMORY.md` when only notes/MEMORY.md exists: Gemini corrects the path to it.
    First without engramory, to show the correction is real; then guarded."""
    index = work / "notes" / "MEMORY.md"
    index.parent.mkdir()
    index.write_bytes(entries(200))
    last = entries(1, 199).decode()
    script = [Turn([replace_call("MEMORY.md", last, last + "- [new](new.md) one more\n")]), Turn([Text("ok")])]
    r = run_gemini(script, home, work)
    assert "notes/MEMORY.md" in not_blocked(r)
    assert index.read_bytes().count(b"\n") == 201  # the unguarded host wrote the index it found

    index.write_bytes(entries(200))
    install(home, work)
    r = run_gemini(script, home, work)
    reason = blocked(r)
    assert "%s would grow from 200 to 201 lines (hard cap 200: 1 over)" % index.resolve() in reason
    assert index.read_bytes() == entries(200)


def test_private_memory_index_is_guarded_by_default(gemini_cli: Path, home: Path, work: Path) -> None:
    install(home, work)
    index = private_index(home, work)
    index.parent.mkdir(parents=True)
    index.write_bytes(entries(200))
    r = run_gemini([Turn([Call("write_file", {"file_path": str(index), "content": entries(260).decode()})]),
                    Turn([Text("ok")])], home, work)
    assert "would grow from 200 to 260 lines (hard cap 200: 60 over)" in blocked(r)
    assert index.read_bytes() == entries(200)
    # Gemini loaded the index into the system instruction: it is the index this session uses.
    assert "note 199" in json.dumps(r.turns()[0].body.get("systemInstruction"))


def test_symlinked_private_index_guarded_through_its_target(gemini_cli: Path, home: Path, work: Path) -> None:
    """The private index kept as a link to a file of another name (dotfiles, docs/): Gemini
    loads the target through the link, so a write to the target by its own name is guarded."""
    install(home, work)
    target = work / "docs" / "agent-memory.md"
    target.parent.mkdir()
    target.write_bytes(entries(200))
    link = private_index(home, work)
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    r = run_gemini([Turn([Call("write_file", {"file_path": "docs/agent-memory.md", "content": entries(230).decode()})]),
                    Turn([Text("ok")])], home, work)
    assert "%s would grow from 200 to 230 lines (hard cap 200: 30 over)" % link in blocked(r)
    assert target.read_bytes() == entries(200)
    assert "note 199" in json.dumps(r.turns()[0].body.get("systemInstruction"))  # loaded through the link


@pytest.mark.parametrize("cmd", ["date >> MEMORY.md", "echo x | tee -a MEMORY.md"])
def test_shell_append_to_an_index_at_its_cap_is_denied(gemini_cli: Path, home: Path, work: Path, cmd: str) -> None:
    """An append whose bytes only the shell knows (engramory.shellwrite predicts neither): the
    at-cap rule. The appends it predicts get the core's deny (test_gemini_shellwrite.py)."""
    install(home, work)
    index = work / "MEMORY.md"
    index.write_bytes(entries(200))
    r = run_gemini([Turn([Call("run_shell_command", {"command": cmd, "description": "add"})]), Turn([Text("ok")])],
                   home, work)
    reason = blocked(r)
    assert reason.startswith("Tool execution blocked: engramory blocked this run_shell_command: it appends to the "
                             "memory index %s, which is already at its hard cap (200 lines / " % index), reason
    assert index.read_bytes() == entries(200)


def test_loose_matches_on_a_full_index_are_denied(gemini_cli: Path, home: Path, work: Path) -> None:
    """Gemini applies a replace whose old_string matches only after trimming each line, or
    only fuzzily (one typo). Shown first without engramory; then both are denied on a full
    index: the line-trimmed match by its exact prediction, the fuzzy one by its bound."""
    index = work / "MEMORY.md"
    special = "- [launch](launch.md) the product launch moves to March, say the leads\n"
    full = entries(199) + special.encode()
    script = [
        Turn([replace_call(str(index), "   " + special.strip() + "  ", special.strip() + "\n- [a](a.md) added")]),
        Turn([replace_call(str(index), special.replace("launch moves", "lanch moves"), special + "- [b](b.md) added\n")]),
        Turn([Text("ok")]),
    ]
    index.write_bytes(full)
    r = run_gemini(script, home, work)
    assert "Applied fuzzy match" in not_blocked(r, 1)
    not_blocked(r, 0)
    # the unguarded host applied both (the fuzzy one adds a blank line: new_string ends in a
    # line break and the matched line had one, so Gemini writes two)
    assert index.read_bytes().count(b"\n") == 203

    index.write_bytes(full)
    install(home, work)
    r = run_gemini(script, home, work)
    assert "would grow from 200 to 201 lines (hard cap 200: 1 over)" in blocked(r, 0)
    fuzzy = blocked(r, 1)
    assert "would, at most, grow from 200 to 202 lines" in fuzzy and "fuzzy match" in fuzzy
    assert index.read_bytes() == full


# -- shrinking is always allowed ----------------------------------------------------------


def test_shrinking_edits_allowed_on_an_over_cap_index(gemini_cli: Path, home: Path, work: Path) -> None:
    install(home, work)
    index = work / "MEMORY.md"
    index.write_bytes(entries(230))
    drop = entries(10, 220).decode()
    r = run_gemini(
        [
            Turn([replace_call(str(index), drop, "")]),
            Turn([Call("write_file", {"file_path": str(index), "content": entries(205).decode()})]),
            Turn([Text("ok")]),
        ],
        home, work,
    )
    not_blocked(r, 0)
    not_blocked(r, 1)
    assert index.read_bytes() == entries(205)


def test_edits_under_the_cap_allowed(gemini_cli: Path, home: Path, work: Path) -> None:
    install(home, work)
    index = work / "MEMORY.md"
    index.write_bytes(entries(10))
    r = run_gemini([Turn([replace_call(str(index), entries(1, 9).decode(), entries(2, 9).decode())]),
                    Turn([Text("ok")])], home, work)
    not_blocked(r)
    assert index.read_bytes() == entries(11)


# -- AfterTool and SessionStart notices reach the model -------------------------------------


def test_after_tool_notice_after_a_shell_write(gemini_cli: Path, home: Path, work: Path) -> None:
    install(home, work)
    index = work / "MEMORY.md"
    index.write_bytes(entries(195))
    cmd = "for i in 1 2 3 4 5 6 7 8 9 10; do echo \"- [s$i](s$i.md) from the shell\" >> MEMORY.md; done"
    r = run_gemini([Turn([Call("run_shell_command", {"command": cmd, "description": "add"})]), Turn([Text("ok")])],
                   home, work)
    output = not_blocked(r)
    assert index.read_bytes().count(b"\n") == 205
    assert "<hook_context>engramory: after this run_shell_command call, the memory index %s is over its hard cap: " \
           "205 lines" % index in output


def test_after_tool_warn_nudge_after_a_replace(gemini_cli: Path, home: Path, work: Path) -> None:
    install(home, work)
    index = work / "MEMORY.md"
    index.write_bytes(entries(150))
    r = run_gemini([Turn([replace_call(str(index), entries(1, 149).decode(), entries(3, 149).decode())]),
                    Turn([Text("ok")])], home, work)
    output = not_blocked(r)
    assert "<hook_context>engramory: after this replace call, the memory index %s is past its warn cap: 152 lines" % index \
        in output


def test_session_start_notice_reaches_the_first_request(gemini_cli: Path, home: Path, work: Path) -> None:
    install(home, work)
    index = private_index(home, work)
    index.parent.mkdir(parents=True)
    index.write_bytes(entries(240))
    r = run_gemini([Turn([Text("ok")])], home, work)
    first = r.turns()[0]
    assert "<hook_context>engramory: the memory index %s is over its hard cap: 240 lines" % index in first.text()
    assert "edits that grow it are refused until it fits" in first.text()


def test_after_tool_catches_what_geminis_edit_fixer_wrote(gemini_cli: Path, home: Path, work: Path) -> None:
    """With tools.disableLLMCorrection false, a replace that matches nothing is re-written by a
    model AFTER the BeforeTool hook ran (shared reference B5). The guard judged the call as
    it saw it; what the fixer really wrote is reported by AfterTool, with numbers."""
    install(home, work)
    data = _settings(home)
    data["tools"] = {"disableLLMCorrection": False}
    write_json(home / ".gemini" / "settings.json", data)
    index = work / "MEMORY.md"
    index.write_bytes(entries(190))
    last = entries(1, 189).decode()
    fixed = {"search": last, "replace": last + entries(20, 900).decode(), "explanation": "fixed",
             "noChangesRequired": False}
    r = run_gemini([Turn([replace_call(str(index), "- [note 189](note-189.md) one fact, kept shrt\n", "- one\n")]),
                    Turn([Text("ok")])], home, work, side={"search": fixed})
    output = not_blocked(r)
    assert index.read_bytes().count(b"\n") == 210  # the fixer's 20 lines, which the hook never saw
    assert "after this replace call, the memory index %s is over its hard cap: 210 lines" % index in output
    check = engramory(home, work, "install", "--host", "gemini", "--check")
    assert "tools.disableLLMCorrection is false" in check.stdout


# -- install then uninstall gives Gemini's config back, byte for byte -------------------------


def _odd_settings() -> bytes:
    data = base_settings()
    data["hooks"] = {"BeforeTool": [{"matcher": "read_file", "hooks": [{"type": "command", "name": "mine",
                                                                        "command": "true", "timeout": 500}]}]}
    data["ui"] = {"theme": "Default"}
    return (json.dumps(data, indent=4) + "\n").encode()


@pytest.mark.parametrize("scope", ["user", "project"])
def test_install_then_uninstall_restores_gemini_config(gemini_cli: Path, home: Path, work: Path, scope: str) -> None:
    user_settings = home / ".gemini" / "settings.json"
    user_settings.write_bytes(_odd_settings())
    project_settings = work / ".gemini" / "settings.json"
    if scope == "project":
        project_settings.parent.mkdir()
        project_settings.write_bytes(b'{\n\t"ui": {"hideBanner": true}\n}')
    watched = [user_settings, project_settings, home / ".gemini" / "trusted_hooks.json"]
    before = {p: p.read_bytes() if p.exists() else None for p in watched}
    install(home, work, scope)
    check = engramory(home, work, "install", "--host", "gemini", "--scope", scope, "--check")
    assert check.returncode == 0, check.stdout
    index = work / "MEMORY.md"
    index.write_bytes(entries(200))
    r = run_gemini([Turn([replace_call(str(index), "note 199", "note 199\n- [y](y.md) more")]), Turn([Text("ok")])],
                   home, work)
    assert "would grow from 200 to 201 lines" in blocked(r)  # the wiring ran in this scope
    if scope == "project":  # Gemini recorded the project hooks it ran; uninstall takes that back too
        assert "engramory-guard:" in (home / ".gemini" / "trusted_hooks.json").read_text(encoding="utf-8")
    done = engramory(home, work, "uninstall", "--host", "gemini", "--scope", scope)
    assert done.returncode == 0, done.stdout + done.stderr
    after = {p: p.read_bytes() if p.exists() else None for p in watched}
    assert after == before
    assert not (Path(user_settings.parent if scope == "user" else project_settings.parent) / "engramory").exists()


# -- fail-mode traps: the host stays usable, and --check says what is wrong ---------------------


def _usable(home: Path, work: Path) -> Result:
    """A session that writes an ordinary file and grows the index past its cap: neither may be
    blocked (a broken guard fails open, never closed)."""
    index = work / "MEMORY.md"
    index.write_bytes(entries(200))
    r = run_gemini(
        [
            Turn([Call("write_file", {"file_path": str(work / "a.txt"), "content": "hello\n"}),
                  Call("write_file", {"file_path": str(index), "content": entries(201).decode()})]),
            Turn([Text("ok")]),
        ],
        home, work,
    )
    not_blocked(r, 0, 0)
    not_blocked(r, 0, 1)
    assert (work / "a.txt").read_bytes() == b"hello\n"
    assert index.read_bytes() == entries(201)
    return r


def _settings(home: Path) -> Dict[str, Any]:
    data: Dict[str, Any] = json.loads((home / ".gemini" / "settings.json").read_text(encoding="utf-8"))
    return data


def _handlers(data: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [h for groups in data["hooks"].values() for g in groups for h in g["hooks"] if "engramory" in h.get("name", "")]


def _broken(home: Path, work: Path, change_settings: Optional[Callable[[Dict[str, Any]], None]] = None) -> Tuple[Result, str]:
    """Install, then break it (`change_settings` edits the user settings as data; or the
    caller has broken it before): a session stays usable (see _usable) and --check fails. The
    session's result, and what --check said."""
    if change_settings is not None:
        data = _settings(home)
        change_settings(data)
        write_json(home / ".gemini" / "settings.json", data)
    r = _usable(home, work)
    check = engramory(home, work, "install", "--host", "gemini", "--check")
    assert check.returncode == 1, check.stdout + check.stderr
    return r, check.stdout


def test_trap_deleted_bundle(gemini_cli: Path, home: Path, work: Path) -> None:
    install(home, work)
    shutil.rmtree(home / ".gemini" / "engramory")
    _, said = _broken(home, work)
    assert "engramory_hook.py does not exist (the bundle was moved or deleted)" in said


def test_trap_broken_interpreter_path(gemini_cli: Path, home: Path, work: Path) -> None:
    def change(data: Dict[str, Any]) -> None:
        for h in _handlers(data):
            h["command"] = h["command"].replace(sys.executable, "/nonexistent/bin/python3")

    install(home, work)
    _, said = _broken(home, work, change)
    assert "the interpreter /nonexistent/bin/python3 does not exist or cannot run" in said


def test_trap_timeout(gemini_cli: Path, home: Path, work: Path) -> None:
    def change(data: Dict[str, Any]) -> None:
        for h in _handlers(data):
            h["timeout"] = 1  # milliseconds: e.g. seconds written where Gemini reads milliseconds

    install(home, work)
    r, said = _broken(home, work, change)
    assert "timed out" in r.stderr.lower()
    assert "past its timeout of 1 ms (Gemini counts milliseconds)" in said


def test_check_reports_gemini_switching_hooks_off(gemini_cli: Path, home: Path, work: Path) -> None:
    install(home, work)
    data = _settings(home)
    data["hooksConfig"] = {"disabled": ["engramory-guard"]}
    write_json(home / ".gemini" / "settings.json", data)
    (work / ".gemini").mkdir()
    write_json(work / ".gemini" / "settings.json", {"hooksConfig": {"enabled": False}})
    check = engramory(home, work, "install", "--host", "gemini", "--check")
    assert check.returncode == 1
    assert "hooksConfig.enabled is false in %s" % (work / ".gemini" / "settings.json") in check.stdout
    assert "lists 'engramory-guard': Gemini skips that hook" in check.stdout
    # and it is true: with hooks switched off, the real CLI lets the growth through
    index = work / "MEMORY.md"
    index.write_bytes(entries(200))
    r = run_gemini([Turn([Call("write_file", {"file_path": str(index), "content": entries(201).decode()})]),
                    Turn([Text("ok")])], home, work)
    not_blocked(r)

"""The Codex hook dialect and edit model, in process (the real CLI is driven in tests/codex)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engramory import patches
from engramory.hosts import codex

ROOT = Path(__file__).resolve().parents[3]


def _index(n: int) -> bytes:
    return "".join("- [n%d](n%d.md) note\n" % (i, i) for i in range(n)).encode()


def _payload(tool: str, command: str, cwd: Path) -> bytes:
    return json.dumps({
        "session_id": "s", "hook_event_name": "PreToolUse", "cwd": str(cwd), "tool_name": tool,
        "tool_input": {"command": command}, "tool_use_id": "call_1",
    }).encode()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"CODEX_HOME": str(tmp_path / "codex-home"), "HOME": str(tmp_path)}


def _grow(path: str) -> str:
    return "*** Begin Patch\n*** Update File: %s\n@@\n+- [x](x.md) one more\n*** End Patch\n" % path


def test_deny_is_exactly_the_shape_codex_honours(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "MEMORY.md").write_bytes(_index(200))
    out, err, code = codex.respond(_payload("apply_patch", _grow("MEMORY.md"), tmp_path), env)
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert list(doc) == ["hookSpecificOutput"]
    inner = doc["hookSpecificOutput"]
    assert sorted(inner) == ["hookEventName", "permissionDecision", "permissionDecisionReason"]
    assert inner["hookEventName"] == "PreToolUse" and inner["permissionDecision"] == "deny"
    assert "grow from 200 to 201 lines (hard cap 200: 1 over)" in inner["permissionDecisionReason"]
    assert "\n" not in out  # one JSON document and nothing else (json.loads refuses extra data)


def test_empty_reason_is_never_rendered() -> None:
    assert json.loads(codex.render_deny("  "))["hookSpecificOutput"]["permissionDecisionReason"].strip()


@pytest.mark.parametrize("command", [
    "apply_patch <<'EOF'\n%sEOF\n",
    "applypatch <<EOF\n%sEOF",
    'apply_patch <<"PATCH"\n%sPATCH\n',
    "apply_patch <<-'EOF'\n%s\tEOF\n",
    "echo start; apply_patch <<'EOF'\n%sEOF\n",
    "apply_patch '%s'",
    "bash -lc \"apply_patch <<'EOF'\n%sEOF\"",
])
def test_shell_heredocs_are_read(tmp_path: Path, env: dict[str, str], command: str) -> None:
    (tmp_path / "MEMORY.md").write_bytes(_index(200))
    out, _, code = codex.respond(_payload("Bash", command % _grow("MEMORY.md"), tmp_path), env)
    assert code == 0
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "apply_patch (through the shell)" in out


@pytest.mark.parametrize("cd", ["cd mem &&", "cd 'mem' &&", 'cd "mem" &&', "true && cd mem &&"])
def test_cd_prefix_moves_the_folder(tmp_path: Path, env: dict[str, str], cd: str) -> None:
    (tmp_path / "mem").mkdir()
    (tmp_path / "mem" / "MEMORY.md").write_bytes(_index(200))
    command = "%s apply_patch <<'EOF'\n%sEOF\n" % (cd, _grow("MEMORY.md"))
    out, _, _ = codex.respond(_payload("Bash", command, tmp_path), env)
    assert str(tmp_path / "mem" / "MEMORY.md") in json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]


@pytest.mark.parametrize("command", [
    "printf '%s\\n' '- [x](x.md) one more' >> MEMORY.md",
    "echo '- [x](x.md) one more' >> MEMORY.md",
    "echo -n '- [x](x.md) one more' >>MEMORY.md",
    "cd mem && printf -- '- [x](x.md)\\n' >> MEMORY.md",
])
def test_printf_and_echo_appends_past_the_cap_are_denied(tmp_path: Path, env: dict[str, str], command: str) -> None:
    (tmp_path / "mem").mkdir()
    for index in (tmp_path / "MEMORY.md", tmp_path / "mem" / "MEMORY.md"):
        index.write_bytes(_index(200))
    out, _, code = codex.respond(_payload("Bash", command, tmp_path), env)
    assert code == 0
    reason = json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "write through the shell (heredoc, printf or echo)" in reason
    assert "grow from 200 to 201 lines (hard cap 200: 1 over)" in reason


@pytest.mark.parametrize("command", [
    "printf '%s\\n' '- [x](x.md)' >> notes.md",  # no index
    "printf '%d\\n' 1 >> MEMORY.md",  # not predicted: judged after the fact, as before
    "echo \"$X\" >> MEMORY.md",
    "echo hi > /dev/null",
    "printf '- [x](x.md)\\n' | tee -a MEMORY.md",
])
def test_printf_and_echo_writes_not_judged_pass(tmp_path: Path, env: dict[str, str], command: str) -> None:
    (tmp_path / "MEMORY.md").write_bytes(_index(200))
    assert codex.respond(_payload("Bash", command, tmp_path), env) == ("", "", 0)


def test_ordinary_shell_commands_are_not_read(tmp_path: Path, env: dict[str, str]) -> None:
    assert codex.respond(_payload("Bash", "ls -la && cat MEMORY.md", tmp_path), env) == ("", "", 0)


def test_shrinking_passes_and_warn_zone_nudges(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "MEMORY.md").write_bytes(_index(210))
    patch = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n-- [n0](n0.md) note\n*** End Patch\n"
    out, _, code = codex.respond(_payload("apply_patch", patch, tmp_path), env)
    ctx = json.loads(out)["hookSpecificOutput"]
    assert code == 0 and "permissionDecision" not in ctx
    assert "still over its hard cap" in ctx["additionalContext"]


def test_add_over_and_move_onto_an_index_are_judged_as_overwrites(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "MEMORY.md").write_bytes(_index(10))
    (tmp_path / "big.md").write_bytes(_index(250))
    add = "*** Begin Patch\n*** Add File: MEMORY.md\n%s*** End Patch\n" % "".join("+l%d\n" % i for i in range(201))
    move = "*** Begin Patch\n*** Update File: big.md\n*** Move to: MEMORY.md\n@@\n+tail\n*** End Patch\n"
    for patch in (add, move):
        out, _, _ = codex.respond(_payload("apply_patch", patch, tmp_path), env)
        assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny", patch


def test_a_patch_codex_refuses_is_left_to_codex(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "MEMORY.md").write_bytes(_index(200))
    other = "*** Update File: gone.md\n@@\n-x\n+y\n"
    patch = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n+more\n%s*** End Patch\n" % other
    out, err, code = codex.respond(_payload("apply_patch", patch, tmp_path), env)
    assert out == "" and code == 0 and "Codex will refuse this patch" in err


def test_codex_memories_are_exempt_unless_asked(tmp_path: Path, env: dict[str, str]) -> None:
    mem = Path(env["CODEX_HOME"]) / "memories"
    mem.mkdir(parents=True)
    (mem / "MEMORY.md").write_bytes(_index(300))
    payload = _payload("apply_patch", _grow(str(mem / "MEMORY.md")), mem)
    assert codex.respond(payload, env)[0] == ""
    out, _, _ = codex.respond(payload, dict(env, ENGRAMORY_CODEX_GUARD_MEMORIES="1"))
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1]", b"\xff\xfe", b'{"tool_name": 5}',
                                 b'{"tool_name": "apply_patch", "tool_input": {"command": "*** Begin Patch\\n"}}'])
def test_bad_payloads_say_nothing_and_exit_0(raw: bytes, env: dict[str, str]) -> None:
    out, _, code = codex.respond(raw, env)
    assert out == "" and code == 0


def test_entry_script_fails_open_and_never_exits_2(tmp_path: Path) -> None:
    script = ROOT / "hooks" / "engramory_codex_guard.py"
    for data in (b"garbage", b""):
        proc = subprocess.run([sys.executable, "-I", "-S", str(script)], input=data, capture_output=True, timeout=30)
        assert proc.returncode == 0 and proc.stdout == b""
    copy = tmp_path / "hooks"
    copy.mkdir()
    (copy / script.name).write_bytes(script.read_bytes())  # a copy without its bundle
    proc = subprocess.run([sys.executable, "-I", "-S", str(copy / script.name)], input=b"{}", capture_output=True, timeout=30)
    assert proc.returncode == 0 and proc.stdout == b"" and b"cannot load the bundle" in proc.stderr


def test_index_named_in_agents_md(tmp_path: Path, env: dict[str, str]) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "sub").mkdir()
    (project / "AGENTS.md").write_text("Memory lives in notes/. Its index is `notes/MEMORY.md`.\n<root>/MEMORY.md\n")
    home = Path(env["CODEX_HOME"])
    home.mkdir()
    (home / "AGENTS.md").write_text("Global: ~/mem/MEMORY.md and %s/memories/MEMORY.md\n" % home)
    found = codex.index_paths(str(project / "sub"), env)
    assert str(project / "notes" / "MEMORY.md") in found
    assert str(Path(env["HOME"]) / "mem" / "MEMORY.md") in found or any(p.endswith("/mem/MEMORY.md") for p in found)
    assert not any("/memories/" in p for p in found)
    assert not any("<" in p for p in found)


# -- the edit model on its own -------------------------------------------------------------------


def _update(before: bytes, body: str) -> bytes:
    ops = codex.parse_patch("*** Begin Patch\n*** Update File: f\n%s*** End Patch\n" % body)
    return patches.update(before, ops[0].hunks, patches.CODEX)


@pytest.mark.parametrize(("before", "body", "after"), [
    (b"a\r\nb\r\n", "@@\n a\n-b\n+c\n", b"a\r\nc\r\n"),  # new lines take the first line's ending
    (b"a\nb\r\nc\r\n", "@@\n+d\n", b"a\nb\r\nc\r\nd\n"),  # the first line decides, insertion at EOF
    (b"a\nb", "@@\n-a\n+A\n", b"A\nb\n"),  # a patched file always ends with a newline
    (b"x\ny\nx\n", "@@\n-x\n+z\n", b"z\ny\nx\n"),  # first match wins
    (b"x\ny\nx\n", "@@\n-x\n+z\n*** End of File\n", b"x\ny\nz\n"),
    ("it\u2019s \u201chi\u201d\n".encode(), "@@\n-it's \"hi\"\n+it's \"bye\"\n", b"it's \"bye\"\n"),
    (b"    a  \n", "@@\n-a\n+b\n", b"b\n"),
    ("\ufeffa\nb\n".encode(), "@@\n-b\n+c\n", "\ufeffa\nc\n".encode()),  # the BOM stays
    (b"a\r\nb\r\n", "@@\r\n a\r\n+c\r\n", b"a\r\nc\r\nb\r\n"),  # \r stripped from patch lines
    (b"a\nb\n", "@@\n-a\n-b\n", b""),
    (b"a\rb\nc\n", "@@\n-c\n+d\n", b"a\rb\nd\r"),  # a lone CR ends a line, and is the first ending
])
def test_update_bytes(before: bytes, body: str, after: bytes) -> None:
    assert _update(before, body) == after


def test_refusals() -> None:
    with pytest.raises(patches.PatchError):
        _update("\ufeffa\n".encode(), "@@\n-a\n+b\n")  # context without the BOM does not match
    with pytest.raises(patches.PatchError):
        _update(b"\xff\n", "@@\n+b\n")  # not UTF-8
    with pytest.raises(patches.PatchError):
        codex.parse_patch("*** Begin Patch\n*** Update File: f\n@@\n+x\n")  # no end line


# -- one way of cutting a shell command (PreToolUse's `cd`, PostToolUse's words) ----------------

_CD_SEPS = ("&&", ";", "||", "|", "(")


def _old_last_piece(text: str) -> str:
    """What _cd_folder took as the last command before `&&` until shell_cut (kept to compare)."""
    last = text.rsplit("&&", 1)[-1]
    for sep in _CD_SEPS[1:]:
        last = last.rsplit(sep, 1)[-1]
    return last


def _old_words(command: str) -> list[str]:
    """How _named_paths cut a command into words until shell_cut."""
    for sep in codex._SHELL_SPLIT:
        command = command.replace(sep, " ")
    return command.split(" ")


@pytest.mark.parametrize("text", [
    "a&&&b", "a|&b", "x && cd 'my dir' ", "(cd sub", "a || cd x; cd y | cd z", "", "&&", "cd x&&&&",
])
def test_shell_cut_cuts_as_the_cd_reader_and_the_word_reader_did(text: str) -> None:
    assert codex.shell_cut(text, _CD_SEPS)[-1] == _old_last_piece(text)
    assert codex.shell_cut(text, codex._SHELL_SPLIT) == _old_words(text)


def test_shell_cut_matches_the_two_readers_it_replaced_on_any_text() -> None:
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=400, deadline=None)
    @hypothesis.given(st.text(alphabet="ab &|;()'\"`=<>\t\r\n/", max_size=30))
    def check(text: str) -> None:
        assert codex.shell_cut(text, _CD_SEPS)[-1] == _old_last_piece(text)
        assert codex.shell_cut(text, codex._SHELL_SPLIT) == _old_words(text)

    check()

"""The Gemini host's dialect, paths, edit model and installer, without the CLI (fast; these
run everywhere). The same facts are checked on the real CLI in test_gemini_real.py and
test_prediction.py."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

from engramory.hosts import gemini
from engramory.hosts.gemini import install as install_gemini
from engramory.hosts.gemini import model as ge

ROOT = Path(__file__).resolve().parents[3]
HOOK = ROOT / "hooks" / "engramory_gemini_hook.py"


def entries(n: int) -> bytes:
    return "".join("- [n%d](n%d.md) fact\n" % (i, i) for i in range(n)).encode()


def payload(tool: str, cwd: Path, **tool_input: Any) -> bytes:
    return json.dumps({"session_id": "s", "cwd": str(cwd), "hook_event_name": "BeforeTool", "tool_name": tool,
                       "tool_input": tool_input}).encode()


@pytest.fixture
def env(tmp_path: Path) -> Dict[str, str]:
    return {"GEMINI_CLI_HOME": str(tmp_path / "home"), "HOME": str(tmp_path / "home")}


# -- the dialect ----------------------------------------------------------------------------


def test_deny_is_one_json_object_with_decision_and_reason_only(tmp_path: Path, env: Dict[str, str]) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_bytes(entries(200))
    out, err, code = gemini.respond(payload("write_file", tmp_path, file_path=str(index),
                                            content=entries(201).decode()), env)
    answer = json.loads(out)
    assert set(answer) == {"decision", "reason"} and answer["decision"] == "deny"
    assert "grow from 200 to 201 lines (hard cap 200: 1 over)" in answer["reason"]
    assert "fall outside" not in answer["reason"] and "keep every session's context small" in answer["reason"]
    assert "\n" not in out and err == "" and code == 0


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1]", b'{"hook_event_name": "BeforeTool"}', b"\xff\xfe"])
def test_unreadable_payloads_say_nothing(raw: bytes, env: Dict[str, str]) -> None:
    assert gemini.respond(raw, env) == ("", "", 0)


def test_other_files_and_shrinks_say_nothing(tmp_path: Path, env: Dict[str, str]) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_bytes(entries(230))
    assert gemini.respond(payload("write_file", tmp_path, file_path=str(tmp_path / "a.md"), content="x" * 90_000), env)[0] == ""
    assert gemini.respond(payload("write_file", tmp_path, file_path=str(index), content=entries(210).decode()), env)[0] == ""
    assert gemini.respond(payload("read_file", tmp_path, file_path=str(index)), env)[0] == ""


def test_relative_replace_path_is_judged_where_gemini_corrects_it(tmp_path: Path, env: Dict[str, str]) -> None:
    index = tmp_path / "notes" / "MEMORY.md"
    index.parent.mkdir()
    index.write_bytes(entries(200))
    raw = payload("replace", tmp_path, file_path="MEMORY.md", instruction="x", old_string="- [n199](n199.md) fact\n",
                  new_string="- [n199](n199.md) fact\n- [m](m.md) more\n")
    reason = json.loads(gemini.respond(raw, env)[0])["reason"]
    assert str(index) in reason
    # write_file never corrects a path: a relative write lands at the literal place (a new,
    # small index), not on notes/MEMORY.md.
    raw = payload("write_file", tmp_path, file_path="MEMORY.md", content=entries(199).decode())
    assert gemini.respond(raw, env)[0] == ""


def test_landing_paths_follow_geminis_spelling_rules(tmp_path: Path, env: Dict[str, str]) -> None:
    name, paths = gemini.names(env)
    (tmp_path / "notes").mkdir()
    land = gemini.landing_paths("write_file", "@notes/MEMORY.md", str(tmp_path), name, paths)
    assert str(tmp_path / "notes" / "MEMORY.md") in land
    land = gemini.landing_paths("write_file", "notes/MEMORY%2Emd", str(tmp_path), name, paths)
    assert str(tmp_path / "notes" / "MEMORY.md") in land
    assert gemini.landing_paths("write_file", "/a/%E0%A4%A", str(tmp_path), name, paths) == ["/a/%E0%A4%A"]


def test_shell_append_to_an_index_at_its_cap(tmp_path: Path, env: Dict[str, str]) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_bytes(entries(199))
    raw = payload("run_shell_command", tmp_path, command="echo x >> MEMORY.md")
    assert gemini.respond(raw, env)[0] == ""
    index.write_bytes(entries(200))
    # echo's bytes are predicted (engramory.shellwrite): the core's deny, with its numbers
    assert "would grow from 200 to 201 lines" in json.loads(gemini.respond(raw, env)[0])["reason"]
    raw = payload("run_shell_command", tmp_path, command="echo x | tee -a 'MEMORY.md'")
    assert "appends to the memory index" in json.loads(gemini.respond(raw, env)[0])["reason"]  # not predicted


def test_private_index_and_slug(tmp_path: Path, env: Dict[str, str]) -> None:
    work = tmp_path / "My Project!"
    base = Path(env["GEMINI_CLI_HOME"]) / ".gemini"
    assert gemini.index_paths(str(work), env) == [str(base / "tmp" / "my-project" / "memory" / "MEMORY.md")]
    (base / "tmp" / "other").mkdir(parents=True)
    (base / "tmp" / "other" / ".project_root").write_text(str(work))
    assert gemini.project_slug(str(work), env) == "other"
    (base / "projects.json").write_text(json.dumps({"projects": {str(work): "listed-1"}}))
    assert gemini.project_slug(str(work), env) == "listed-1"
    assert gemini.slugify("--A__b--") == "a-b" and gemini.slugify("!!!") == "project"


def test_session_start_and_after_tool_notices(tmp_path: Path, env: Dict[str, str]) -> None:
    index = Path(gemini.private_index(str(tmp_path), env))
    index.parent.mkdir(parents=True)
    index.write_bytes(entries(220))
    env = dict(env, TMPDIR=str(tmp_path / "state"))
    start = {"session_id": "s1", "cwd": str(tmp_path), "hook_event_name": "SessionStart", "source": "startup"}
    out = json.loads(gemini.respond(json.dumps(start).encode(), env)[0])
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "220 lines" in out["hookSpecificOutput"]["additionalContext"]
    after = dict(start, hook_event_name="AfterTool", tool_name="run_shell_command", tool_input={"command": "true"})
    assert gemini.respond(json.dumps(after).encode(), env)[0] == ""  # nothing changed since the start
    index.write_bytes(entries(230))
    out = json.loads(gemini.respond(json.dumps(after).encode(), env)[0])
    assert "after this run_shell_command call" in out["hookSpecificOutput"]["additionalContext"]


def test_entry_script_as_installed_runs_isolated_and_prints_one_line(tmp_path: Path, env: Dict[str, str]) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_bytes(entries(200))
    raw = payload("write_file", tmp_path, file_path=str(index), content=entries(202).decode())
    proc = subprocess.run([sys.executable, "-I", "-S", str(HOOK)], input=raw, capture_output=True,
                          env=dict(env, PATH=os.environ.get("PATH", "")), timeout=30)
    assert proc.returncode == 0 and proc.stdout.count(b"\n") == 1
    assert json.loads(proc.stdout)["decision"] == "deny"


# -- the edit model (measured facts, shared reference B5) ---------------------------------------


@pytest.mark.parametrize("before, old, new, multi, after", [
    (b"a\r\nb\r\n", "b", "b\nc", False, b"a\r\nb\r\nc\r\n"),  # CRLF normalized, written back
    (b"a\nb\n", "a\r\nb", "x", False, b"x\n"),  # a CRLF old_string matches an LF file
    (b"a\nb", "b", "b\nc\n", False, b"a\nb\nc"),  # an added final newline is dropped
    (b"a\nb\n", "b\n", "B", False, b"a\nB\n"),  # a dropped final newline is restored
    (b"x\nx\n", "x", "y", True, b"y\ny\n"),  # allow_multiple replaces all
    (b"\xef\xbb\xbfa\n", "a\n", "b\n", False, b"\xef\xbb\xbfb\n"),  # the BOM is kept
    (b"    a = 1\n    b = 2\n", "a = 1\nb = 2", "x = 1\ny = 2", False, b"    x = 1\n    y = 2\n"),  # flexible
    (b"f(a) = 1\n", "f ( a ) =1", "g", False, b"g\n"),  # regex
])
def test_replace_predictions(before: bytes, old: str, new: str, multi: bool, after: bytes) -> None:
    assert ge.replace(before, old, new, multi)[0] == after


@pytest.mark.parametrize("before, old, new", [
    (b"x\nx\n", "x", "y"),  # two matches without allow_multiple
    (b"a\n", "a", "a"),  # nothing to change
    (b"a\n", "", "b"),  # empty old_string on an existing file
    (None, "a", "b"),  # no such file
])
def test_replace_refusals(before: bytes | None, old: str, new: str) -> None:
    assert ge.replace(before, old, new, False)[0] is None


def test_replace_without_a_match_is_bounded_not_silent() -> None:
    before = "it\u2019s a long line of memory\n".encode()
    outcome, strategy = ge.replace(before, "it's a long line of memory", "one\ntwo\nthree", False)
    assert strategy == "bound" and isinstance(outcome, ge.Bound)
    assert outcome.lines >= 3 and outcome.nbytes >= len(b"one\ntwo\nthree\n")


def test_write_file_predictions() -> None:
    assert ge.write_file(b"a\r\nb\n", "x\ny") == b"x\r\ny"  # one CRLF in the old file: all CRLF
    assert ge.write_file(b"\xef\xbb\xbfold\n", "new\n") == b"new\n"  # the old BOM is dropped
    assert ge.write_file(None, "a\r\nb\n") == b"a\r\nb\n"
    assert ge.js_lines("a\rb\nc") == ["b\n", "c"]  # JavaScript's `.` stops at a lone CR


# -- the installer --------------------------------------------------------------------------


def _args(**kw: Any) -> argparse.Namespace:
    return argparse.Namespace(**dict({"scope": "user", "dry_run": False, "link": False, "check": False}, **kw))


def test_install_uninstall_keeps_a_jsonc_settings_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = b'{\n  // mine\n  "model": {"name": "gemini-2.5-pro"},\n  "hooks": {"AfterTool": []}\n}\n'
    settings.write_bytes(original)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    assert install_gemini.install(_args()) == 0
    data = settings.read_text()
    assert "// mine" in data and data.count("engramory_hook.py") == 6  # three commands, two paths each
    assert install_gemini.install(_args()) == 0  # a second install changes nothing
    assert "already installed" in capsys.readouterr().out
    assert install_gemini.check(_args(check=True)) == 0
    assert install_gemini.uninstall(_args()) == 0
    assert settings.read_bytes() == original
    assert not (home / ".gemini" / "engramory").exists()


def test_command_fails_open_when_interpreter_or_script_is_missing(tmp_path: Path) -> None:
    for exe, script in (("/nonexistent/python3", str(HOOK)), (sys.executable, str(tmp_path / "gone.py"))):
        cmd = install_gemini.command(exe, script)
        proc = subprocess.run(["bash", "-c", cmd], input=b"{}", capture_output=True, timeout=30)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
        assert install_gemini.command_paths(cmd) == (exe, script)


def test_unknown_scope_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert install_gemini.install(_args(scope="local")) == 64
    assert "--scope local is not a Gemini CLI scope" in capsys.readouterr().err


def test_an_index_too_large_to_read_is_judged_by_the_worst_case(tmp_path: Path, env: Dict[str, str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from engramory import guard, scope

    index = tmp_path / "MEMORY.md"
    index.write_bytes(entries(150))
    monkeypatch.setattr(guard, "READ_LIMIT", 1000)  # the index is now "too large to read"
    monkeypatch.setattr(scope, "READ_LIMIT", 1000)  # ... for read_regular too (scope holds it; guard re-exports)
    raw = payload("replace", tmp_path, file_path=str(index), instruction="x", old_string="- [n1](n1.md) fact",
                  new_string="- [n1](n1.md) fact\n- more")
    reason = json.loads(gemini.respond(raw, env)[0])["reason"]
    assert "could not be read" in reason
    raw = payload("write_file", tmp_path, file_path=str(index), content=entries(100).decode())
    assert gemini.respond(raw, env)[0] == ""  # judged by its own content: under the caps


def test_a_huge_bound_costs_no_memory() -> None:
    assert len(gemini._shape(10, 1 << 40)) <= gemini_edits_limit()


def gemini_edits_limit() -> int:
    from engramory import guard

    return guard.READ_LIMIT


def test_a_symlinked_private_index_is_guarded_by_either_name(tmp_path: Path, env: Dict[str, str]) -> None:
    target = tmp_path / "docs" / "agent-memory.md"
    target.parent.mkdir()
    target.write_bytes(entries(200))
    link = Path(gemini.private_index(str(tmp_path), env))
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    for path in (target, link, Path("docs/agent-memory.md")):
        raw = payload("write_file", tmp_path, file_path=str(path), content=entries(201).decode())
        reason = json.loads(gemini.respond(raw, env)[0])["reason"]
        assert "%s would grow from 200 to 201 lines" % link in reason


# -- an install written before the generic entry (issue 20) -----------------------------------

# What `install --host gemini` wrote before it wired hooks/engramory_hook.py: one command for
# every event, running the host's own script (kept byte for byte from that installer's output).
OLD_LAUNCHER = "import sys;p=sys.argv[1].replace(chr(92),'/');d,_,f=p.rpartition('/');sys.path.insert(0,d or '.');__import__(f[:-3])"
OLD_COMMAND = ('[ -x "{python}" ] && [ -f "{bundle}/hooks/engramory_gemini_hook.py" ] && "{python}" -I -S -c "%s" '
               '"{bundle}/hooks/engramory_gemini_hook.py"; exit 0' % OLD_LAUNCHER)


def _old_install(home: Path) -> Path:
    """Turn a fresh install under `home` into the one the earlier installer left: the old
    command in every entry, the bundle's hooks/ holding only the old script, the manifest
    listing it. Returns the settings file."""
    assert install_gemini.install(_args()) == 0
    settings = home / ".gemini" / "settings.json"
    bundle = home / ".gemini" / "engramory"
    old = OLD_COMMAND.format(python=sys.executable, bundle=bundle)
    data = json.loads(settings.read_text())
    for groups in data["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = old
    settings.write_text(json.dumps(data, indent=2) + "\n")
    hooks_dir = bundle / "hooks"
    for p in sorted(hooks_dir.rglob("*"), reverse=True):
        p.rmdir() if p.is_dir() else p.unlink()
    (hooks_dir / "engramory_gemini_hook.py").write_bytes((ROOT / "hooks" / "engramory_gemini_hook.py").read_bytes())
    manifest_path = bundle / ".engramory-install.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"] = [f for f in manifest["files"] if not f.startswith("hooks/")] + ["hooks/engramory_gemini_hook.py"]
    manifest_path.write_text(json.dumps(manifest))
    return settings


def _denies(command: str, tmp_path: Path, env: Dict[str, str]) -> bool:
    index = tmp_path / "MEMORY.md"
    index.write_bytes(entries(200))
    raw = payload("write_file", tmp_path, file_path=str(index), content=entries(202).decode())
    proc = subprocess.run(["bash", "-c", command], input=raw, capture_output=True,
                          env=dict(env, PATH=os.environ.get("PATH", "")), timeout=30)
    return proc.returncode == 0 and json.loads(proc.stdout or b"{}").get("decision") == "deny"


def test_an_old_install_still_denies_and_a_reinstall_moves_it_to_the_generic_entry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], env: Dict[str, str]) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    settings = _old_install(home)
    old = json.loads(settings.read_text())["hooks"]["BeforeTool"][0]["hooks"][0]["command"]
    assert _denies(old, tmp_path, env)
    capsys.readouterr()
    assert install_gemini.check(_args(check=True)) == 0  # healthy, and says a reinstall would move it
    out = capsys.readouterr().out
    assert out.count("wired by an earlier install") == 3 and "problem" not in out
    assert install_gemini.install(_args()) == 0
    text = settings.read_text()
    assert "engramory_gemini_hook" not in text and text.count('/hooks/engramory_hook.py\\" gemini; exit 0') == 3
    handlers = [h for groups in json.loads(text)["hooks"].values() for g in groups for h in g["hooks"]]
    assert len(handlers) == 3
    bundle = home / ".gemini" / "engramory"
    left = sorted(str(p.relative_to(bundle / "hooks")) for p in (bundle / "hooks").rglob("*"))
    assert "engramory_hook.py" in left and [p for p in left if "gemini" in p] == []
    manifest = json.loads((bundle / ".engramory-install.json").read_text())
    assert [f for f in manifest["files"] if f.startswith("hooks/")] == ["hooks/engramory_hook.py"]
    assert _denies(handlers[0]["command"], tmp_path, env)
    capsys.readouterr()
    assert install_gemini.check(_args(check=True)) == 0
    assert "earlier install" not in capsys.readouterr().out
    assert install_gemini.uninstall(_args()) == 0
    assert not settings.exists() and not bundle.exists()


def test_uninstall_takes_out_an_old_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    settings = _old_install(home)
    assert install_gemini.uninstall(_args()) == 0
    assert not settings.exists() and not (home / ".gemini" / "engramory").exists()

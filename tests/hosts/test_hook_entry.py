"""The generic hook entry, hooks/engramory_hook.py <host> [event]: it answers every host's
payloads exactly as that host's own entry script did (the comparison was made against the
scripts before they became shims, and now holds the shims' routing: host and event), fails
open for names and bundles it cannot use, and its table of hosts that need an answer when
broken is the registry's. Every shim is its rendering from tests/hookshims.py, byte for byte."""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engramory import hosts
from engramory.install.hookcommands import LAUNCHER
from tests import hookshims

ROOT = Path(__file__).resolve().parents[2]
GENERIC = ROOT / "hooks" / "engramory_hook.py"

# existing entry script -> (host, the event arguments its installer passes)
SCRIPTS = {
    "engramory_index_guard.py": ("claude", [""]),
    "engramory_cursor_guard.py": ("cursor", [""]),
    "engramory_hermes_shell_hook.py": ("hermes", [""]),
    "engramory_codex_guard.py": ("codex", ["PreToolUse"]),
    "engramory_gemini_hook.py": ("gemini", [""]),
    "engramory_qwen_hook.py": ("qwen", ["PreToolUse", "PostToolUse", "SessionStart"]),
    "engramory_droid_hook.py": ("droid", ["PreToolUse", "PostToolUse", "SessionStart"]),
    "engramory_copilot_hook.py": ("copilot", ["preToolUse", "postToolUse", "sessionStart"]),
    "engramory_opencode_hook.py": ("opencode", [""]),
    "engramory_kilo_hook.py": ("kilo", [""]),
    "engramory_cline_hook.py": ("cline", [""]),
    "engramory_openclaw_hook.py": ("openclaw", [""]),
}
# entry scripts of one event each, which take no argument: -> (host, the generic's event)
SINGLE = {
    "engramory_post_tool.py": ("claude", "PostToolUse"),
    "engramory_session_start.py": ("claude", "SessionStart"),
    "engramory_codex_post_tool.py": ("codex", "PostToolUse"),
    "engramory_codex_session_start.py": ("codex", "SessionStart"),
}


# hosts wired only through the generic entry (an ENTRIES table, no script of their own), read
# from the registry: -> their event argument (the first event their table names)
CONTRACT_HOSTS = {
    name: next(iter(importlib.import_module(hosts.REGISTRY[name]).ENTRIES))
    for name in hosts.names()
    if getattr(importlib.import_module(hosts.REGISTRY[name]), "ENTRIES", None)
    and name not in {host for _, host, _, _ in hookshims.SHIMS}
}


def _run(argv: list[str], stdin: bytes, cwd: Path, home: Path, tmp: Path | None = None) -> tuple[bytes, bytes, int]:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "TMPDIR": str(tmp or home)}
    proc = subprocess.run(argv, input=stdin, capture_output=True, cwd=cwd, env=env, timeout=60)
    return proc.stdout, proc.stderr, proc.returncode


def _payloads(project: Path) -> list[bytes]:
    index = project / "MEMORY.md"
    index.write_text("".join("- [n%d](n%d.md) — note %d\n" % (i, i, i) for i in range(199)))
    grow = "".join("- [m%d](m%d.md) — more %d\n" % (i, i, i) for i in range(40))
    claude_like = {
        "hook_event_name": "PreToolUse", "cwd": str(project), "session_id": "s",
        "tool_name": "Write", "tool_input": {"file_path": str(index), "content": index.read_text() + grow},
    }
    return [b"", b"{", b"\xff\xfe", json.dumps(claude_like).encode(), json.dumps({"cwd": str(project)}).encode()]


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_the_generic_entry_answers_as_the_host_script_does(script: str, tmp_path: Path) -> None:
    host, events = SCRIPTS[script]
    project = tmp_path / "p"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    seen_deny = False
    for event in events:
        for payload in _payloads(project):
            tail = [event] if event else []
            own = _run([sys.executable, "-I", "-S", str(ROOT / "hooks" / script), *tail], payload, project, home)
            generic = _run([sys.executable, "-I", "-S", str(GENERIC), host, *tail], payload, project, home)
            launched = _run([sys.executable, "-I", "-S", "-c", LAUNCHER, str(GENERIC), host, *tail], payload, project, home)
            assert generic == own, (script, event, payload[:40])
            assert launched == own, (script, event, payload[:40])
            seen_deny = seen_deny or own[2] == 2 or b"deny" in own[0].lower()
    if host == "claude":
        assert seen_deny  # the comparison covered a deny, not only silence


def _lines(n: int) -> str:
    return "".join("- [n%d](n%d.md) — note %d\n" % (i, i, i) for i in range(n))


@pytest.mark.parametrize("script", sorted(SINGLE))
def test_the_generic_entry_answers_as_each_single_event_script_does(script: str, tmp_path: Path) -> None:
    host, event = SINGLE[script]
    project = tmp_path / "p"
    project.mkdir()
    agents = project / "AGENTS.md"
    event_payload = json.dumps({"hook_event_name": event, "cwd": str(project), "session_id": "s",
                                "tool_name": "Bash", "tool_input": {"command": "true"},
                                "source": "startup"}).encode()
    answers: dict[str, list[tuple[bytes, bytes, int]]] = {}
    for runner in ("own", "generic"):
        argv = ([sys.executable, "-I", "-S", str(ROOT / "hooks" / script)] if runner == "own"
                else [sys.executable, "-I", "-S", str(GENERIC), host, event])
        home = tmp_path / ("home-" + runner)  # each runner its own store and backstop state
        memory = home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project)) / "memory"
        memory.mkdir(parents=True)
        index = memory / "MEMORY.md"
        state = tmp_path / ("state-" + runner)
        state.mkdir()
        index.write_text(_lines(150))
        agents.write_text("word\n")
        seen = [_run(argv, payload, project, home, state) for payload in _payloads(project)]
        seen.append(_run(argv, event_payload, project, home, state))  # a PostToolUse seeds here
        index.write_text(_lines(260))  # then both indexes grow past their caps
        agents.write_text("word " * 14_000)
        seen.append(_run(argv, event_payload, project, home, state))
        mark = str(home).encode()
        answers[runner] = [(out.replace(mark, b"HOME"), err.replace(mark, b"HOME"), code) for out, err, code in seen]
    assert answers["generic"] == answers["own"], script
    assert answers["own"][-1][0], script  # the comparison covered an answer, not only silence


def test_a_name_the_registry_does_not_hold_is_allowed_with_one_line(tmp_path: Path) -> None:
    for argv in ([], ["no-such-host"], ["engramory.hosts.claude"], ["os"]):
        out, err, code = _run([sys.executable, "-I", "-S", str(GENERIC), *argv], b"{}", tmp_path, tmp_path)
        assert (out, code) == (b"", 0)
        assert err.count(b"\n") == 1 and b"not a host engramory knows" in err


def test_a_copy_without_the_bundle_fails_open_with_the_hosts_answer(tmp_path: Path) -> None:
    (tmp_path / "hooks").mkdir()
    lone = tmp_path / "hooks" / GENERIC.name
    shutil.copy(GENERIC, lone)
    for host in hosts.names():  # every host: its FAIL_OPEN answer, or nothing
        out, err, code = _run([sys.executable, "-I", "-S", str(lone), host], b"{}", tmp_path, tmp_path)
        assert code == 0 and b"cannot load the bundle" in err, host
        fail_open = getattr(hosts.load(host), "FAIL_OPEN", "")
        assert out == (fail_open + "\n" if fail_open else "").encode(), host


def test_every_shim_is_its_rendering_and_every_entry_script_is_the_generic_or_a_shim() -> None:
    for name, _, _, _ in hookshims.SHIMS:
        assert (ROOT / "hooks" / name).read_text(encoding="utf-8") == hookshims.render(name), name
    scripts = {p.name for p in (ROOT / "hooks").glob("engramory_*.py")}
    assert scripts == {GENERIC.name} | {name for name, _, _, _ in hookshims.SHIMS}
    assert set(SCRIPTS) | set(SINGLE) == {name for name, _, _, _ in hookshims.SHIMS}
    assert hookshims.main([]) == 0


def test_its_broken_bundle_answers_are_the_registrys_fail_open_answers() -> None:
    namespace: dict[str, object] = {}
    source = GENERIC.read_text()
    start = source.index("ANSWER_WHEN_BROKEN =")
    exec(source[start:source.index("\n", start)], namespace)  # noqa: S102 - our own literal
    assert namespace["ANSWER_WHEN_BROKEN"] == hookshims.ANSWER_WHEN_BROKEN
    want = {}
    for name in hosts.names():
        fail_open = getattr(importlib.import_module(hosts.REGISTRY[name]), "FAIL_OPEN", "")
        if fail_open:
            want[name] = fail_open
    assert namespace["ANSWER_WHEN_BROKEN"] == want


def test_every_entries_table_names_entry_points_the_module_has() -> None:
    tables = 0
    for name in hosts.names():
        module = importlib.import_module(hosts.REGISTRY[name])
        entries = getattr(module, "ENTRIES", None)
        if entries is None:
            continue
        tables += 1
        for event, entry in entries.items():
            assert callable(getattr(module, entry, None)), (name, event, entry)
    assert tables >= 5


@pytest.mark.parametrize("host", sorted(CONTRACT_HOSTS))
def test_hosts_without_a_script_of_their_own_answer_through_the_generic_entry(host: str, tmp_path: Path) -> None:
    """Each answers as its module's respond does, direct and through the launcher, and fails
    open (exit 0, nothing on stdout) on every payload it cannot judge."""
    project = tmp_path / "p"
    project.mkdir()
    module = importlib.import_module(hosts.REGISTRY[host])
    for payload in _payloads(project):
        direct = _run([sys.executable, "-I", "-S", str(GENERIC), host, CONTRACT_HOSTS[host]], payload, project, tmp_path)
        launched = _run([sys.executable, "-I", "-S", "-c", LAUNCHER, str(GENERIC), host, CONTRACT_HOSTS[host]], payload,
                        project, tmp_path)
        assert direct == launched
        out, err, code = module.respond(payload, {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
        assert direct[2] == code and direct[0] == (out + "\n" if out else "").encode()
        if payload in (b"", b"{", b"\xff\xfe"):
            assert direct[:1] == (b"",) and direct[2] == 0

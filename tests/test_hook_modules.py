"""Which engramory modules a hook process loads, for every host, on the ignored path and on a
deny (issue 20): each hook runs as installed (hooks/engramory_hook.py <host> <event>, payload
on stdin) and reports sys.modules as it ends. The sets are held to tests/fixtures/
hook_modules.json: a change that makes a hook load more shows up here, to be looked at (the
ignored path is what every tool call of a host without a matcher pays). After a change that
is meant:

    python3 -m tests.test_hook_modules --write
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from engramory import hosts
from engramory.hosts import mcponly
from tests.hostkit.payloads import INDEX, payloads

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "fixtures" / "hook_modules.json"
SCRIPT = ROOT / "hooks" / "engramory_hook.py"
# hosts that read the event from the payload rather than from the command
EVENTS = {"gemini": ["BeforeTool", "AfterTool", "SessionStart"]}
# the process as installed, with posix._exit (how every hook ends) reporting the modules first
PROBE = (
    "import sys,posix\n"
    "real=posix._exit\n"
    "def ex(code):\n"
    "    sys.stderr.write('\\nMODULES:'+','.join(sorted(k for k in sys.modules if k.split('.')[0]=='engramory'))+'\\n')\n"
    "    sys.stderr.flush();real(code)\n"
    "posix._exit=ex\n"
    "p=sys.argv[1];sys.argv=sys.argv[1:]\n"
    "exec(compile(open(p,'rb').read(),p,'exec'),{'__name__':'__main__','__file__':p})\n"
)


def hook_hosts() -> List[str]:
    return [n for n in hosts.names() if getattr(hosts.load(n), "respond", None) not in (None, mcponly.respond)]


def events_of(host: str) -> List[str]:
    entries = getattr(hosts.load(host), "ENTRIES", None)
    return EVENTS.get(host) or (sorted(entries) if entries else [""])


def loaded(host: str, event: str, payload: bytes, tmp: Path, deny: bool = False) -> List[str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "TMPDIR": str(tmp)}
    argv = [sys.executable, "-I", "-S", "-c", PROBE, str(SCRIPT), host] + ([event] if event else [])
    done = subprocess.run(argv, input=payload, capture_output=True, cwd=tmp, env=env, timeout=60)
    marker = done.stderr.rfind(b"\nMODULES:")
    assert marker >= 0, (host, event, done.stderr[-400:])
    out = done.stdout.lower().replace(b" ", b"")
    denied = done.returncode == 2 or any(w in out for w in (b"deny", b'"action":"block"', b'"skip":true'))
    assert denied == deny, (host, event, "a deny" if deny else "no deny", done.returncode, done.stdout[:200])
    return done.stderr[marker + 9:].decode().strip().split(",")


def measure(tmp: Path) -> Dict[str, Dict[str, Dict[str, List[str]]]]:
    cwd = tmp / "project"
    cwd.mkdir()
    (cwd / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    (cwd / "src.py").write_text("x = 1\n", encoding="utf-8")
    found: Dict[str, Dict[str, Dict[str, List[str]]]] = {}
    for host in hook_hosts():
        for event in events_of(host):
            quick, deny = payloads(host, event, str(cwd / "MEMORY.md"), str(cwd / "src.py"), str(cwd))
            row = {"ignored": loaded(host, event, quick, cwd)}
            if deny is not None:
                row["deny"] = loaded(host, event, deny, cwd, deny=True)
                (cwd / "MEMORY.md").write_text(INDEX, encoding="utf-8")
            found.setdefault(host, {})[event or "-"] = row
    return found


def test_every_hook_loads_the_modules_it_loaded_when_last_looked_at(tmp_path: Path) -> None:
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    got = measure(tmp_path)
    assert set(got) == set(want), "hosts changed: python3 -m tests.test_hook_modules --write, and look at the diff"
    for host, rows in got.items():
        for event, kinds in rows.items():
            for kind, modules in kinds.items():
                old = want[host].get(event, {}).get(kind)
                more, fewer = sorted(set(modules) - set(old or [])), sorted(set(old or []) - set(modules))
                assert modules == old, "%s %s %s: loads %s more and %s fewer than before" % (host, event, kind, more, fewer)


def test_the_ignored_path_stays_off_the_decision_modules(tmp_path: Path) -> None:
    # What every tool call of a matcherless host pays: no edit model, no secrets, no store.
    got = json.loads(GOLDEN.read_text(encoding="utf-8"))
    heavy = ("engramory.store", "engramory.doctor", "engramory.curate", "engramory.install", "engramory.sync")
    for host, rows in got.items():
        for event, kinds in rows.items():
            if "deny" in kinds:  # a pre-tool event
                assert not [m for m in kinds["ignored"] if m.startswith(heavy)], (host, event, kinds["ignored"])



def test_every_pre_write_hook_ignores_a_call_with_at_most_the_same_five_modules() -> None:
    # the package, the registry, the host's own module, the JSON reader and the path rules: no
    # dialect shared between hosts (claudelike, plugin, another host's module) before a call is
    # known to name a guarded file (engramory.hosts.quiet). Each more module is ~0.35M
    # instructions of a 27M bare start, and the bench holds this path to 1.05x.
    got = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for host, rows in got.items():
        for event, kinds in rows.items():
            if "deny" in kinds:  # a pre-tool event
                want = ["engramory", "engramory.hosts", "engramory.hosts." + host, "engramory.jsonlite", "engramory.scope"]
                assert set(kinds["ignored"]) <= set(want), (host, event, kinds["ignored"])
                assert "engramory.hosts." + host in kinds["ignored"], (host, event)

@pytest.mark.parametrize("host", ["claude", "qwen"])
def test_the_probe_sees_what_a_deny_loads_and_the_ignored_path_does_not(host: str, tmp_path: Path) -> None:
    rows = measure_one(host, tmp_path)
    # the decision (engramory.judge; a host that predicts its own bytes reaches it without the guard)
    assert "engramory.judge" in rows["deny"] and "engramory.judge" not in rows["ignored"], rows


def measure_one(host: str, tmp: Path) -> Dict[str, List[str]]:
    cwd = tmp / "project"
    cwd.mkdir()
    (cwd / "MEMORY.md").write_text(INDEX, encoding="utf-8")
    quick, deny = payloads(host, "PreToolUse", str(cwd / "MEMORY.md"), str(cwd / "src.py"), str(cwd))
    assert deny is not None
    return {"ignored": loaded(host, "PreToolUse", quick, cwd), "deny": loaded(host, "PreToolUse", deny, cwd, deny=True)}


if __name__ == "__main__":
    import tempfile

    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python3 -m tests.test_hook_modules --write")
    with tempfile.TemporaryDirectory() as tmp:
        GOLDEN.write_text(json.dumps(measure(Path(tmp)), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print("wrote", GOLDEN)

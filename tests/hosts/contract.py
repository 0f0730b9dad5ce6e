"""What every host built from its own documented contract (no real CLI here) is tested for, on
payloads written from the shapes its docs or source show: a growing write denied in the host's
own shape, a shrinking one passed in silence, an unrelated file untouched, broken payloads
failing open, and install -> --check -> uninstall giving the user's bytes back. Each host's
test module fills in a `Case` and calls these."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "engramory" / "__init__.py").is_file())
GENERIC = ROOT / "hooks" / "engramory_hook.py"

from engramory import hosts  # noqa: E402
from engramory.install.hookcommands import LAUNCHER  # noqa: E402


def lines(n: int, tag: str = "n") -> str:
    return "".join("- [%s%d](%s%d.md) - note %d\n" % (tag, i, tag, i, i) for i in range(n))


class Case:
    """One host: its name, the deny it answers with ("exit": exit 2 + stderr, "json":
    hookSpecificOutput deny), a payload builder `write(path, cwd, before, after)` for a change
    from `before` to `after` in the host's own shape, the event argument its hook command
    passes, and where install puts its settings file (scope, HOME, project) -> path."""

    def __init__(self, name: str, deny: str, write: Callable[[str, str, str, str], Dict[str, Any]], event: str,
                 settings: Callable[[str, Path, Path], Path], bundle: Callable[[str, Path, Path], Path]) -> None:
        self.name = name
        self.deny = deny
        self.write = write
        self.event = event
        self.settings = settings
        self.bundle = bundle

    @property
    def module(self) -> Any:
        return importlib.import_module(hosts.REGISTRY[self.name])


def env_for(home: Path) -> Dict[str, str]:
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "PYTHONPATH": str(ROOT),
            "XDG_CONFIG_HOME": str(home / ".config")}


def run_hook(case: Case, payload: bytes | Dict[str, Any], cwd: Path, home: Path) -> subprocess.CompletedProcess[bytes]:
    """The generic entry through the installers' `-c` launcher, as the host runs it."""
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
    argv = [sys.executable, "-I", "-S", "-c", LAUNCHER, str(GENERIC), case.name, case.event]
    return subprocess.run(argv, input=raw, capture_output=True, cwd=str(cwd), env=env_for(home), timeout=60)


def is_deny(case: Case, proc: subprocess.CompletedProcess[bytes]) -> bool:
    if case.deny == "exit":
        return proc.returncode == 2 and b"engramory" in proc.stderr and proc.stdout == b""
    answer = json.loads(proc.stdout.decode("utf-8")) if proc.stdout.strip() else {}
    inner = answer.get("hookSpecificOutput", {})
    return proc.returncode == 0 and inner.get("permissionDecision") == "deny" and "engramory" in inner.get(
        "permissionDecisionReason", "")


def silent(proc: subprocess.CompletedProcess[bytes]) -> bool:
    return proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b""


def project(tmp: Path) -> tuple[Path, Path]:
    proj = tmp / "proj"
    home = tmp / "home"
    proj.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    return proj, home


def check_growing_write_denied(case: Case, tmp: Path) -> None:
    proj, home = project(tmp)
    index = proj / "MEMORY.md"
    index.write_text(lines(200))
    proc = run_hook(case, case.write(str(index), str(proj), lines(200), lines(240)), proj, home)
    assert is_deny(case, proc), (proc.returncode, proc.stdout, proc.stderr)
    reason = proc.stderr.decode() if case.deny == "exit" else proc.stdout.decode()
    assert "240" in reason and "200" in reason  # the numbers reach the model
    assert index.read_text() == lines(200)  # the hook never writes


def check_shrink_passes_in_silence(case: Case, tmp: Path) -> None:
    proj, home = project(tmp)
    index = proj / "MEMORY.md"
    index.write_text(lines(150))  # well under the warn cap: no nudge either
    proc = run_hook(case, case.write(str(index), str(proj), lines(150), lines(120)), proj, home)
    assert silent(proc), (proc.returncode, proc.stdout, proc.stderr)
    over = proj / "memory"
    over.mkdir()
    big = over / "MEMORY.md"
    big.write_text(lines(230))  # over the cap already: a shrink is still allowed
    proc = run_hook(case, case.write(str(big), str(proj), lines(230), lines(215)), proj, home)
    assert proc.returncode == 0 and not is_deny(case, proc), (proc.returncode, proc.stdout, proc.stderr)
    assert b'"allow"' not in proc.stdout


def check_unrelated_file_silent(case: Case, tmp: Path) -> None:
    proj, home = project(tmp)
    other = proj / "notes.md"
    other.write_text(lines(200))
    proc = run_hook(case, case.write(str(other), str(proj), lines(200), lines(900)), proj, home)
    assert silent(proc), (proc.returncode, proc.stdout, proc.stderr)
    assert other.read_text() == lines(200)


def check_broken_payloads_fail_open(case: Case, tmp: Path) -> None:
    proj, home = project(tmp)
    index = proj / "MEMORY.md"
    index.write_text(lines(200))
    good = json.dumps(case.write(str(index), str(proj), lines(200), lines(240))).encode()
    for raw in (b"", b"{", b"\xff\xfe\x00", good[: len(good) // 2], b"[1, 2]", b"null", b"x" * (3 << 20)):
        proc = run_hook(case, raw, proj, home)
        assert proc.returncode == 0 and proc.stdout == b"", (raw[:20], proc.returncode, proc.stdout)
    # past the runtime's payload limit: allowed, one line on stderr
    out, err, code = hosts.answer(case.module.respond, good, "t", limit=len(good) - 1)
    assert (out, code) == ("", 0) and "over" in err
    # an exception inside the guard fails open too
    def boom(raw: bytes, env: Any) -> Any:
        raise RuntimeError("boom")
    assert hosts.answer(boom, good, "t")[2] == 0


def engramory(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proj, home = project(tmp)
    env = env_for(home)
    return subprocess.run([sys.executable, "-m", "engramory", *args], cwd=str(proj), env=env,
                          capture_output=True, text=True, timeout=180)


def tree(folder: Path) -> Dict[str, Optional[bytes]]:
    """Every folder and file under `folder` with its bytes, but the backups install and
    uninstall leave beside a settings file they changed (the flows' safety copies)."""
    out: Dict[str, Optional[bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), folder) + "/"] = None
        for f in filenames:
            if ".engramory-backup-" in f:
                continue
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, folder)] = Path(p).read_bytes()
    return out


def check_install_round_trip(case: Case, tmp: Path, scope: str, existing: Optional[bytes]) -> None:
    """install -> --check -> install again (no change) -> uninstall: every byte of HOME and the
    project as before; `existing` is a settings file of the user's, there before install."""
    proj, home = project(tmp)
    settings = case.settings(scope, home, proj)
    if existing is not None:
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_bytes(existing)
    before = (tree(home), tree(proj))
    dry = engramory(tmp, "install", "--host", case.name, "--scope", scope, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert (tree(home), tree(proj)) == before
    done = engramory(tmp, "install", "--host", case.name, "--scope", scope)
    assert done.returncode == 0, done.stderr
    assert "engramory_hook.py" in settings.read_text() and (case.bundle(scope, home, proj) / "hooks" / GENERIC.name).is_file()
    check = engramory(tmp, "install", "--host", case.name, "--scope", scope, "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "a write that grows an index past its cap is denied" in check.stdout
    again = engramory(tmp, "install", "--host", case.name, "--scope", scope)
    assert again.returncode == 0 and "already installed" in again.stdout, again.stdout
    gone = engramory(tmp, "uninstall", "--host", case.name, "--scope", scope)
    assert gone.returncode == 0, gone.stderr
    assert (tree(home), tree(proj)) == before
    assert (settings.read_bytes() if settings.exists() else None) == existing


def check_check_fails_when_broken(case: Case, tmp: Path, unwire: Callable[[Path], None]) -> None:
    """--check fails when the script is deleted, and when the wiring is taken out."""
    proj, home = project(tmp)
    assert engramory(tmp, "install", "--host", case.name).returncode == 0
    script = case.bundle("user", home, proj) / "hooks" / GENERIC.name
    saved = script.read_bytes()
    script.unlink()
    check = engramory(tmp, "install", "--host", case.name, "--check")
    assert check.returncode == 1 and "does not exist" in check.stdout, check.stdout
    # a deleted script never blocks: the launcher's exit 1 is a hook error, not exit 2
    proc = subprocess.run(_installed_argv(case, home, proj), input=b"{}", capture_output=True, env=env_for(home),
                          timeout=60)
    assert proc.returncode in (0, 1) and proc.stdout == b"", proc.returncode
    script.write_bytes(saved)
    assert engramory(tmp, "install", "--host", case.name, "--check").returncode == 0
    unwire(case.settings("user", home, proj))
    check = engramory(tmp, "install", "--host", case.name, "--check")
    assert check.returncode == 1 and "problem" in check.stdout, check.stdout


def _installed_argv(case: Case, home: Path, proj: Path) -> List[str]:
    """The installed command, run by sh as the host runs it."""
    text = case.settings("user", home, proj).read_text()
    command = json.loads(text)
    found: List[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "command" and isinstance(x, str) and "engramory_hook.py" in x:
                    found.append(x)
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(command)
    assert len(found) == 1, found
    return ["/bin/sh", "-c", found[0]]

"""Real git for the sync tests: an isolated git environment (no user or system config, a
fixed identity), repositories on loopback paths, and engramory run the way a user runs it
(`python3 -I -S tools/engramory.py ...` as a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

from tests.conftest import ROOT

TOOL = ROOT / "tools" / "engramory.py"


def git_env(home: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "ENGRAMORY_", "CLAUDE"))}
    env.update({
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
        "GIT_TERMINAL_PROMPT": "0", "PYTHONDONTWRITEBYTECODE": "1",
    })
    env.pop("PYTHONPATH", None)
    return env


class Kit:
    """Git and engramory in one throw-away HOME under `tmp`."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.home = tmp / "home"
        self.home.mkdir(exist_ok=True)
        self.env = git_env(self.home)

    def git(self, cwd: Path, *args: str, check: bool = True, data: Optional[bytes] = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, env=self.env,
                              input=None if data is None else data.decode(), timeout=120)
        if check and done.returncode != 0:
            raise AssertionError("git %s failed: %s%s" % (" ".join(args), done.stdout, done.stderr))
        return done

    def engramory(self, *args: str, cwd: Optional[Path] = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-I", "-S", str(TOOL), *args], capture_output=True, text=True,
                              env=self.env, cwd=str(cwd or self.tmp), timeout=300)

    def ok(self, *args: str, cwd: Optional[Path] = None) -> subprocess.CompletedProcess[str]:
        done = self.engramory(*args, cwd=cwd)
        assert done.returncode == 0, "engramory %s: %s%s" % (" ".join(args), done.stdout, done.stderr)
        return done

    def repo(self, path: Path, index: bytes = b"# Memory Index\n") -> Path:
        """A repository holding a store (its own repository), one commit on main."""
        path.mkdir(parents=True)
        self.git(path, "init", "-q", "-b", "main")
        (path / "MEMORY.md").write_bytes(index)
        self.git(path, "add", "-A")
        self.git(path, "commit", "-q", "-m", "first")
        return path

    def remote_with_store(self, name: str = "remote.git", init: bool = True) -> Path:
        """A bare repository on a loopback path holding a store that `sync init` set up."""
        bare = self.tmp / name
        self.git(self.tmp, "init", "-q", "--bare", "-b", "main", str(bare))
        seed = self.repo(self.tmp / ("seed-" + name))
        if init:
            self.ok("sync", "init", str(seed))
            self.git(seed, "add", "-A")
            self.git(seed, "commit", "-q", "-m", "engramory sync init")
        self.git(seed, "remote", "add", "origin", str(bare))
        self.git(seed, "push", "-q", "-u", "origin", "main")
        return bare

    def clone(self, bare: Path, name: str) -> Path:
        dest = self.tmp / name
        self.git(self.tmp, "clone", "-q", str(bare), str(dest))
        return dest

    def new(self, root: Path, name: str, description: str, type_: str = "user") -> None:
        self.ok("new", str(root), "--type", type_, "--name", name, "--description", description,
                "--body", "The fact of %s." % name)


def note(name: str, description: str = "") -> bytes:
    return ("---\nname: %s\ndescription: %s\ntype: user\ncreated: 2026-11-01\nupdated: 2026-11-01\n---\n"
            "The fact of %s.\n" % (name, description or "Fact number %s about the store" % name, name)).encode()

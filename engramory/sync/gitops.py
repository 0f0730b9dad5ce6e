"""A small, bounded, typed wrapper over the git command line: no shell, a timeout on every
call, `-c` options that make the output stable to read (no pager, no colour, paths unquoted),
no prompt for a password, and a GitError whose message says what happened and what to do."""

from __future__ import annotations

import os
import subprocess

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

TIMEOUT = 60.0  # seconds for a local git command
NETWORK_TIMEOUT = 300.0  # fetch and push
OUTPUT_MAX = 64 << 20  # bytes of one command's output we are prepared to hold
STABLE = ("-c", "core.quotepath=off", "-c", "color.ui=never", "-c", "core.pager=cat",
          "-c", "advice.detachedHead=false")


class GitError(Exception):
    """git is missing, failed or timed out; the message names the command and the next step."""


class GitMissing(GitError):
    """There is no git to run."""


class Done:
    __slots__ = ("code", "out", "err")

    def __init__(self, code: int, out: bytes, err: str) -> None:
        self.code = code
        self.out = out
        self.err = err

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", "replace").strip()


def _env(extra: Mapping[str, str] | None) -> dict[str, str]:
    env = dict(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"  # a remote that wants a password fails instead of hanging
    env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
    env["LC_ALL"] = "C"
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):  # a hook's leftovers: not our repository
        env.pop(key, None)
    if extra:
        env.update(extra)
    return env


def run(cwd: str, args: Sequence[str], check: bool = True, data: bytes | None = None,
        timeout: float = TIMEOUT, env: Mapping[str, str] | None = None) -> Done:
    """`git -C cwd <args>`. With `check`, a non-zero exit raises GitError with git's message."""
    cmd = ["git", "-C", cwd, *STABLE, *args]
    try:
        proc = subprocess.run(cmd, input=data, capture_output=True, timeout=timeout, env=_env(env),
                              stdin=None if data is not None else subprocess.DEVNULL)
    except FileNotFoundError:
        raise GitMissing("git is not installed (or not on PATH): install git 2.39 or later, then run this again") from None
    except subprocess.TimeoutExpired:
        raise GitError("`git %s` took longer than %.0f s and was stopped; check the network or the remote, "
                       "then run this again" % (" ".join(args[:3]), timeout)) from None
    except OSError as exc:
        raise GitError("git could not be started (%s)" % (exc.strerror or exc)) from None
    if len(proc.stdout) > OUTPUT_MAX:
        raise GitError("`git %s` printed more than %s bytes; that is not a memory store" % (
            " ".join(args[:3]), "{:,}".format(OUTPUT_MAX)))
    err = proc.stderr.decode("utf-8", "replace").strip()
    if check and proc.returncode != 0:
        raise GitError("`git %s` failed (exit %d): %s" % (" ".join(args[:4]), proc.returncode,
                                                          err.splitlines()[-1] if err else "no message"))
    return Done(proc.returncode, proc.stdout, err)


def version() -> tuple[int, ...]:
    text = run(os.getcwd(), ["--version"]).text  # "git version 2.39.5"
    parts = text.split()[-1].split(".") if text else []
    return tuple(int(p) for p in parts[:3] if p.isdigit())


def toplevel(path: str) -> str | None:
    """The top of the work tree holding `path`, or None outside any repository."""
    done = run(path, ["rev-parse", "--show-toplevel"], check=False)
    return os.path.realpath(done.text) if done.code == 0 and done.text else None


def git_dir(top: str) -> str:
    return os.path.realpath(run(top, ["rev-parse", "--absolute-git-dir"]).text)


def branch(top: str) -> str | None:
    """The checked-out branch, or None on a detached HEAD."""
    done = run(top, ["symbolic-ref", "--quiet", "--short", "HEAD"], check=False)
    return done.text if done.code == 0 and done.text else None


def upstream(top: str) -> str | None:
    """The branch's upstream (`origin/main`), or None when it has none."""
    done = run(top, ["rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"], check=False)
    return done.text if done.code == 0 and done.text else None


def remotes(top: str) -> list[str]:
    return [r for r in run(top, ["remote"]).text.splitlines() if r]


def rev(top: str, name: str) -> str | None:
    done = run(top, ["rev-parse", "--verify", "--quiet", name + "^{commit}"], check=False)
    return done.text if done.code == 0 and done.text else None


def parents(top: str, commit: str) -> list[str]:
    done = run(top, ["rev-list", "--parents", "-n", "1", commit], check=False)
    return done.text.split()[1:] if done.code == 0 else []


def merge_base(top: str, a: str, b: str) -> str | None:
    done = run(top, ["merge-base", a, b], check=False)
    return done.text if done.code == 0 and done.text else None


def show(top: str, spec: str) -> bytes | None:
    """The bytes of a blob (`HEAD:path`, `:2:path`), or None when there is no such file there."""
    done = run(top, ["cat-file", "blob", spec], check=False)
    return done.out if done.code == 0 else None


def config_get(top: str, key: str) -> str | None:
    done = run(top, ["config", "--local", "--get", key], check=False)
    return done.out.decode("utf-8", "replace").rstrip("\n") if done.code == 0 else None


def config_set(top: str, key: str, value: str) -> None:
    run(top, ["config", "--local", key, value])


def config_unset(top: str, key: str) -> None:
    run(top, ["config", "--local", "--unset-all", key], check=False)


def check_attr(top: str, attr: str, rel: str) -> str | None:
    """The value of attribute `attr` for the path `rel` (relative to the top), None when unset."""
    done = run(top, ["check-attr", "-z", attr, "--", rel], check=False)
    fields = done.out.split(b"\0")
    if done.code != 0 or len(fields) < 3:
        return None
    value = fields[2].decode("utf-8", "replace")
    return None if value in ("unspecified", "unset") else value


def ls_files(top: str, pathspec: Sequence[str], *options: str) -> list[str]:
    done = run(top, ["ls-files", "-z", *options, "--", *pathspec])
    return [p.decode("utf-8", "surrogateescape") for p in done.out.split(b"\0") if p]


def unmerged(top: str, pathspec: Sequence[str]) -> list[str]:
    """Paths with conflict stages in the index (a merge left them for the user)."""
    done = run(top, ["ls-files", "-z", "--unmerged", "--", *pathspec])
    out: list[str] = []
    for entry in done.out.split(b"\0"):
        if b"\t" in entry:
            path = entry.split(b"\t", 1)[1].decode("utf-8", "surrogateescape")
            if path not in out:
                out.append(path)
    return out


def status(top: str, pathspec: Sequence[str]) -> list[tuple[str, str]]:
    """(XY, path) of every changed or untracked path under `pathspec` (git status porcelain;
    a rename is its new path)."""
    done = run(top, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *pathspec])
    out: list[tuple[str, str]] = []
    fields = done.out.split(b"\0")
    i = 0
    while i < len(fields):
        entry = fields[i].decode("utf-8", "surrogateescape")
        i += 1
        if len(entry) < 4:
            continue
        xy, path = entry[:2], entry[3:]
        if xy[0] in "RC":
            i += 1  # the rename's source follows
        out.append((xy, path))
    return out


def diff_names(top: str, a: str, b: str | None, pathspec: Sequence[str]) -> list[tuple[str, str, str]]:
    """(status letter, old path, new path) of each file that differs between commits a and b
    (b None: the work tree), renames found (a note moved into archive/ is a rename)."""
    done = run(top, ["diff", "--name-status", "-z", "-M", a, *([b] if b else []), "--", *pathspec])
    fields = [f.decode("utf-8", "surrogateescape") for f in done.out.split(b"\0")]
    out = []
    i = 0
    while i < len(fields) and fields[i]:
        letter = fields[i][0]
        if letter in "RC":
            out.append((letter, fields[i + 1], fields[i + 2]))
            i += 3
        else:
            out.append((letter, fields[i + 1], fields[i + 1]))
            i += 2
    return out


def tree_files(top: str, commit: str, prefix: str) -> list[str]:
    """Every file of `commit` under `prefix` ('' for the whole tree), relative to the top."""
    args = ["ls-tree", "-r", "-z", "--name-only", commit]
    if prefix:
        args += ["--", prefix]
    done = run(top, args)
    return [p.decode("utf-8", "surrogateescape") for p in done.out.split(b"\0") if p]

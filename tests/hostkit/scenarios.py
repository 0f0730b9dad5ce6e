"""The case runners every real-CLI suite shares: a run that must be refused (the index keeps its
bytes), a run that must be allowed (no call refused), and the fail-mode traps (a deleted bundle,
a guard that hangs, a guard that crashes): the host stays usable and `install --check` says
what is wrong. `host` is a hostbase.Host; each suite passes what is its host's own (its tool
calls, its over-cap content, its time limits) and asserts the messages its host shows.
Standard library only."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any, List, Optional, Sequence, Tuple

REFUSED = "engramory blocked"


def seed_index(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def project_index(host: Any, text: str) -> Path:
    """`<project>/memory/MEMORY.md` holding `text`: an index in the standard window."""
    return seed_index(host.project / "memory" / "MEMORY.md", text)


def append_command(index: Path, line: str = "- [x](x.md) - more") -> str:
    """A shell command that appends one line to `index`, as a model would."""
    return "printf -- '%s\\n' >> '%s'" % (line, index)


def _bytes(path: Path) -> Optional[bytes]:
    return path.read_bytes() if path.exists() else None


def refused(host: Any, index: Path, turns: Sequence[Any], **run_args: Any) -> List[str]:
    """Run `turns` (then "done"): the session finishes, `index` keeps its bytes (or stays
    absent); the tool results the model was sent, for the caller to read the refusal in."""
    before = _bytes(index)
    result, model = host.run([*turns, "done"], **run_args)
    host.assert_completed(result)
    assert _bytes(index) == before, "%s changed %s" % (host.title, index)
    return list(model.tool_messages())


def over_cap_write(host: Any, index: Path, content: str, arg: Optional[str] = None) -> str:
    """A write of `content` to `index` (`arg`: the path as the model names it) that must be
    refused, then a write to another file that must still run: the session goes on, only that
    call was refused. The refusal the model was sent."""
    other = host.project / "other.txt"
    denied, _ = refused(host, index, [[host.write_call(arg or str(index), content)], [host.write_call(str(other), "hello\n")]])
    assert other.read_text(encoding="utf-8") == "hello\n"
    return denied


def allowed(host: Any, turns: Sequence[Any], marks: Sequence[str] = (REFUSED,), **run_args: Any) -> Any:
    """Run `turns` (then "done"): the session finishes and no tool result the model was sent
    carries a refusal; the model, for the caller's own checks."""
    result, model = host.run([*turns, "done"], **run_args)
    host.assert_completed(result)
    messages = model.tool_messages()
    assert not any(mark in m for m in messages for mark in marks), messages
    return model


# -- install, then uninstall, gives the user's files back -------------------------------------------


def settings_round_trip(host: Any, path: Path, original: bytes, *installed: bytes) -> None:
    """The user's own settings `original` at `path`: install wires the hook into them (each
    of `installed` is in the file then), --check passes, uninstall gives the bytes back exactly."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(original)
    host.install()
    wired = path.read_bytes()
    assert all(part in wired for part in installed), wired
    host.check_passes()
    host.uninstall()
    assert path.read_bytes() == original


def tree(root: Path, skip: Sequence[str] = ()) -> List[str]:
    """Every path below `root`, relative, sorted (leaving out those with a part in `skip`)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if not set(p.relative_to(root).parts) & set(skip))


def tree_round_trip(host: Any, root: Path, installed: Path, skip: Sequence[str] = ()) -> None:
    """Install puts `installed` in place, --check passes, uninstall leaves `root` with exactly
    the paths it had (the host's own first run after install is not simulated: it would add
    files of its own)."""
    before = tree(root, skip)
    host.install(first_run=False)
    assert installed.is_file(), "install did not write %s" % installed
    host.check_passes()
    host.uninstall()
    assert tree(root, skip) == before


# -- fail modes: a broken guard fails open, never closed, and --check names it ------------------


def deleted_bundle(host: Any, content: str, index: Optional[Path] = None, arg: Optional[str] = None,
                   marks: Sequence[str] = (REFUSED,)) -> None:
    """The installed bundle deleted: an over-cap write of `content` to `index` (the project's
    MEMORY.md; `arg` is the path as the model names it) and a write to another file both go
    through, and --check reports the guard off."""
    host.install()
    assert host.bundle.is_dir(), "%s is not the installed bundle" % host.bundle
    shutil.rmtree(host.bundle)
    index = index or host.project / "MEMORY.md"
    other = host.project / "other.txt"
    allowed(host, [[host.write_call(arg or str(index), content)], [host.write_call(str(other), "x\n")]], marks)
    assert index.read_text(encoding="utf-8") == content
    assert other.read_text(encoding="utf-8") == "x\n"
    assert "does not exist: the guard is off" in host.check_fails()


def slow_guard(host: Any, answer_within: float, finish_within: float, timeout: Optional[float] = None,
               shorten: Optional[Tuple[Path, str, str]] = None, sleep: int = 60, content: str = "- [a](a.md) one\n",
               index: Optional[Path] = None, arg: Optional[str] = None, marks: Sequence[str] = (REFUSED,)) -> None:
    """The hook script replaced by one that sleeps `sleep` s (after `shorten` = (file, old,
    new) has cut the host's own hook timeout): the write goes through, the session ends within
    `finish_within` s, and --check says the guard did not answer within `answer_within` s."""
    host.install()
    if shorten is not None:
        path, old, new = shorten
        text = path.read_text(encoding="utf-8")
        assert old in text, "%s does not set %s" % (path, old)
        path.write_text(text.replace(old, new), encoding="utf-8")
    host.replace_installed(host.hook_script, "import time\ntime.sleep(%d)\n" % sleep)
    index = index or host.project / "MEMORY.md"
    started = time.monotonic()
    allowed(host, [[host.write_call(arg or str(index), content)]], marks, timeout=timeout)
    assert index.exists()  # timed out -> allowed
    assert time.monotonic() - started < finish_within
    assert "did not answer within %.1f s" % answer_within in host.check_fails()


def crashing_guard(host: Any, content: str, index: Optional[Path] = None, arg: Optional[str] = None,
                   marks: Sequence[str] = (REFUSED,)) -> None:
    """A module the hook imports raises: the over-cap write goes through and --check shows the
    error."""
    host.install()
    host.replace_installed(host.crash_module, "raise RuntimeError('boom')\n")
    index = index or host.project / "MEMORY.md"
    allowed(host, [[host.write_call(arg or str(index), content)]], marks)
    assert index.exists()
    assert "boom" in host.check_fails()


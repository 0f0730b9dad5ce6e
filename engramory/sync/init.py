"""`engramory sync init [ROOT]` and `sync init --undo`: make a store git-ready, and take that back.

- `<root>/.gitattributes` gets `/MEMORY.md merge=engramory-index`: git merges the index with
  the driver, by note, instead of line by line.
- `<root>/.gitignore` gets `/.engramory/`: the journal, its blobs and the review manifest are
  this machine's, never committed.
- the repository's own `.git/config` gets `merge.engramory-index.driver`: the absolute
  interpreter and the bundle's path, so it runs from any working directory (git runs drivers
  from the top of the work tree) with nothing on PYTHONPATH. That file is never committed:
  every clone registers it once (`engramory sync` does it when it is missing).

The store may be its own repository or a folder inside a project's. Nothing is committed.
What was there before is kept in `.engramory/sync-init.json`, so `--undo` puts every file back
byte for byte and the config as it was (refused for a file changed since, which it names).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shlex
import sys

from engramory import fsutil, scope
from engramory.sync import gitops

DRIVER = "engramory-index"
ATTRIBUTE = "/MEMORY.md merge=%s" % DRIVER
IGNORE = "/.engramory/"
DRIVER_NAME = "engramory: merge a memory index by note"
RECORD = os.path.join(".engramory", "sync-init.json")
FILE_MAX = 1 << 20  # a .gitattributes or .gitignore larger than this is not edited


class Refused(Exception):
    """sync init declines; nothing was written. The message says why and what to do."""


def driver_command() -> str:
    """The driver as git runs it: this interpreter and this bundle, by absolute path."""
    python = os.path.abspath(sys.executable or "python3")
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bundle = os.path.dirname(package)
    tool = os.path.join(bundle, "tools", "engramory.py")
    tail = " merge-index %O %A %B %L %P"
    if os.path.isfile(tool):
        return "%s -I -S %s%s" % (shlex.quote(python), shlex.quote(tool), tail)
    code = "import sys; sys.path.insert(0, %r); from engramory.cli import main; sys.exit(main())" % bundle
    return "%s -I -S -c %s%s" % (shlex.quote(python), shlex.quote(code), tail)


def config_wanted() -> dict[str, str]:
    return {"merge.%s.name" % DRIVER: DRIVER_NAME, "merge.%s.driver" % DRIVER: driver_command()}


class Plan:
    """What init would change: files (rel -> (bytes before or None, bytes after)) and config
    keys (key -> (value before or None, value after))."""

    __slots__ = ("root", "top", "files", "config", "tracked_state")

    def __init__(self, root: str, top: str) -> None:
        self.root = root
        self.top = top
        self.files: dict[str, tuple[bytes | None, bytes]] = {}
        self.config: dict[str, tuple[str | None, str]] = {}
        self.tracked_state: list[str] = []  # .engramory/ files already committed

    @property
    def empty(self) -> bool:
        return not self.files and not self.config


def find_top(root: str) -> str:
    top = gitops.toplevel(root)
    if top is None:
        raise Refused("%s is not inside a git repository: make the store its own repository with `git init %s` "
                      "(or keep it in a folder of a project repository), then run `engramory sync init` again"
                      % (root, shlex.quote(root)))
    return top


def _with_line(data: bytes | None, line: str) -> bytes | None:
    """`data` with `line` appended (in its own line ends), or None when it is there already."""
    text = (data or b"").decode("utf-8", "surrogateescape")
    if any(existing.strip() == line for existing in text.splitlines()):
        return None
    nl = "\r\n" if "\r\n" in text else "\n"
    if text and not text.endswith("\n"):
        text += nl
    return (text + line + nl).encode("utf-8", "surrogateescape")


def _read(path: str) -> bytes | None:
    try:
        data, _ = scope.read_bounded(path, FILE_MAX)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Refused("%s cannot be read (%s); fix it, then run this again" % (path, exc.strerror or exc)) from None
    if len(data) > FILE_MAX:
        raise Refused("%s is over %s bytes; edit it by hand" % (path, "{:,}".format(FILE_MAX)))
    return data


def plan(root: str) -> Plan:
    top = find_top(root)
    p = Plan(root, top)
    for name, line in ((".gitattributes", ATTRIBUTE), (".gitignore", IGNORE)):
        before = _read(os.path.join(root, name))
        after = _with_line(before, line)
        if after is not None:
            p.files[name] = (before, after)
    for key, value in config_wanted().items():
        now = gitops.config_get(top, key)
        if now != value:
            p.config[key] = (now, value)
    prefix = os.path.relpath(os.path.realpath(root), top)
    state = ".engramory" if prefix == "." else prefix.replace(os.sep, "/") + "/.engramory"
    p.tracked_state = gitops.ls_files(top, [state])
    return p


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _load_record(root: str) -> dict[str, object]:
    path = os.path.join(root, RECORD)
    try:
        data, _ = scope.read_bounded(path, 4 << 20)
        obj = json.loads(data.decode("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise Refused("%s cannot be read (%s); move it aside and run this again" % (path, exc)) from None
    return obj if isinstance(obj, dict) else {}


def apply(p: Plan) -> None:
    """Write the plan, keeping what was there before the FIRST init in the record."""
    record = _load_record(p.root)
    files = record.setdefault("files", {})
    config = record.setdefault("config", {})
    assert isinstance(files, dict) and isinstance(config, dict)
    for name, (before, after) in p.files.items():
        old = files.get(name)
        first = old["before"] if isinstance(old, dict) else (None if before is None else
                                                               base64.b64encode(before).decode("ascii"))
        files[name] = {"before": first, "after": _sha(after)}
    for key, (value_before, _value) in p.config.items():
        config.setdefault(key, value_before)
    meta = os.path.join(p.root, ".engramory")
    os.makedirs(meta, mode=0o700, exist_ok=True)
    fsutil.write_atomic(os.path.join(p.root, RECORD), json.dumps(record, indent=1, sort_keys=True).encode(), 0o600)
    for name, (_before, after) in p.files.items():
        fsutil.write_atomic(os.path.join(p.root, name), after)
    for key, (_value_before, value) in p.config.items():
        gitops.config_set(p.top, key, value)


def undo(root: str, dry_run: bool = False) -> list[str]:
    """Put back what init changed; the list says what (was) done. Refused, writing nothing,
    when a file changed since init."""
    top = find_top(root)
    record = _load_record(root)
    if not record:
        raise Refused("%s has no record of `engramory sync init` (%s): nothing to undo" % (root, RECORD))
    files = record.get("files") or {}
    config = record.get("config") or {}
    assert isinstance(files, dict) and isinstance(config, dict)
    done: list[str] = []
    restore: list[tuple[str, bytes | None]] = []
    for name, rec in sorted(files.items()):
        path = os.path.join(root, name)
        now = _read(path)
        if now is None or not isinstance(rec, dict) or _sha(now) != rec.get("after"):
            raise Refused("%s changed since `engramory sync init` wrote it; nothing was undone: take out the line %r "
                          "by hand, or put the file back as init left it" % (
                              path, ATTRIBUTE if name == ".gitattributes" else IGNORE))
        before = rec.get("before")
        restore.append((path, None if before is None else base64.b64decode(str(before))))
        done.append("%s %s" % ("remove" if before is None else "restore", path))
    for key, value in sorted(config.items()):
        done.append("%s %s in %s" % ("unset" if value is None else "restore", key, os.path.join(
            gitops.git_dir(top), "config")))
    if dry_run:
        return done
    for path, data in restore:
        if data is None:
            os.unlink(path)
        else:
            fsutil.write_atomic(path, data)
    for key, value in sorted(config.items()):
        if value is None:
            gitops.config_unset(top, key)
        else:
            gitops.config_set(top, key, str(value))
    os.unlink(os.path.join(root, RECORD))
    return done


def registered(top: str) -> bool:
    """Whether this clone's git config has the driver (any command: the user may run their own)."""
    return bool(gitops.config_get(top, "merge.%s.driver" % DRIVER))

"""The installer core: what every host's `engramory install` / `uninstall` / `install --check`
shares. A host installer module (engramory/install_<host>.py) says only what is its own:
where its settings live, its hook events, matchers and timeouts, its entry scripts, its trust
records; everything else is here, decided once. Standard library only; Python 3.9+.

API (stable; additions only)
----------------------------

Errors
    SettingsError(msg)      refuse, nothing changed; the message names the file, the problem
                            and the next step. WriteError: a write failed part-way.

Settings files (JSON; JSONC with comments=True)
    doc = JsonDoc.load(path, comments=False, host="Gemini CLI")
        doc.raw (bytes | None when missing), doc.data (dict), doc.exists.
        Refuses, with line and column: not UTF-8, not JSON, duplicate keys, top level not an
        object; FIFOs, devices and files over MAX_SETTINGS are refused without blocking.
    doc.render(new_data) -> bytes
        The file's bytes edited to hold new_data, rewriting only what differs (jsonedit):
        numbers as written (`1e400` stays `1e400`), unicode escapes, BOM, CRLF, indent and
        key order of everything else kept. Removing what an install added gives the original
        bytes back.
    Change(path, before, after); apply_change(change) -> backup path | None
        Refuses if the file changed since it was read; backs up the old bytes beside the
        real file with the SAME mode (0600 stays 0600); replaces atomically keeping the mode;
        a symlinked settings file stays a link (written through). after=None deletes.
    unified_diff(path, before, after) -> str         for --dry-run
    restore_bytes(doc, data) -> bytes                for uninstall: a backup's exact bytes
                                                     when one holds exactly `data`
    canonical(value) -> str                          equality of JSON meaning
    read_regular(path, limit) -> bytes | None        stat first, regular files only, bounded

Hook groups in Claude Code's shape (`hooks.<Event>[{matcher, hooks: [handler]}]`; also
Gemini CLI, Qwen Code, Factory droid, Codex hooks.json):
    add_hook_groups(data, [(event, matcher | None, handler)], is_ours) -> (new, created, report)
    remove_hooks(data, is_ours, created) -> (new, removed)
    check_hooks_shape(doc, events)                   refuse shapes we cannot merge into
    ours_in(groups, is_ours) -> handlers

Hook commands
    hook_command(interpreter, script, base_var=None) -> str
        `<python> -I -S -c <LAUNCHER> "<script>"`. The -c launcher is on purpose: Python
        exits 2 for a missing script file, and Claude-style hosts read exit 2 as a deny, so a
        deleted bundle would block every edit; through the launcher a missing file is exit 1
        (a non-blocking hook error). With base_var the script is relative to that variable
        (`"${CLAUDE_PROJECT_DIR}/.claude/..."`): portable in committed settings.
    split_command(command, env) -> HookCommand(.interpreter, .script, .launcher, .argv(),
        .variables, .unset)                          POSIX-sh word splitting with $VAR expanded
    sh_quote(path), shell_word(path)

The bundle copy
    source_root() -> root; bundle_files(root, required=[rel...]) -> (files, notes)
    missing_required(notes) -> problems              refuse the install when non-empty
    bundle_path(root, rel) -> source path            (checkout or wheel layout)
    plan_skill(place, root, files, link) -> SkillPlan; apply_skill(plan, place, root)
        `place` is any object with .skill_dir (the folder to fill) and .link_manifest.
        The folder holds MANIFEST (.engramory-install.json): installer, host, version, mode,
        files, and per settings file what install created: uninstall takes out exactly that.
    read_manifest(path), write_manifest(path, data), remove_listed(folder, rels),
    prune_empty(folder), folder_action_line(...), precompile(folder)

install --check
    r = Report(title); r.ok(line); r.note(line); r.problem(reason, fix); r.finish(healthy) -> 0|1
    smoke(argv, payload, env=None, cwd=None) -> Smoke(rc, stdout, stderr, error, .json())
        Feed a hook a payload it must deny (or report) and compare its answer.
    interpreter_problem(exe), import_problems(python, bundle_dir, modules),
    bundle_problems(bundle_dir, python)              every listed file there, every module imports

A host module's usual shape: `install(args)`, `uninstall(args)`, `check(args)` (the registry's
INSTALLER contract). For a host whose hooks live in one JSON file, engramory.installer_json
is the whole flow: declare a `Wiring` (settings path, bundle folder, hooks(), smoke_cases())
and call installer_json.install / uninstall / check. Otherwise build the settings change with
JsonDoc + add_hook_groups (or an own merge for a flat list), copy with plan_skill/apply_skill
and verify with Report + smoke: install.py (Claude Code) and install_cursor.py (Cursor) are two
complete examples.
"""

from __future__ import annotations

import copy
import difflib
import errno
import json
import os
import re
import shutil
import stat
import subprocess
import sys

from engramory import fsutil, jsonedit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

SKILL_NAME = "engramory"
MANIFEST = ".engramory-install.json"  # inside a copied bundle folder: proves it is ours
LINK_MANIFEST = ".engramory-link.json"  # beside a --link symlink
BOM = b"\xef\xbb\xbf"
HOOK_TIMEOUT = 10  # seconds; a stalled hook fails open, so keep it short

# What a user's copy needs at run time; tests, bench, caches and VCS data stay behind.
TOP_FILES = ("SKILL.md", "rules-snippet.md", "PORTING.md", "README.md")
PACKAGE_DIR = "engramory"
FLAT_PY_DIRS = ("hooks", "tools")
DATA_DIRS = ("schemas", "templates")
PLUGIN_MANIFEST = ".claude-plugin/plugin.json"  # never copied: it would make the skill a plugin too


class SettingsError(Exception):
    """A settings file we refuse to touch; the message names the file, the problem and what
    to do next."""


class WriteError(SettingsError):
    """Writing failed part-way (permissions, disk full): some changes may have been made."""


def _json_type(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


# -- JSON documents edited in place -------------------------------------------------------

MAX_SETTINGS = 16 << 20  # bytes; a settings file larger than this is not one we edit


def read_regular(path: str, limit: int = MAX_SETTINGS) -> bytes | None:
    """The bytes of the regular file at `path` (links followed), None when it does not exist.
    Never blocks: a FIFO, device or folder is refused before it is opened, and a file past
    `limit` bytes is refused too (OSError with a message that says which)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, "not a regular file (a folder, FIFO or device)", path)
    if st.st_size > limit:
        raise OSError(errno.EFBIG, "larger than %d bytes (%d)" % (limit, st.st_size), path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # swapped after the stat
            raise OSError(errno.EINVAL, "not a regular file", path)
        data = f.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, "larger than %d bytes" % limit, path)
    return data


class JsonDoc:
    """A JSON settings file as read: its exact bytes (None when missing) and the parsed
    object. `render(new_data)` gives the bytes for `new_data` with every untouched byte kept
    (engramory.jsonedit: numbers as written, escapes, BOM, CRLF, spacing). `load` raises
    SettingsError for anything it cannot safely edit, naming the file, line and column.
    `comments=True` is for hosts whose settings are JSONC (comments and trailing commas)."""

    def __init__(self, path: str, raw: bytes | None, data: dict[str, Any], tree: jsonedit.Node | None = None,
                 comments: bool = False) -> None:
        self.path = path
        self.raw = raw
        self.data = data
        self.tree = tree
        self.comments = comments
        self.bom = bool(raw and raw.startswith(BOM))

    @property
    def exists(self) -> bool:
        return self.raw is not None

    @property
    def text(self) -> str:
        if not self.raw:
            return ""
        return (self.raw[3:] if self.bom else self.raw).decode("utf-8")

    @classmethod
    def load(cls, path: str, comments: bool = False, host: str = "the host") -> JsonDoc:
        try:
            raw = read_regular(path)
        except OSError as exc:
            raise SettingsError(
                "%s: cannot be read (%s); check the path and its permissions"
                % (path, exc.strerror or exc.__class__.__name__)
            ) from None
        if raw is None:
            if os.path.islink(path):
                raise SettingsError(
                    "%s is a link to %s, which does not exist; fix or remove the link, then run "
                    "this again" % (path, os.path.realpath(path))
                )
            return cls(path, None, {}, comments=comments)
        body = raw[3:] if raw.startswith(BOM) else raw
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = body.count(b"\n", 0, exc.start) + 1
            column = exc.start - (body.rfind(b"\n", 0, exc.start) + 1) + 1
            raise SettingsError(
                "%s: not UTF-8 text (byte 0x%02x at line %d, column %d); %s reads settings as "
                "UTF-8: save the file as UTF-8, then run this again"
                % (path, body[exc.start], line, column, host)
            ) from None
        if not text.strip():
            return cls(path, raw, {}, comments=comments)
        try:
            tree = jsonedit.parse(text, comments=comments)
        except jsonedit.DuplicateKey as exc:
            raise SettingsError(
                "%s: the key %r appears twice in one object (line %d); editing the file would "
                "silently keep only one of them: remove the duplicate, then run this again"
                % (path, exc.key[:60], exc.line)
            ) from None
        except jsonedit.JsonError as exc:
            raise SettingsError(
                "%s: not valid JSON: %s at line %d, column %d; fix it (%s), then run this again"
                % (path, exc.msg, exc.line, exc.column,
                   "JSON allows no comments and no trailing commas" if not comments else "JSONC")
            ) from None
        if tree.kind != "object":
            raise SettingsError(
                "%s: the top level is %s, not an object; a settings file is one JSON object "
                "({...}): fix it, then run this again" % (path, _json_type(tree.value))
            )
        return cls(path, raw, tree.value, tree, comments)

    def render(self, data: Mapping[str, Any]) -> bytes:
        """The bytes this file holds once it says `data`: only what differs is rewritten."""
        if self.raw is not None and jsonedit.same(dict(data), self.data):
            return self.raw
        text = jsonedit.edit(self.text, dict(data), comments=self.comments, tree=self.tree)
        try:
            encoded = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate we were asked to write: escape it
            encoded = text.encode("utf-8", "backslashreplace")
        return (BOM if self.bom else b"") + encoded


def check_hooks_shape(doc: JsonDoc, events: Iterable[str]) -> None:
    """Refuse a `hooks` value (or an event list under it) whose shape we cannot merge into
    without guessing."""
    hooks = doc.data.get("hooks")
    if hooks is None and "hooks" not in doc.data:
        return
    if not isinstance(hooks, dict):
        raise SettingsError(
            "%s: \"hooks\" is %s, not an object of event names; fix it, then run this again"
            % (doc.path, _json_type(hooks))
        )
    for event in events:
        if event in hooks and not isinstance(hooks[event], list):
            raise SettingsError(
                "%s: \"hooks\".%s is %s, not an array of matcher groups; fix it, then run this again"
                % (doc.path, event, _json_type(hooks[event]))
            )


def canonical(data: Any) -> str:
    """A form in which two JSON values are equal exactly when they mean the same thing
    (True and 1 differ here, unlike in Python; numbers compare as written)."""
    return jsonedit.canonical(data)


# -- applying a change to one file -------------------------------------------------------


class Change:
    """One file's bytes before and after (None = missing / to be deleted)."""

    def __init__(self, path: str, before: bytes | None, after: bytes | None) -> None:
        self.path = path
        self.before = before
        self.after = after

    @property
    def changed(self) -> bool:
        return self.before != self.after


def unified_diff(path: str, before: bytes | None, after: bytes | None) -> str:
    """A unified diff of two versions of a text file ("" when equal)."""
    if before == after:
        return ""

    def lines(data: bytes | None) -> list[str]:
        if data is None:
            return []
        return data.decode("utf-8", "replace").splitlines(keepends=True)

    out = difflib.unified_diff(
        lines(before), lines(after),
        fromfile=path if before is not None else "/dev/null",
        tofile=path if after is not None else "/dev/null",
    )
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)
    return text


def apply_change(change: Change) -> str | None:
    """Write one change safely: refuse if the file changed since it was read, back up the old
    bytes (fsutil.backup, with the file's own mode: a 0600 file's backup is 0600), then
    replace (or delete) atomically, keeping the mode. Returns the backup path."""
    if not change.changed:
        return None
    # A settings file kept as a link (dotfiles) stays a link: write through it to its target.
    path = os.path.realpath(change.path)
    current = read_regular(path)
    if current != change.before:
        raise SettingsError(
            "%s: changed on disk while this ran (another program wrote it); nothing was "
            "written to it: run this again" % change.path
        )
    saved = fsutil.backup(path) if change.before is not None else None
    if change.after is None:
        os.unlink(change.path)  # the link itself, when it is one: its target keeps the backup
    else:
        fsutil.write_atomic(path, change.after)
    return saved


# -- merging hook entries (Claude Code's settings / hooks.json shape) ---------------------


def ours_in(groups: list[Any], is_ours: Callable[[Any], bool]) -> list[Any]:
    found: list[Any] = []
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            found.extend(h for h in group["hooks"] if is_ours(h))
    return found


def _remove_from_groups(groups: list[Any], is_ours: Callable[[Any], bool]) -> int:
    """Take our handlers out of an event's groups, dropping groups left empty by it."""
    removed = 0
    for group in list(groups):
        if not (isinstance(group, dict) and isinstance(group.get("hooks"), list)):
            continue
        kept = [h for h in group["hooks"] if not is_ours(h)]
        if len(kept) == len(group["hooks"]):
            continue
        removed += len(group["hooks"]) - len(kept)
        if kept:
            group["hooks"] = kept
        else:
            groups.remove(group)
    return removed


def add_hook_groups(
    data: Mapping[str, Any],
    wanted: Sequence[tuple[str, str | None, dict[str, Any]]],
    is_ours: Callable[[Any], bool],
) -> tuple[dict[str, Any], list[str], list[str]]:
    """Merge one matcher group per (event, matcher, handler) into `data["hooks"]`.

    Returns (new data, containers created as "hooks" / "hooks/<event>", one line per event).
    An event that already holds exactly the wanted handler under the wanted matcher is left
    byte-for-byte alone; otherwise our old handlers there are removed and the group appended.
    Foreign groups and handlers are never changed. `data` itself is not modified.
    """
    new = copy.deepcopy(dict(data))
    created: list[str] = []
    if "hooks" not in new:
        new["hooks"] = {}
        created.append("hooks")
    hooks = new["hooks"]
    report = []
    for event, matcher, handler in wanted:
        if event not in hooks:
            hooks[event] = []
            created.append("hooks/" + event)
        groups = hooks[event]
        label = "%s%s" % (event, " (%s)" % matcher if matcher else "")
        ours = ours_in(groups, is_ours)
        present = len(ours) == 1 and any(
            isinstance(g, dict) and g.get("matcher") == matcher and handler in g.get("hooks", [])
            for g in groups
        )
        if present:
            report.append("%s: already present" % label)
            continue
        replaced = _remove_from_groups(groups, is_ours)
        group: dict[str, Any] = {"matcher": matcher} if matcher is not None else {}
        group["hooks"] = [handler]
        groups.append(group)
        report.append("%s: %s" % (label, "replaced our earlier entry" if replaced else "added"))
    return new, created, report


def remove_hooks(
    data: Mapping[str, Any], is_ours: Callable[[Any], bool], created: Sequence[str] | None = None
) -> tuple[dict[str, Any], int]:
    """`data` without our handlers, and how many were removed. Containers we emptied are
    dropped when install created them (`created`), or always when that is unknown (None)."""
    new = copy.deepcopy(dict(data))
    hooks = new.get("hooks")
    if not isinstance(hooks, dict):
        return new, 0
    total = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        removed = _remove_from_groups(groups, is_ours)
        total += removed
        if removed and not groups and (created is None or "hooks/" + event in created):
            del hooks[event]
    if total and not hooks and (created is None or "hooks" in created):
        del new["hooks"]
    return new, total


def backups_of(path: str, limit: int = 50) -> list[str]:
    """The backups fsutil.backup made of `path` (beside its real file), newest first."""
    path = os.path.realpath(path)
    folder = os.path.dirname(path) or "."
    prefix = os.path.basename(path) + ".engramory-backup-"
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix)]
    except OSError:
        return []
    paths = [os.path.join(folder, n) for n in names]

    def mtime(p: str) -> float:
        try:
            return os.stat(p).st_mtime
        except OSError:
            return 0.0

    return sorted(paths, key=lambda p: (mtime(p), p), reverse=True)[:limit]


def restore_bytes(doc: JsonDoc, data: Mapping[str, Any]) -> bytes:
    """The bytes to write for `data`: when a backup of the file holds exactly this content,
    its bytes (so uninstall gives back the user's own formatting, byte for byte); else
    `data` rendered in the file's style."""
    want = canonical(data)
    for backup in backups_of(doc.path):
        try:
            if os.path.getsize(backup) > (4 << 20):
                continue
            old = JsonDoc.load(backup)
        except (OSError, SettingsError):
            continue
        if old.exists and canonical(old.data) == want:
            assert old.raw is not None
            return old.raw
    return doc.render(data)


# -- our hook entries --------------------------------------------------------------------


def sh_quote(path: str) -> str:
    """A path in double quotes for `sh -c` and Git Bash: forward slashes on Windows, and the
    four characters special inside double quotes escaped."""
    if os.name == "nt":
        path = path.replace("\\", "/")
    out = []
    for ch in path:
        if ch in '\\"$`':
            out.append("\\")
        out.append(ch)
    return '"' + "".join(out) + '"'


def shell_word(path: str) -> str:
    """`path` bare when it holds only characters no shell treats specially (so the command
    also reads right under PowerShell, which Claude Code uses on Windows without Git Bash),
    else double-quoted for sh / Git Bash."""
    if os.name == "nt":
        path = path.replace("\\", "/")  # Git Bash would read a backslash as an escape
    if path and all(c.isascii() and (c.isalnum() or c in "/:._-+") for c in path):
        return path
    return sh_quote(path)


# Python exits 2 when the script it is given does not exist, and Claude Code (like Cursor)
# reads exit 2 as a deny: a deleted or moved skill folder would then block every Edit and
# Write. So the script is run from `-c`: a missing file is a traceback and exit 1, which the
# host reports as a hook error and lets the call through (and `install --check` names).
# `__file__` is set so the script finds its bundle exactly as when run directly.
# --- registry (issue 9): the launcher imports the script as a module, so the interpreter
# runs its cached bytecode: exec(compile(...)) parsed the source on every hook call, about
# 1 ms, a sixth of a bare interpreter start (bench/bench_hook.py). A missing script is still
# an ImportError, exit 1. The script's folder goes first on sys.path and `__file__` is set
# by the import, so the script finds its bundle exactly as before.
LAUNCHER = (
    "import sys;p=sys.argv[1].replace(chr(92),'/');d,_,f=p.rpartition('/');"
    "sys.path.insert(0,d or '.');__import__(f[:-3])"
)
# Launchers earlier versions wrote: still recognised as ours (install --check, uninstall).
OLD_LAUNCHERS = (
    "import sys;p=sys.argv[1];exec(compile(open(p,'rb').read(),p,'exec'),{'__name__':'__main__','__file__':p})",
)
LAUNCHERS = (LAUNCHER,) + OLD_LAUNCHERS
# --- end registry ---


def hook_command(interpreter: str, script: str, base_var: str | None = None) -> str:
    """`<interpreter> -I -S -c <launcher> "<script>"`: the script is always quoted (it sits
    under the user's home, where spaces are common); the interpreter only when it needs to be.

    With `base_var` ("CLAUDE_PROJECT_DIR"), `script` is relative to the folder that variable
    names when the hook runs: `"${CLAUDE_PROJECT_DIR}/.claude/skills/engramory/hooks/x.py"`,
    expanded by the shell the host runs hooks in. That is what committed (project) settings
    need: the same line works in every clone, wherever it is."""
    if base_var is None:
        word = sh_quote(script)
    else:
        if os.path.isabs(script) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", base_var):
            raise ValueError("hook_command: base_var needs a variable name and a relative script")
        word = '"${%s}/%s' % (base_var, sh_quote(script.replace(os.sep, "/"))[1:])
    return "%s -I -S -c %s %s" % (shell_word(interpreter), sh_quote(LAUNCHER), word)


class HookCommand:
    """A hook command taken apart: the interpreter, its flags, and the script it runs (with
    every `$VAR` the shell would expand expanded from `env`). `variables` lists the names
    that were expanded and `unset` those that were empty: a script path built on an unset
    variable does not exist when the host runs it."""

    def __init__(self, words: list[str], variables: list[str], unset: list[str]) -> None:
        self.words = words
        self.variables = variables
        self.unset = unset
        self.interpreter = words[0] if words else ""
        self.launcher = len(words) >= 6 and words[1:4] == ["-I", "-S", "-c"] and words[4] in LAUNCHERS
        rest = words[5:] if self.launcher else words[1:]
        self.script = next((w for w in rest if w.endswith(".py")), "")

    def argv(self) -> list[str]:
        """What to run (subprocess, no shell) to run this hook as the host would."""
        return list(self.words)


def split_command(command: str, env: Mapping[str, str] | None = None) -> HookCommand:
    """Split `command` into words as POSIX sh does for the simple commands hooks use: single
    and double quotes, backslash escapes, `$NAME` and `${NAME}` expanded from `env` (default:
    os.environ). Raises ValueError for what this does not handle (unbalanced quotes, `$(...)`,
    backticks, pipes, `;`, `&&`, redirections)."""
    environ = os.environ if env is None else env
    words: list[str] = []
    variables: list[str] = []
    unset: list[str] = []
    cur: list[str] = []
    have = False
    i, n = 0, len(command)

    def expand(j: int) -> tuple[str, int]:
        if command.startswith("${", j):
            end = command.find("}", j)
            if end < 0:
                raise ValueError("unbalanced ${ in %r" % command)
            name = command[j + 2 : end]
            nxt = end + 1
        else:
            m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", command[j + 1 :])
            if not m:
                return "$", j + 1
            name = m.group(0)
            nxt = j + 1 + len(name)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValueError("unsupported expansion ${%s}" % name)
        variables.append(name)
        value = environ.get(name, "")
        if not value:
            unset.append(name)
        return value, nxt

    while i < n:
        c = command[i]
        if c in " \t\n":
            if have:
                words.append("".join(cur))
                cur, have = [], False
            i += 1
        elif c == "'":
            end = command.find("'", i + 1)
            if end < 0:
                raise ValueError("unbalanced single quote in %r" % command)
            cur.append(command[i + 1 : end])
            have = True
            i = end + 1
        elif c == '"':
            i += 1
            have = True
            while True:
                if i >= n:
                    raise ValueError("unbalanced double quote in %r" % command)
                c = command[i]
                if c == '"':
                    i += 1
                    break
                if c == "\\" and i + 1 < n and command[i + 1] in '\\"$`\n':
                    cur.append(command[i + 1])
                    i += 2
                elif c == "$" and command.startswith("$(", i) or c == "`":
                    raise ValueError("command substitution is not supported: %r" % command)
                elif c == "$":
                    value, i = expand(i)
                    cur.append(value)
                else:
                    cur.append(c)
                    i += 1
        elif c == "\\":
            if i + 1 < n:
                cur.append(command[i + 1])
            i += 2
            have = True
        elif c == "$":
            if command.startswith("$(", i):
                raise ValueError("command substitution is not supported: %r" % command)
            value, i = expand(i)
            cur.append(value)
            have = True
        elif c in "|;&<>`()":
            raise ValueError("%r: only a simple command (no %s) can be checked" % (command, c))
        else:
            cur.append(c)
            have = True
            i += 1
    if have:
        words.append("".join(cur))
    return HookCommand(words, variables, unset)


# -- the bundle's files ------------------------------------------------------------------


# -- the bundle's files ------------------------------------------------------------------

BUNDLE_DATA = "_bundle"  # inside the installed package (wheel): hooks/, tools/, SKILL.md, ...


def source_root() -> str:
    """The bundle this installer runs from: the checkout (the folder holding engramory/ and
    hooks/), or, installed from a wheel, `engramory/_bundle` inside the package, whose files
    `bundle_path` maps back to the checkout layout."""
    package = os.path.dirname(os.path.abspath(__file__))
    checkout = os.path.dirname(package)
    if os.path.isdir(os.path.join(checkout, "hooks")) or not os.path.isdir(os.path.join(package, BUNDLE_DATA)):
        return checkout
    return os.path.join(package, BUNDLE_DATA)


def is_wheel_layout(root: str) -> bool:
    return os.path.basename(root) == BUNDLE_DATA and not os.path.isdir(os.path.join(root, PACKAGE_DIR))


def bundle_path(root: str, rel: str) -> str:
    """Where the bundle file `rel` ("engramory/guard.py", "hooks/x.py", "SKILL.md") is read
    from: `root/rel` in a checkout; in a wheel the package files are the package itself."""
    if is_wheel_layout(root) and rel.startswith(PACKAGE_DIR + "/"):
        return os.path.join(os.path.dirname(os.path.dirname(root)), rel)
    return os.path.join(root, rel)


def bundle_files(root: str, required: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """(relative paths to install, problems: expected files that are missing). `required`
    names files a host's hooks cannot run without ("hooks/engramory_index_guard.py"): a
    host installer refuses to wire a hook when its file is among the problems."""
    files: list[str] = []
    notes: list[str] = []
    for name in TOP_FILES:
        if os.path.isfile(os.path.join(root, name)):
            files.append(name)
        else:
            notes.append("%s is not in %s; skipped" % (name, root))

    def walk(base: str, top: str, keep: Callable[[str], bool]) -> None:
        for folder, dirs, names in os.walk(os.path.join(base, top)):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", BUNDLE_DATA) and not d.startswith("."))
            for n in sorted(names):
                if not n.startswith(".") and keep(n):
                    rel = os.path.relpath(os.path.join(folder, n), base)
                    files.append(rel.replace(os.sep, "/"))

    package_base = os.path.dirname(os.path.dirname(root)) if is_wheel_layout(root) else root
    walk(package_base, PACKAGE_DIR, lambda n: n.endswith(".py") or n == "py.typed")
    for top in FLAT_PY_DIRS:
        base = os.path.join(root, top)
        if os.path.isdir(base):
            files.extend(
                "%s/%s" % (top, n) for n in sorted(os.listdir(base))
                if n.endswith(".py") and os.path.isfile(os.path.join(base, n))
            )
    for top in DATA_DIRS:
        walk(root, top, lambda n: not n.endswith((".pyc", ".pyo")))
    for rel in required:
        if rel not in files and not os.path.isfile(bundle_path(root, rel)):
            notes.append("%s is missing from %s: the hook that runs it could not run" % (rel, root))
    return files, notes


def missing_required(notes: Iterable[str]) -> list[str]:
    """The problems among bundle_files' notes that make a hook unable to run."""
    return [n for n in notes if "could not run" in n]


def is_bundle(path: str) -> bool:
    return os.path.isfile(os.path.join(path, PACKAGE_DIR, "__init__.py")) and os.path.isdir(
        os.path.join(path, "hooks")
    )


def same_path(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def read_manifest(path: str) -> dict[str, Any] | None:
    try:
        raw = read_regular(path, 4 << 20)
        if raw is None:
            return None
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("installer") != SKILL_NAME:
        return None
    if not isinstance(data.get("files"), list):
        data["files"] = []
    if not isinstance(data.get("settings"), dict):
        data["settings"] = {}
    return data


def write_manifest(path: str, data: Mapping[str, Any]) -> None:
    fsutil.write_atomic(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8"))


# -- planning the skill folder -----------------------------------------------------------


class SkillPlan:
    """What install will do to the skill folder."""

    def __init__(self) -> None:
        self.mode = "copy"  # copy | link | in-place
        self.add: list[str] = []
        self.update: list[str] = []
        self.same: list[str] = []
        self.stale: list[str] = []  # files an earlier install copied that the bundle dropped
        self.unlink_first = False  # a symlink from an earlier --link goes
        self.clear_folder: list[str] = []  # an earlier copy goes, for --link
        self.link_ok = False  # the links already point at the source
        self.files: list[str] = []

    @property
    def changed(self) -> bool:
        return bool(
            self.add or self.update or self.stale or self.unlink_first or self.clear_folder
            or (self.mode == "link" and not self.link_ok)
        )


def link_entries(files: Iterable[str]) -> list[str]:
    """The top-level names --link makes one link each for (SKILL.md, engramory, hooks, ...)."""
    return sorted({f.replace("\\", "/").split("/", 1)[0] for f in files})


def plan_skill(target: Any, source: str, files: list[str], link: bool) -> SkillPlan:
    """Decide, without writing, how the skill folder gets to hold the bundle. Raises
    SettingsError when the folder exists and is not ours.

    --link makes a real folder holding one link per top-level entry of the bundle, not one
    link for the whole folder: a whole-checkout link would carry .claude-plugin/ along, and
    Claude Code 2.1.332 then also loads the folder as a plugin, so every hook ran twice."""
    plan = SkillPlan()
    plan.files = files
    dest = target.skill_dir
    if os.path.lexists(dest) and not os.path.islink(dest) and os.path.isdir(dest) and same_path(dest, source):
        plan.mode = "in-place"
        old = read_manifest(os.path.join(dest, MANIFEST))
        plan.files = list(old["files"]) if old else []
        return plan
    if link and is_wheel_layout(source):
        raise SettingsError(
            "--link needs a checkout of engramory, and this one was installed from a package (%s); "
            "install without --link (a copy), or run the installer from a checkout" % source
        )
    plan.mode = "link" if link else "copy"
    if link:
        plan.files = link_entries(files)
    if os.path.islink(dest):  # one link for the whole folder, from an earlier version
        if not is_bundle(dest) and os.path.exists(dest):
            raise SettingsError(
                "%s is a link to %s, which is not an engramory bundle; move it away, then run this again"
                % (dest, os.path.realpath(dest))
            )
        plan.unlink_first = True
    elif os.path.lexists(dest):
        if not os.path.isdir(dest):
            raise SettingsError("%s exists and is not a folder; move it away, then run this again" % dest)
        old = read_manifest(os.path.join(dest, MANIFEST))
        if old is None:
            raise SettingsError(
                "%s exists but was not installed by engramory (no %s in it); move it away or "
                "use another --scope, then run this again" % (dest, MANIFEST)
            )
        old_files = [f for f in old["files"] if isinstance(f, str) and safe_rel(f)]
        old_link = old.get("mode") == "link"
        if link and old_link and sorted(old_files) == plan.files and all(
            os.path.islink(os.path.join(dest, n)) and same_path(os.path.join(dest, n), bundle_path(source, n))
            for n in plan.files
        ):
            plan.link_ok = True
            return plan
        if link or old_link:
            # Links and copies never mix: what an earlier install put there goes first.
            if link:
                foreign = _foreign_files(dest, old_files)
                if foreign:
                    raise SettingsError(
                        "%s holds files engramory did not install (%s); --link would have to "
                        "delete them: move them away or install without --link" % (dest, ", ".join(foreign[:5]))
                    )
            plan.clear_folder = old_files
        else:
            plan.stale = [f for f in old_files if f not in files]
    if link:
        return plan
    for rel in files:
        src = bundle_path(source, rel)
        dst = os.path.join(dest, rel)
        if plan.unlink_first or plan.clear_folder or not os.path.lexists(dst):
            plan.add.append(rel)
        elif _same_file_content(src, dst):
            plan.same.append(rel)
        else:
            plan.update.append(rel)
    return plan


def safe_rel(rel: str) -> bool:
    """A manifest entry we may delete: relative, inside the folder, no '..'."""
    parts = rel.replace("\\", "/").split("/")
    return bool(rel) and not os.path.isabs(rel) and ".." not in parts and "" not in parts


def _foreign_files(dest: str, ours: list[str]) -> list[str]:
    known = set(ours) | {MANIFEST}
    out = []
    for folder, dirs, names in os.walk(dest):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for n in names:
            rel = os.path.relpath(os.path.join(folder, n), dest).replace(os.sep, "/")
            if rel not in known:
                out.append(rel)
    return sorted(out)


def _same_file_content(a: str, b: str) -> bool:
    try:
        if os.path.islink(b) or not os.path.isfile(b):
            return False
        sa, sb = os.stat(a), os.stat(b)
        if sa.st_size != sb.st_size or (sa.st_mode & 0o777) != (sb.st_mode & 0o777):
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def apply_skill(plan: SkillPlan, target: Any, source: str) -> None:
    dest = target.skill_dir
    if plan.mode == "in-place":
        return
    if plan.unlink_first:
        os.unlink(dest)
    if plan.clear_folder:
        remove_listed(dest, plan.clear_folder)
        prune_empty(dest)
    if plan.mode == "link":
        if plan.link_ok:
            return
        os.makedirs(dest, exist_ok=True)
        for name in plan.files:
            src = bundle_path(source, name)
            try:
                os.symlink(src, os.path.join(dest, name), target_is_directory=os.path.isdir(src))
            except OSError as exc:
                raise WriteError(
                    "cannot create the link %s -> %s (%s); install without --link to copy instead"
                    % (os.path.join(dest, name), src, exc.strerror or exc.__class__.__name__)
                ) from None
        return
    for rel in plan.add + plan.update:
        src = bundle_path(source, rel)
        with open(src, "rb") as f:
            data = f.read()
        fsutil.write_atomic(os.path.join(dest, rel), data, mode=os.stat(src).st_mode & 0o777)
    remove_listed(dest, plan.stale)
    prune_empty(dest)
    precompile(dest)


def precompile(folder: str) -> None:
    """Write the bytecode of the copied Python files now, with the interpreter the hooks
    will run: the guard runs on every edit, and otherwise its first runs compile the package
    (and every run does, where the folder is not writable at hook time). Best effort."""
    import compileall

    for sub in ("engramory", "hooks", "tools"):
        path = os.path.join(folder, sub)
        if os.path.isdir(path) and not os.path.islink(path):
            try:
                compileall.compile_dir(path, quiet=2, workers=1)
            except Exception:  # noqa: BLE001 - a cache; the hooks compile on their own if need be
                pass


def folder_action_line(
    label: str, action: str, dest: str, manifest: dict[str, Any] | None, dry_run: bool, others: Sequence[str] = ()
) -> str:
    """One report line for what uninstall does to an installed folder (every host)."""
    verb = "would remove" if dry_run else "removed"
    if action == "unlink":
        what = "%s the link %s" % (verb, dest)
    elif action == "remove":
        what = "%s %s (%d files)" % (verb, dest, len(manifest["files"]) if manifest else 0)
    elif action == "manifest-only":
        what = "%s is the bundle itself; its files stay" % dest
    elif action == "keep-shared":
        what = "%s stays: still used by %s" % (dest, ", ".join(others))
    elif action == "foreign":
        what = "%s was not installed by engramory; left alone" % dest
    else:
        what = "nothing installed at %s" % dest
    return "  %s: %s\n" % (label, what)


def _inside(path: str, folder: str) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def remove_listed(folder: str, rels: Iterable[str]) -> list[str]:
    """Delete the listed regular files (or links) under `folder`; return those that went."""
    gone = []
    for rel in rels:
        if not safe_rel(rel):
            continue
        p = os.path.join(folder, rel)
        if not _inside(os.path.dirname(p), folder):
            continue  # reached through a link: not a file of this folder, never delete it
        if os.path.islink(p) or os.path.isfile(p):
            try:
                os.unlink(p)
                gone.append(rel)
            except OSError:
                pass
        parent = os.path.join(os.path.dirname(p), "__pycache__")
        if os.path.isdir(parent) and rel.endswith(".py"):
            shutil.rmtree(parent, ignore_errors=True)  # only bytecode Python made for our files
    return gone


def prune_empty(folder: str) -> None:
    """Remove folders left empty under `folder` (not `folder` itself)."""
    for current, _, _ in sorted(os.walk(folder), key=lambda t: -len(t[0])):
        if current != folder:
            try:
                os.rmdir(current)
            except OSError:
                pass



# -- install --check scaffolding -------------------------------------------------------------


class Report:
    """What `install --check` found, as lines: ok (works), note (worth knowing) and problem
    (the guard would not act). Every problem carries its reason and its fix. `finish`
    prints the report and returns the exit status: 0 healthy, 1 with any problem."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.oks: list[str] = []
        self.notes: list[str] = []
        self.problems: list[tuple[str, str]] = []

    def ok(self, line: str) -> None:
        self.oks.append(line)

    def note(self, line: str) -> None:
        self.notes.append(line)

    def problem(self, reason: str, fix: str) -> None:
        if (reason, fix) not in self.problems:
            self.problems.append((reason, fix))

    @property
    def healthy(self) -> bool:
        return not self.problems

    def finish(self, healthy_line: str, out: Callable[[str], Any] | None = None) -> int:
        write = out or sys.stdout.write
        write(self.title + "\n")
        for line in self.oks:
            write("  ok: %s\n" % line)
        for line in self.notes:
            write("  note: %s\n" % line)
        for reason, fix in self.problems:
            write("  problem: %s\n    fix: %s\n" % (reason, fix))
        if self.problems:
            write("  the guard would not act: %d problem%s\n" % (len(self.problems), "" if len(self.problems) == 1 else "s"))
            return 1
        write("  healthy: %s\n" % healthy_line)
        return 0

    def as_json(self) -> dict[str, Any]:
        return {
            "title": self.title, "healthy": self.healthy, "ok": self.oks, "notes": self.notes,
            "problems": [{"reason": r, "fix": f} for r, f in self.problems],
        }


class Smoke:
    """One hook run: its exit status, stdout and stderr; `error` when it could not start."""

    def __init__(self, rc: int, stdout: bytes, stderr: bytes, error: str = "") -> None:
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.error = error

    def json(self) -> Any:
        """stdout as JSON (None when it is empty or not JSON)."""
        text = self.stdout.decode("utf-8", "replace").strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return None

    def last_error_line(self) -> str:
        lines = self.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[-1][:200] if lines else ""


def smoke(
    argv: Sequence[str], payload: Any, env: Mapping[str, str] | None = None, cwd: str | None = None,
    timeout: float = HOOK_TIMEOUT,
) -> Smoke:
    """Run a hook command (split_command(...).argv()) with `payload` (JSON-encoded unless
    bytes) on stdin, as the host would. `env` is the complete environment (default: ours
    without ENGRAMORY_*)."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
    if env is None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    try:
        proc = subprocess.run(
            list(argv), input=data, capture_output=True, timeout=timeout, env=dict(env), cwd=cwd,
        )
    except subprocess.TimeoutExpired:
        return Smoke(-1, b"", b"", "it did not answer within %g s (the host gives up and lets the call through)" % timeout)
    except OSError as exc:
        return Smoke(-1, b"", b"", "it could not start (%s)" % (exc.strerror or exc))
    return Smoke(proc.returncode, proc.stdout, proc.stderr)


def interpreter_problem(exe: str) -> str | None:
    """Why `exe` cannot run a hook, or None."""
    if not exe:
        return "the command names no interpreter"
    if not os.path.isabs(exe):
        found = shutil.which(exe)
        if not found:
            return "the interpreter %s is not on PATH" % exe
        exe = found
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        return "the interpreter %s does not exist or cannot run" % exe
    return None


def import_problems(interpreter: str, bundle_dir: str, modules: Iterable[str]) -> list[str]:
    """Import every module in `modules` ("engramory.guard", ...) from `bundle_dir` with the
    hooks' interpreter, the way the hooks run (-I -S). A hook whose import fails exits 0
    and lets everything through, so a missing or broken module is a problem even though
    no hook ever fails loudly. Returns one line per module that does not import."""
    names = sorted(set(modules))
    if not names:
        return []
    code = (
        "import sys,importlib\n"
        "sys.path.insert(0,sys.argv[1])\n"
        "bad=[]\n"
        "for m in sys.argv[2:]:\n"
        "    try: importlib.import_module(m)\n"
        "    except BaseException as e: bad.append('%s: %r'%(m,e))\n"
        "print('\\n'.join(bad))\n"
    )
    try:
        proc = subprocess.run(
            [interpreter, "-I", "-S", "-c", code, bundle_dir, *names], capture_output=True, timeout=30,
            cwd=bundle_dir if os.path.isdir(bundle_dir) else None,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return ["could not run %s to import the bundle: %s" % (interpreter, exc)]
    if proc.returncode != 0:
        return ["importing the bundle with %s failed: %s" % (interpreter, proc.stderr.decode("utf-8", "replace").strip()[-200:])]
    return [line for line in proc.stdout.decode("utf-8", "replace").splitlines() if line.strip()]


def modules_of(files: Iterable[str]) -> list[str]:
    """Dotted module names of the package files in a manifest's file list."""
    out = []
    for rel in files:
        if rel.startswith(PACKAGE_DIR + "/") and rel.endswith(".py"):
            mod = rel[:-3].replace("/", ".")
            if mod.endswith(".__main__"):
                continue  # runs the CLI when imported
            out.append(mod[: -len(".__init__")] if mod.endswith(".__init__") else mod)
    return sorted(out)


def bundle_problems(bundle_dir: str, interpreter: str) -> list[str]:
    """Every file the manifest of `bundle_dir` lists is there, and every package module in
    it imports with `interpreter`."""
    manifest = read_manifest(os.path.join(bundle_dir, MANIFEST))
    if manifest is None:
        if is_bundle(bundle_dir):
            files, _ = bundle_files(bundle_dir)
        else:
            return ["%s holds no engramory bundle (no %s)" % (bundle_dir, MANIFEST)]
    else:
        files = [f for f in manifest["files"] if isinstance(f, str) and safe_rel(f)]
        if manifest.get("mode") == "link" or manifest.get("mode") == "in-place":
            files, _ = bundle_files(bundle_dir)
    missing = [f for f in files if not os.path.exists(os.path.join(bundle_dir, f))]
    problems = ["%s is missing from %s" % (f, bundle_dir) for f in missing[:10]]
    if len(missing) > 10:
        problems.append("... and %d more files are missing" % (len(missing) - 10))
    problems.extend(import_problems(interpreter, bundle_dir, modules_of(f for f in files if f not in missing)))
    return problems

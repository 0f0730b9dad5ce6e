"""`engramory install` / `engramory uninstall`: put the skill and its hooks into Claude Code,
and take out exactly what was put in.

install copies (or, with --link, symlinks) the bundle's runtime files into
`<config>/skills/engramory` (user scope) or `<project>/.claude/skills/engramory`, and merges
three hook entries into the matching settings file: the index guard (PreToolUse), the shell
and MCP backstop (PostToolUse) and the session notice (SessionStart). Each hook command names
the interpreter that ran the installer and the script by absolute, quoted paths, so a missing
`python3` on PATH or a path with spaces cannot disable the guard.

The user's settings are handled as data that must not be lost: a file that cannot be parsed
is refused and left alone; every foreign key and hook is kept; a no-op install does not
rewrite the file; a real change is shown as a diff (--dry-run) or backed up and replaced
atomically. Our hooks are recognised by their script names under a `skills/engramory` folder,
so uninstall removes them and nothing else.

The settings machinery (JsonDoc, Change, apply_change, add_hook_groups, remove_hooks,
restore_bytes, ...) is host-neutral and reused by the other hosts' installers.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import shlex
import shutil
import subprocess
import sys

from engramory import __version__, fsutil
from engramory.automemory import claude_config_dir
from engramory.cliutil import Parser

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

SKILL_NAME = "engramory"
MANIFEST = ".engramory-install.json"  # inside a copied skill folder: proves it is ours
LINK_MANIFEST = ".engramory-link.json"  # beside a --link symlink, in the skills folder
BOM = b"\xef\xbb\xbf"
HOOK_TIMEOUT = 10  # seconds; a stalled hook fails open, so keep it short

GUARD_SCRIPT = "engramory_index_guard.py"
POST_TOOL_SCRIPT = "engramory_post_tool.py"
SESSION_START_SCRIPT = "engramory_session_start.py"
EDIT_MATCHER = "Edit|Write|MultiEdit"  # letters and '|' only: an exact-name list on every version
# '^', '(', '.', '*' make this a JavaScript regex; anchored so that only these tools match.
SHELL_MATCHER = "^(Bash|PowerShell|mcp__.*)$"
# (event, matcher or None for "every source", script)
HOOKS: tuple[tuple[str, str | None, str], ...] = (
    ("PreToolUse", EDIT_MATCHER, GUARD_SCRIPT),
    ("PostToolUse", SHELL_MATCHER, POST_TOOL_SCRIPT),
    ("SessionStart", None, SESSION_START_SCRIPT),
)
SCRIPTS = tuple(script for _, _, script in HOOKS)

# What a user's copy needs at run time; tests, bench, caches and VCS data stay behind.
TOP_FILES = ("SKILL.md", "rules-snippet.md", "PORTING.md", "README.md")
PACKAGE_DIR = "engramory"
FLAT_PY_DIRS = ("hooks", "tools")
DATA_DIRS = ("schemas", "templates")
PLUGIN_MANIFEST = ".claude-plugin/plugin.json"  # never copied: it would make the skill a plugin too
SCOPES = ("user", "project", "local")
HOSTS = ("claude", "cursor", "hermes", "qwen")
RESTART = (
    "Restart Claude Code (or open /hooks and review them) so the hook changes take effect."
)


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


# -- JSON documents that keep their formatting -------------------------------------------


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError("%s is not JSON" % name)


class JsonDoc:
    """A JSON settings file as read: its exact bytes (None when missing), the parsed object
    and enough of its style (indent, line ending, BOM, final newline) to write it back the
    same way. `load` raises SettingsError for anything it cannot safely rewrite."""

    def __init__(self, path: str, raw: bytes | None, data: dict[str, Any]) -> None:
        self.path = path
        self.raw = raw
        self.data = data
        self.bom = bool(raw and raw.startswith(BOM))
        self.indent: int | str = 2
        self.newline = "\n"
        self.final_newline = True
        if raw:
            text = raw[3:].decode("utf-8") if self.bom else raw.decode("utf-8")
            self._detect(text)

    def _detect(self, text: str) -> None:
        if "\r\n" in text:
            self.newline = "\r\n"
        for line in text.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and len(stripped) < len(line):
                lead = line[: len(line) - len(stripped)]
                self.indent = "\t" if lead.startswith("\t") else len(lead)
                break
        multi_line = "\n" in text.strip()
        self.final_newline = text.endswith("\n") or not multi_line

    @property
    def exists(self) -> bool:
        return self.raw is not None

    @classmethod
    def load(cls, path: str) -> JsonDoc:
        try:
            with open(path, "rb") as f:
                raw: bytes | None = f.read()
        except FileNotFoundError:
            if os.path.islink(path):
                raise SettingsError(
                    "%s is a link to %s, which does not exist; fix or remove the link, then run "
                    "this again" % (path, os.path.realpath(path))
                ) from None
            return cls(path, None, {})
        except OSError as exc:
            raise SettingsError(
                "%s: cannot be read (%s); check the path and its permissions"
                % (path, exc.strerror or exc.__class__.__name__)
            ) from None
        assert raw is not None
        body = raw[3:] if raw.startswith(BOM) else raw
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = body.count(b"\n", 0, exc.start) + 1
            column = exc.start - (body.rfind(b"\n", 0, exc.start) + 1) + 1
            raise SettingsError(
                "%s: not UTF-8 text (byte 0x%02x at line %d, column %d); Claude Code reads "
                "settings as UTF-8: save the file as UTF-8, then run this again"
                % (path, body[exc.start], line, column)
            ) from None
        if not text.strip():
            return cls(path, raw, {})
        try:
            data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
        except json.JSONDecodeError as exc:
            raise SettingsError(
                "%s: not valid JSON: %s at line %d, column %d; fix it (JSON allows no comments "
                "and no trailing commas), then run this again" % (path, exc.msg, exc.lineno, exc.colno)
            ) from None
        except _DuplicateKey as exc:
            raise SettingsError(
                "%s: the key %r appears twice in one object; rewriting the file would silently "
                "keep only one of them: remove the duplicate, then run this again" % (path, exc.args[0][:60])
            ) from None
        except (ValueError, RecursionError) as exc:
            raise SettingsError("%s: not valid JSON (%s); fix it, then run this again" % (path, exc)) from None
        if not isinstance(data, dict):
            raise SettingsError(
                "%s: the top level is %s, not an object; a settings file is one JSON object "
                "({...}): fix it, then run this again" % (path, _json_type(data))
            )
        return cls(path, raw, data)

    def render(self, data: Mapping[str, Any]) -> bytes:
        """`data` as this file's bytes would hold it: same indent, line ending and BOM."""
        try:
            text = json.dumps(data, indent=self.indent, ensure_ascii=False)
            encoded = text.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates from \\ud800-style escapes
            text = json.dumps(data, indent=self.indent, ensure_ascii=True)
            encoded = text.encode("utf-8")
        if self.newline != "\n":  # json escapes newlines inside strings, so these are all layout
            encoded = encoded.replace(b"\n", self.newline.encode())
        if self.final_newline:
            encoded += self.newline.encode()
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
    (True and 1 differ here, unlike in Python)."""
    return json.dumps(data, sort_keys=True, ensure_ascii=True)


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
    bytes (fsutil.backup), then replace (or delete) atomically. Returns the backup path."""
    if not change.changed:
        return None
    # A settings file kept as a link (dotfiles) stays a link: write through it to its target.
    path = os.path.realpath(change.path)
    try:
        with open(path, "rb") as f:
            current: bytes | None = f.read()
    except FileNotFoundError:
        current = None
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


def _ours_in(groups: list[Any], is_ours: Callable[[Any], bool]) -> list[Any]:
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
        ours = _ours_in(groups, is_ours)
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
LAUNCHER = "import sys;p=sys.argv[1];exec(compile(open(p,'rb').read(),p,'exec'),{'__name__':'__main__','__file__':p})"


def hook_command(interpreter: str, script: str) -> str:
    """`<interpreter> -I -S -c <launcher> "<script>"`: the script is always quoted (it sits
    under the user's home, where spaces are common); the interpreter only when it needs to be."""
    return "%s -I -S -c %s %s" % (shell_word(interpreter), sh_quote(LAUNCHER), sh_quote(script))


def is_our_handler(handler: Any) -> bool:
    """A handler runs one of our scripts from a `skills/engramory` folder."""
    if not isinstance(handler, dict):
        return False
    command = handler.get("command")
    if not isinstance(command, str):
        return False
    command = command.replace("\\\\", "/").replace("\\", "/")
    return any("/skills/%s/hooks/%s" % (SKILL_NAME, script) in command for script in SCRIPTS)


def wanted_hooks(skill_dir: str, interpreter: str) -> list[tuple[str, str | None, dict[str, Any]]]:
    return [
        (
            event,
            matcher,
            {
                "type": "command",
                "command": hook_command(interpreter, os.path.join(skill_dir, "hooks", script)),
                "timeout": HOOK_TIMEOUT,
            },
        )
        for event, matcher, script in HOOKS
    ]


# -- the bundle's files ------------------------------------------------------------------


def source_root() -> str:
    """The bundle this installer runs from (the folder holding engramory/)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bundle_files(root: str) -> tuple[list[str], list[str]]:
    """(relative paths to install, notes about expected files that are missing)."""
    files: list[str] = []
    notes: list[str] = []
    for name in TOP_FILES:
        if os.path.isfile(os.path.join(root, name)):
            files.append(name)
        else:
            notes.append("%s is not in %s yet; skipped" % (name, root))

    def walk(top: str, keep: Callable[[str], bool]) -> None:
        base = os.path.join(root, top)
        for folder, dirs, names in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
            for n in sorted(names):
                if not n.startswith(".") and keep(n):
                    rel = os.path.relpath(os.path.join(folder, n), root)
                    files.append(rel.replace(os.sep, "/"))

    walk(PACKAGE_DIR, lambda n: n.endswith(".py") or n == "py.typed")
    for top in FLAT_PY_DIRS:
        base = os.path.join(root, top)
        if os.path.isdir(base):
            files.extend(
                "%s/%s" % (top, n) for n in sorted(os.listdir(base))
                if n.endswith(".py") and os.path.isfile(os.path.join(base, n))
            )
    for top in DATA_DIRS:
        walk(top, lambda n: not n.endswith((".pyc", ".pyo")))
    for script in SCRIPTS:
        if "hooks/" + script not in files:
            notes.append("hooks/%s is missing from %s: that hook would not run" % (script, root))
    return files, notes


def is_bundle(path: str) -> bool:
    return os.path.isfile(os.path.join(path, PACKAGE_DIR, "__init__.py")) and os.path.isfile(
        os.path.join(path, "hooks", GUARD_SCRIPT)
    )


def same_path(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


# -- where things go ---------------------------------------------------------------------


class Target:
    """Where one scope's skill folder and settings file are."""

    def __init__(self, scope: str, env: Mapping[str, str] | None = None, cwd: str | None = None) -> None:
        self.scope = scope
        project = os.path.abspath(cwd or os.getcwd())
        if scope == "user":
            base = claude_config_dir(env)
            self.settings = os.path.join(base, "settings.json")
        else:
            base = os.path.join(project, ".claude")
            name = "settings.local.json" if scope == "local" else "settings.json"
            self.settings = os.path.join(base, name)
        self.skills = os.path.join(base, "skills")
        self.skill_dir = os.path.join(self.skills, SKILL_NAME)

    @property
    def link_manifest(self) -> str:
        return os.path.join(self.skills, LINK_MANIFEST)

    def manifest_path(self) -> str:
        """Where this install's manifest lives now: beside a symlink, inside a folder."""
        if os.path.islink(self.skill_dir):
            return self.link_manifest
        return os.path.join(self.skill_dir, MANIFEST)


def read_manifest(path: str) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read().decode("utf-8"))
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


def plan_skill(target: Target, source: str, files: list[str], link: bool) -> SkillPlan:
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
            os.path.islink(os.path.join(dest, n)) and same_path(os.path.join(dest, n), os.path.join(source, n))
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
        src = os.path.join(source, rel)
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


def apply_skill(plan: SkillPlan, target: Target, source: str) -> None:
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
            src = os.path.join(source, name)
            try:
                os.symlink(src, os.path.join(dest, name), target_is_directory=os.path.isdir(src))
            except OSError as exc:
                raise WriteError(
                    "cannot create the link %s -> %s (%s); install without --link to copy instead"
                    % (os.path.join(dest, name), src, exc.strerror or exc.__class__.__name__)
                ) from None
        return
    for rel in plan.add + plan.update:
        src = os.path.join(source, rel)
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


# -- install -----------------------------------------------------------------------------


def _parser(prog: str, uninstall: bool) -> Parser:
    what = "Take out exactly what `engramory install` put in" if uninstall else (
        "Install the engramory skill and its hooks into Claude Code"
    )
    parser = Parser(
        prog=prog,
        description=what + ". The memory store itself is never touched.",
        epilog="Scopes: user = $CLAUDE_CONFIG_DIR or ~/.claude (skills/engramory, settings.json); "
        "project = ./.claude (skills/engramory, settings.json); local = ./.claude/skills/engramory "
        "with the hooks in ./.claude/settings.local.json. --host cursor: the preToolUse guard into "
        "~/.cursor/hooks.json (user) or ./.cursor/hooks.json (project), first in its list. --host "
        "hermes: the plugin into $HERMES_HOME/plugins/engramory (HERMES_HOME, else ~/.hermes), "
        "enabled in its config.yaml; user scope only, no --link. Exit status: 0 done (or healthy, for --check), 1 refused with "
        "nothing changed, a write that failed (the message says what was left) or, for --check, "
        "a problem found; 64 usage error.",
    )
    parser.add_argument("--scope", choices=SCOPES, default="user", help="where to install (default: user)")
    parser.add_argument("--host", choices=HOSTS, default="claude", help="which host to wire (default: claude)")
    parser.add_argument("--dry-run", action="store_true", help="show what would change (a diff) and write nothing")
    if not uninstall:
        parser.add_argument(
            "--link", action="store_true",
            help="link the skill's files to this checkout instead of copying them (for development: "
            "edits show at once)",
        )
        parser.add_argument(
            "--check", action="store_true",
            help="verify the installed wiring (interpreter and scripts exist and run) and change nothing",
        )
    return parser


def _other_host(args: argparse.Namespace, uninstall: bool) -> int:
    """Hand over to engramory.install_<host>: install(args) / uninstall(args) -> int."""
    import importlib

    name = "engramory.install_%s" % args.host
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        sys.stderr.write(
            "engramory: --host %s is not available in this bundle yet (%s.py is missing); "
            "only --host claude can be installed from here\n" % (args.host, name.replace(".", "/"))
        )
        return 1
    entry = getattr(module, "uninstall" if uninstall else "install")
    return int(entry(args))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser("engramory install", uninstall=False).parse_args(argv)
    if args.host != "claude":
        return _other_host(args, uninstall=False)
    target = Target(args.scope)
    if args.check:
        return run_check(target)
    try:
        return install(target, dry_run=args.dry_run, link=args.link)
    except SettingsError as exc:
        sys.stderr.write("engramory install: %s\n" % exc)
        if not isinstance(exc, WriteError):
            sys.stderr.write("engramory install: nothing was changed.\n")
        return 1


def install(target: Target, dry_run: bool = False, link: bool = False, interpreter: str | None = None) -> int:
    """Install into `target`; prints what it did. Raises SettingsError before writing anything
    when the settings file or the skill folder cannot be handled safely."""
    out = sys.stdout.write
    exe = interpreter or sys.executable
    if not exe or not os.path.isabs(exe):
        raise SettingsError(
            "cannot tell which Python runs this (sys.executable is %r); run the installer with "
            "an absolute interpreter path, e.g. /usr/bin/python3 -m engramory install" % (exe,)
        )
    source = source_root()
    files, notes = bundle_files(source)
    doc = JsonDoc.load(target.settings)
    check_hooks_shape(doc, [event for event, _, _ in HOOKS])
    plan = plan_skill(target, source, files, link)
    old_manifest_path = target.manifest_path()
    old_manifest = read_manifest(old_manifest_path)
    new_data, created, report = add_hook_groups(doc.data, wanted_hooks(target.skill_dir, exe), is_our_handler)
    after = doc.raw if canonical(new_data) == canonical(doc.data) else doc.render(new_data)
    change = Change(target.settings, doc.raw, after)

    head = "engramory install (%s scope%s)" % (target.scope, ", dry run: nothing is written" if dry_run else "")
    out(head + "\n")
    for note in notes:
        out("  note: %s\n" % note)
    if interpreter is None and sys.prefix != getattr(sys, "base_prefix", sys.prefix):
        out("  note: the hooks will run %s, inside a virtual environment: they stop working if it "
            "is deleted (run the installer with the system python3 to avoid that)\n" % exe)
    if plan.mode == "in-place":
        out("  skill: %s is this bundle itself; nothing to copy\n" % target.skill_dir)
        if os.path.isfile(os.path.join(target.skill_dir, PLUGIN_MANIFEST)):
            out("  note: %s holds %s, so Claude Code also loads it as a plugin and every hook would "
                "run twice; keep the checkout elsewhere and install from there (a copy), or use the "
                "plugin alone\n" % (target.skill_dir, PLUGIN_MANIFEST))
    elif plan.mode == "link":
        if plan.link_ok:
            out("  skill: %s already links to %s\n" % (target.skill_dir, source))
        else:
            out("  skill: %s: %s %s to %s\n" % (
                target.skill_dir, "would link" if dry_run else "linked", ", ".join(plan.files), source))
    else:
        verb = "would copy" if dry_run else "copied"
        out(
            "  skill: %s %d files to %s (%d new, %d updated, %d unchanged)\n"
            % (verb, len(plan.add) + len(plan.update), target.skill_dir, len(plan.add), len(plan.update), len(plan.same))
        )
        if dry_run:
            for rel in plan.add:
                out("    + %s\n" % rel)
            for rel in plan.update:
                out("    ~ %s\n" % rel)
        for rel in plan.stale:
            out("    - %s (no longer in the bundle: %s)\n" % (rel, "would remove" if dry_run else "removed"))
    out("  settings: %s\n" % target.settings)
    for line in report:
        out("    %s\n" % line)

    if dry_run:
        diff = unified_diff(target.settings, change.before, change.after)
        out(diff if diff else "  settings: no change\n")
        return 0

    try:
        if plan.mode in ("copy", "link") and plan.changed and not plan.unlink_first:
            # Claim the folder before filling it: if a copy fails half-way, the next install
            # (or uninstall) still knows every file here is ours.
            claim = dict(old_manifest or {"installer": SKILL_NAME, "settings": {}})
            claim["files"] = sorted(set(plan.files) | set(claim.get("files") or []))
            write_manifest(os.path.join(target.skill_dir, MANIFEST), claim)
        apply_skill(plan, target, source)
        _record_install(target, plan, doc, created, old_manifest)
        if old_manifest is not None and old_manifest_path != target.manifest_path() and os.path.isfile(old_manifest_path):
            os.unlink(old_manifest_path)  # moved: a link replaced a copy, or the other way round
        saved = apply_change(change)
    except OSError as exc:
        raise WriteError(
            "could not write %s: %s; check the permissions and free space, then run this again "
            "(what was already copied is listed in %s)"
            % (exc.filename or target.skill_dir, exc.strerror or exc, target.manifest_path())
        ) from None
    if saved:
        out("  backup of the previous settings: %s\n" % saved)
    if change.changed:
        out("  " + RESTART + "\n")
    elif not plan.changed:
        out("  already installed: nothing changed.\n")
    else:
        out("  hook entries unchanged: no restart needed (skill files are reloaded by Claude Code).\n")
    return 0


def _record_install(
    target: Target, plan: SkillPlan, doc: JsonDoc, created: list[str], old: dict[str, Any] | None
) -> None:
    """Write the manifest: the files we own and, per settings file, what install created, so
    uninstall gives back exactly what was there before. `old` is the manifest found before
    this install (its settings records carry over)."""
    path = target.manifest_path()
    manifest: dict[str, Any] = {"installer": SKILL_NAME, "files": [], "settings": {}}
    if old is not None:
        manifest["settings"] = dict(old["settings"])
        manifest["files"] = list(old["files"])
    manifest["version"] = __version__
    manifest["mode"] = plan.mode
    if plan.mode == "in-place" and old is not None and old.get("mode") == "copy":
        manifest["mode"] = "copy"  # rerun from the copy we made: it is still ours to remove
    if plan.mode in ("copy", "link"):
        manifest["files"] = sorted(plan.files)
    record = manifest["settings"].get(target.settings)
    if not isinstance(record, dict):
        record = {"created_file": not doc.exists, "created": created}
    else:
        prior = [c for c in record.get("created", []) if isinstance(c, str)]
        record = dict(record, created=prior + [c for c in created if c not in prior])
    manifest["settings"][target.settings] = record
    current = read_manifest(path)
    if current is not None and canonical(current) == canonical(manifest):
        return  # a no-op install writes nothing
    write_manifest(path, manifest)


# -- uninstall ---------------------------------------------------------------------------


def uninstall_main(argv: Sequence[str] | None = None) -> int:
    args = _parser("engramory uninstall", uninstall=True).parse_args(argv)
    if args.host != "claude":
        return _other_host(args, uninstall=True)
    try:
        return uninstall(Target(args.scope), dry_run=args.dry_run)
    except SettingsError as exc:
        sys.stderr.write("engramory uninstall: %s\n" % exc)
        if not isinstance(exc, WriteError):
            sys.stderr.write("engramory uninstall: nothing was changed.\n")
        return 1


def uninstall(target: Target, dry_run: bool = False) -> int:
    out = sys.stdout.write
    doc = JsonDoc.load(target.settings)
    if "hooks" in doc.data and not isinstance(doc.data["hooks"], dict):
        check_hooks_shape(doc, ())
    mpath = target.manifest_path()
    manifest = read_manifest(mpath)
    record = (manifest or {}).get("settings", {}).get(target.settings)
    created = record.get("created") if isinstance(record, dict) else None
    if created is not None and not isinstance(created, list):
        created = None
    new_data, removed = remove_hooks(doc.data, is_our_handler, created)
    change = Change(target.settings, doc.raw, doc.raw)
    if removed:
        change.after = restore_bytes(doc, new_data)
        created_file = bool(record.get("created_file")) if isinstance(record, dict) else not backups_of(doc.path)
        if not new_data and created_file:
            change.after = None

    # The skill folder goes only when it is ours and no other settings file still uses it.
    others = [
        p for p in ((manifest or {}).get("settings") or {})
        if p != target.settings and _uses_our_hooks(p)
    ]
    dest = target.skill_dir
    skill_action = ""
    if os.path.islink(dest):
        if is_bundle(dest) or not os.path.exists(dest):
            skill_action = "unlink" if not others else "keep-shared"
        else:
            skill_action = "foreign"
    elif os.path.isdir(dest):
        if manifest is None:
            skill_action = "foreign"
        elif manifest.get("mode") == "in-place":
            skill_action = "manifest-only" if not others else "keep-shared"
        else:
            skill_action = "remove" if not others else "keep-shared"

    head = "engramory uninstall (%s scope%s)" % (target.scope, ", dry run: nothing is written" if dry_run else "")
    out(head + "\n")
    out("  settings: %s: %s\n" % (
        target.settings,
        "%d engramory hook entr%s %s" % (removed, "y" if removed == 1 else "ies", "would be removed" if dry_run else "removed")
        if removed else "no engramory hook entries",
    ))
    out(folder_action_line("skill", skill_action, dest, manifest, dry_run, others))

    if dry_run:
        diff = unified_diff(target.settings, change.before, change.after)
        if diff:
            out(diff)
        return 0

    try:
        saved, leftovers = _apply_uninstall(target, change, skill_action, manifest, mpath)
    except OSError as exc:
        raise WriteError(
            "could not remove or write %s: %s; check the permissions, then run this again"
            % (exc.filename or target.skill_dir, exc.strerror or exc)
        ) from None
    if leftovers:
        out("  note: %s still holds files engramory did not install (%s); left in place\n"
            % (dest, ", ".join(leftovers[:5])))
    if saved:
        out("  backup of the previous settings: %s\n" % saved)
    if change.after is None and change.before is not None:
        out("  %s held only engramory's entries and was created by install: removed\n" % target.settings)
    if change.changed:
        out("  " + RESTART + "\n")
    return 0


def _apply_uninstall(
    target: Target, change: Change, skill_action: str, manifest: dict[str, Any] | None, mpath: str
) -> tuple[str | None, list[str]]:
    dest = target.skill_dir
    saved = apply_change(change)
    leftovers: list[str] = []
    if skill_action == "unlink":
        os.unlink(dest)
        _drop_settings_record(target.link_manifest, target.settings, delete_when_empty=True)
    elif skill_action == "remove" and manifest is not None:
        remove_listed(dest, [f for f in manifest["files"] if isinstance(f, str)] + [MANIFEST])
        prune_empty(dest)
        try:
            os.rmdir(dest)
        except OSError:
            leftovers = _foreign_files(dest, [])
    elif skill_action == "manifest-only":
        _drop_settings_record(mpath, target.settings, delete_when_empty=True)
    elif skill_action == "keep-shared":
        _drop_settings_record(mpath, target.settings, delete_when_empty=False)
    return saved, leftovers


def _uses_our_hooks(settings_path: str) -> bool:
    try:
        doc = JsonDoc.load(settings_path)
    except SettingsError:
        return True  # cannot tell: keep the skill folder rather than break a live wiring
    hooks = doc.data.get("hooks")
    if not isinstance(hooks, dict):
        return False
    return any(isinstance(g, list) and _ours_in(g, is_our_handler) for g in hooks.values())


def _drop_settings_record(mpath: str, settings_path: str, delete_when_empty: bool) -> None:
    manifest = read_manifest(mpath)
    if manifest is None:
        return
    manifest["settings"].pop(settings_path, None)
    if delete_when_empty and not manifest["settings"]:
        try:
            os.unlink(mpath)
        except OSError:
            pass
    else:
        write_manifest(mpath, manifest)


# -- install --check ---------------------------------------------------------------------


def _smoke(interpreter: str, script: str, event: str) -> str | None:
    """Run one hook on an empty payload of its event: it must exit 0 and print nothing.
    Returns a problem, or None."""
    payload = json.dumps({"hook_event_name": event, "session_id": "engramory-install-check"}).encode()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    try:
        proc = subprocess.run(
            [interpreter, "-I", "-S", script], input=payload, capture_output=True, timeout=HOOK_TIMEOUT,
            env=env, cwd=os.path.dirname(script),
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return "could not run it: %s" % exc
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return "it exited %d%s (Claude Code reads exit 2 from a PreToolUse hook as a deny)" % (
            proc.returncode, ": " + err[-1][:200] if err else "",
        )
    return None


def check_wiring(settings_path: str) -> tuple[list[str], list[str]]:
    """(lines for what is fine, problems) for our hook entries in one settings file."""
    good: list[str] = []
    problems: list[str] = []
    try:
        doc = JsonDoc.load(settings_path)
        check_hooks_shape(doc, [event for event, _, _ in HOOKS])
    except SettingsError as exc:
        return good, [str(exc)]
    if not doc.exists:
        return good, ["%s does not exist: engramory is not installed in this scope" % settings_path]
    hooks = doc.data.get("hooks") or {}
    for event, _matcher, script in HOOKS:
        handlers = [
            h for h in _ours_in(hooks.get(event, []), is_our_handler)
            if script in str(h.get("command", "")).replace("\\", "/")
        ]
        if not handlers:
            problems.append("no %s entry for hooks/%s in %s" % (event, script, settings_path))
            continue
        if len(handlers) > 1:
            problems.append("%d %s entries run hooks/%s: each edit would be judged more than once"
                            % (len(handlers), event, script))
        for h in handlers:
            command = str(h.get("command"))
            try:
                words = shlex.split(command)
            except ValueError as exc:
                problems.append("%s command cannot be parsed (%s): %s" % (event, exc, command))
                continue
            exe = words[0] if words else ""
            path = next((w for w in words[1:] if w.endswith(script)), "")
            if not (os.path.isabs(exe) and os.path.isfile(exe) and os.access(exe, os.X_OK)):
                problems.append("%s: the interpreter %s does not exist or cannot run" % (event, exe or "(none)"))
                continue
            if not os.path.isfile(path):
                problems.append(
                    "%s: the script %s does not exist: the hook fails on every %s, so the guard is off; "
                    "run `engramory install` again" % (event, path or "(none)", "edit" if event == "PreToolUse" else "call")
                )
                continue
            failure = _smoke(exe, path, event)
            if failure:
                problems.append("%s: %s %s: %s" % (event, exe, path, failure))
                continue
            good.append("%s: %s runs (%s)" % (event, os.path.basename(path), exe))
    return good, problems


def plugin_also_enabled(settings_paths: Iterable[str]) -> list[str]:
    """`engramory@<marketplace>` plugin ids enabled in these settings files."""
    found: list[str] = []
    for path in settings_paths:
        try:
            enabled = JsonDoc.load(path).data.get("enabledPlugins")
        except SettingsError:
            continue
        if isinstance(enabled, dict):
            found.extend(k for k, v in enabled.items() if k.startswith(SKILL_NAME + "@") and v is True and k not in found)
    return found


def run_check(target: Target) -> int:
    out = sys.stdout.write
    good, problems = check_wiring(target.settings)
    out("engramory install --check (%s scope): %s\n" % (target.scope, target.settings))
    if not problems and not os.path.isfile(os.path.join(target.skill_dir, "SKILL.md")):
        out("  note: %s has no SKILL.md: the hooks work, but the skill is not listed to the model\n"
            % target.skill_dir)
    if os.path.isfile(os.path.join(target.skill_dir, PLUGIN_MANIFEST)):
        out("  note: %s holds %s: Claude Code loads it as a plugin as well, so each hook would "
            "run twice; reinstall from a checkout kept elsewhere\n" % (target.skill_dir, PLUGIN_MANIFEST))
    for plugin in plugin_also_enabled([target.settings, Target("user").settings]):
        out("  note: the engramory plugin is enabled too (%s): each hook would run twice; keep one "
            "way in (`claude plugin disable %s`, or `engramory uninstall`)\n" % (plugin, plugin))
    for line in good:
        out("  ok: %s\n" % line)
    for problem in problems:
        out("  problem: %s\n" % problem)
    if problems:
        out("  next step: run `%s -m engramory install --scope %s` from the engramory checkout, "
            "then restart Claude Code\n" % (sys.executable or "python3", target.scope))
        return 1
    out("  healthy: all %d hooks are wired and run\n" % len(HOOKS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`engramory install --host cursor` / `engramory uninstall --host cursor`: wire the index
guard into Cursor's `preToolUse` hooks, and take out exactly that.

Where things go (scope user: `~/.cursor`; scope project: `./.cursor` of the current folder):
- `<base>/engramory/`: a copy of the bundle's runtime (the engramory package, the Cursor
  hook script, the check tools) with a manifest of the files copied. Cursor does not
  guarantee the folder it starts a user-level hook in, so the hook needs a stable absolute
  path of its own; a copy under `.cursor` does not depend on a Claude Code install or on the
  checkout staying where it is. `--link` symlinks it to this checkout instead (development).
- `<base>/hooks.json`: one entry, FIRST in `hooks.preToolUse` (Cursor is reported to run only
  the first hook of an array): `{"command": "<python> -I -S -c <launcher> \"<script>\"",
  "timeout": 10}`, both paths absolute (see install.LAUNCHER for why not plain `<python> <script>`).
  No matcher: Cursor's tool names vary between versions and some payloads carry none, so the
  script itself filters by path and leaves at once for anything that is not a guarded file.
  No `failClosed`: the guard's own failures must never block the user.

Install and uninstall are the shared flow, engramory.install.jsonflow (`Target` is the Wiring,
with Cursor's flat `hooks.preToolUse` list merged by `merge` / `unmerge` here): a file that
cannot be parsed is refused and left alone, a no-op install writes nothing, a change is backed
up and replaced atomically, `--dry-run` shows the diff, and uninstall gives the user's own
bytes back when a backup holds exactly the result. What stays here is Cursor's own: the paths,
the entry and its place first in the list, the note when Claude Code's guard is wired too,
and `--check`.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys

from engramory.automemory import claude_config_dir
from engramory.hosts.claude.check import matcher_selects
from engramory.install import jsonflow as flow
from engramory.install.bundle import RUNTIME_DIRS
from engramory.install.hookcommands import HOOK_TIMEOUT, hook_command
from engramory.install.settings import JsonDoc, SettingsError, json_type, read_regular
from engramory.install.smoke import bundle_problems, smoke
from engramory.install.steps import finish_problems, reinstall_step

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping
    from typing import Any

HOST = "cursor"
FOLDER = "engramory"
# The guard runs the generic entry, `hooks/engramory_hook.py cursor` (issue 20; the host module
# reads the event from the payload, as the old script did).
SCRIPT = "engramory_hook.py"
# The script installs wired before the generic entry: still recognised as ours (--check passes
# it and says a reinstall moves it; install replaces it, uninstall takes it out), and still
# shipped, as a shim, because those installs run it.
LEGACY_SCRIPT = "engramory_cursor_guard.py"
_GENERIC = re.compile(r"/%s/hooks/%s['\"]? +%s(?:\s|$)" % (FOLDER, re.escape(SCRIPT), HOST))
EVENT = "preToolUse"
HOOKS_VERSION = 1
SCOPES = (("user", "~/.cursor"), ("project", "./.cursor"))
RESTART = "Cursor reloads hooks.json by itself; check Cursor Settings > Hooks that the entry is listed."
# The Claude guard's command, as a Claude install writes it (the generic entry, as raw JSON holds
# it: the script's closing quote escaped, or bare), and the script earlier installs wired.
CLAUDE_SCRIPT = "engramory_index_guard.py"
_CLAUDE_GENERIC = re.compile(rb'engramory_hook\.py(?:\\"|")? +claude +PreToolUse\b')


class Target(flow.Wiring):
    """Where one scope's bundle copy and hooks.json are, and what Cursor's wiring holds."""

    host, title = HOST, "Cursor"
    restart = RESTART
    settings_label = "hooks"
    scopes = SCOPES
    bundle_dirs, bundle_top = RUNTIME_DIRS, ()

    def __init__(self, scope: str, cwd: str | None = None, home: str | None = None) -> None:
        self.project = os.path.abspath(cwd or os.getcwd())
        if scope == "user":
            self.base = os.path.join(os.path.abspath(home or os.path.expanduser("~")), ".cursor")
        else:
            self.base = os.path.join(self.project, ".cursor")
        self.skills = self.base
        super().__init__(settings=os.path.join(self.base, "hooks.json"),
                         bundle_dir=os.path.join(self.base, FOLDER), scope=scope)
        self.script = os.path.join(self.skill_dir, "hooks", SCRIPT)

    @classmethod
    def for_scope(cls, scope: str) -> Target:
        return cls(scope)

    def hooks(self, interpreter: str) -> list[tuple[str, str | None, dict[str, Any]]]:
        return [(EVENT, None, entry(interpreter, self.script))]

    def script_of(self, handler: Any) -> str | None:
        """SCRIPT for an entry of ours in today's form, LEGACY_SCRIPT for an earlier install's."""
        if not is_ours(handler):
            return None
        return SCRIPT if _GENERIC.search(_slashed(handler["command"])) else LEGACY_SCRIPT

    def merge(self, data: dict[str, Any], interpreter: str) -> tuple[dict[str, Any], list[str], list[str]]:
        new, created, line = merge(data, entry(interpreter, self.script))
        return new, created, [line]

    def unmerge(self, data: dict[str, Any], created: list[str] | None) -> tuple[dict[str, Any], int]:
        return unmerge(data, created)

    def check_shape(self, doc: JsonDoc) -> None:
        check_shape(doc)

    def uninstall_shape(self, doc: JsonDoc) -> None:
        check_shape(doc)

    def notes(self) -> list[str]:
        return ["note: %s also runs engramory's Claude Code guard; with Cursor's third-party hooks on, each edit "
                "is judged twice (same decision, two messages)" % path for path in _claude_also_wired(self)]

    def backup_label(self, path: str) -> str:
        return "hooks.json"

    def run_check(self, interpreter: str | None = None, out: Callable[[str], Any] | None = None) -> int:
        return run_check(self)


# -- the entry -----------------------------------------------------------------------------


def entry(interpreter: str, script: str) -> dict[str, Any]:
    return {"command": "%s %s" % (hook_command(interpreter, script), HOST), "timeout": HOOK_TIMEOUT}


def _slashed(text: str) -> str:
    return text.replace("\\\\", "/").replace("\\", "/")


def is_ours(item: Any) -> bool:
    """An entry that runs our Cursor guard from an `engramory` folder: the generic entry with
    `cursor`, or an earlier install's own script."""
    if not isinstance(item, dict) or not isinstance(item.get("command"), str):
        return False
    command = _slashed(item["command"])
    return _GENERIC.search(command) is not None or "/%s/hooks/%s" % (FOLDER, LEGACY_SCRIPT) in command


def _type(value: object) -> str:
    """The JSON type of `value` as a message names it; true, false and null as written."""
    return json.dumps(value) if isinstance(value, bool) or value is None else json_type(value)


def check_shape(doc: JsonDoc) -> None:
    """Refuse a hooks.json we cannot merge into without guessing."""
    _check_version(doc)
    check_hooks_shape(doc)


def _check_version(doc: JsonDoc) -> None:
    data = doc.data
    if "version" in data and (type(data["version"]) is not int or data["version"] != HOOKS_VERSION):
        raise SettingsError(
            "%s: \"version\" is %s; this installer writes Cursor's hooks.json version %d only: "
            "check the file against Cursor's hooks documentation, then run this again"
            % (doc.path, json.dumps(data["version"])[:40], HOOKS_VERSION)
        )


def check_hooks_shape(doc: JsonDoc) -> None:
    """Refuse a "hooks" that is not an object of event arrays."""
    data = doc.data
    if "hooks" in data:
        if not isinstance(data["hooks"], dict):
            raise SettingsError(
                "%s: \"hooks\" is %s, not an object of event names; fix it, then run this again"
                % (doc.path, _type(data["hooks"]))
            )
        if EVENT in data["hooks"] and not isinstance(data["hooks"][EVENT], list):
            raise SettingsError(
                "%s: \"hooks\".%s is %s, not an array of hook entries; fix it, then run this again"
                % (doc.path, EVENT, _type(data["hooks"][EVENT]))
            )


def merge(data: Mapping[str, Any], wanted: dict[str, Any]) -> tuple[dict[str, Any], list[str], str]:
    """`data` with `wanted` first in hooks.preToolUse and no other entry of ours. Returns
    (new data, keys created as "version" / "hooks" / "hooks/preToolUse", one-line report)."""
    new = copy.deepcopy(dict(data))
    created: list[str] = []
    if "version" not in new:
        new["version"] = HOOKS_VERSION
        created.append("version")
    if "hooks" not in new:
        new["hooks"] = {}
        created.append("hooks")
    if EVENT not in new["hooks"]:
        new["hooks"][EVENT] = []
        created.append("hooks/" + EVENT)
    entries = new["hooks"][EVENT]
    ours = [e for e in entries if is_ours(e)]
    if len(ours) == 1 and entries and entries[0] == wanted:
        return new, created, "%s: already present, first" % EVENT
    kept = [e for e in entries if not is_ours(e)]
    entries[:] = [wanted] + kept
    if not ours:
        how = "added"
    elif any(e == wanted for e in ours):
        how = "moved to the front" if len(ours) == 1 else "moved to the front, duplicates removed"
    else:
        how = "replaced our earlier entry"
    if kept:
        how += " (first of %d entries: Cursor may run only the first)" % len(entries)
    return new, created, "%s: %s" % (EVENT, how)


def unmerge(data: Mapping[str, Any], created: list[str] | None) -> tuple[dict[str, Any], int]:
    """`data` without our entries. Containers that install created and that are now empty go
    too; when that is unknown (no manifest), emptied containers go."""
    new = copy.deepcopy(dict(data))
    hooks = new.get("hooks")
    if not isinstance(hooks, dict) or not isinstance(hooks.get(EVENT), list):
        return new, 0
    before = len(hooks[EVENT])
    hooks[EVENT] = [e for e in hooks[EVENT] if not is_ours(e)]
    removed = before - len(hooks[EVENT])
    if not removed:
        return new, 0
    if not hooks[EVENT] and (created is None or "hooks/" + EVENT in created):
        del hooks[EVENT]
    if not hooks and (created is None or "hooks" in created):
        del new["hooks"]
    if set(new) == {"version"} and (created is None or "version" in created):
        del new["version"]
    return new, removed


def _claude_also_wired(target: Target) -> list[str]:
    """Claude settings files that already run the Claude guard: Cursor runs those too when its
    third-party hooks setting is on, so the edit would be judged twice."""
    candidates = [
        os.path.join(claude_config_dir(), "settings.json"),  # $CLAUDE_CONFIG_DIR, else ~/.claude
        os.path.join(target.project, ".claude", "settings.json"),
        os.path.join(target.project, ".claude", "settings.local.json"),
    ]
    found = []
    for path in candidates:
        try:
            data = read_regular(path, 4 << 20)
        except OSError:
            continue
        if data is not None and (CLAUDE_SCRIPT.encode() in data or _CLAUDE_GENERIC.search(data)):
            found.append(path)
    return found


# -- install / uninstall: the shared flow -------------------------------------------------


def install(args: argparse.Namespace) -> int:
    """`engramory install --host cursor`: 0 done, 1 refused (nothing changed), 64 usage."""
    return flow.main(Target, "install", args)


def uninstall(args: argparse.Namespace) -> int:
    """`engramory uninstall --host cursor`: 0 done, 1 refused (nothing changed), 64 usage."""
    return flow.main(Target, "uninstall", args)


# -- install --check -----------------------------------------------------------------------


def _acts(words: list[str], exe: str, script: str) -> list[str]:
    """Problems that show the guard would not act although it starts: a bundle module that
    does not import (the guard then allows everything, exit 0), or a smoke Write of a
    400-line MEMORY.md that is not denied."""
    import tempfile

    problems = bundle_problems(os.path.dirname(os.path.dirname(script)), exe)
    if problems:
        return ["%s: the guard would allow every edit" % p for p in problems]
    with tempfile.TemporaryDirectory(prefix="engramory-check-") as tmp:
        index = os.path.join(tmp, "MEMORY.md")
        body = "".join("- [n%d](n%d.md) x\n" % (i, i) for i in range(400))
        payload = {"hook_event_name": EVENT, "tool_name": "Write", "tool_input": {"path": index, "contents": body}}
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
        ran = smoke(words, payload, env=env, cwd=tmp)
        answer = ran.json()
        if ran.error or not (isinstance(answer, dict) and answer.get("permission") == "deny"):
            return ["a smoke Write of a 400-line MEMORY.md was not denied (exit %d, %r)%s"
                    % (ran.rc, ran.stdout[:80], ": " + ran.error if ran.error else "")]
    return []


# Cursor's write tools, as its payloads name them (PORTING.md): a matcher on our entry must
# select every one of them.
WRITE_TOOLS = ("Write", "StrReplace", "Edit", "MultiEdit", "ApplyPatch", "Delete")


def _where_ours(value: Any, path: str = "") -> list[str]:
    """JSON paths of every string in `value` that runs our guard script."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_where_ours(item, "%s.%s" % (path, key) if path else str(key)))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            found.extend(_where_ours(item, "%s[%d]" % (path, n)))
    elif isinstance(value, str) and is_ours({"command": value}):
        found.append(path)
    return found


def shape_problems(data: Mapping[str, Any], path: str) -> list[str]:
    """Why Cursor would not run our guard from this hooks.json although it names it: no or
    another "version", our command under another event name or nesting (event names are
    case-sensitive: `PreToolUse` is Claude Code's), an entry whose matcher leaves out a
    write tool or whose type is not a command."""
    problems = _version_problems(data, path)
    ours_at = _where_ours(data)
    expected = re.compile(r"^hooks\.%s\[\d+\]\.command$" % EVENT)
    for where in ours_at:
        if not expected.match(where):
            problems.append("%s runs the guard at %s, where Cursor does not look: it runs the \"command\" of "
                            "each entry of hooks.%s (event names are case-sensitive)" % (path, where, EVENT))
    hooks = data.get("hooks")
    entries = hooks.get(EVENT) if isinstance(hooks, dict) else None
    for item in entries if isinstance(entries, list) else []:
        if is_ours(item):
            problems.extend(_entry_problems(item))
    return problems


def _version_problems(data: Mapping[str, Any], path: str) -> list[str]:
    version = data.get("version")
    if "version" not in data:
        return ["%s has no \"version\": Cursor reads hooks.json version %d (`\"version\": %d`)"
                % (path, HOOKS_VERSION, HOOKS_VERSION)]
    if type(version) is not int or version != HOOKS_VERSION:
        return ["%s: \"version\" is %s; Cursor reads hooks.json version %d"
                % (path, json.dumps(version)[:40], HOOKS_VERSION)]
    return []


def _entry_problems(item: Any) -> list[str]:
    """What in our guard's entry makes Cursor skip it for some writes: matcher, type, timeout."""
    problems: list[str] = []
    if "matcher" in item:
        missed = [t for t in WRITE_TOOLS if not matcher_selects(item["matcher"], t)]
        if missed:
            problems.append("the guard's entry has the matcher %s, which does not select %s: those writes "
                            "go through unchecked" % (json.dumps(item["matcher"])[:60], ", ".join(missed)))
    if item.get("type", "command") != "command":
        problems.append("the guard's entry has \"type\": %s, not \"command\"" % json.dumps(item.get("type"))[:40])
    timeout = item.get("timeout")
    if "timeout" in item and (type(timeout) not in (int, float) or timeout < 2):
        problems.append("the guard's entry has \"timeout\": %s: too short for a Python hook to start "
                        "(the host then lets the call through)" % json.dumps(timeout)[:40])
    return problems


def run_check(target: Target) -> int:
    """Verify the wiring: our entry is first, its interpreter and script exist, and a smoke
    payload gets `{}` and exit 0. Changes nothing."""
    out = sys.stdout.write
    out("engramory install --host cursor --check (%s scope): %s\n" % (target.scope, target.settings))
    problems: list[str] = []
    exists, entries = _read_entries(target, problems)
    ours = [e for e in entries if is_ours(e)]
    if exists and not ours:
        problems.append("no %s entry runs hooks/%s" % (EVENT, SCRIPT))
    if len(ours) > 1:
        problems.append("%d entries run the guard: each edit would be judged more than once" % len(ours))
    if ours and entries[0] is not ours[0]:
        problems.append("the guard is not the first %s entry; Cursor may run only the first: "
                        "run install again to move it to the front" % EVENT)
    for item in ours[:1]:
        if target.script_of(item) == LEGACY_SCRIPT:
            out("  note: wired by an earlier install (hooks/%s, which still runs); a reinstall moves it to "
                "hooks/%s\n" % (LEGACY_SCRIPT, SCRIPT))
        problems.extend(_command_problems(item, out))
    return finish_problems(problems, reinstall_step(HOST, target.scope), "the guard is wired first in %s and runs" % EVENT)


def _read_entries(target: Target, problems: list[str]) -> tuple[bool, list[Any]]:
    """(the hooks file exists and its shape could be read, its entries for EVENT); what is wrong
    with the file goes to `problems`."""
    try:
        doc: JsonDoc | None = JsonDoc.load(target.settings)
    except SettingsError as exc:
        problems.append(str(exc))
        doc = None
    if doc is not None and doc.exists:
        problems.extend(shape_problems(doc.data, target.settings))
        try:
            check_hooks_shape(doc)  # the version: shape_problems says it in Cursor's terms
        except SettingsError as exc:
            problems.append(str(exc))
            doc = None
    if doc is None:
        return False, []
    if not doc.exists:
        problems.append("%s does not exist: the guard is not installed in this scope" % target.settings)
    hooks = doc.data.get("hooks") or {}
    return doc.exists, hooks.get(EVENT) or []


def _command_problems(item: Any, out: Callable[[str], Any]) -> list[str]:
    """Our entry's command: its interpreter and script exist, a smoke payload gets `{}` and exit
    0, and the guard acts (`_acts`)."""
    import shlex

    try:
        # sh reads \$ and \` inside double quotes as the bare character; shlex keeps the backslash
        words = [w.replace("\\$", "$").replace("\\`", "`") for w in shlex.split(item["command"])]
    except ValueError as exc:
        return ["the command cannot be parsed (%s): %s" % (exc, item["command"])]
    exe = words[0] if words else ""
    script = next((w for w in words[1:] if w.endswith((SCRIPT, LEGACY_SCRIPT))), "")
    if not (os.path.isabs(exe) and os.path.isfile(exe) and os.access(exe, os.X_OK)):
        return ["the interpreter %s does not exist or cannot run" % (exe or "(none)")]
    if not os.path.isfile(script):
        return ["the script %s does not exist: the guard does not run (tool calls go through unchecked)" % script]
    problems: list[str] = []
    smoke = json.dumps({"hook_event_name": EVENT, "tool_name": "Shell", "tool_input": {"command": "true"}})
    try:
        proc = subprocess.run(words, input=smoke.encode(), capture_output=True, timeout=HOOK_TIMEOUT)
        if proc.returncode != 0 or proc.stdout.strip() != b"{}":
            problems.append("a smoke run exited %d and printed %r" % (proc.returncode, proc.stdout[:80]))
        else:
            out("  ok: %s runs (%s)\n" % (os.path.basename(script), exe))
    except (OSError, subprocess.SubprocessError) as exc:
        problems.append("could not run it: %s" % exc)
    problems.extend(_acts(words, exe, script))
    return problems


def check(args: argparse.Namespace) -> int:
    """The registry's INSTALLER contract: `install --host cursor --check`."""
    return flow.main(Target, "check", args)

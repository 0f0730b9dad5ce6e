"""The installer every host with a Claude-schema hooks file uses (Qwen Code, Factory droid,
Copilot CLI): a copy of the bundle's runtime in `<base>/engramory/`, and one matcher group per
event in `<base>/<settings file>` that runs the host's entry script from that copy.

Install and uninstall are the shared flow, engramory.install.jsonflow (`Target` is the
Wiring): a settings file that cannot be parsed is refused and left alone, a no-op install
writes nothing, a change is backed up and replaced atomically, `--dry-run` shows the diff, and
uninstall gives the user's own bytes back when a backup holds exactly the result (and deletes
a file and folder install created). Each host installer module is a `Spec` and
`install, uninstall, check = verbs(SPEC)`.

The command never exits non-zero on its own account: `<python> -I -S -c <launcher>
<bundle>/hooks/engramory_hook.py <host> <event> || true`, with the launcher every host shares
(engramory.install.hookcommands): a script that is gone is exit 1 there, which `|| true` makes
an allow. Copilot reads exit 1 as "deny", and with no matcher that would block every tool.

A host that denies by exit 2 (Crush, Windsurf, Kiro, Auggie) keeps that code: no `|| true`
(`or_true=False`), and a missing script is exit 1, a hook error those hosts let through. A
host newer than the generic entry names no `script`. Its hooks file is Claude's matcher groups
(`shape="claude"`), a flat list of handlers per event (`shape="flat"`: Crush, Windsurf) or one
list of entries naming their event (`shape="list"`, key `event_key`: Kiro), with the top-level
keys it needs (`top`), created when missing and removed with the last entry. `--check` also
runs the hook on a documented payload (`smoke_deny`) that must get the host's deny (`denies`).
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

from engramory.install import jsonflow as flow
from engramory.install.bundle import RUNTIME_DIRS
from engramory.install.hookcommands import hook_command
from engramory.install.settings import (
    JsonDoc,
    SettingsError,
    add_hook_groups,
    check_hooks_shape,
    json_type,
    remove_hooks,
)
from engramory.install.smoke import bundle_problems
from engramory.install.steps import earlier_note, finish_problems, reinstall_step, scope_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

FOLDER = "engramory"
SMOKE_TIMEOUT = 10
# The one entry script every host runs (engramory.hosts.main), with the host's name first.
GENERIC_SCRIPT = "engramory_hook.py"
# Commands of earlier installs ran the host's own script through a launcher of their own (1.21x a bare
# start on an ignored call); still ours (Spec.legacy_script): install replaces them, uninstall takes them out.


class Spec:
    """What one host's installer declares."""

    def __init__(
        self,
        host: str,
        title: str,
        dirname: str,
        settings_name: str,
        hooks: Sequence[tuple[str, str | None]],
        handler: Callable[[str], dict[str, Any]],
        script: str = GENERIC_SCRIPT,
        home_env: str | None = None,
        note: str = "",
        seconds: Callable[[dict[str, Any]], float] | None = None,
        tools: Mapping[str, Sequence[str]] | None = None,
        or_true: bool = True,
        shape: str = "claude",
        event_key: str = "",
        top: Mapping[str, Any] | None = None,
        entry: Callable[[str, str, str | None], dict[str, Any]] | None = None,
        command_keys: Sequence[str] = ("command", "bash"),
        smoke_deny: Callable[[str, str, str], Any] | None = None,
        denies: Callable[[int, bytes, bytes], bool] | None = None,
        user_base: Callable[[Mapping[str, str]], str] | None = None,
        project_settings: str | None = None,
    ) -> None:
        self.host = host
        self.title = title
        self.dirname = dirname  # ".qwen": user scope ~/<dirname>, project ./<dirname>
        self.settings_name = settings_name
        # the host's own entry of earlier installs, still ours ("": a host born after the generic one)
        self.legacy_script = "" if script == GENERIC_SCRIPT else script
        self.script = GENERIC_SCRIPT
        self.hooks = hooks  # (event, matcher or None)
        self.handler = handler  # command -> the handler object (timeout key and unit are the host's)
        self.home_env = home_env  # a variable that moves the user-level folder ($COPILOT_HOME)
        self.note = note  # printed after a changing install (restart, trust, ...)
        self.seconds = seconds  # handler -> the time budget the host gives it, in seconds
        # event -> the tools its matcher must select (--check fails an install that misses one)
        self.tools = tools or {}
        self.or_true = or_true  # end the command in `|| true` (never for a host that denies by exit 2)
        self.shape = shape  # "claude" matcher groups, "flat" handlers per event, "list" of entries
        self.event_key = event_key  # shape "list": the key of an entry that names its event
        self.top = dict(top or {})  # top-level keys the file needs, created when missing
        # shape "flat" / "list": (command, event, matcher) -> the entry the file holds
        self.entry = entry
        self.command_keys = command_keys  # where an entry keeps its command ("action.command": nested)
        # --check's deny smoke: (project, index path, content) -> the payload; (exit, stdout, stderr) -> denied?
        self.smoke_deny = smoke_deny
        self.denies = denies
        self.user_base = user_base  # env -> the user-scope folder, when it is not ~/<dirname>
        self.project_settings = project_settings  # the project-scope file, relative to the project


class Target(flow.Wiring):
    """Where one scope's bundle copy and settings file are, and what the host's wiring holds:
    install and uninstall are engramory.install.jsonflow's flow, with the host's own command
    (`|| true`) and its own `--check`."""

    settings_label = "hooks"
    bundle_dirs, bundle_top = RUNTIME_DIRS, ()

    def __init__(self, spec: Spec, scope: str, cwd: str | None = None, env: Mapping[str, str] | None = None) -> None:
        environ = os.environ if env is None else env
        self.spec = spec
        self.host, self.title, self.restart = spec.host, spec.title, spec.note
        self.project = os.path.abspath(cwd or os.getcwd())
        moved = environ.get(spec.home_env, "") if spec.home_env else ""
        settings = ""
        if scope == "user":
            home = environ.get("HOME") or os.path.expanduser("~")
            if spec.user_base is not None:
                self.base = os.path.abspath(spec.user_base(environ))
            else:
                self.base = os.path.abspath(moved) if moved else os.path.join(home, spec.dirname)
        else:
            self.base = os.path.join(self.project, spec.dirname)
            if spec.project_settings:
                settings = os.path.join(self.project, spec.project_settings)
        self.skills = self.base
        super().__init__(settings=settings or os.path.join(self.base, spec.settings_name),
                         bundle_dir=os.path.join(self.base, FOLDER), scope=scope)
        self.script = os.path.join(self.skill_dir, "hooks", spec.script)
        # the folders an install here would make (uninstall takes back the empty ones)
        self.made_dirs = _missing_dirs([os.path.dirname(self.settings), self.base])
        self._made_recorded: list[str] | None = None

    def hooks(self, interpreter: str) -> list[tuple[str, str | None, dict[str, Any]]]:
        return wanted(self.spec, interpreter, self.script)

    def ours(self, handler: Any) -> bool:
        return is_ours_for(self.spec)(handler)

    def script_of(self, handler: Any) -> str | None:
        return self.spec.script if self.ours(handler) else None

    def present(self, data: dict[str, Any]) -> list[tuple[str, Any, dict[str, Any]]]:
        return present(self.spec, data)

    def merge(self, data: dict[str, Any], interpreter: str) -> tuple[dict[str, Any], list[str], list[str]]:
        if self.spec.shape == "claude":
            new, created, report = add_hook_groups(data, self.hooks(interpreter), self.ours)
        else:
            new, created, report = add_entries(self.spec, data, self.hooks(interpreter), self.ours)
        for key, value in self.spec.top.items():
            if key not in new:
                new = dict({key: value}, **new)
                created.append(key)
        return new, created, report

    def unmerge(self, data: dict[str, Any], created: list[str] | None) -> tuple[dict[str, Any], int]:
        if self.spec.shape == "claude":
            new, removed = remove_hooks(data, self.ours, created)
        else:
            new, removed = remove_entries(self.spec, data, self.ours, created)
        if removed and "hooks" not in new:
            for key, value in self.spec.top.items():
                if (created is None or key in created) and new.get(key) == value:
                    del new[key]
        return new, removed

    def check_shape(self, doc: JsonDoc) -> None:
        check_shape(self.spec, doc)

    def uninstall_shape(self, doc: JsonDoc) -> None:
        self.check_shape(doc)

    def record_fields(self) -> dict[str, Any]:
        return {"made_dirs": self.made_dirs} if self.made_dirs else {}

    def uninstall_extras(self, manifest: dict[str, Any] | None, record: Any, dry_run: bool) -> list[flow.Extra]:
        made = record.get("made_dirs") if isinstance(record, dict) else None
        self._made_recorded = [d for d in made if isinstance(d, str)] if isinstance(made, list) else None
        return []

    def leftover_dirs(self, created_base: bool) -> list[str]:
        if self._made_recorded is not None:
            return self._made_recorded
        return super().leftover_dirs(created_base)

    def backup_label(self, path: str) -> str:
        return self.spec.settings_name

    def run_check(self, interpreter: str | None = None, out: Callable[[str], Any] | None = None) -> int:
        return run_check(self.spec, self)


def command_handler(timeout: float) -> Callable[[str], dict[str, Any]]:
    """A Claude-schema command handler with the host's `timeout` (in the host's own unit)."""
    return lambda command: {"type": "command", "command": command, "timeout": timeout}


def timeout_seconds(default: float, per_second: float = 1) -> Callable[[dict[str, Any]], float]:
    """Spec.seconds for a handler that keeps its `timeout` in the host's unit (`per_second` of
    them to a second: 1000 for milliseconds), `default` when it names none."""
    return lambda handler: float(handler.get("timeout", default)) / per_second


def command(interpreter: str, script: str, host: str, event: str, or_true: bool = True) -> str:
    """`<python> -I -S -c <launcher> "<script>" <host> <event>`, ending in `|| true` unless the
    host denies by exit code 2."""
    cmd = "%s %s %s" % (hook_command(interpreter, script), host, event)
    return cmd + " || true" if or_true else cmd


def runs_guard(cmd: str, host: str, legacy_script: str = "") -> bool:
    """Whether a hook command runs our guard for `host`: the generic entry, or `legacy_script`."""
    import re

    if runs_legacy(cmd, legacy_script):
        return True
    cmd = cmd.replace("\\\\", "/").replace("\\", "/")
    generic = r"/%s/hooks/%s['\"]? +%s(?:\s|$)" % (FOLDER, re.escape(GENERIC_SCRIPT), re.escape(host))
    return re.search(generic, cmd) is not None


def runs_legacy(cmd: str, legacy_script: str) -> bool:
    """Whether `cmd` runs `legacy_script`, the host's entry of an install before the generic one."""
    cmd = cmd.replace("\\\\", "/").replace("\\", "/")
    return bool(legacy_script) and "/%s/hooks/%s" % (FOLDER, legacy_script) in cmd


def _missing_dirs(folders: Sequence[str]) -> list[str]:
    """Every folder of `folders` and of their parents that does not exist yet, innermost first."""
    out: list[str] = []
    for folder in folders:
        while folder and not os.path.isdir(folder) and folder not in out:
            out.append(folder)
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return sorted(out, key=len, reverse=True)


def command_of(spec: Spec, handler: Any) -> str | None:
    """The command a handler runs (its first key of `spec.command_keys` that holds a string)."""
    for key in spec.command_keys:
        value: Any = handler
        for part in key.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, str):
            return value
    return None


def is_ours_for(spec: Spec) -> Callable[[Any], bool]:
    """Whether a handler runs our guard for this host (runs_guard on its command)."""

    def is_ours(handler: Any) -> bool:
        cmd = command_of(spec, handler) if isinstance(handler, dict) else None
        return isinstance(cmd, str) and runs_guard(cmd, spec.host, spec.legacy_script)

    return is_ours


def wanted(spec: Spec, interpreter: str, script: str) -> list[tuple[str, str | None, dict[str, Any]]]:
    out = []
    for event, matcher in spec.hooks:
        cmd = command(interpreter, script, spec.host, event, spec.or_true)
        out.append((event, matcher, spec.entry(cmd, event, matcher) if spec.entry is not None else spec.handler(cmd)))
    return out


# -- the flat and list shapes of a hooks file ---------------------------------------------


def _entry_lists(spec: Spec, data: Mapping[str, Any]) -> list[tuple[str, list[Any]]]:
    """(event, the list its entries are in) for every list of the file's hooks."""
    hooks = data.get("hooks")
    if spec.shape == "list":
        return [("", hooks)] if isinstance(hooks, list) else []
    if not isinstance(hooks, dict):
        return []
    return [(event, entries) for event, entries in hooks.items() if isinstance(entries, list)]


def _event_of(spec: Spec, event: str, entry: Any) -> str:
    if spec.shape == "list":
        value = entry.get(spec.event_key) if isinstance(entry, dict) else None
        return value if isinstance(value, str) else ""
    return event


def present(spec: Spec, data: Mapping[str, Any]) -> list[tuple[str, Any, dict[str, Any]]]:
    """(event, matcher, handler) for every handler the file holds, in the host's shape."""
    if spec.shape == "claude":
        return flow._handlers(dict(data))
    return [(_event_of(spec, event, e), e.get("matcher"), e)
            for event, entries in _entry_lists(spec, data) for e in entries if isinstance(e, dict)]


def add_entries(spec: Spec, data: Mapping[str, Any], wanted: Sequence[tuple[str, str | None, dict[str, Any]]],
                is_ours: Callable[[Any], bool]) -> tuple[dict[str, Any], list[str], list[str]]:
    """add_hook_groups for the flat and list shapes: each wanted entry appended where its event
    is kept, our old entries there removed; an entry already exactly there is left alone."""
    new = copy.deepcopy(dict(data))
    created: list[str] = []
    if "hooks" not in new:
        new["hooks"] = [] if spec.shape == "list" else {}
        created.append("hooks")
    report = []
    for event, _matcher, entry in wanted:
        if spec.shape == "list":
            entries = new["hooks"]
        else:
            if event not in new["hooks"]:
                new["hooks"][event] = []
                created.append("hooks/" + event)
            entries = new["hooks"][event]
        mine = [e for e in entries if is_ours(e) and _event_of(spec, event, e) == event]
        if mine == [entry]:
            report.append("%s: already present" % event)
            continue
        entries[:] = [e for e in entries if not (is_ours(e) and _event_of(spec, event, e) == event)] + [entry]
        report.append("%s: %s" % (event, "replaced our earlier entry" if mine else "added"))
    return new, created, report


def remove_entries(spec: Spec, data: Mapping[str, Any], is_ours: Callable[[Any], bool],
                   created: Sequence[str] | None) -> tuple[dict[str, Any], int]:
    """remove_hooks for the flat and list shapes."""
    new = copy.deepcopy(dict(data))
    total = 0
    for event, entries in _entry_lists(spec, new):
        kept = [e for e in entries if not is_ours(e)]
        removed = len(entries) - len(kept)
        total += removed
        entries[:] = kept
        if removed and not kept and spec.shape == "flat" and (created is None or "hooks/" + event in created):
            del new["hooks"][event]
    if total and not new["hooks"] and (created is None or "hooks" in created):
        del new["hooks"]
    return new, total


def check_shape(spec: Spec, doc: JsonDoc) -> None:
    """Refuse a file whose hooks are not in the host's shape (nothing is merged by guessing)."""
    if spec.shape != "list":
        check_hooks_shape(doc, [event for event, _ in spec.hooks])
        return
    hooks = doc.data.get("hooks")
    if "hooks" in doc.data and not isinstance(hooks, list):
        raise SettingsError("%s: \"hooks\" is %s, not an array of hook entries; fix it, then run this again"
                            % (doc.path, json_type(hooks)))


def _scopes(spec: Spec) -> tuple[tuple[str, str], ...]:
    return (("user", "~/" + spec.dirname), ("project", "./" + spec.dirname))


def _target(spec: Spec, args: argparse.Namespace | None, verb: str) -> Target | None:
    scope = scope_of(args, verb, spec.title, _scopes(spec))
    return None if scope is None else Target(spec, scope)


def check(spec: Spec, args: argparse.Namespace) -> int:
    """`engramory install --host <spec.host> --check`: 0 healthy, 1 a problem found, 64 usage."""
    target = _target(spec, args, "install")
    return 64 if target is None else run_check(spec, target)


def install(spec: Spec, args: argparse.Namespace) -> int:
    """`engramory install --host <spec.host>`: 0 done, 1 refused (nothing changed), 64 usage."""
    target = _target(spec, args, "install")
    return 64 if target is None else flow.install(target, args)


def uninstall(spec: Spec, args: argparse.Namespace) -> int:
    """`engramory uninstall --host <spec.host>`: 0 done, 1 refused (nothing changed), 64 usage."""
    target = _target(spec, args, "uninstall")
    return 64 if target is None else flow.uninstall(target, args)


def verbs(spec: Spec) -> tuple[Callable[[argparse.Namespace], int], ...]:
    """The registry's INSTALLER contract for `spec`'s host: (install, uninstall, check)."""
    return (lambda args: install(spec, args), lambda args: uninstall(spec, args), lambda args: check(spec, args))


# -- install --check -------------------------------------------------------------------------


def _handlers(doc: JsonDoc, spec: Spec) -> dict[str, list[dict[str, Any]]]:
    is_ours = is_ours_for(spec)
    events = {event for event, _ in spec.hooks}
    found: dict[str, list[dict[str, Any]]] = {}
    for event, _matcher, handler in present(spec, doc.data):
        if event in events and is_ours(handler):
            found.setdefault(event, []).append(handler)
    return found


def matcher_selects(matcher: Any, tool: str) -> bool:
    """Whether a group with this matcher runs for `tool`, as droid 0.225.2 decides it (its
    hook loader): none, "" and "*" select every tool, else the exact name or a JavaScript
    RegExp that finds a match in the name (Python's re agrees on the patterns an installer
    writes); a pattern that does not compile selects nothing."""
    import re

    if matcher is None or matcher in ("", "*") or matcher == tool:
        return True
    if not isinstance(matcher, str):
        return False
    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return False


def _matcher_problems(doc: JsonDoc, spec: Spec) -> list[str]:
    """One line per event whose entry running our handler misses a tool the guard judges."""
    is_ours = is_ours_for(spec)
    problems = []
    for event, matcher, handler in present(spec, doc.data):
        tools = spec.tools.get(event)
        if not tools or not is_ours(handler):
            continue
        missed = [t for t in tools if not matcher_selects(matcher, t)]
        if missed:
            problems.append("the %s matcher %s does not select %s: %s runs the guard for none of those calls "
                            "(an install from before engramory judged them); reinstalling writes the matcher back"
                            % (event, json.dumps(matcher), ", ".join(missed), spec.title))
    return problems


def smoke(cmd: str, payload: Any, timeout: float = SMOKE_TIMEOUT, cwd: str | None = None) -> tuple[int, bytes, bytes]:
    """Run one hook command the way the host does (`sh -c`), payload on stdin. On timeout
    the whole process group goes (a hung guard must not hang the check too)."""
    import signal

    proc = subprocess.Popen(
        ["/bin/sh", "-c", cmd], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True, cwd=cwd,
    )
    try:
        out, err = proc.communicate(json.dumps(payload).encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return proc.returncode, out, err


def follow(cmd: str, script_name: str, bundle_dir: str) -> tuple[str | None, list[str]]:
    """Follow a `<python> ... <script> <event> || true` command: (its interpreter, or None when
    the hook cannot run; the problems: a missing interpreter or script, a damaged bundle)."""
    import shlex

    try:
        words = shlex.split(cmd.split(" || ")[0])
    except ValueError:
        words = []
    exe = words[0] if words else ""
    script = next((w for w in words[1:] if w.endswith(script_name)), "")
    if not script:  # an earlier install's command runs the host's own entry script
        script = next((w for w in words[1:] if w.endswith(".py")), "")
    if not (os.path.isabs(exe) and os.path.isfile(exe) and os.access(exe, os.X_OK)):
        return None, ["the interpreter %s does not exist or cannot run: no hook runs" % (exe or "(none)")]
    if not os.path.isfile(script):
        return None, ["the script %s does not exist: the guard is off (tool calls go through unchecked)" % script]
    return exe, bundle_problems(bundle_dir, exe)


def smoke_index(folder: str) -> tuple[str, str]:
    """A 200-line index in `folder` (at its hard cap) and content that grows it to 260 lines:
    (the index's path, the new content), for a deny smoke run."""
    index = os.path.join(folder, "MEMORY.md")
    lines = ["- [note %d](note-%d.md) - check\n" % (i, i) for i in range(260)]
    with open(index, "w", encoding="utf-8") as f:
        f.write("".join(lines[:200]))
    return index, "".join(lines)


def _deny_smoke(spec: Spec, cmd: str, budget: float, out: Callable[[str], Any]) -> list[str]:
    """The hook command run on a payload shaped as the host documents it, writing past an
    index's cap: [] when it is answered with the host's deny, else the problem."""
    import tempfile

    if spec.smoke_deny is None or spec.denies is None:
        return []
    with tempfile.TemporaryDirectory(prefix="engramory-check-") as tmp:
        index, content = smoke_index(tmp)
        try:
            code, stdout, stderr = smoke(cmd, spec.smoke_deny(tmp, index, content), budget, cwd=tmp)
        except subprocess.TimeoutExpired:
            return ["a write past an index's cap was not answered within %.1f s: %s would let it through"
                    % (budget, spec.title)]
        except OSError as exc:
            return ["could not run it: %s" % exc]
    if not spec.denies(code, stdout, stderr):
        return ["a write past an index's cap, in %s's own payload shape, was not denied (exit %d, %r %r): the guard "
                "would not act" % (spec.title, code, stdout[:80], stderr[-200:])]
    out("  ok: a write that grows an index past its cap is denied\n")
    return []


def run_check(spec: Spec, target: Target) -> int:
    """The wiring is there, its interpreter and script exist, and a smoke payload is answered
    with no opinion and exit 0 in time. Changes nothing."""
    out = sys.stdout.write
    out("engramory install --host %s --check (%s scope): %s\n" % (spec.host, target.scope, target.settings))
    problems, found = _wiring_problems(spec, target)
    first = next((h for hs in found.values() for h in hs), None)
    if first is not None:
        cmd = command_of(spec, first) or ""
        if runs_legacy(cmd, spec.legacy_script):
            out("  note: %s\n" % earlier_note(target.settings, spec.legacy_script, spec.host))
        exe, found_problems = follow(cmd, spec.script, target.skill_dir)
        problems.extend(found_problems)
        if exe is not None:
            problems.extend(_quiet_smoke(spec, target, cmd, exe, _budget(spec, first), out))
    return finish_problems(problems, reinstall_step(spec.host, target.scope),
                           "the guard is wired for %s and answers" % ", ".join(e for e, _ in spec.hooks))


def _wiring_problems(spec: Spec, target: Target) -> tuple[list[str], dict[str, list[dict[str, Any]]]]:
    """(what is wrong with the settings file's wiring, the guard's handlers found per event)."""
    problems: list[str] = []
    try:
        doc: JsonDoc | None = JsonDoc.load(target.settings, host=spec.title)
    except SettingsError as exc:
        problems.append(str(exc))
        doc = None
    if doc is not None and not doc.exists:
        problems.append("%s does not exist: the guard is not installed in this scope" % target.settings)
    found = _handlers(doc, spec) if doc is not None and doc.exists else {}
    if doc is not None and doc.exists:
        problems.extend(_matcher_problems(doc, spec))
    for event, _ in spec.hooks:
        if doc is not None and doc.exists and not found.get(event):
            problems.append("no %s entry runs hooks/%s" % (event, spec.script))
        if len(found.get(event, [])) > 1:
            problems.append("%d %s entries run the guard: each call would be judged more than once" % (len(found[event]), event))
    return problems, found


def _budget(spec: Spec, handler: dict[str, Any]) -> float:
    """Seconds a smoke run may take: the host's timeout for `handler` when it has one (at least
    half a second), never more than SMOKE_TIMEOUT."""
    budget = float(SMOKE_TIMEOUT)
    if spec.seconds is not None:
        try:
            budget = min(budget, max(0.5, spec.seconds(handler)))
        except (TypeError, ValueError):
            pass
    return budget


def _quiet_smoke(spec: Spec, target: Target, cmd: str, exe: str, budget: float,
                 out: Callable[[str], Any]) -> list[str]:
    """The hook command run on a payload it has no opinion on: [] when it answers nothing, exit
    0, well within `budget` (then the deny smoke run too), else the problem."""
    import time

    payload = {"hook_event_name": "PreToolUse", "tool_name": "engramory-smoke", "tool_input": {}, "cwd": target.project}
    started = time.monotonic()
    try:
        code, stdout, stderr = smoke(cmd, payload, budget)
        problem = _quiet_problem(code, stdout, stderr, time.monotonic() - started, budget, out, spec, exe)
        return [problem] if problem else _deny_smoke(spec, cmd, budget, out)
    except subprocess.TimeoutExpired:
        return ["a smoke run did not answer within %.1f s (the host's budget): the host times it out and "
                "the edit goes through unchecked" % budget]
    except OSError as exc:
        return ["could not run it: %s" % exc]


def _quiet_problem(code: int, stdout: bytes, stderr: bytes, took: float, budget: float,
                   out: Callable[[str], Any], spec: Spec, exe: str) -> str | None:
    """What the quiet smoke run's answer shows is wrong, or None (said as an ok line)."""
    if code != 0 or stdout.strip():
        return "a smoke run exited %d and printed %r %r" % (code, stdout[:80], stderr[-200:])
    if stderr.strip():
        return "a smoke run reported on stderr: %s" % stderr.decode("utf-8", "replace").strip()[-300:]
    if took > budget / 2:
        return "a smoke run took %.1f s: the host may time the guard out (then the edit is allowed unchecked)" % took
    out("  ok: %s answers in %.2f s (%s)\n" % (spec.script, took, exe))
    return None

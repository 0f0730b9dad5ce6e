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
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from engramory.install import jsonflow as flow
from engramory.install.bundle import RUNTIME_DIRS
from engramory.install.hookcommands import LAUNCHER, sh_quote, shell_word
from engramory.install.settings import JsonDoc, SettingsError
from engramory.install.smoke import bundle_problems
from engramory.install.steps import finish_problems, reinstall_step, scope_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

FOLDER = "engramory"
SMOKE_TIMEOUT = 10
# The one entry script every host runs (engramory.hosts.main), with the host's name first.
GENERIC_SCRIPT = "engramory_hook.py"
# These hosts' commands used to run the host's own entry script through a launcher of their
# own (`import os` and a parse of the script's source on every call: an ignored-path call cost
# 1.21x a bare interpreter start, against 1.02x through the shared one). Such a command is still
# recognised as ours (Spec.legacy_script), so install replaces it and uninstall takes it out.


class Spec:
    """What one host's installer declares."""

    def __init__(
        self,
        host: str,
        title: str,
        dirname: str,
        settings_name: str,
        script: str,
        hooks: Sequence[tuple[str, str | None]],
        handler: Callable[[str], dict[str, Any]],
        home_env: str | None = None,
        note: str = "",
        seconds: Callable[[dict[str, Any]], float] | None = None,
        tools: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.host = host
        self.title = title
        self.dirname = dirname  # ".qwen": user scope ~/<dirname>, project ./<dirname>
        self.settings_name = settings_name
        # the host's own entry script, which earlier installs ran (with OLD_LAUNCHER) and which
        # stays recognised as ours; installs now run hooks/engramory_hook.py <host> <event>
        self.legacy_script = script
        self.script = GENERIC_SCRIPT
        self.hooks = hooks  # (event, matcher or None)
        self.handler = handler  # command -> the handler object (timeout key and unit are the host's)
        self.home_env = home_env  # a variable that moves the user-level folder ($COPILOT_HOME)
        self.note = note  # printed after a changing install (restart, trust, ...)
        self.seconds = seconds  # handler -> the time budget the host gives it, in seconds
        # event -> the tools its matcher must select (--check fails an install that misses one)
        self.tools = tools or {}


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
        if scope == "user":
            home = environ.get("HOME") or os.path.expanduser("~")
            self.base = os.path.abspath(moved) if moved else os.path.join(home, spec.dirname)
        else:
            self.base = os.path.join(self.project, spec.dirname)
        self.skills = self.base
        super().__init__(settings=os.path.join(self.base, spec.settings_name),
                         bundle_dir=os.path.join(self.base, FOLDER), scope=scope)
        self.script = os.path.join(self.skill_dir, "hooks", spec.script)

    def hooks(self, interpreter: str) -> list[tuple[str, str | None, dict[str, Any]]]:
        return wanted(self.spec, interpreter, self.script)

    def ours(self, handler: Any) -> bool:
        return is_ours_for(self.spec)(handler)

    def script_of(self, handler: Any) -> str | None:
        return self.spec.script if self.ours(handler) else None

    def uninstall_shape(self, doc: JsonDoc) -> None:
        self.check_shape(doc)

    def backup_label(self, path: str) -> str:
        return self.spec.settings_name

    def run_check(self, interpreter: str | None = None, out: Callable[[str], Any] | None = None) -> int:
        return run_check(self.spec, self)


def command_handler(timeout: float) -> Callable[[str], dict[str, Any]]:
    """A Claude-schema command handler with the host's `timeout` (in the host's own unit)."""
    return lambda command: {"type": "command", "command": command, "timeout": timeout}


def command(interpreter: str, script: str, host: str, event: str) -> str:
    return "%s -I -S -c %s %s %s %s || true" % (shell_word(interpreter), sh_quote(LAUNCHER), sh_quote(script), host, event)


def runs_guard(cmd: str, host: str, legacy_script: str) -> bool:
    """Whether a hook command runs our guard for `host`: the generic entry with the host's
    name, or (an earlier install) the host's own entry script `legacy_script`."""
    import re

    cmd = cmd.replace("\\\\", "/").replace("\\", "/")
    if "/%s/hooks/%s" % (FOLDER, legacy_script) in cmd:
        return True
    generic = r"/%s/hooks/%s['\"]? +%s(?: |$)" % (FOLDER, re.escape(GENERIC_SCRIPT), re.escape(host))
    return re.search(generic, cmd) is not None


def is_ours_for(spec: Spec) -> Callable[[Any], bool]:
    """Whether a handler runs our guard for this host (runs_guard on its command)."""

    def is_ours(handler: Any) -> bool:
        cmd = handler.get("command", handler.get("bash")) if isinstance(handler, dict) else None
        return isinstance(cmd, str) and runs_guard(cmd, spec.host, spec.legacy_script)

    return is_ours


def wanted(spec: Spec, interpreter: str, script: str) -> list[tuple[str, str | None, dict[str, Any]]]:
    return [(event, matcher, spec.handler(command(interpreter, script, spec.host, event))) for event, matcher in spec.hooks]


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
    hooks = doc.data.get("hooks") if isinstance(doc.data.get("hooks"), dict) else {}
    is_ours = is_ours_for(spec)
    found: dict[str, list[dict[str, Any]]] = {}
    for event, _ in spec.hooks:
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        for group in groups if isinstance(groups, list) else []:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                found.setdefault(event, []).extend(h for h in group["hooks"] if is_ours(h))
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
    """One line per event whose group running our handler misses a tool the guard judges."""
    hooks = doc.data.get("hooks") if isinstance(doc.data.get("hooks"), dict) else {}
    is_ours = is_ours_for(spec)
    problems = []
    for event, tools in spec.tools.items():
        groups = hooks.get(event) if isinstance(hooks, dict) else None
        for group in groups if isinstance(groups, list) else []:
            if not isinstance(group, dict) or not any(is_ours(h) for h in group.get("hooks") or []):
                continue
            missed = [t for t in tools if not matcher_selects(group.get("matcher"), t)]
            if missed:
                problems.append("the %s matcher %s does not select %s: %s runs the guard for none of those calls "
                                "(an install from before engramory judged them); reinstalling writes the matcher back"
                                % (event, json.dumps(group.get("matcher")), ", ".join(missed), spec.title))
    return problems


def smoke(cmd: str, payload: Mapping[str, Any], timeout: float = SMOKE_TIMEOUT) -> tuple[int, bytes, bytes]:
    """Run one hook command the way the host does (`sh -c`), payload on stdin. On timeout
    the whole process group goes (a hung guard must not hang the check too)."""
    import signal

    proc = subprocess.Popen(
        ["/bin/sh", "-c", cmd], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
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


def run_check(spec: Spec, target: Target) -> int:
    """The wiring is there, its interpreter and script exist, and a smoke payload is answered
    with no opinion and exit 0 in time. Changes nothing."""
    import time

    out = sys.stdout.write
    out("engramory install --host %s --check (%s scope): %s\n" % (spec.host, target.scope, target.settings))
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
    first = next((h for hs in found.values() for h in hs), None)
    if first is not None:
        cmd = str(first.get("command", first.get("bash", "")))
        exe, found_problems = follow(cmd, spec.script, target.skill_dir)
        problems.extend(found_problems)
        if exe is not None:
            payload = {"hook_event_name": "PreToolUse", "tool_name": "engramory-smoke", "tool_input": {}, "cwd": target.project}
            budget = float(SMOKE_TIMEOUT)
            if spec.seconds is not None:
                try:
                    budget = min(budget, max(0.5, spec.seconds(first)))
                except (TypeError, ValueError):
                    pass
            started = time.monotonic()
            try:
                code, stdout, stderr = smoke(cmd, payload, budget)
                took = time.monotonic() - started
                if code != 0 or stdout.strip():
                    problems.append("a smoke run exited %d and printed %r %r" % (code, stdout[:80], stderr[-200:]))
                elif stderr.strip():
                    problems.append("a smoke run reported on stderr: %s" % stderr.decode("utf-8", "replace").strip()[-300:])
                elif took > budget / 2:
                    problems.append("a smoke run took %.1f s: the host may time the guard out (then the edit is allowed unchecked)" % took)
                else:
                    out("  ok: %s answers in %.2f s (%s)\n" % (spec.script, took, exe))
            except subprocess.TimeoutExpired:
                problems.append("a smoke run did not answer within %.1f s (the host's budget): the host times it out and "
                                "the edit goes through unchecked" % budget)
            except OSError as exc:
                problems.append("could not run it: %s" % exc)
    return finish_problems(problems, reinstall_step(spec.host, target.scope),
                           "the guard is wired for %s and answers" % ", ".join(e for e, _ in spec.hooks))

"""`engramory install --host copilot` / `uninstall --host copilot`: the guard as a hook file of
GitHub Copilot CLI's own, in its native dialect.

- `--scope user` (default): `$COPILOT_HOME/hooks/engramory.json` (`~/.copilot/hooks/`), with
  the runtime copied to `$COPILOT_HOME/engramory/`. User-level hooks load without folder trust
  (measured on 1.0.102), so this is the one that works headless with no prompt.
- `--scope project`: `.github/hooks/engramory.json` and `.github/engramory/`. Copilot loads
  repository hooks only in a trusted folder (`--trust-folder`, `COPILOT_ALLOW_ALL=true`, or a
  saved trust); otherwise they are silently skipped.

The hook file is engramory's alone (Copilot loads every `*.json` there), so install writes it
whole and uninstall deletes it: the user's other hook files are never touched. An existing
`engramory.json` that is not ours is refused. Every command ends in `|| true` and the launcher
allows when the script is gone: Copilot reads exit 1 as a deny, and this dialect has no
matcher, so a failing hook would block every tool call.
"""

from __future__ import annotations

import json
import os
import sys

from engramory import fsutil
from engramory.install import settingshooks as core
from engramory.install.bundle import (
    Place,
    apply_skill,
    bundle_action,
    folder_action_line,
    plan_skill,
    read_manifest,
    record_install,
    remove_made_dirs,
    runtime_files,
    source_root,
    take_out_bundle,
)
from engramory.install.settings import SettingsError
from engramory.install.steps import (
    earlier_note,
    finish_problems,
    header,
    interpreter,
    reinstall_step,
    run_verb,
    scope_of,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping
    from typing import Any

HOST = "copilot"
SCRIPT = core.GENERIC_SCRIPT  # run as `engramory_hook.py copilot <event>`
LEGACY_SCRIPT = "engramory_copilot_hook.py"  # what earlier installs ran: still ours
FILE = "engramory.json"
EVENTS = ("preToolUse", "postToolUse", "sessionStart")
TIMEOUT_SEC = 10
SCOPES = (("user", "$COPILOT_HOME or ~/.copilot"), ("project", "./.github, needs folder trust"))


class Target(Place):
    def __init__(self, scope: str, cwd: str | None = None, env: Mapping[str, str] | None = None) -> None:
        environ = os.environ if env is None else env
        self.scope = scope
        self.project = os.path.abspath(cwd or os.getcwd())
        if scope == "user":
            moved = environ.get("COPILOT_HOME", "")
            home = environ.get("HOME") or os.path.expanduser("~")
            self.base = os.path.abspath(moved) if moved else os.path.join(home, ".copilot")
        else:
            self.base = os.path.join(self.project, ".github")
        self.hooks_dir = os.path.join(self.base, "hooks")
        self.settings = os.path.join(self.hooks_dir, FILE)
        self.skills = self.base
        self.skill_dir = os.path.join(self.base, "engramory")
        self.script = os.path.join(self.skill_dir, "hooks", SCRIPT)


def hook_file(interpreter: str, script: str) -> dict[str, Any]:
    return {"version": 1, "hooks": {
        event: [{"type": "command", "bash": core.command(interpreter, script, HOST, event), "cwd": ".", "timeoutSec": TIMEOUT_SEC}]
        for event in EVENTS
    }}


def _ours(data: Any) -> bool:
    """Every handler in the file runs our script (so the file is ours to replace or delete)."""
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict) or not hooks:
        return False
    for handlers in hooks.values():
        if not isinstance(handlers, list):
            return False
        for h in handlers:
            cmd = h.get("bash") if isinstance(h, dict) else None
            if not isinstance(cmd, str) or not core.runs_guard(cmd, HOST, LEGACY_SCRIPT):
                return False
    return True


def _read(path: str) -> tuple[bytes | None, Any]:
    try:
        with open(path, "rb") as f:
            raw = f.read(1 << 20)
    except FileNotFoundError:
        return None, None
    try:
        return raw, json.loads(raw.decode("utf-8"))
    except ValueError:
        return raw, None


def _scope(args: argparse.Namespace, what: str) -> str | None:
    return scope_of(args, what, "Copilot CLI", SCOPES)


def install(args: argparse.Namespace) -> int:
    scope = _scope(args, "install")
    if scope is None:
        return 64
    target = Target(scope)
    if getattr(args, "check", False):
        return run_check(target)
    return run_verb("install", lambda: _install(target, bool(getattr(args, "dry_run", False)),
                                                bool(getattr(args, "link", False))), target.base)


def _install(target: Target, dry_run: bool, link: bool) -> int:
    out = sys.stdout.write
    exe = interpreter(None, HOST)
    raw, data = _read(target.settings)
    if raw is not None and not _ours(data):
        raise SettingsError("%s exists and is not engramory's hook file; move it aside (Copilot loads every *.json "
                            "there), then run this again" % target.settings)
    source = source_root()
    files, _ = runtime_files(source, [SCRIPT])
    plan = plan_skill(target, source, files, link)
    wanted = hook_file(exe, target.script)
    after = (json.dumps(wanted, indent=2) + "\n").encode("utf-8")
    out(header("install", HOST, target.scope, dry_run))
    out("  bundle: %s -> %s (%d files)\n" % (source, target.skill_dir, len(plan.files or files)))
    out("  hooks: %s: %s\n" % (target.settings, "unchanged" if raw == after else ("would write" if dry_run else "written")))
    if target.scope == "project":
        out("  note: Copilot loads repository hooks only in a trusted folder (--trust-folder or a saved trust); "
            "--scope user needs no trust\n")
    if dry_run:
        return 0
    created_base = not os.path.isdir(target.base)
    created_hooks = not os.path.isdir(target.hooks_dir)
    old = read_manifest(target.manifest_path())
    apply_skill(plan, target, source)
    record = {"created_file": True, "created_base": created_base, "created_hooks_dir": created_hooks}
    record_install(target.manifest_path(), HOST, plan, target.settings, record, old)  # a first install's record stays
    if raw != after:
        fsutil.write_atomic(target.settings, after)
    return 0


def uninstall(args: argparse.Namespace) -> int:
    scope = _scope(args, "uninstall")
    if scope is None:
        return 64
    target = Target(scope)
    return run_verb("uninstall", lambda: _uninstall(target, bool(getattr(args, "dry_run", False))), target.base)


def _uninstall(target: Target, dry_run: bool) -> int:
    out = sys.stdout.write
    raw, data = _read(target.settings)
    if raw is not None and not _ours(data):
        raise SettingsError("%s holds hooks that are not engramory's; left alone: remove our entries by hand"
                            % target.settings)
    mpath = target.manifest_path()
    manifest = read_manifest(mpath)
    record = ((manifest or {}).get("settings") or {}).get(target.settings) or {}
    verb = "would remove" if dry_run else "removed"
    out(header("uninstall", HOST, target.scope, dry_run))
    out("  hooks: %s: %s\n" % (target.settings, verb if raw is not None else "not there"))
    dest = target.skill_dir
    action = bundle_action(dest, manifest)
    out(folder_action_line("bundle", action, dest, manifest, dry_run))
    if dry_run:
        return 0
    if raw is not None:
        os.unlink(target.settings)
    out(take_out_bundle(dest, action, manifest, mpath, target.link_manifest))
    remove_made_dirs(folder for key, folder in (("created_hooks_dir", target.hooks_dir), ("created_base", target.base))
                     if record.get(key))  # only when empty: install made them
    return 0


def _command_problems(target: Target, cmd: str, budget: float, out: Callable[[str], Any]) -> list[str]:
    """What keeps the preToolUse command from answering quietly in time (a note when it is an
    earlier install's, running the shim hooks/engramory_copilot_hook.py)."""
    import subprocess
    import time

    if core.runs_legacy(cmd, LEGACY_SCRIPT):
        out("  note: %s\n" % earlier_note(target.settings, LEGACY_SCRIPT, HOST))
    exe, problems = core.follow(cmd, SCRIPT, target.skill_dir)
    if exe is None:
        return problems
    payload = {"sessionId": "engramory-check", "cwd": target.project, "toolName": "view", "toolArgs": {"path": "x"}}
    started = time.monotonic()
    try:
        code, stdout, stderr = core.smoke(cmd, payload, min(budget, core.SMOKE_TIMEOUT))
    except subprocess.TimeoutExpired:
        return problems + ["a smoke run did not answer within %.1f s (timeoutSec): Copilot times it out and "
                           "the call goes through unchecked" % min(budget, core.SMOKE_TIMEOUT)]
    if code != 0:
        return problems + ["a smoke run exited %d: Copilot would deny every tool call" % code]
    if stdout.strip() or stderr.strip():
        return problems + ["a smoke run answered %r / %s" % (stdout[:80], stderr.decode("utf-8", "replace").strip()[-300:])]
    out("  ok: %s answers in %.2f s\n" % (SCRIPT, time.monotonic() - started))
    return problems


def check(args: argparse.Namespace) -> int:
    scope = _scope(args, "install")
    return 64 if scope is None else run_check(Target(scope))


def run_check(target: Target) -> int:
    out = sys.stdout.write
    out("engramory install --host copilot --check (%s scope): %s\n" % (target.scope, target.settings))
    problems: list[str] = []
    raw, data = _read(target.settings)
    if raw is None:
        problems.append("%s does not exist: the guard is not installed in this scope" % target.settings)
    elif not _ours(data):
        problems.append("%s is not engramory's hook file (or not valid JSON)" % target.settings)
    else:
        hooks = data["hooks"]
        for event in EVENTS:
            if len(hooks.get(event) or []) != 1:
                problems.append("%s: expected one %s entry, found %d" % (target.settings, event, len(hooks.get(event) or [])))
        first = (hooks.get("preToolUse") or [None])[0]
        if isinstance(first, dict):
            problems.extend(_command_problems(target, str(first.get("bash")), float(first.get("timeoutSec", TIMEOUT_SEC)), out))
    return finish_problems(problems, reinstall_step(HOST, target.scope),
                           "the guard is wired for %s and answers" % ", ".join(EVENTS))

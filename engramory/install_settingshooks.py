"""The installer every host with a Claude-schema hooks file uses (Qwen Code, Factory droid,
Copilot CLI): a copy of the bundle's runtime in `<base>/engramory/`, and one matcher group per
event in `<base>/<settings file>` that runs the host's entry script from that copy.

Built on the installer core, engramory.installer (JsonDoc, Change, apply_change,
add_hook_groups, remove_hooks, restore_bytes, plan_skill/apply_skill): a settings file that
cannot be parsed is refused and left alone, a no-op install writes nothing, a change is backed
up and replaced atomically, `--dry-run` shows the diff, and uninstall gives the user's own
bytes back when a backup holds exactly the result (and deletes a file and folder install
created). Each host installer module is a `Spec` and three one-line functions.

The command never exits non-zero on its own account: `<python> -I -S -c <launcher> <script>
<event> || true`, where the launcher allows (exit 0, one line on stderr) when the script is
gone. Copilot reads exit 1 as "deny", and with no matcher that would block every tool.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from engramory import __version__, fsutil
from engramory.installer import (
    LINK_MANIFEST,
    MANIFEST,
    Change,
    JsonDoc,
    SettingsError,
    add_hook_groups,
    apply_change,
    apply_skill,
    bundle_files,
    bundle_problems,
    canonical,
    check_hooks_shape,
    folder_action_line,
    plan_skill,
    prune_empty,
    read_manifest,
    remove_hooks,
    remove_listed,
    restore_bytes,
    sh_quote,
    shell_word,
    source_root,
    unified_diff,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

FOLDER = "engramory"
RUNTIME_DIRS = ("engramory/", "tools/")
SCOPES = ("user", "project")
SMOKE_TIMEOUT = 10
# Allow when the script is gone (a deleted or moved bundle must not block the user), say so.
LAUNCHER = (
    "import sys,os;p=sys.argv[1];os.path.isfile(p) or (sys.stderr.write('engramory: '+p+' is missing: "
    "the guard is off; run engramory install --check\\n'),sys.exit(0));sys.argv=sys.argv[1:];"
    "exec(compile(open(p,'rb').read(),p,'exec'),{'__name__':'__main__','__file__':p})"
)


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
    ) -> None:
        self.host = host
        self.title = title
        self.dirname = dirname  # ".qwen": user scope ~/<dirname>, project ./<dirname>
        self.settings_name = settings_name
        self.script = script  # hooks/<script>, run with the event as its argument
        self.hooks = hooks  # (event, matcher or None)
        self.handler = handler  # command -> the handler object (timeout key and unit are the host's)
        self.home_env = home_env  # a variable that moves the user-level folder ($COPILOT_HOME)
        self.note = note  # printed after a changing install (restart, trust, ...)
        self.seconds = seconds  # handler -> the time budget the host gives it, in seconds


class Target:
    """Where one scope's bundle copy and settings file are. Quacks like engramory.install.Target
    where plan_skill / apply_skill look (skills, skill_dir, link_manifest)."""

    def __init__(self, spec: Spec, scope: str, cwd: str | None = None, env: Mapping[str, str] | None = None) -> None:
        environ = os.environ if env is None else env
        self.scope = scope
        self.project = os.path.abspath(cwd or os.getcwd())
        moved = environ.get(spec.home_env, "") if spec.home_env else ""
        if scope == "user":
            home = environ.get("HOME") or os.path.expanduser("~")
            self.base = os.path.abspath(moved) if moved else os.path.join(home, spec.dirname)
        else:
            self.base = os.path.join(self.project, spec.dirname)
        self.settings = os.path.join(self.base, spec.settings_name)
        self.skills = self.base
        self.skill_dir = os.path.join(self.base, FOLDER)
        self.script = os.path.join(self.skill_dir, "hooks", spec.script)

    @property
    def link_manifest(self) -> str:
        return os.path.join(self.base, LINK_MANIFEST)

    def manifest_path(self) -> str:
        if os.path.islink(self.skill_dir):
            return self.link_manifest
        return os.path.join(self.skill_dir, MANIFEST)


def command(interpreter: str, script: str, event: str) -> str:
    return "%s -I -S -c %s %s %s || true" % (shell_word(interpreter), sh_quote(LAUNCHER), sh_quote(script), event)


def is_ours_for(spec: Spec) -> Callable[[Any], bool]:
    needle = "/%s/hooks/%s" % (FOLDER, spec.script)

    def is_ours(handler: Any) -> bool:
        if not isinstance(handler, dict):
            return False
        cmd = handler.get("command", handler.get("bash"))
        return isinstance(cmd, str) and needle in cmd.replace("\\\\", "/").replace("\\", "/")

    return is_ours


def wanted(spec: Spec, interpreter: str, script: str) -> list[tuple[str, str | None, dict[str, Any]]]:
    return [(event, matcher, spec.handler(command(interpreter, script, event))) for event, matcher in spec.hooks]


def _files(spec: Spec, source: str) -> list[str]:
    files, _ = bundle_files(source, required=["hooks/" + spec.script])
    return [f for f in files if f.startswith(RUNTIME_DIRS) or f == "hooks/" + spec.script]


def _options(args: argparse.Namespace) -> tuple[str, bool, bool]:
    scope = getattr(args, "scope", "user") or "user"
    return scope, bool(getattr(args, "dry_run", False)), bool(getattr(args, "link", False))


def _bad_scope(spec: Spec, what: str, scope: str) -> int:
    sys.stderr.write(
        "engramory %s: --scope %s is not a %s scope; use --scope user (~/%s) or --scope project (./%s)\n"
        % (what, scope, spec.title, spec.dirname, spec.dirname)
    )
    return 64


def _write_failed(what: str, target: Target, exc: OSError) -> int:
    sys.stderr.write(
        "engramory %s: could not write %s: %s; check the permissions and free space, then run "
        "this again\n" % (what, exc.filename or target.base, exc.strerror or exc)
    )
    return 1


def check(spec: Spec, args: argparse.Namespace) -> int:
    """`engramory install --host <spec.host> --check`: 0 healthy, 1 a problem found, 64 usage."""
    scope = getattr(args, "scope", "user") or "user"
    if scope not in SCOPES:
        return _bad_scope(spec, "install", scope)
    return run_check(spec, Target(spec, scope))


def install(spec: Spec, args: argparse.Namespace) -> int:
    """`engramory install --host <spec.host>`: 0 done, 1 refused (nothing changed), 64 usage."""
    scope, dry_run, link = _options(args)
    if scope not in SCOPES:
        return _bad_scope(spec, "install", scope)
    target = Target(spec, scope)
    if getattr(args, "check", False):
        return run_check(spec, target)
    try:
        return _install(spec, target, dry_run, link)
    except SettingsError as exc:
        sys.stderr.write("engramory install: %s\nengramory install: nothing was changed.\n" % exc)
        return 1
    except OSError as exc:
        return _write_failed("install", target, exc)


def _install(spec: Spec, target: Target, dry_run: bool, link: bool, interpreter: str | None = None) -> int:
    out = sys.stdout.write
    exe = interpreter or sys.executable
    if not exe or not os.path.isabs(exe):
        raise SettingsError(
            "cannot tell which Python runs this (sys.executable is %r); run the installer with an "
            "absolute interpreter path, e.g. /usr/bin/python3 -m engramory install --host %s" % (exe, spec.host)
        )
    source = source_root()
    files = _files(spec, source)
    if "hooks/" + spec.script not in files:
        raise SettingsError("hooks/%s is missing from %s: this bundle cannot guard %s" % (spec.script, source, spec.title))
    doc = JsonDoc.load(target.settings, host=spec.title)
    check_hooks_shape(doc, [e for e, _ in spec.hooks])
    plan = plan_skill(target, source, files, link)
    old_manifest = read_manifest(target.manifest_path())
    new_data, created, report = add_hook_groups(doc.data, wanted(spec, exe, target.script), is_ours_for(spec))
    after = doc.raw if canonical(new_data) == canonical(doc.data) else doc.render(new_data)
    change = Change(target.settings, doc.raw, after)

    out("engramory install --host %s (%s scope%s)\n" % (spec.host, target.scope, ", dry run: nothing is written" if dry_run else ""))
    if plan.mode == "link":
        out("  bundle: %s %s -> %s\n" % (target.skill_dir, "already links" if plan.link_ok else "links", source))
    elif plan.mode == "in-place":
        out("  bundle: %s is this bundle itself; nothing to copy\n" % target.skill_dir)
    else:
        out("  bundle: %s %d files to %s (%d new, %d updated, %d unchanged)\n" % (
            "would copy" if dry_run else "copied", len(plan.add) + len(plan.update), target.skill_dir,
            len(plan.add), len(plan.update), len(plan.same)))
    out("  hooks: %s\n" % target.settings)
    for line in report:
        out("    %s\n" % line)
    if dry_run:
        diff = unified_diff(target.settings, change.before, change.after)
        out(diff if diff else "  hooks: no change\n")
        return 0
    base_missing = not os.path.isdir(target.base)
    apply_skill(plan, target, source)  # the script first, its entry last
    _record(spec, target, plan.mode, plan.files, doc.exists, created, old_manifest, base_missing)
    saved = apply_change(change)
    if saved:
        out("  backup of the previous %s: %s\n" % (spec.settings_name, saved))
    if change.changed and spec.note:
        out("  " + spec.note + "\n")
    elif not change.changed and not plan.changed:
        out("  already installed: nothing changed.\n")
    return 0


def _record(
    spec: Spec, target: Target, mode: str, files: list[str], existed: bool, created: list[str],
    old: dict[str, Any] | None, created_base: bool,
) -> None:
    manifest: dict[str, Any] = {"installer": "engramory", "host": spec.host, "files": [], "settings": {}}
    if old is not None:
        manifest["settings"] = dict(old["settings"])
    manifest["version"] = __version__
    manifest["mode"] = mode
    manifest["files"] = sorted(files) if mode in ("copy", "link") else []
    record = manifest["settings"].get(target.settings)
    if not isinstance(record, dict):
        record = {"created_file": not existed, "created": created, "created_base": created_base}
    else:
        prior = [c for c in record.get("created", []) if isinstance(c, str)]
        record = dict(record, created=prior + [c for c in created if c not in prior])
    manifest["settings"][target.settings] = record
    path = target.manifest_path()
    current = read_manifest(path)
    if current is not None and canonical(current) == canonical(manifest):
        return
    fsutil.write_atomic(path, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def uninstall(spec: Spec, args: argparse.Namespace) -> int:
    scope, dry_run, _ = _options(args)
    if scope not in SCOPES:
        return _bad_scope(spec, "uninstall", scope)
    target = Target(spec, scope)
    try:
        return _uninstall(spec, target, dry_run)
    except SettingsError as exc:
        sys.stderr.write("engramory uninstall: %s\nengramory uninstall: nothing was changed.\n" % exc)
        return 1
    except OSError as exc:
        return _write_failed("uninstall", target, exc)


def _uninstall(spec: Spec, target: Target, dry_run: bool) -> int:
    out = sys.stdout.write
    doc = JsonDoc.load(target.settings, host=spec.title)
    check_hooks_shape(doc, [e for e, _ in spec.hooks])
    mpath = target.manifest_path()
    manifest = read_manifest(mpath)
    record = (manifest or {}).get("settings", {}).get(target.settings)
    created = record.get("created") if isinstance(record, dict) else None
    if not isinstance(created, list):
        created = None
    new_data, removed = remove_hooks(doc.data, is_ours_for(spec), created)
    change = Change(target.settings, doc.raw, doc.raw)
    if removed:
        change.after = restore_bytes(doc, new_data)
        if not new_data and isinstance(record, dict) and record.get("created_file"):
            change.after = None
    dest = target.skill_dir
    if os.path.islink(dest):
        action = "unlink"
    elif os.path.isdir(dest):
        action = "foreign" if manifest is None else ("manifest-only" if manifest.get("mode") == "in-place" else "remove")
    else:
        action = ""
    verb = "would remove" if dry_run else "removed"
    out("engramory uninstall --host %s (%s scope%s)\n" % (spec.host, target.scope, ", dry run: nothing is written" if dry_run else ""))
    out("  hooks: %s: %s\n" % (target.settings, "%d engramory entr%s %s" % (removed, "y" if removed == 1 else "ies", verb)
                               if removed else "no engramory entry"))
    out(folder_action_line("bundle", action, dest, manifest, dry_run))
    if dry_run:
        diff = unified_diff(target.settings, change.before, change.after)
        if diff:
            out(diff)
        return 0
    saved = None
    if change.after is None and change.before is not None:
        with open(target.settings, "rb") as f:
            if f.read() != change.before:
                raise SettingsError("%s: changed on disk while this ran; nothing was written to it: run this again" % target.settings)
        os.unlink(target.settings)
    else:
        saved = apply_change(change)
    if action == "unlink":
        os.unlink(dest)
        try:
            os.unlink(target.link_manifest)
        except OSError:
            pass
    elif action == "remove" and manifest is not None:
        remove_listed(dest, [f for f in manifest["files"] if isinstance(f, str)] + [MANIFEST])
        prune_empty(dest)
        try:
            os.rmdir(dest)
        except OSError:
            out("  note: %s still holds files engramory did not install; left in place\n" % dest)
    elif action == "manifest-only":
        try:
            os.unlink(mpath)
        except OSError:
            pass
    if saved:
        out("  backup of the previous %s: %s\n" % (spec.settings_name, saved))
    if isinstance(record, dict) and record.get("created_base"):
        try:
            os.rmdir(target.base)  # only when empty: install made it
        except OSError:
            pass
    return 0


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


def run_check(spec: Spec, target: Target) -> int:
    """The wiring is there, its interpreter and script exist, and a smoke payload is answered
    with no opinion and exit 0 in time. Changes nothing."""
    import shlex
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
    for event, _ in spec.hooks:
        if doc is not None and doc.exists and not found.get(event):
            problems.append("no %s entry runs hooks/%s" % (event, spec.script))
        if len(found.get(event, [])) > 1:
            problems.append("%d %s entries run the guard: each call would be judged more than once" % (len(found[event]), event))
    first = next((h for hs in found.values() for h in hs), None)
    if first is not None:
        cmd = str(first.get("command", first.get("bash", "")))
        try:
            words = shlex.split(cmd.split(" || ")[0])
        except ValueError:
            words = []
        exe = words[0] if words else ""
        script = next((w for w in words[1:] if w.endswith(spec.script)), "")
        if not (os.path.isabs(exe) and os.path.isfile(exe) and os.access(exe, os.X_OK)):
            problems.append("the interpreter %s does not exist or cannot run: no hook runs" % (exe or "(none)"))
        elif not os.path.isfile(script):
            problems.append("the script %s does not exist: the guard is off (tool calls go through unchecked)" % script)
        else:
            problems.extend(bundle_problems(target.skill_dir, exe))
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
    for problem in problems:
        out("  problem: %s\n" % problem)
    if problems:
        out("  next step: run `%s -m engramory install --host %s --scope %s` from the engramory checkout\n"
            % (sys.executable or "python3", spec.host, target.scope))
        return 1
    out("  healthy: the guard is wired for %s and answers\n" % ", ".join(e for e, _ in spec.hooks))
    return 0

"""The whole install / uninstall / --check flow for a host whose hooks live in one JSON file
(Claude-shaped `hooks.<Event>[{matcher, hooks: [handler]}]`, or any shape the host module
merges itself), built on engramory.installer. A host installer module declares a `Wiring`
and calls three functions:

    from engramory import installer_json as flow

    class Gemini(flow.Wiring):
        host, title = "gemini", "Gemini CLI"
        comments = True                               # settings.json allows comments
        def __init__(self, scope):                   # where things go: the host's own
            base = ...                                # ~/.gemini or ./.gemini
            super().__init__(settings=os.path.join(base, "settings.json"),
                             bundle_dir=os.path.join(base, "engramory"))
        def hooks(self, interpreter):                 # its events, matchers, timeouts, scripts
            return [("BeforeTool", "write_file|replace",
                     self.handler(interpreter, "engramory_gemini_guard.py", timeout=10000))]
        def smoke_cases(self, tmp):                   # payloads the hooks must answer
            return [flow.Smoke("BeforeTool", "engramory_gemini_guard.py", payload, expect_deny)]

    def install(args): return flow.install(Gemini(args.scope), args)
    def uninstall(args): return flow.uninstall(Gemini(args.scope), args)
    def check(args): return flow.check(Gemini(args.scope))

What the flow guarantees, for every host: the bundle copy with its manifest (files, and per
settings file what install created), so uninstall takes out exactly that; the settings file
edited in place (installer.JsonDoc: every untouched byte kept) with a backup of the same mode;
a refusal, before anything is written, when the settings cannot be parsed or a hook it
would wire could not run (missing script, an interpreter that cannot import the bundle);
`--dry-run` as a diff; a second install that changes nothing; `--check` that exits 1 with
the reason and the fix unless every handler is there, starts, imports the bundle and answers
its smoke payloads as it must. Hook commands go through installer.hook_command (the -c
launcher: a deleted bundle is a hook error, never a deny of everything).

Optional hooks, for what a host has of its own (defaults change nothing):
- `scopes` (scope, where) and `for_scope(scope)`, with `main(cls, verb, args)`: the --scope
  usage error (exit 64) and the dispatch to install / uninstall / --check;
- `scope` in the first line, `settings_label` for the settings file's name in the output,
  `bundle_dirs` / `bundle_top` for what the bundle copy holds;
- `install_extras(new_data, old_manifest, dry_run)` / `uninstall_extras(manifest, record, dry_run)`: other files
  the host edits beside the settings (an `Extra`: Codex's trust records in config.toml,
  Gemini's trusted_hooks.json), written after the settings (uninstall: `first` ones before);
- `record_fields()`, `uninstall_shape(doc)`, `leftover_dirs(created_base)`, `backup_label(path)`,
  `notes()` (lines printed after the settings' report);
- `run_check(interpreter, out)`: a host's own --check (default: `check` below).
`apply_install` / `apply_uninstall` are the flow without the error reporting (they raise
installer.SettingsError), for in-process callers.
"""

from __future__ import annotations

import os
import sys
import tempfile

from engramory.install import smoke as smoke_mod
from engramory.install import steps
from engramory.install.bundle import (
    PACKAGE_DIR,
    TOP_FILES,
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
from engramory.install.hookcommands import HOOK_TIMEOUT, hook_command, split_command
from engramory.install.settings import (
    Change,
    JsonDoc,
    SettingsError,
    WriteError,
    add_hook_groups,
    apply_change,
    check_hooks_shape,
    remove_hooks,
    restore_bytes,
    unified_diff,
)
from engramory.install.smoke import Report, bundle_problems, interpreter_problem, smoke
from engramory.install.steps import apply_or_delete, header, run_verb, scope_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any

    from engramory.install.bundle import SkillPlan


class Smoke:
    """One smoke case: run the handler of `event` that runs `script` with `payload`;
    `judge(smoke) -> problem | None` says whether its answer shows the hook acts."""

    def __init__(self, event: str, script: str, payload: Any, judge: Callable[[smoke_mod.Smoke], str | None]) -> None:
        self.event = event
        self.script = script
        self.payload = payload
        self.judge = judge


class Extra:
    """Another file an install or uninstall edits beside the settings: its change, the lines
    that say so (printed after the settings' own), what it adds to the manifest's top level,
    lines printed last, and (uninstall) whether it is written before the settings."""

    def __init__(self, change: Change, lines: Sequence[str] = (), manifest: dict[str, Any] | None = None,
                 last: Sequence[str] = (), first: bool = False) -> None:
        self.change = change
        self.lines = list(lines)
        self.manifest = dict(manifest or {})
        self.last = list(last)
        self.first = first


class Wiring(Place):
    """What one host installer declares. Override `hooks` (and, for a shape that is not
    Claude's, `merge` / `unmerge` / `ours`); the defaults cover Claude-shaped settings."""

    host = "host"
    title = "the host"
    comments = False  # JSONC settings (comments, trailing commas)
    scripts_dir = "hooks"
    restart = "Restart the host so it reads the new hooks."
    scopes: tuple[tuple[str, str], ...] = ()  # (scope, where it installs) for `main`'s usage error
    settings_label = "settings"
    bundle_dirs: tuple[str, ...] = (PACKAGE_DIR + "/", "tools/", "schemas/", "templates/")
    bundle_top: tuple[str, ...] = TOP_FILES

    def __init__(self, settings: str, bundle_dir: str, files: Sequence[str] | None = None,
                 source: str | None = None, scope: str | None = None) -> None:
        self.scope = scope
        self.settings = settings
        self.bundle_dir = bundle_dir
        self.skill_dir = bundle_dir  # the name installer.plan_skill / apply_skill look for
        self.source = source or source_root()
        self._files = list(files) if files is not None else None

    # -- what the host module declares ----------------------------------------------------

    @classmethod
    def for_scope(cls, scope: str) -> Wiring:
        """The wiring of one of `scopes` (for `main`)."""
        raise NotImplementedError

    def install_extras(self, new_data: dict[str, Any], old_manifest: dict[str, Any] | None,
                       dry_run: bool) -> list[Extra]:
        """Other files install edits once the settings hold `new_data`."""
        return []

    def uninstall_extras(self, manifest: dict[str, Any] | None, record: Any, dry_run: bool) -> list[Extra]:
        """Other files uninstall edits (`record`: the manifest's record of the settings file)."""
        return []

    def record_fields(self) -> dict[str, Any]:
        """Extra fields of the manifest's record of a settings file install creates a record for."""
        return {}

    def uninstall_shape(self, doc: JsonDoc) -> None:
        """Refuse (SettingsError) settings uninstall cannot edit safely; default: none refused."""

    def leftover_dirs(self, created_base: bool) -> list[str]:
        """Folders uninstall removes when empty, innermost first."""
        return [os.path.dirname(self.settings)] if created_base else []

    def backup_label(self, path: str) -> str:
        return "settings" if path == self.settings else os.path.basename(path)

    def notes(self) -> list[str]:
        """Lines install prints after the settings' report (`note: ...`); default none."""
        return []

    def run_check(self, interpreter: str | None = None, out: Callable[[str], Any] | None = None) -> int:
        """`install --check`; a host with its own checks overrides this."""
        return check(self, interpreter, out)

    def hooks(self, interpreter: str) -> list[tuple[str, str | None, dict[str, Any]]]:
        """(event, matcher or None, handler) for each hook to wire."""
        raise NotImplementedError

    def smoke_cases(self, tmp: str) -> list[Smoke]:
        """Payloads the wired hooks must answer (deny or report); [] checks only that they start."""
        return []

    def handler(self, interpreter: str, script: str, timeout: int | None = HOOK_TIMEOUT,
                **extra: Any) -> dict[str, Any]:
        """A Claude-shaped command handler running `script` from the bundle."""
        out: dict[str, Any] = {"type": "command", "command": hook_command(interpreter, self.script_path(script))}
        if timeout is not None:
            out["timeout"] = timeout
        out.update(extra)
        return out

    def script_path(self, script: str) -> str:
        return os.path.join(self.bundle_dir, self.scripts_dir, script)

    def scripts(self) -> list[str]:
        return sorted({s for _, _, h in self.hooks("python3") for s in [self.script_of(h)] if s})

    def script_of(self, handler: Any) -> str | None:
        """The bundle script a handler runs, when it is one of ours."""
        if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
            return None
        command = handler["command"].replace("\\\\", "/").replace("\\", "/")
        folder = "/%s/%s/" % (os.path.basename(self.bundle_dir), self.scripts_dir)
        i = command.find(folder)
        if i < 0:
            return None
        rest = command[i + len(folder):]
        name = rest.split('"', 1)[0].split(" ", 1)[0]
        return name if name.endswith(".py") else None

    def ours(self, handler: Any) -> bool:
        return self.script_of(handler) is not None

    def present(self, data: dict[str, Any]) -> list[tuple[str, Any, dict[str, Any]]]:
        """(event, matcher, handler) for every handler in the settings (Claude's shape)."""
        return _handlers(data)

    def merge(self, data: dict[str, Any], interpreter: str) -> tuple[dict[str, Any], list[str], list[str]]:
        return add_hook_groups(data, self.hooks(interpreter), self.ours)

    def unmerge(self, data: dict[str, Any], created: list[str] | None) -> tuple[dict[str, Any], int]:
        return remove_hooks(data, self.ours, created)

    def check_shape(self, doc: JsonDoc) -> None:
        check_hooks_shape(doc, [event for event, _, _ in self.hooks("python3")])

    def files(self) -> tuple[list[str], list[str]]:
        """(bundle files to copy, problems that make a hook unable to run)."""
        files, missing = runtime_files(self.source, self.scripts(), self.bundle_dirs, self.bundle_top,
                                                 self.scripts_dir)
        return [f for f in files if self._files is None or f in self._files], missing


def main(cls: type[Wiring], verb: str, args: argparse.Namespace | None) -> int:
    """`verb` ("install", "uninstall" or "check") for `args.scope`: 64 for a scope the host
    does not have (`cls.scopes`), else what the verb returns."""
    scope = scope_of(args, verb, cls.title, cls.scopes) if cls.scopes else getattr(args, "scope", None) or "user"
    if scope is None:
        return 64
    w = cls.for_scope(scope)
    if verb == "install":
        return install(w, args)
    if verb == "uninstall":
        return uninstall(w, args)
    return w.run_check()


def apply_install(w: Wiring, dry_run: bool = False, link: bool = False, interpreter: str | None = None,
                  out: Callable[[str], Any] | None = None) -> int:
    """The install flow, raising installer.SettingsError where `install` reports it."""
    return _install(w, dry_run, link, steps.interpreter(interpreter, w.host), out or sys.stdout.write)


def apply_uninstall(w: Wiring, dry_run: bool = False, out: Callable[[str], Any] | None = None) -> int:
    """The uninstall flow, raising installer.SettingsError where `uninstall` reports it."""
    return _uninstall(w, dry_run, out or sys.stdout.write)


def _opts(args: argparse.Namespace | None) -> tuple[bool, bool]:
    return bool(getattr(args, "dry_run", False)), bool(getattr(args, "link", False))


def install(w: Wiring, args: argparse.Namespace | None = None, interpreter: str | None = None,
            out: Callable[[str], Any] | None = None) -> int:
    """`engramory install --host <host>`: 0 done, 1 refused (nothing changed) or a write failed."""
    write = out or sys.stdout.write
    if getattr(args, "check", False):
        return w.run_check(interpreter, out)
    dry_run, link = _opts(args)
    return run_verb(
        "install", lambda: _install(w, dry_run, link, steps.interpreter(interpreter, w.host), write), w.bundle_dir)


def _install(w: Wiring, dry_run: bool, link: bool, exe: str, write: Callable[[str], Any]) -> int:
    files = _runnable_files(w, exe)
    doc = JsonDoc.load(w.settings, comments=w.comments, host=w.title)
    w.check_shape(doc)
    plan = plan_skill(w, w.source, files, link)
    old = read_manifest(w.manifest_path())
    new_data, created, report = w.merge(doc.data, exe)
    change = Change(w.settings, doc.raw, doc.render(new_data))
    extras = w.install_extras(new_data, old, dry_run)

    write(header("install", w.host, w.scope, dry_run))
    write(_bundle_line(w, plan, dry_run))
    write("  %s: %s\n" % (w.settings_label, w.settings))
    for line in report:
        write("    %s\n" % line)
    write("".join("  %s\n" % line for line in w.notes()))
    for extra in extras:
        write("".join("  %s\n" % line for line in extra.lines))
    if dry_run:
        diff = unified_diff(w.settings, change.before, change.after)
        write(diff if diff else "  %s: no change\n" % w.settings_label)
        for extra in extras:
            write(unified_diff(extra.change.path, extra.change.before, extra.change.after))
        return 0
    record = dict({"created_file": not doc.exists, "created": created,
                   "created_base": not os.path.isdir(os.path.dirname(w.settings))}, **w.record_fields())
    _write_install(w, plan, exe, change, extras, old, created, record, write)
    return 0


def _runnable_files(w: Wiring, exe: str) -> list[str]:
    """The bundle files to copy; SettingsError when a hook could not run (a script missing from
    the bundle, or an interpreter that would not stay)."""
    files, missing = w.files()
    if missing:
        raise SettingsError("cannot wire hooks that could not run: %s; reinstall engramory or run "
                                      "the installer from a complete checkout" % "; ".join(missing))
    problem = interpreter_problem(exe)
    if problem:
        raise SettingsError("%s; run the installer with a Python that stays" % problem)
    return files


def _bundle_line(w: Wiring, plan: SkillPlan, dry_run: bool) -> str:
    """What install does (or would do) to the bundle folder, as the report's bundle lines."""
    if plan.mode == "in-place":
        return "  bundle: %s is this bundle itself; nothing to copy\n" % w.bundle_dir
    if plan.mode == "link":
        return "  bundle: %s %s -> %s\n" % (w.bundle_dir, "already links" if plan.link_ok else (
            "would link" if dry_run else "linked"), w.source)
    lines = ["  bundle: %s %d files to %s (%d new, %d updated, %d unchanged)\n" % (
        "would copy" if dry_run else "copied", len(plan.add) + len(plan.update), w.bundle_dir,
        len(plan.add), len(plan.update), len(plan.same))]
    for rel in plan.stale:
        lines.append("    - %s (no longer in the bundle: %s)\n" % (rel, "would remove" if dry_run else "removed"))
    return "".join(lines)


def _write_install(w: Wiring, plan: SkillPlan, exe: str, change: Change, extras: list[Extra],
                   old: dict[str, Any] | None, created: Any, record: dict[str, Any],
                   write: Callable[[str], Any]) -> None:
    # The bundle and its manifest first, the settings last: the host never sees a hook whose
    # script is not there yet, or one that could not run.
    apply_skill(plan, w, w.source)
    record_install(w.manifest_path(), w.host, plan, w.settings, record, old, created,
                             {k: v for extra in extras for k, v in extra.manifest.items()})
    broken = bundle_problems(w.bundle_dir, exe)
    if broken:
        raise WriteError("the bundle is in %s but its hooks could not run with %s (%s); %s was not "
                                   "changed" % (w.bundle_dir, exe, "; ".join(broken[:3]), w.settings))
    for each in [change] + [extra.change for extra in extras]:
        saved = apply_change(each)
        if saved:
            write("  backup of the previous %s: %s\n" % (w.backup_label(each.path), saved))
    if change.changed or any(extra.change.changed for extra in extras):
        write("  %s\n" % w.restart)
    elif not plan.changed:
        write("  already installed: nothing changed.\n")
    for extra in extras:
        write("".join("  %s\n" % line for line in extra.last))


def uninstall(w: Wiring, args: argparse.Namespace | None = None, out: Callable[[str], Any] | None = None) -> int:
    """`engramory uninstall --host <host>`: take out exactly what install put in."""
    write = out or sys.stdout.write
    dry_run, _ = _opts(args)
    return run_verb("uninstall", lambda: _uninstall(w, dry_run, write), w.bundle_dir)


def _uninstall(w: Wiring, dry_run: bool, write: Callable[[str], Any]) -> int:
    doc = JsonDoc.load(w.settings, comments=w.comments, host=w.title)
    w.uninstall_shape(doc)
    mpath = w.manifest_path()
    manifest = read_manifest(mpath)
    record = (manifest or {}).get("settings", {}).get(w.settings)
    created = record.get("created") if isinstance(record, dict) else None
    if not isinstance(created, list):
        created = None
    new_data, removed = w.unmerge(doc.data, created)
    change = Change(w.settings, doc.raw, doc.raw)
    if removed:
        change.after = restore_bytes(doc, new_data)
        if not new_data and isinstance(record, dict) and record.get("created_file"):
            change.after = None
    extras = w.uninstall_extras(manifest, record, dry_run)
    dest = w.bundle_dir
    action = bundle_action(dest, manifest)
    write(header("uninstall", w.host, w.scope, dry_run))
    write("  %s: %s: %s\n" % (w.settings_label, w.settings, "%d engramory entr%s %s" % (
        removed, "y" if removed == 1 else "ies", "would be removed" if dry_run else "removed") if removed
        else "no engramory entry"))
    for extra in extras:
        write("".join("  %s\n" % line for line in extra.lines))
    write(folder_action_line("bundle", action, dest, manifest, dry_run))
    if dry_run:
        for each in [change] + [extra.change for extra in extras]:
            write(unified_diff(each.path, each.before, each.after))
        return 0
    # A file install created that holds only our entries is deleted: nothing of the user's to back up.
    order = [e.change for e in extras if e.first] + [change] + [e.change for e in extras if not e.first]
    backups = [(each.path, apply_or_delete(each)) for each in order]
    write(take_out_bundle(dest, action, manifest, mpath, w.link_manifest))
    for path, saved in backups:
        if saved:
            write("  backup of the previous %s: %s\n" % (w.backup_label(path), saved))
    if change.after is None and change.before is not None:
        write("  %s held only engramory's entries and was created by install: removed\n" % w.settings)
    remove_made_dirs(w.leftover_dirs(isinstance(record, dict) and bool(record.get("created_base"))))
    return 0


def check(w: Wiring, interpreter: str | None = None, out: Callable[[str], Any] | None = None) -> int:
    """`install --host <host> --check`: 0 only when every hook is wired, starts, imports the
    bundle and answers its smoke payloads as it must; else 1, one problem and fix per reason."""
    report = Report("engramory install --host %s --check: %s" % (w.host, w.settings))
    fix = "run `engramory install --host %s` again" % w.host
    try:
        doc = JsonDoc.load(w.settings, comments=w.comments, host=w.title)
    except SettingsError as exc:
        report.problem("%s; %s ignores a file it cannot parse" % (exc, w.title), "fix the file, then run this again")
        return report.finish("", out)
    if not doc.exists:
        report.problem("%s does not exist: the hooks are not installed" % w.settings, fix)
        return report.finish("", out)
    wanted = w.hooks(interpreter or sys.executable)
    present = w.present(doc.data)
    argv_of: dict[tuple[str, str], list[str]] = {}
    for event, matcher, handler in wanted:
        script = w.script_of(handler) or ""
        argv = _check_handler(w, report, fix, event, matcher, script, present)
        if argv is not None:
            argv_of[(event, script)] = argv
    _check_smoke(w, report, fix, argv_of)
    return report.finish("every hook is wired and acts", out)


def _check_handler(w: Wiring, report: Report, fix: str, event: str, matcher: Any, script: str,
                   present: Sequence[tuple[str, Any, dict[str, Any]]]) -> list[str] | None:
    """Report on the handler of `event` that runs `script`; the argv to smoke-run it with when
    it can be followed to a script that exists, else None."""
    mine = [(m, h) for ev, m, h in present if ev == event and w.script_of(h) == script]
    if not mine:
        report.problem("no %s handler runs %s/%s" % (event, w.scripts_dir, script), fix)
        return None
    if len(mine) > 1:
        report.note("%d %s handlers run %s: each call is judged more than once" % (len(mine), event, script))
    m, h = mine[0]
    if m != matcher:
        report.problem("the %s matcher is %r, not %r: the hook may not run for the tools it guards"
                       % (event, m, matcher), fix)
    if h.get("async") is True:
        report.problem("the %s handler is marked \"async\": the host does not wait for it" % event,
                       "remove \"async\" from it in %s" % w.settings)
    try:
        parsed = split_command(str(h.get("command")))
    except ValueError as exc:
        report.problem("the %s command cannot be followed (%s)" % (event, exc), fix)
        return None
    problem = interpreter_problem(parsed.interpreter)
    if problem:
        report.problem("%s: %s" % (event, problem), fix)
        return None
    if not os.path.isfile(parsed.script):
        report.problem("%s: the script %s does not exist: the hook does not run" % (event, parsed.script), fix)
        return None
    argv = parsed.argv()
    for line in bundle_problems(os.path.dirname(os.path.dirname(parsed.script)), parsed.interpreter):
        report.problem("%s: %s: the hook would let every call through" % (event, line), fix)
    report.ok("%s: %s runs with %s" % (event, parsed.script, parsed.interpreter))
    return argv


def _check_smoke(w: Wiring, report: Report, fix: str, argv_of: dict[tuple[str, str], list[str]]) -> None:
    """Run each smoke case through the handler the check followed (none: nothing to run)."""
    with tempfile.TemporaryDirectory(prefix="engramory-check-") as tmp:
        for case in w.smoke_cases(tmp):
            argv = argv_of.get((case.event, case.script))
            if argv is None:
                continue
            why = case.judge(smoke(argv, case.payload, cwd=tmp))
            if why:
                report.problem("%s: a smoke run shows the hook would not act: %s" % (case.event, why), fix)
            else:
                report.ok("%s: a smoke run was answered as it must be" % case.event)


def _handlers(data: dict[str, Any]) -> list[tuple[str, Any, dict[str, Any]]]:
    """(event, matcher, handler) for every handler in Claude-shaped settings."""
    out: list[tuple[str, Any, dict[str, Any]]] = []
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                out.extend((event, group.get("matcher"), h) for h in group["hooks"] if isinstance(h, dict))
    return out

"""`engramory install` / `engramory uninstall`: put the skill and its hooks into Claude Code,
and take out exactly what was put in.

install copies (or, with --link, symlinks) the bundle's runtime files into
`<config>/skills/engramory` (user scope) or `<project>/.claude/skills/engramory`, and merges
four hook entries into the matching settings file, each running the generic entry
`hooks/engramory_hook.py claude <event>`: the index guard (PreToolUse), the shell and MCP
backstop (PostToolUse, and UserPromptSubmit for late writes) and the session notice
(SessionStart). Each hook command names the interpreter that ran the installer and the script
by absolute, quoted paths, so a missing `python3` on PATH or a path with spaces cannot disable
the guard.

The user's settings are handled as data that must not be lost: a file that cannot be parsed
is refused and left alone; every foreign key and hook is kept; a no-op install does not
rewrite the file; a real change is shown as a diff (--dry-run) or backed up and replaced
atomically. Our hooks are recognised by their script names under a `skills/engramory` folder
(the generic entry with `claude <event>`, or a script an earlier install wired: the shims
`engramory_index_guard.py`, `engramory_post_tool.py`, `engramory_session_start.py`), so
uninstall removes them and nothing else, and a reinstall replaces an old one.

The settings machinery (JsonDoc, Change, apply_change, add_hook_groups, remove_hooks,
restore_bytes, hook commands, the bundle copy, the --check scaffolding) is host-neutral and
lives in the engramory.install package, which every host's installer uses.
"""

from __future__ import annotations

import os
import re
import shutil
import sys

from engramory import __version__
from engramory.automemory import claude_config_dir
from engramory.hosts.claude import check as install_check
from engramory.install.bundle import (
    MANIFEST,
    PLUGIN_MANIFEST,
    SKILL_NAME,
    Place,
    SkillPlan,
    apply_skill,
    bundle_files,
    folder_action_line,
    is_bundle,
    missing_required,
    plan_skill,
    read_manifest,
    remove_made_dirs,
    source_root,
    take_out_bundle,
    write_manifest,
)
from engramory.install.hookcommands import HOOK_TIMEOUT, hook_command
from engramory.install.hookcommands import LAUNCHER as LAUNCHER  # what earlier releases exported here
from engramory.install.settings import (
    Change,
    JsonDoc,
    SettingsError,
    WriteError,
    add_hook_groups,
    apply_change,
    backups_of,
    canonical,
    check_hooks_shape,
    remove_hooks,
    restore_bytes,
    unified_diff,
)
from engramory.install.settings import ours_in as _ours_in
from engramory.install.smoke import Report, bundle_problems
from engramory.install.steps import apply_or_delete, interpreter
from engramory.mcp import wiring

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping, Sequence
    from typing import Any

# Every hook runs the generic entry, `hooks/engramory_hook.py claude <event>` (issue 20), through
# the one shared launcher.
HOST = "claude"
ENTRY = "engramory_hook.py"
# The scripts installs wired before the generic entry: still recognised as ours (--check passes
# them and says a reinstall moves them; install replaces them, uninstall takes them out), and
# still shipped, as shims, because those installs (and a settings file of another scope that
# shares this skill folder) run them.
GUARD_SCRIPT = "engramory_index_guard.py"
POST_TOOL_SCRIPT = "engramory_post_tool.py"
SESSION_START_SCRIPT = "engramory_session_start.py"
# letters and '|' only: an exact-name list on every version. Bash since issue 22: the guard
# judges the shell writes whose bytes it can predict (heredoc, printf, echo) before they run.
GUARD_MATCHER = "Edit|Write|MultiEdit|Bash"
# '^', '(', '.', '*' make this a JavaScript regex; anchored so that only these tools match.
# Monitor (2.1.332) runs shell commands too, under its own tool name.
# Read since issue 22: its PostToolUse records what the agent saw (engramory.stale).
SHELL_MATCHER = "^(Bash|PowerShell|Monitor|Read|mcp__.*)$"
# (event, matcher or None for "every source", the script an earlier install wired for it)
HOOKS: tuple[tuple[str, str | None, str], ...] = (
    ("PreToolUse", GUARD_MATCHER, GUARD_SCRIPT),
    ("PostToolUse", SHELL_MATCHER, POST_TOOL_SCRIPT),
    ("SessionStart", None, SESSION_START_SCRIPT),
    # A background shell command (run_in_background, Monitor) writes after its PostToolUse
    # (measured, 2.1.332); when it ends, the CLI hands the model a task notification, which
    # fires UserPromptSubmit: the hook re-checks the indexes by their stamps there. (Stop
    # fires too, but reaches the model only by blocking the stop, so it is not wired.)
    ("UserPromptSubmit", None, POST_TOOL_SCRIPT),
)
LEGACY_SCRIPTS = tuple(dict.fromkeys(script for _, _, script in HOOKS))
SCRIPTS = LEGACY_SCRIPTS  # the name earlier releases exported
EVENTS = tuple(event for event, _, _ in HOOKS)
_GENERIC = re.compile(r"/skills/%s/hooks/%s['\"]? +%s +([A-Za-z]+)(?:\s|$)" % (SKILL_NAME, re.escape(ENTRY), HOST))

RESTART = (
    "Restart Claude Code (or open /hooks and review them) so the hook changes take effect."
)


def is_our_handler(handler: Any) -> bool:
    """A handler runs our hook from a `skills/engramory` folder: the generic entry with
    `claude <event>`, or one of the scripts an earlier install wired."""
    return ours_as(handler) is not None


def ours_as(handler: Any) -> str | None:
    """ENTRY for a handler of ours in today's form, the old script's name for one an earlier
    install wrote, None for anything else."""
    if not isinstance(handler, dict):
        return None
    command = handler.get("command")
    if not isinstance(command, str):
        return None
    command = command.replace("\\\\", "/").replace("\\", "/")
    m = _GENERIC.search(command)
    if m and m.group(1) in EVENTS:
        return ENTRY
    return next((s for s in LEGACY_SCRIPTS if "/skills/%s/hooks/%s" % (SKILL_NAME, s) in command), None)


# Committed (project scope) settings must work in every clone: the script is found through
# the variable Claude Code sets for every hook (measured on 2.1.332: $CLAUDE_PROJECT_DIR, the
# folder the session started in), and the interpreter through PATH.
PROJECT_DIR_VAR = "CLAUDE_PROJECT_DIR"
PORTABLE_PYTHON = "python3"


def wanted_hooks(
    skill_dir: str, interpreter: str, project: str | None = None
) -> list[tuple[str, str | None, dict[str, Any]]]:
    """Our handlers, one per event, each `hooks/engramory_hook.py claude <event>`. With
    `project` (project scope) the commands name the bundle relative to $CLAUDE_PROJECT_DIR and
    run `python3`, so a clone at another path works."""
    out = []
    path = os.path.join(skill_dir, "hooks", ENTRY)
    for event, matcher, _legacy in HOOKS:
        if project is None:
            command = hook_command(interpreter, path)
        else:
            command = hook_command(PORTABLE_PYTHON, os.path.relpath(path, project), base_var=PROJECT_DIR_VAR)
        command += " %s %s" % (HOST, event)
        out.append((event, matcher, {"type": "command", "command": command, "timeout": HOOK_TIMEOUT}))
    return out


# -- where things go ---------------------------------------------------------------------


class Target(Place):
    """Where one scope's skill folder and settings file are."""

    def __init__(self, scope: str, env: Mapping[str, str] | None = None, cwd: str | None = None) -> None:
        self.scope = scope
        project = os.path.abspath(cwd or os.getcwd())
        self.project = project
        if scope == "user":
            base = claude_config_dir(env)
            self.settings = os.path.join(base, "settings.json")
        else:
            base = os.path.join(project, ".claude")
            name = "settings.local.json" if scope == "local" else "settings.json"
            self.settings = os.path.join(base, name)
        self.skills = os.path.join(base, "skills")
        self.skill_dir = os.path.join(self.skills, SKILL_NAME)


# -- install -----------------------------------------------------------------------------


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
    files, notes = bundle_files(source, required=["hooks/" + ENTRY])
    missing = missing_required(notes)
    if missing:
        raise SettingsError(
            "cannot wire hooks that could not run: %s; reinstall engramory (pip/pipx) or run the "
            "installer from a complete checkout" % "; ".join(missing)
        )
    doc = JsonDoc.load(target.settings)
    check_hooks_shape(doc, [event for event, _, _ in HOOKS])
    plan = plan_skill(target, source, files, link)
    old_manifest_path = target.manifest_path()
    old_manifest = read_manifest(old_manifest_path)
    made_dirs = [d for d in (os.path.dirname(target.settings), target.skills) if not os.path.isdir(d)]
    portable = target.scope == "project"
    if portable:
        exe = _portable_python(source, link)
    new_data, created, report = add_hook_groups(
        doc.data, wanted_hooks(target.skill_dir, exe, target.project if portable else None), is_our_handler
    )
    after = doc.raw if canonical(new_data) == canonical(doc.data) else doc.render(new_data)
    change = Change(target.settings, doc.raw, after)

    head = "engramory install (%s scope%s)" % (target.scope, ", dry run: nothing is written" if dry_run else "")
    out(head + "\n")
    for note in notes:
        out("  note: %s\n" % note)
    if interpreter is None and sys.prefix != getattr(sys, "base_prefix", sys.prefix):
        out("  note: the hooks will run %s, inside a virtual environment: they stop working if it "
            "is deleted (run the installer with the system python3 to avoid that)\n" % exe)
    out(_skill_lines(target, plan, source, dry_run))
    out("  settings: %s\n" % target.settings)
    for line in report:
        out("    %s\n" % line)

    if dry_run:
        diff = unified_diff(target.settings, change.before, change.after)
        out(diff if diff else "  settings: no change\n")
        return 0
    saved = _write_install(target, plan, source, exe, doc, created, old_manifest, old_manifest_path, made_dirs, change)
    out(_outcome_lines(saved, change, plan))
    return 0


def _outcome_lines(saved: str | None, change: Change, plan: SkillPlan) -> str:
    """The report's last lines: the backup made, and whether Claude Code needs a restart."""
    lines = ["  backup of the previous settings: %s\n" % saved] if saved else []
    if change.changed:
        lines.append("  " + RESTART + "\n")
    elif not plan.changed:
        lines.append("  already installed: nothing changed.\n")
    else:
        lines.append("  hook entries unchanged: no restart needed (skill files are reloaded by Claude Code).\n")
    return "".join(lines)


def _portable_python(source: str, link: bool) -> str:
    """The python3 on PATH that project-scope (committed) hooks run; SettingsError when there is
    none, or with --link (links name a folder of this machine only)."""
    if link:
        raise SettingsError(
            "--scope project --link would commit links to %s, a folder of this machine only; use "
            "--scope project without --link (a copy the team commits), or --scope local --link" % source
        )
    found = shutil.which(PORTABLE_PYTHON)
    if not found:
        raise SettingsError(
            "--scope project writes hooks that run `%s` from PATH (committed settings cannot name "
            "this machine's interpreter), and there is no %s on PATH here; install Python 3 as "
            "python3, or use --scope local (this machine only)" % (PORTABLE_PYTHON, PORTABLE_PYTHON)
        )
    return found


def _skill_lines(target: Target, plan: SkillPlan, source: str, dry_run: bool) -> str:
    """The report's lines on the skill folder: in place, linked, or copied (file by file in a dry run)."""
    if plan.mode == "in-place":
        lines = ["  skill: %s is this bundle itself; nothing to copy\n" % target.skill_dir]
        if os.path.isfile(os.path.join(target.skill_dir, PLUGIN_MANIFEST)):
            lines.append("  note: %s holds %s, so Claude Code also loads it as a plugin and every hook would "
                         "run twice; keep the checkout elsewhere and install from there (a copy), or use the "
                         "plugin alone\n" % (target.skill_dir, PLUGIN_MANIFEST))
        return "".join(lines)
    if plan.mode == "link":
        if plan.link_ok:
            return "  skill: %s already links to %s\n" % (target.skill_dir, source)
        return "  skill: %s: %s %s to %s\n" % (
            target.skill_dir, "would link" if dry_run else "linked", ", ".join(plan.files), source)
    verb = "would copy" if dry_run else "copied"
    lines = [
        "  skill: %s %d files to %s (%d new, %d updated, %d unchanged)\n"
        % (verb, len(plan.add) + len(plan.update), target.skill_dir, len(plan.add), len(plan.update), len(plan.same))
    ]
    if dry_run:
        lines.extend("    + %s\n" % rel for rel in plan.add)
        lines.extend("    ~ %s\n" % rel for rel in plan.update)
    lines.extend("    - %s (no longer in the bundle: %s)\n" % (rel, "would remove" if dry_run else "removed")
                 for rel in plan.stale)
    return "".join(lines)


def _write_install(target: Target, plan: SkillPlan, source: str, exe: str, doc: JsonDoc, created: list[str],
                   old_manifest: dict[str, Any] | None, old_manifest_path: str, made_dirs: Sequence[str],
                   change: Change) -> str | None:
    """Copy (or link) the skill, record it, then write the settings; the backup's path, if any.
    Raises WriteError, naming the file, when a write fails."""
    try:
        if plan.mode in ("copy", "link") and plan.changed and not plan.unlink_first:
            # Claim the folder before filling it: if a copy fails half-way, the next install
            # (or uninstall) still knows every file here is ours.
            claim = dict(old_manifest or {"installer": SKILL_NAME, "settings": {}})
            claim["files"] = sorted(set(plan.files) | set(claim.get("files") or []))
            write_manifest(os.path.join(target.skill_dir, MANIFEST), claim)
        apply_skill(plan, target, source)
        _record_install(target, plan, doc, created, old_manifest, made_dirs)
        broken = bundle_problems(target.skill_dir, exe)
        if broken:
            raise WriteError(
                "the bundle is in %s but its hooks could not run with %s (%s); %s was not "
                "changed: fix the interpreter or reinstall, then run this again"
                % (target.skill_dir, exe, "; ".join(broken[:3]), target.settings)
            )
        if old_manifest is not None and old_manifest_path != target.manifest_path() and os.path.isfile(old_manifest_path):
            os.unlink(old_manifest_path)  # moved: a link replaced a copy, or the other way round
        return apply_change(change)
    except OSError as exc:
        raise WriteError(
            "could not write %s: %s; check the permissions and free space, then run this again "
            "(what was already copied is listed in %s)"
            % (exc.filename or target.skill_dir, exc.strerror or exc, target.manifest_path())
        ) from None


def _record_install(
    target: Target, plan: SkillPlan, doc: JsonDoc, created: list[str], old: dict[str, Any] | None,
    made_dirs: Sequence[str] = (),
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
        if made_dirs:
            record["created_dirs"] = list(made_dirs)  # folders install made: uninstall removes them when empty
    else:
        prior = [c for c in record.get("created", []) if isinstance(c, str)]
        record = dict(record, created=prior + [c for c in created if c not in prior])
    manifest["settings"][target.settings] = record
    current = read_manifest(path)
    if current is not None and canonical(current) == canonical(manifest):
        return  # a no-op install writes nothing
    write_manifest(path, manifest)


# -- uninstall ---------------------------------------------------------------------------


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
    change, removed = _uninstall_change(target, doc, record, created)
    # The skill folder goes only when it is ours and no other settings file still uses it.
    others = [
        p for p in ((manifest or {}).get("settings") or {})
        if p != target.settings and _uses_our_hooks(p)
    ]
    dest = target.skill_dir
    skill_action = _skill_action(dest, manifest, others)

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
        saved, left_note = _apply_uninstall(target, change, skill_action, manifest, mpath)
        made = record.get("created_dirs") if isinstance(record, dict) else None
        remove_made_dirs(sorted((d for d in made or [] if isinstance(d, str)), key=len, reverse=True))
    except OSError as exc:
        raise WriteError(
            "could not remove or write %s: %s; check the permissions, then run this again"
            % (exc.filename or target.skill_dir, exc.strerror or exc)
        ) from None
    out(left_note)
    if saved:
        out("  backup of the previous settings: %s\n" % saved)
    if change.after is None and change.before is not None:
        out("  %s held only engramory's entries and was created by install: removed\n" % target.settings)
    if change.changed:
        out("  " + RESTART + "\n")
    return 0


def _uninstall_change(target: Target, doc: JsonDoc, record: Any, created: list[str] | None) -> tuple[Change, int]:
    """The settings file without our entries (None: delete it, when install created it and
    nothing else is left), and how many entries go."""
    new_data, removed = remove_hooks(doc.data, is_our_handler, created)
    change = Change(target.settings, doc.raw, doc.raw)
    if removed:
        change.after = restore_bytes(doc, new_data)
        created_file = bool(record.get("created_file")) if isinstance(record, dict) else not backups_of(doc.path)
        if not new_data and created_file:
            change.after = None
    return change, removed


def _skill_action(dest: str, manifest: dict[str, Any] | None, others: Sequence[str]) -> str:
    """What uninstall does to the skill folder: unlink, remove, manifest-only (an in-place
    install), keep-shared (another settings file still runs it), foreign, or "" (nothing there)."""
    if os.path.islink(dest):
        if is_bundle(dest) or not os.path.exists(dest):
            return "unlink" if not others else "keep-shared"
        return "foreign"
    if not os.path.isdir(dest):
        return ""
    if manifest is None:
        return "foreign"
    if manifest.get("mode") == "in-place":
        return "manifest-only" if not others else "keep-shared"
    return "remove" if not others else "keep-shared"


def _apply_uninstall(
    target: Target, change: Change, skill_action: str, manifest: dict[str, Any] | None, mpath: str
) -> tuple[str | None, str]:
    dest = target.skill_dir
    # A settings file install created that holds only our entries goes with no backup: nothing
    # of the user's is in it.
    saved = apply_or_delete(change)
    left_note = ""
    if skill_action == "unlink":
        os.unlink(dest)
        _drop_settings_record(target.link_manifest, target.settings, delete_when_empty=True)
    elif skill_action == "remove":
        left_note = take_out_bundle(dest, skill_action, manifest, mpath, target.link_manifest)
    elif skill_action == "manifest-only":
        _drop_settings_record(mpath, target.settings, delete_when_empty=True)
    elif skill_action == "keep-shared":
        _drop_settings_record(mpath, target.settings, delete_when_empty=False)
    return saved, left_note


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


def mcp_step(target: Target, args: argparse.Namespace, uninstall: bool) -> int:
    """`--mcp`: the memory MCP server in Claude Code's MCP config (engramory.mcp.wiring)."""
    mcp = wiring.ClaudeCodeMcp(target.scope, target.skill_dir)
    if uninstall:
        return mcp.uninstall(args.dry_run, sys.stdout.write)
    root = wiring.root_arg(args, required=False, title="Claude Code")
    return mcp.install(interpreter(None, "claude"), root, args.dry_run, sys.stdout.write)


def run_check(target: Target, as_json: bool = False, mcp: bool = False) -> int:
    """`install --check`: every scope Claude Code reads for this folder, the handlers, the
    environment and a smoke run of each hook (engramory.hosts.claude.check). 0 only when the
    guard acts."""
    if as_json:
        return install_check.run(scope=target.scope, as_json=True)
    out = sys.stdout.write
    if os.path.isfile(os.path.join(target.skill_dir, PLUGIN_MANIFEST)):
        out("  note: %s holds %s: Claude Code loads it as a plugin as well, so each hook would "
            "run twice; reinstall from a checkout kept elsewhere\n" % (target.skill_dir, PLUGIN_MANIFEST))
    # An enabled engramory plugin: install_check finds its folder, checks and smoke-runs its
    # hooks, and notes each hook wired both ways.
    code = install_check.run(scope=target.scope)
    return max(code, _check_mcp(target, mcp))


def _check_mcp(target: Target, required: bool) -> int:
    """--check of the memory MCP server entry, when there is one (or --mcp asks for it)."""
    mcp = wiring.ClaudeCodeMcp(target.scope, target.skill_dir)
    report = Report("engramory install --check --mcp: %s" % mcp.where())
    mcp.check(report, required)
    if not report.oks and not report.problems:
        return 0
    return report.finish("the memory MCP server is wired and answers")


def check(args: argparse.Namespace) -> int:
    """The registry's INSTALLER contract: `install --check` for Claude Code."""
    return run_check(Target(getattr(args, "scope", "user") or "user"))


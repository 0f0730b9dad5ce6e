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
    runtime_files(root, scripts) -> (files, problems)  a host's copy: engramory/, tools/, its hooks
    record_install(path, host, plan, settings, record, old, created)   the manifest, once a
                                                     first install's record is kept
    bundle_action(dest, manifest) -> action; take_out_bundle(dest, action, ...) -> note line
                                                     uninstall's end, for every host
    remove_made_dirs(folders), files_left(folder), unlink_quietly(path)

Every verb's edges
    header(verb, host, scope, dry_run)               the first line
    interpreter(given, host) -> exe                  refuses a Python that is not absolute
    scope_of(args, verb, title, scopes)              the --scope usage error (caller exits 64)
    run_verb(verb, work, where) -> 0|1               refusals and failed writes, reported
    apply_or_delete(change)                          a file install created goes, unbacked
    finish_problems(problems, next_step, healthy)    the end of a --check that lists problems

install --check
    r = Report(title); r.ok(line); r.note(line); r.problem(reason, fix); r.finish(healthy) -> 0|1
    smoke(argv, payload, env=None, cwd=None) -> Smoke(rc, stdout, stderr, error, .json())
        Feed a hook a payload it must deny (or report) and compare its answer.
    interpreter_problem(exe), import_problems(python, bundle_dir, modules),
    bundle_problems(bundle_dir, python)              every listed file there, every module imports

Where it lives: engramory.installer_settings (settings documents and edits),
engramory.installer_commands (hook commands), engramory.installer_bundle (the bundle copy, its
manifest and taking it out), engramory.installer_smoke (install --check) and
engramory.installer_cli (the verbs' shared edges: first line, interpreter, scope usage error,
error reporting, the end of a --check); this module re-exports every name of the five, so `from engramory.installer import X` keeps working.

A host module's usual shape: `install(args)`, `uninstall(args)`, `check(args)` (the registry's
INSTALLER contract). For a host whose hooks live in one JSON file, engramory.installer_json
is the whole flow: declare a `Wiring` (settings path, bundle folder, hooks(), smoke_cases())
and call installer_json.install / uninstall / check. Otherwise build the settings change with
JsonDoc + add_hook_groups (or an own merge for a flat list), copy with plan_skill/apply_skill
and verify with Report + smoke: install.py (Claude Code) and install_cursor.py (Cursor) are two
complete examples.
"""

from __future__ import annotations

from engramory.installer_bundle import (
    BUNDLE_DATA,
    DATA_DIRS,
    FLAT_PY_DIRS,
    LINK_MANIFEST,
    MANIFEST,
    PACKAGE_DIR,
    PLUGIN_MANIFEST,
    RUNTIME_DIRS,
    SKILL_NAME,
    TOP_FILES,
    Place,
    SkillPlan,
    apply_skill,
    bundle_action,
    bundle_files,
    bundle_path,
    files_left,
    folder_action_line,
    is_bundle,
    is_wheel_layout,
    link_entries,
    missing_required,
    plan_skill,
    precompile,
    prune_empty,
    read_manifest,
    record_install,
    remove_listed,
    remove_made_dirs,
    runtime_files,
    safe_rel,
    same_path,
    source_root,
    take_out_bundle,
    unlink_quietly,
    write_manifest,
)
from engramory.installer_cli import (
    apply_or_delete,
    finish_problems,
    header,
    interpreter,
    reinstall_step,
    run_verb,
    scope_of,
)
from engramory.installer_commands import (
    HOOK_TIMEOUT,
    LAUNCHER,
    LAUNCHERS,
    OLD_LAUNCHERS,
    HookCommand,
    hook_command,
    sh_quote,
    shell_word,
    split_command,
)
from engramory.installer_settings import (
    BOM,
    MAX_SETTINGS,
    Change,
    JsonDoc,
    SettingsError,
    WriteError,
    add_hook_groups,
    apply_change,
    backups_of,
    canonical,
    check_hooks_shape,
    json_type,
    ours_in,
    read_regular,
    remove_hooks,
    restore_bytes,
    unified_diff,
)
from engramory.installer_smoke import (
    Report,
    Smoke,
    bundle_problems,
    import_problems,
    interpreter_problem,
    modules_of,
    smoke,
)

__all__ = [
    "BOM",
    "SettingsError",
    "WriteError",
    "MAX_SETTINGS",
    "read_regular",
    "JsonDoc",
    "check_hooks_shape",
    "json_type",
    "canonical",
    "Change",
    "unified_diff",
    "apply_change",
    "ours_in",
    "add_hook_groups",
    "remove_hooks",
    "backups_of",
    "restore_bytes",
    "HOOK_TIMEOUT",
    "sh_quote",
    "shell_word",
    "LAUNCHER",
    "OLD_LAUNCHERS",
    "LAUNCHERS",
    "hook_command",
    "HookCommand",
    "split_command",
    "SKILL_NAME",
    "MANIFEST",
    "LINK_MANIFEST",
    "TOP_FILES",
    "PACKAGE_DIR",
    "FLAT_PY_DIRS",
    "DATA_DIRS",
    "PLUGIN_MANIFEST",
    "BUNDLE_DATA",
    "RUNTIME_DIRS",
    "Place",
    "bundle_action",
    "files_left",
    "record_install",
    "remove_made_dirs",
    "runtime_files",
    "take_out_bundle",
    "unlink_quietly",
    "apply_or_delete",
    "finish_problems",
    "header",
    "interpreter",
    "reinstall_step",
    "run_verb",
    "scope_of",
    "source_root",
    "is_wheel_layout",
    "bundle_path",
    "bundle_files",
    "missing_required",
    "is_bundle",
    "same_path",
    "read_manifest",
    "write_manifest",
    "SkillPlan",
    "link_entries",
    "plan_skill",
    "safe_rel",
    "apply_skill",
    "precompile",
    "folder_action_line",
    "remove_listed",
    "prune_empty",
    "Report",
    "Smoke",
    "smoke",
    "interpreter_problem",
    "import_problems",
    "modules_of",
    "bundle_problems",
]

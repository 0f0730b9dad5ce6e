"""The installer core: what every host's `engramory install` / `uninstall` / `install --check`
shares. A host installer module (engramory/hosts/<host>/install.py) says only what is its own:
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

Where it lives: engramory.install.settings (settings documents and edits),
engramory.install.hookcommands (hook commands), engramory.install.bundle (the bundle copy, its
manifest and taking it out), engramory.install.smoke (install --check) and
engramory.install.steps (the verbs' shared edges: first line, interpreter, scope usage error,
error reporting, the end of a --check). Import each name from its module: this package holds
nothing but this summary (a re-export here would put the whole core on every importer's path).

A host module's usual shape: `install(args)`, `uninstall(args)`, `check(args)` (the registry's
INSTALLER contract). For a host whose hooks live in one JSON file, engramory.install.jsonflow
is the whole flow: declare a `Wiring` (settings path, bundle folder, hooks(), smoke_cases())
and call jsonflow.install / uninstall / check; settingshooks (a Claude-schema hooks file) and
pluginfile (a plugin file of engramory's own) are two flows built on it. Otherwise build the
settings change with JsonDoc + add_hook_groups (or an own merge for a flat list), copy with
plan_skill/apply_skill and verify with Report + smoke: hosts/claude/install.py (Claude Code)
and hosts/cursor/install.py (Cursor) are two complete examples.
"""

"""`engramory install --host gemini` / `engramory uninstall --host gemini`: wire the guard and
its notices into Gemini CLI's hooks, and take out exactly that.

Where things go (scope user: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`; scope project:
`./.gemini` of the current folder):
- `<base>/engramory/`: a copy of the bundle's runtime (the engramory package, the Gemini hook
  script, the check tools) with a manifest of the files copied (`--link`: links instead).
- `<base>/settings.json`: three entries under `hooks`, each one command hook named
  `engramory-*` with its timeout in milliseconds (Gemini's unit; 10,000 = 10 s):
  `BeforeTool` (matcher `write_file|replace|run_shell_command`: Gemini's matchers are
  case-sensitive regexes with no Claude aliases), `AfterTool` (same matcher) and
  `SessionStart`.

The command is `[ -x "<python>" ] && [ -f "<script>" ] && "<python>" -I -S -c <launcher>
"<script>"; exit 0`. Gemini reads every non-zero exit with text as a deny (127 from a missing
interpreter, 2 from Python given a missing script), so without the tests and the final
`exit 0` a deleted bundle or a moved Python would block every write_file, replace and shell
call. The deny itself travels as JSON on stdout, which Gemini honours whatever the exit code.

Settings are handled with the installer core, engramory.installer (JsonDoc, Change,
apply_change, add_hook_groups, remove_hooks, restore_bytes; Report for --check): a file that cannot be parsed is
refused and left alone, foreign keys and hooks are kept, a no-op install writes nothing, a
change is backed up and replaced atomically, `--dry-run` shows the diff, and uninstall gives
back the user's own bytes. A project install also takes our entries back out of
`trusted_hooks.json`, where Gemini records project hooks it has seen.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

from engramory import __version__, fsutil
from engramory.installer import (
    LAUNCHER,
    LINK_MANIFEST,
    MANIFEST,
    Change,
    JsonDoc,
    Report,
    SettingsError,
    add_hook_groups,
    apply_change,
    apply_skill,
    bundle_files,
    bundle_problems,
    canonical,
    check_hooks_shape,
    folder_action_line,
    interpreter_problem,
    plan_skill,
    prune_empty,
    read_manifest,
    remove_hooks,
    remove_listed,
    restore_bytes,
    sh_quote,
    source_root,
    unified_diff,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping, Sequence
    from typing import Any

HOST = "gemini"
FOLDER = "engramory"
SCRIPT = "engramory_gemini_hook.py"
SCOPES = ("user", "project")
TIMEOUT_MS = 10_000
TOOL_MATCHER = "write_file|replace|run_shell_command"
# (event, matcher or None for every source, hook name)
HOOKS: tuple[tuple[str, str | None, str], ...] = (
    ("BeforeTool", TOOL_MATCHER, "engramory-guard"),
    ("AfterTool", TOOL_MATCHER, "engramory-after-tool"),
    ("SessionStart", None, "engramory-session-start"),
)
EVENTS = tuple(event for event, _, _ in HOOKS)
RUNTIME_DIRS = ("engramory/", "tools/")
RESTART = "Gemini CLI reads its hooks when a session starts: start a new session (`/hooks` lists them)."
TRUSTED_HOOKS = "trusted_hooks.json"
TITLE = "Gemini CLI"


def gemini_base(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    home = env.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    return os.path.join(os.path.abspath(home), ".gemini")


class Target:
    """Where one scope's bundle copy and settings.json are. Quacks like
    engramory.install.Target where plan_skill / apply_skill look."""

    def __init__(self, scope: str, cwd: str | None = None, env: Mapping[str, str] | None = None) -> None:
        self.scope = scope
        self.project = os.path.abspath(cwd or os.getcwd())
        self.user_base = gemini_base(env)
        self.base = self.user_base if scope == "user" else os.path.join(self.project, ".gemini")
        self.settings = os.path.join(self.base, "settings.json")
        self.skills = self.base
        self.skill_dir = os.path.join(self.base, FOLDER)
        self.script = os.path.join(self.skill_dir, "hooks", SCRIPT)
        self.trusted_hooks = os.path.join(self.user_base, TRUSTED_HOOKS)

    @property
    def link_manifest(self) -> str:
        return os.path.join(self.base, LINK_MANIFEST)

    def manifest_path(self) -> str:
        if os.path.islink(self.skill_dir):
            return self.link_manifest
        return os.path.join(self.skill_dir, MANIFEST)


# -- the entries -------------------------------------------------------------------------


def command(interpreter: str, script: str) -> str:
    """The hook command (run by Gemini as `bash -c`): runs the script only when it and the
    interpreter exist, and always exits 0, so a broken install allows instead of denying."""
    exe, path = sh_quote(interpreter), sh_quote(script)
    return "[ -x %s ] && [ -f %s ] && %s -I -S -c %s %s; exit 0" % (exe, path, exe, sh_quote(LAUNCHER), path)


def wanted(interpreter: str, script: str) -> list[tuple[str, str | None, dict[str, Any]]]:
    cmd = command(interpreter, script)
    return [
        (event, matcher, {"type": "command", "name": name, "command": cmd, "timeout": TIMEOUT_MS})
        for event, matcher, name in HOOKS
    ]


def is_ours(handler: Any) -> bool:
    """A handler that runs our Gemini hook from an `engramory` folder."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    text = handler["command"].replace("\\\\", "/").replace("\\", "/")
    return "/%s/hooks/%s" % (FOLDER, SCRIPT) in text


def command_paths(cmd: str) -> tuple[str, str]:
    """(interpreter, script) named by one of our commands; "" for what cannot be read."""
    try:
        words = [w.replace("\\$", "$").replace("\\`", "`") for w in shlex.split(cmd)]
    except ValueError:
        return "", ""
    exe = script = ""
    for i, word in enumerate(words[:-1]):
        if word == "-x" and not exe:
            exe = words[i + 1]
        elif word == "-f" and not script:
            script = words[i + 1]
    if not exe and words:  # a hand-written plain `<python> <script>` entry
        exe = words[0]
        script = next((w for w in words[1:] if w.endswith(SCRIPT)), "")
    return exe, script


# -- install -------------------------------------------------------------------------------


def _files(source: str) -> list[str]:
    files, _ = bundle_files(source, required=["hooks/" + SCRIPT])
    return [f for f in files if f.startswith(RUNTIME_DIRS) or f == "hooks/" + SCRIPT]


def _options(args: argparse.Namespace) -> tuple[str, bool, bool]:
    return (getattr(args, "scope", "user") or "user", bool(getattr(args, "dry_run", False)),
            bool(getattr(args, "link", False)))


def _bad_scope(verb: str, scope: str) -> int:
    sys.stderr.write(
        "engramory %s: --scope %s is not a Gemini CLI scope; use --scope user ($GEMINI_CLI_HOME/.gemini or "
        "~/.gemini) or --scope project (./.gemini)\n" % (verb, scope)
    )
    return 64


def install(args: argparse.Namespace) -> int:
    """`engramory install --host gemini`: 0 done, 1 refused (nothing changed), 64 usage."""
    scope, dry_run, link = _options(args)
    if scope not in SCOPES:
        return _bad_scope("install", scope)
    target = Target(scope)
    if getattr(args, "check", False):
        return run_check(target)
    try:
        return _install(target, dry_run, link)
    except SettingsError as exc:
        sys.stderr.write("engramory install: %s\n" % exc)
        sys.stderr.write("engramory install: nothing was changed.\n")
        return 1
    except OSError as exc:
        return _write_failed("install", target, exc)


def _write_failed(what: str, target: Target, exc: OSError) -> int:
    sys.stderr.write(
        "engramory %s: could not write %s: %s; check the permissions and free space, then run this again\n"
        % (what, exc.filename or target.base, exc.strerror or exc)
    )
    return 1


def _install(target: Target, dry_run: bool, link: bool, interpreter: str | None = None) -> int:
    out = sys.stdout.write
    exe = interpreter or sys.executable
    if not exe or not os.path.isabs(exe):
        raise SettingsError(
            "cannot tell which Python runs this (sys.executable is %r); run the installer with an "
            "absolute interpreter path, e.g. /usr/bin/python3 -m engramory install --host gemini" % (exe,)
        )
    source = source_root()
    files = _files(source)
    if "hooks/" + SCRIPT not in files:
        raise SettingsError("hooks/%s is missing from %s: this bundle cannot guard Gemini CLI" % (SCRIPT, source))
    doc = JsonDoc.load(target.settings, comments=True, host=TITLE)
    check_hooks_shape(doc, EVENTS)
    plan = plan_skill(target, source, files, link)
    old_manifest = read_manifest(target.manifest_path())
    new_data, created, report = add_hook_groups(doc.data, wanted(exe, target.script), is_ours)
    after = doc.raw if canonical(new_data) == canonical(doc.data) else doc.render(new_data)
    change = Change(target.settings, doc.raw, after)

    out("engramory install --host gemini (%s scope%s)\n" % (target.scope, ", dry run: nothing is written" if dry_run else ""))
    if plan.mode == "in-place":
        out("  bundle: %s is this bundle itself; nothing to copy\n" % target.skill_dir)
    elif plan.mode == "link":
        out("  bundle: %s %s -> %s\n" % (
            target.skill_dir, "already links" if plan.link_ok else ("would link" if dry_run else "linked"), source))
    else:
        out("  bundle: %s %d files to %s (%d new, %d updated, %d unchanged)\n" % (
            "would copy" if dry_run else "copied", len(plan.add) + len(plan.update), target.skill_dir,
            len(plan.add), len(plan.update), len(plan.same)))
    out("  settings: %s\n" % target.settings)
    for line in report:
        out("    %s\n" % line)
    if dry_run:
        diff = unified_diff(target.settings, change.before, change.after)
        out(diff if diff else "  settings: no change\n")
        return 0
    base_missing = not os.path.isdir(target.base)
    trusted_existed = os.path.exists(target.trusted_hooks)
    # The bundle and its manifest first, settings.json last: Gemini never sees an entry whose
    # script is not there yet.
    apply_skill(plan, target, source)
    _record(target, plan.mode, plan.files, doc.exists, created, old_manifest, base_missing, trusted_existed)
    saved = apply_change(change)
    if saved:
        out("  backup of the previous settings: %s\n" % saved)
    if change.changed:
        out("  " + RESTART + "\n")
    elif not plan.changed:
        out("  already installed: nothing changed.\n")
    return 0


def _record(
    target: Target, mode: str, files: list[str], existed: bool, created: list[str], old: dict[str, Any] | None,
    created_base: bool, trusted_existed: bool,
) -> None:
    manifest: dict[str, Any] = {"installer": "engramory", "host": HOST, "files": [], "settings": {}}
    if old is not None:
        manifest["settings"] = dict(old["settings"])
    manifest["version"] = __version__
    manifest["mode"] = mode
    manifest["files"] = sorted(files) if mode in ("copy", "link") else []
    record = manifest["settings"].get(target.settings)
    if not isinstance(record, dict):
        record = {"created_file": not existed, "created": created, "created_base": created_base,
                  "trusted_hooks_existed": trusted_existed}
    else:
        prior = [c for c in record.get("created", []) if isinstance(c, str)]
        record = dict(record, created=prior + [c for c in created if c not in prior])
    manifest["settings"][target.settings] = record
    path = target.manifest_path()
    current = read_manifest(path)
    if current is not None and canonical(current) == canonical(manifest):
        return
    fsutil.write_atomic(path, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8"))


# -- uninstall -----------------------------------------------------------------------------


def uninstall(args: argparse.Namespace) -> int:
    """`engramory uninstall --host gemini`: 0 done, 1 refused (nothing changed), 64 usage."""
    scope, dry_run, _ = _options(args)
    if scope not in SCOPES:
        return _bad_scope("uninstall", scope)
    target = Target(scope)
    try:
        return _uninstall(target, dry_run)
    except SettingsError as exc:
        sys.stderr.write("engramory uninstall: %s\n" % exc)
        sys.stderr.write("engramory uninstall: nothing was changed.\n")
        return 1
    except OSError as exc:
        return _write_failed("uninstall", target, exc)


def _trusted_change(target: Target, names: Sequence[str], existed: bool) -> Change | None:
    """trusted_hooks.json without the entries Gemini recorded for our project hooks."""
    try:
        doc = JsonDoc.load(target.trusted_hooks, host=TITLE)
    except SettingsError:
        return None
    listed = doc.data.get(target.project)
    if not isinstance(listed, list):
        return None
    kept = [e for e in listed if not (isinstance(e, str) and e.split(":", 1)[0] in names and SCRIPT in e)]
    if len(kept) == len(listed):
        return None
    data = dict(doc.data)
    if kept:
        data[target.project] = kept
    else:
        del data[target.project]
    after: bytes | None = restore_bytes(doc, data)
    if not data and not existed:
        after = None
    return Change(target.trusted_hooks, doc.raw, after)


def _uninstall(target: Target, dry_run: bool) -> int:
    out = sys.stdout.write
    doc = JsonDoc.load(target.settings, comments=True, host=TITLE)
    check_hooks_shape(doc, ())
    mpath = target.manifest_path()
    manifest = read_manifest(mpath)
    record = (manifest or {}).get("settings", {}).get(target.settings)
    created = record.get("created") if isinstance(record, dict) else None
    if not isinstance(created, list):
        created = None
    new_data, removed = remove_hooks(doc.data, is_ours, created)
    change = Change(target.settings, doc.raw, doc.raw)
    if removed:
        change.after = restore_bytes(doc, new_data)
        if not new_data and isinstance(record, dict) and record.get("created_file"):
            change.after = None
    trusted = None
    if target.scope == "project":
        existed = bool(record.get("trusted_hooks_existed", True)) if isinstance(record, dict) else True
        trusted = _trusted_change(target, [name for _, _, name in HOOKS], existed)

    dest = target.skill_dir
    if os.path.islink(dest):
        action = "unlink"
    elif os.path.isdir(dest):
        action = "foreign" if manifest is None else ("manifest-only" if manifest.get("mode") == "in-place" else "remove")
    else:
        action = ""
    verb = "would remove" if dry_run else "removed"
    out("engramory uninstall --host gemini (%s scope%s)\n" % (target.scope, ", dry run: nothing is written" if dry_run else ""))
    out("  settings: %s: %s\n" % (target.settings, "%d engramory hook entr%s %s" % (
        removed, "y" if removed == 1 else "ies", verb) if removed else "no engramory hook entries"))
    if trusted is not None:
        out("  %s: our entries for %s %s\n" % (target.trusted_hooks, target.project, verb))
    out(folder_action_line("bundle", action, dest, manifest, dry_run))
    if dry_run:
        for c in (change, trusted):
            if c is not None:
                diff = unified_diff(c.path, c.before, c.after)
                if diff:
                    out(diff)
        return 0
    saved = _apply(change)
    if trusted is not None:
        _apply(trusted)
    leftovers: list[str] = []
    if action == "unlink":
        os.unlink(dest)
        _unlink_quietly(target.link_manifest)
    elif action == "remove" and manifest is not None:
        remove_listed(dest, [f for f in manifest["files"] if isinstance(f, str)] + [MANIFEST])
        prune_empty(dest)
        leftovers = _remaining(dest)
        if not leftovers:
            os.rmdir(dest)
    elif action == "manifest-only":
        _unlink_quietly(mpath)
    if leftovers:
        out("  note: %s still holds files engramory did not install (%s); left in place\n" % (dest, ", ".join(leftovers[:5])))
    if saved:
        out("  backup of the previous settings: %s\n" % saved)
    if change.after is None and change.before is not None:
        out("  %s held only engramory's entries and was created by install: removed\n" % target.settings)
    if isinstance(record, dict) and record.get("created_base"):
        try:
            os.rmdir(target.base)
        except OSError:
            pass
    return 0


def _apply(change: Change) -> str | None:
    """apply_change, except that a file install created and that now holds only our entries
    is deleted without a backup (there is nothing of the user's in it)."""
    if change.after is None and change.before is not None:
        try:
            with open(change.path, "rb") as f:
                current = f.read()
        except FileNotFoundError:
            return None
        if current != change.before:
            raise SettingsError("%s: changed on disk while this ran; nothing was written to it: run this again" % change.path)
        os.unlink(change.path)
        return None
    return apply_change(change)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _remaining(folder: str) -> list[str]:
    found: list[str] = []
    for current, _, names in os.walk(folder):
        found.extend(os.path.relpath(os.path.join(current, n), folder).replace(os.sep, "/") for n in names)
    return sorted(found)


# -- install --check -----------------------------------------------------------------------


def settings_layers(target: Target, env: Mapping[str, str] | None = None) -> list[str]:
    """Gemini's settings files, lowest precedence first: system defaults, user, workspace,
    system (the order of 0.61.0's mergeSettings; the workspace file counts only in a trusted
    folder)."""
    env = os.environ if env is None else env
    system = env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or (
        "/Library/Application Support/GeminiCli/settings.json" if sys.platform == "darwin"
        else "C:\\ProgramData\\gemini-cli\\settings.json" if os.name == "nt" else "/etc/gemini-cli/settings.json"
    )
    defaults = env.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH") or os.path.join(os.path.dirname(system), "system-defaults.json")
    return [defaults, os.path.join(target.user_base, "settings.json"),
            os.path.join(target.project, ".gemini", "settings.json"), system]


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def gemini_switches(target: Target, env: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(problems, notes) from Gemini settings that turn our hooks off or change what they see."""
    problems: list[str] = []
    notes: list[str] = []
    enabled: tuple[bool, str] | None = None
    llm_fix: tuple[bool, str] | None = None
    trust: tuple[bool, str] | None = None
    disabled: list[tuple[str, str]] = []
    names = {name for _, _, name in HOOKS}
    for path in settings_layers(target, env):
        if not os.path.isfile(path):
            continue
        try:
            data = JsonDoc.load(path, comments=True, host=TITLE).data
        except SettingsError as exc:
            notes.append("cannot read %s (%s); Gemini may not read it either" % (path, exc))
            continue
        value = _get(data, "hooksConfig", "enabled")
        if isinstance(value, bool):
            enabled = (value, path)
        listed = _get(data, "hooksConfig", "disabled")
        if isinstance(listed, list):
            disabled.extend((item, path) for item in listed if isinstance(item, str) and (item in names or SCRIPT in item))
        value = _get(data, "tools", "disableLLMCorrection")
        if isinstance(value, bool):
            llm_fix = (value, path)
        value = _get(data, "security", "folderTrust", "enabled")
        if isinstance(value, bool):
            trust = (value, path)
    if enabled is not None and not enabled[0]:
        problems.append("hooksConfig.enabled is false in %s: Gemini runs no hook at all, so the guard is off" % enabled[1])
    for item, path in disabled:
        problems.append("hooksConfig.disabled in %s lists %r: Gemini skips that hook" % (path, item))
    if llm_fix is not None and not llm_fix[0]:
        notes.append("tools.disableLLMCorrection is false in %s: a failing replace is re-written by a model after "
                     "the guard ran, so what lands can differ from what was checked (AfterTool reports it); "
                     "Gemini's default, true, avoids that" % llm_fix[1])
    if trust is not None and trust[0]:
        notes.append("security.folderTrust.enabled is true (%s): Gemini runs hooks, and reads ./.gemini/settings.json, "
                     "only in folders it trusts; in an untrusted folder the guard does not run" % trust[1])
    return problems, notes


def _smoke(cmd: str, timeout_ms: int) -> tuple[str | None, float]:
    """Run the installed command the way Gemini does (`bash -c`) on a BeforeTool write_file
    that grows a throw-away MEMORY.md past the cap. (problem or None, milliseconds)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "GEMINI_"))}
    with tempfile.TemporaryDirectory(prefix="engramory-gemini-check-") as tmp:
        env["GEMINI_CLI_HOME"] = tmp
        index = os.path.join(tmp, "MEMORY.md")
        payload = json.dumps({
            "session_id": "engramory-install-check", "cwd": tmp, "hook_event_name": "BeforeTool",
            "tool_name": "write_file",
            "tool_input": {"file_path": index, "content": "- [n](n.md) note\n" * 300},
        })
        shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
        start = time.monotonic()
        try:
            proc = subprocess.run([shell, "-c", cmd], input=payload.encode(), capture_output=True, cwd=tmp, env=env,
                                  timeout=max(30.0, timeout_ms / 1000 * 3))
        except (OSError, subprocess.SubprocessError) as exc:
            return "could not run it: %s" % exc, 0.0
        elapsed = (time.monotonic() - start) * 1000
    try:
        answer = json.loads(proc.stdout.decode("utf-8", "replace"))
    except ValueError:
        answer = None
    if not (isinstance(answer, dict) and answer.get("decision") == "deny" and answer.get("reason")):
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return ("a write_file growing an index to 300 lines was not denied (exit %d, stdout %r%s): the guard is "
                "not working" % (proc.returncode, proc.stdout[:80], ", stderr: " + err[-1][:200] if err else "")), elapsed
    if proc.returncode != 0:
        return "it exited %d; Gemini reads a non-zero exit with text as a deny of every call" % proc.returncode, elapsed
    return None, elapsed


def check_wiring(target: Target, report: Report) -> None:
    """Our entries in the target's settings.json: present once, matching every tool they must,
    their interpreter and script there, the bundle whole, and a run that denies in time."""
    fix = "run `%s -m engramory install --host gemini --scope %s` from the engramory checkout, then start a new " \
          "Gemini session" % (sys.executable or "python3", target.scope)
    try:
        doc = JsonDoc.load(target.settings, comments=True, host=TITLE)
        check_hooks_shape(doc, EVENTS)
    except SettingsError as exc:
        report.problem(str(exc), "fix the file, then run this again")
        return
    if not doc.exists:
        report.problem("%s does not exist: engramory is not installed in this scope" % target.settings, fix)
        return
    hooks = doc.data.get("hooks") or {}
    smoked: dict[str, tuple[str | None, float]] = {}
    bundles: set[tuple[str, str]] = set()
    for event, matcher, name in HOOKS:
        groups = [g for g in hooks.get(event, []) if isinstance(g, dict) and isinstance(g.get("hooks"), list)]
        found = [(g, h) for g in groups for h in g["hooks"] if is_ours(h)]
        if not found:
            report.problem("no %s entry runs hooks/%s in %s" % (event, SCRIPT, target.settings), fix)
            continue
        if len(found) > 1:
            report.problem("%d %s entries run hooks/%s: each call would be judged more than once"
                           % (len(found), event, SCRIPT), fix)
        group, handler = found[0]
        if matcher is not None:
            have = group.get("matcher")
            tools = [t for t in ("write_file", "replace", "run_shell_command") if not _matches(have, t)]
            if tools:
                report.problem("%s matcher %r does not match %s: those calls are not checked"
                               % (event, have, ", ".join(tools)), fix)
        exe, script = command_paths(str(handler.get("command", "")))
        bad = interpreter_problem(exe) if exe and os.path.isabs(exe) else "the command names no absolute interpreter"
        if bad:
            report.problem("%s: %s: the hook exits 0 without running, so Gemini lets every call through unchecked"
                           % (event, bad), fix)
            continue
        if not os.path.isfile(script):
            report.problem("%s: the script %s does not exist (the bundle was moved or deleted): the hook exits 0 "
                           "without running, so Gemini lets every call through unchecked" % (event, script or "(none)"), fix)
            continue
        bundles.add((os.path.dirname(os.path.dirname(script)), exe))
        timeout = handler.get("timeout")
        timeout_ms = timeout if isinstance(timeout, int) and not isinstance(timeout, bool) and timeout > 0 else 60_000
        cmd = str(handler["command"])
        if cmd not in smoked:
            smoked[cmd] = _smoke(cmd, timeout_ms)
        failure, elapsed = smoked[cmd]
        if failure:
            report.problem("%s: %s" % (event, failure), fix)
            continue
        if elapsed >= timeout_ms:
            report.problem("%s: a run took %d ms, past its timeout of %d ms (Gemini counts milliseconds): Gemini "
                           "kills it and lets the call through unchecked" % (event, elapsed, timeout_ms),
                           "set \"timeout\" back to %d, or run install again" % TIMEOUT_MS)
            continue
        if elapsed * 2 > timeout_ms:
            report.note("%s: a run took %d ms, more than half its %d ms timeout" % (event, elapsed, timeout_ms))
        report.ok("%s: %s runs (%s, %d ms, timeout %d ms)" % (event, name, exe, elapsed, timeout_ms))
    for folder, exe in sorted(bundles):
        for problem in bundle_problems(folder, exe):
            report.problem(problem, fix)


def _matches(matcher: Any, tool: str) -> bool:
    """Gemini's matcher test: an unanchored regex, exact compare when it does not compile."""
    import re

    if matcher in (None, "", "*"):
        return True
    if not isinstance(matcher, str):
        return False
    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return matcher == tool


def run_check(target: Target) -> int:
    """Verify the wiring and run it once; change nothing. 0 healthy, 1 a problem found."""
    report = Report("engramory install --host gemini --check (%s scope): %s" % (target.scope, target.settings))
    check_wiring(target, report)
    problems, notes = gemini_switches(target)
    for problem in problems:
        report.problem(problem, "remove that setting, or set it to let the engramory-* hooks run")
    for note in notes:
        report.note(note)
    return report.finish("all %d hooks are wired, run, and a smoke write past the cap was denied" % len(HOOKS))


def check(args: argparse.Namespace) -> int:
    """The registry's INSTALLER contract: `engramory install --host gemini --check`."""
    scope = getattr(args, "scope", "user") or "user"
    if scope not in SCOPES:
        return _bad_scope("install", scope)
    return run_check(Target(scope))

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

The user's hooks.json is handled with the Claude installer's machinery (engramory.install):
a file that cannot be parsed is refused and left alone, a no-op install writes nothing, a
change is backed up and replaced atomically, `--dry-run` shows the diff, and uninstall gives
the user's own bytes back when a backup holds exactly the result.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

from engramory import __version__, fsutil
from engramory.automemory import claude_config_dir
from engramory.installer import (
    HOOK_TIMEOUT,
    LINK_MANIFEST,
    MANIFEST,
    Change,
    JsonDoc,
    SettingsError,
    apply_change,
    apply_skill,
    bundle_files,
    canonical,
    folder_action_line,
    hook_command,
    plan_skill,
    prune_empty,
    read_manifest,
    read_regular,
    remove_listed,
    restore_bytes,
    source_root,
    unified_diff,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping
    from typing import Any

HOST = "cursor"
FOLDER = "engramory"
SCRIPT = "engramory_cursor_guard.py"
EVENT = "preToolUse"
HOOKS_VERSION = 1
SCOPES = ("user", "project")
RUNTIME_DIRS = ("engramory/", "tools/")  # what the hook and the agent's check need
RESTART = "Cursor reloads hooks.json by itself; check Cursor Settings > Hooks that the entry is listed."
CLAUDE_SCRIPT = "engramory_index_guard.py"


class Target:
    """Where one scope's bundle copy and hooks.json are. Quacks like engramory.install.Target
    where plan_skill / apply_skill look (skills, skill_dir, link_manifest)."""

    def __init__(self, scope: str, cwd: str | None = None, home: str | None = None) -> None:
        self.scope = scope
        self.project = os.path.abspath(cwd or os.getcwd())
        if scope == "user":
            self.base = os.path.join(os.path.abspath(home or os.path.expanduser("~")), ".cursor")
        else:
            self.base = os.path.join(self.project, ".cursor")
        self.settings = os.path.join(self.base, "hooks.json")
        self.skills = self.base
        self.skill_dir = os.path.join(self.base, FOLDER)
        self.script = os.path.join(self.skill_dir, "hooks", SCRIPT)

    @property
    def link_manifest(self) -> str:
        return os.path.join(self.base, LINK_MANIFEST)

    def manifest_path(self) -> str:
        if os.path.islink(self.skill_dir):
            return self.link_manifest
        return os.path.join(self.skill_dir, MANIFEST)


# -- the entry -----------------------------------------------------------------------------


def entry(interpreter: str, script: str) -> dict[str, Any]:
    return {"command": hook_command(interpreter, script), "timeout": HOOK_TIMEOUT}


def is_ours(item: Any) -> bool:
    """An entry that runs our Cursor guard from an `engramory` folder."""
    if not isinstance(item, dict) or not isinstance(item.get("command"), str):
        return False
    command = item["command"].replace("\\\\", "/").replace("\\", "/")
    return "/%s/hooks/%s" % (FOLDER, SCRIPT) in command


def _type(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    return "a number"


def check_shape(doc: JsonDoc) -> None:
    """Refuse a hooks.json we cannot merge into without guessing."""
    data = doc.data
    if "version" in data and (type(data["version"]) is not int or data["version"] != HOOKS_VERSION):
        raise SettingsError(
            "%s: \"version\" is %s; this installer writes Cursor's hooks.json version %d only: "
            "check the file against Cursor's hooks documentation, then run this again"
            % (doc.path, json.dumps(data["version"])[:40], HOOKS_VERSION)
        )
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


# -- install -------------------------------------------------------------------------------


def _files(source: str) -> list[str]:
    files, _ = bundle_files(source, required=["hooks/" + SCRIPT])
    return [f for f in files if f.startswith(RUNTIME_DIRS) or f == "hooks/" + SCRIPT]


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
        if data is not None and CLAUDE_SCRIPT.encode() in data:
            found.append(path)
    return found


def _options(args: argparse.Namespace) -> tuple[str, bool, bool]:
    scope = getattr(args, "scope", "user") or "user"
    return scope, bool(getattr(args, "dry_run", False)), bool(getattr(args, "link", False))


def install(args: argparse.Namespace) -> int:
    """`engramory install --host cursor`: 0 done, 1 refused (nothing changed), 64 usage."""
    scope, dry_run, link = _options(args)
    if scope not in SCOPES:
        sys.stderr.write(
            "engramory install: --scope %s is not a Cursor scope; use --scope user (~/.cursor) or "
            "--scope project (./.cursor)\n" % scope
        )
        return 64
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
        "engramory %s: could not write %s: %s; check the permissions and free space, then run "
        "this again\n" % (what, exc.filename or target.base, exc.strerror or exc)
    )
    return 1


def _install(target: Target, dry_run: bool, link: bool, interpreter: str | None = None) -> int:
    out = sys.stdout.write
    exe = interpreter or sys.executable
    if not exe or not os.path.isabs(exe):
        raise SettingsError(
            "cannot tell which Python runs this (sys.executable is %r); run the installer with an "
            "absolute interpreter path, e.g. /usr/bin/python3 -m engramory install --host cursor" % (exe,)
        )
    source = source_root()
    files = _files(source)
    if "hooks/" + SCRIPT not in files:
        raise SettingsError("hooks/%s is missing from %s: this bundle cannot guard Cursor" % (SCRIPT, source))
    doc = JsonDoc.load(target.settings)
    check_shape(doc)
    plan = plan_skill(target, source, files, link)
    old_manifest = read_manifest(target.manifest_path())
    new_data, created, report = merge(doc.data, entry(exe, target.script))
    after = doc.raw if canonical(new_data) == canonical(doc.data) else doc.render(new_data)
    change = Change(target.settings, doc.raw, after)

    out("engramory install --host cursor (%s scope%s)\n" % (target.scope, ", dry run: nothing is written" if dry_run else ""))
    if plan.mode == "in-place":
        out("  bundle: %s is this bundle itself; nothing to copy\n" % target.skill_dir)
    elif plan.mode == "link":
        out("  bundle: %s %s -> %s\n" % (
            target.skill_dir, "already links" if plan.link_ok else ("would link" if dry_run else "linked"), source))
    else:
        out("  bundle: %s %d files to %s (%d new, %d updated, %d unchanged)\n" % (
            "would copy" if dry_run else "copied", len(plan.add) + len(plan.update), target.skill_dir,
            len(plan.add), len(plan.update), len(plan.same)))
        for rel in plan.stale:
            out("    - %s (no longer in the bundle: %s)\n" % (rel, "would remove" if dry_run else "removed"))
    out("  hooks: %s\n    %s\n" % (target.settings, report))
    for path in _claude_also_wired(target):
        out("  note: %s also runs engramory's Claude Code guard; with Cursor's third-party hooks on, "
            "each edit is judged twice (same decision, two messages)\n" % path)
    if dry_run:
        diff = unified_diff(target.settings, change.before, change.after)
        out(diff if diff else "  hooks: no change\n")
        return 0

    base_missing = not os.path.isdir(target.base)
    # The bundle and its manifest first, hooks.json last: Cursor never sees an entry whose
    # script is not there yet.
    apply_skill(plan, target, source)
    _record(target, plan.mode, plan.files, doc.exists, created, old_manifest, base_missing)
    saved = apply_change(change)
    if saved:
        out("  backup of the previous hooks.json: %s\n" % saved)
    if change.changed:
        out("  " + RESTART + "\n")
    elif not plan.changed:
        out("  already installed: nothing changed.\n")
    return 0


def _record(
    target: Target, mode: str, files: list[str], existed: bool, created: list[str], old: dict[str, Any] | None,
    created_base: bool,
) -> None:
    manifest: dict[str, Any] = {"installer": "engramory", "host": HOST, "files": [], "settings": {}}
    if old is not None:
        manifest["settings"] = dict(old["settings"])
    manifest["version"] = __version__
    manifest["mode"] = mode
    # copy: the files copied; link: the links made (one per top-level entry); in-place: none
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
        return  # a no-op install writes nothing
    fsutil.write_atomic(path, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8"))


# -- uninstall -----------------------------------------------------------------------------


def uninstall(args: argparse.Namespace) -> int:
    """`engramory uninstall --host cursor`: 0 done, 1 refused (nothing changed), 64 usage."""
    scope, dry_run, _ = _options(args)
    if scope not in SCOPES:
        sys.stderr.write("engramory uninstall: --scope %s is not a Cursor scope; use user or project\n" % scope)
        return 64
    target = Target(scope)
    try:
        return _uninstall(target, dry_run)
    except SettingsError as exc:
        sys.stderr.write("engramory uninstall: %s\n" % exc)
        sys.stderr.write("engramory uninstall: nothing was changed.\n")
        return 1
    except OSError as exc:
        return _write_failed("uninstall", target, exc)


def _uninstall(target: Target, dry_run: bool) -> int:
    out = sys.stdout.write
    doc = JsonDoc.load(target.settings)
    check_shape(doc)
    mpath = target.manifest_path()
    manifest = read_manifest(mpath)
    record = (manifest or {}).get("settings", {}).get(target.settings)
    created = record.get("created") if isinstance(record, dict) else None
    if not isinstance(created, list):
        created = None
    new_data, removed = unmerge(doc.data, created)
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
    out("engramory uninstall --host cursor (%s scope%s)\n" % (target.scope, ", dry run: nothing is written" if dry_run else ""))
    out("  hooks: %s: %s\n" % (target.settings, "%d engramory entr%s %s" % (removed, "y" if removed == 1 else "ies", verb)
                               if removed else "no engramory entry"))
    out(folder_action_line("bundle", action, dest, manifest, dry_run))
    if dry_run:
        diff = unified_diff(target.settings, change.before, change.after)
        if diff:
            out(diff)
        return 0

    if change.after is None and change.before is not None:
        # A file install created that holds only our entry: nothing of the user's to back up.
        _delete_if_unchanged(target.settings, change.before)
        saved = None
    else:
        saved = apply_change(change)
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
        out("  note: %s still holds files engramory did not install (%s); left in place\n"
            % (dest, ", ".join(leftovers[:5])))
    if saved:
        out("  backup of the previous hooks.json: %s\n" % saved)
    if change.after is None and change.before is not None:
        out("  %s held only engramory's entry and was created by install: removed\n" % target.settings)
    if isinstance(record, dict) and record.get("created_base"):
        try:
            os.rmdir(target.base)  # only when empty: install made it, and nothing else is in it now
        except OSError:
            pass
    return 0


def _delete_if_unchanged(path: str, expected: bytes) -> None:
    current = read_regular(path)
    if current is None:
        return
    if current != expected:
        raise SettingsError(
            "%s: changed on disk while this ran (another program wrote it); nothing was written to "
            "it: run this again" % path
        )
    os.unlink(path)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _remaining(folder: str) -> list[str]:
    out: list[str] = []
    for current, _, names in os.walk(folder):
        out.extend(os.path.relpath(os.path.join(current, n), folder).replace(os.sep, "/") for n in names)
    return sorted(out)


# -- install --check -----------------------------------------------------------------------


def _acts(words: list[str], exe: str, script: str) -> list[str]:
    """Problems that show the guard would not act although it starts: a bundle module that
    does not import (the guard then allows everything, exit 0), or a smoke Write of a
    400-line MEMORY.md that is not denied."""
    import tempfile

    from engramory import installer

    problems = installer.bundle_problems(os.path.dirname(os.path.dirname(script)), exe)
    if problems:
        return ["%s: the guard would allow every edit" % p for p in problems]
    with tempfile.TemporaryDirectory(prefix="engramory-check-") as tmp:
        index = os.path.join(tmp, "MEMORY.md")
        body = "".join("- [n%d](n%d.md) x\n" % (i, i) for i in range(400))
        payload = {"hook_event_name": EVENT, "tool_name": "Write", "tool_input": {"path": index, "contents": body}}
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
        ran = installer.smoke(words, payload, env=env, cwd=tmp)
        answer = ran.json()
        if ran.error or not (isinstance(answer, dict) and answer.get("permission") == "deny"):
            return ["a smoke Write of a 400-line MEMORY.md was not denied (exit %d, %r)%s"
                    % (ran.rc, ran.stdout[:80], ": " + ran.error if ran.error else "")]
    return []


def run_check(target: Target) -> int:
    """Verify the wiring: our entry is first, its interpreter and script exist, and a smoke
    payload gets `{}` and exit 0. Changes nothing."""
    import shlex

    out = sys.stdout.write
    out("engramory install --host cursor --check (%s scope): %s\n" % (target.scope, target.settings))
    problems: list[str] = []
    try:
        doc = JsonDoc.load(target.settings)
        check_shape(doc)
    except SettingsError as exc:
        problems.append(str(exc))
        doc = None
    entries: list[Any] = []
    if doc is not None:
        if not doc.exists:
            problems.append("%s does not exist: the guard is not installed in this scope" % target.settings)
        hooks = doc.data.get("hooks") or {}
        entries = hooks.get(EVENT) or []
    ours = [e for e in entries if is_ours(e)]
    if doc is not None and doc.exists and not ours:
        problems.append("no %s entry runs hooks/%s" % (EVENT, SCRIPT))
    if len(ours) > 1:
        problems.append("%d entries run the guard: each edit would be judged more than once" % len(ours))
    if ours and entries[0] is not ours[0]:
        problems.append("the guard is not the first %s entry; Cursor may run only the first: "
                        "run install again to move it to the front" % EVENT)
    for item in ours[:1]:
        try:
            # sh reads \$ and \` inside double quotes as the bare character; shlex keeps the backslash
            words = [w.replace("\\$", "$").replace("\\`", "`") for w in shlex.split(item["command"])]
        except ValueError as exc:
            problems.append("the command cannot be parsed (%s): %s" % (exc, item["command"]))
            continue
        exe = words[0] if words else ""
        script = next((w for w in words[1:] if w.endswith(SCRIPT)), "")
        if not (os.path.isabs(exe) and os.path.isfile(exe) and os.access(exe, os.X_OK)):
            problems.append("the interpreter %s does not exist or cannot run" % (exe or "(none)"))
        elif not os.path.isfile(script):
            problems.append("the script %s does not exist: the guard does not run (tool calls go through unchecked)" % script)
        else:
            smoke = json.dumps({"hook_event_name": EVENT, "tool_name": "Shell", "tool_input": {"command": "true"}})
            try:
                proc = subprocess.run(words, input=smoke.encode(), capture_output=True, timeout=HOOK_TIMEOUT)
                if proc.returncode != 0 or proc.stdout.strip() != b"{}":
                    problems.append("a smoke run exited %d and printed %r" % (proc.returncode, proc.stdout[:80]))
                else:
                    out("  ok: %s runs (%s)\n" % (SCRIPT, exe))
            except (OSError, subprocess.SubprocessError) as exc:
                problems.append("could not run it: %s" % exc)
            problems.extend(_acts(words, exe, script))
    for problem in problems:
        out("  problem: %s\n" % problem)
    if problems:
        out("  next step: run `%s -m engramory install --host cursor --scope %s` from the engramory checkout\n"
            % (sys.executable or "python3", target.scope))
        return 1
    out("  healthy: the guard is wired first in %s and runs\n" % EVENT)
    return 0


def check(args: argparse.Namespace) -> int:
    """The registry's INSTALLER contract: `install --host cursor --check`."""
    scope = getattr(args, "scope", "user") or "user"
    if scope not in SCOPES:
        sys.stderr.write("engramory install: --scope %s is not a Cursor scope; use user or project\n" % scope)
        return 64
    return run_check(Target(scope))

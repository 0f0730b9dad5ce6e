"""`engramory install --host codex` / `engramory uninstall --host codex`: wire the guard into the
OpenAI Codex CLI, make Codex actually run it, and take out exactly that.

Where things go ($CODEX_HOME, else ~/.codex, is "the Codex home"):
- the bundle: `<home>/skills/engramory` (user scope) or `<project>/.codex/skills/engramory`
  (project scope), with a manifest of the files copied;
- the hooks: `<home>/hooks.json` or `<project>/.codex/hooks.json` (Claude's hooks.json shape):
  PreToolUse (matcher `apply_patch|Bash`: the patch tool and the shell, which carries
  `apply_patch` heredocs Codex applies itself), PostToolUse (`Bash`) and SessionStart;
- the trust records, in the user's `<home>/config.toml` (the only layer Codex reads them from):
  Codex silently skips every hook that is not trusted, and a hook is trusted when
  `[hooks.state."<hooks.json path>:<event>:<group>:<handler>"]` holds `trusted_hash` = the
  sha256 of the hook's canonical JSON, which is what Codex's own /hooks review writes. A
  project's hooks also load only in a project the user trusted; install says so and how.

config.toml is the user's TOML and this runtime has no TOML writer (nor, on Python < 3.11, a
reader). So install appends one marked block of tables at the end of the file and leaves every
other byte alone; uninstall removes exactly that block. It refuses, untouched, a file it cannot
extend safely (not UTF-8, `hooks`/`hooks.state` written inline or as dotted keys, or a trust
record for the same key that is not ours), and prints the lines to add instead. When tomllib
is available, the file must parse before the edit, and after it to the same data plus exactly
our records.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import sys

from engramory import __version__, fsutil
from engramory.installer import (
    HOOK_TIMEOUT,
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
    hook_command,
    interpreter_problem,
    missing_required,
    plan_skill,
    prune_empty,
    read_manifest,
    remove_hooks,
    remove_listed,
    restore_bytes,
    smoke,
    source_root,
    split_command,
    unified_diff,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping, Sequence
    from typing import Any

HOST = "codex"
FOLDER = "engramory"
SCOPES = ("user", "project")
GUARD_SCRIPT = "engramory_codex_guard.py"
POST_SCRIPT = "engramory_codex_post_tool.py"
START_SCRIPT = "engramory_codex_session_start.py"
# (event, matcher or None, script). Codex matchers are regexes over its tool names: the patch
# tool is `apply_patch`, the shell (exec_command) is `Bash`.
HOOKS: tuple[tuple[str, str | None, str], ...] = (
    ("PreToolUse", "apply_patch|Bash", GUARD_SCRIPT),
    ("PostToolUse", "Bash", POST_SCRIPT),
    ("SessionStart", None, START_SCRIPT),
)
SCRIPTS = tuple(s for _, _, s in HOOKS)
EVENT_KEYS = {"PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use", "SessionStart": "session_start"}
RUNTIME_DIRS = ("engramory/", "tools/")
TOP = ("SKILL.md", "rules-snippet.md")
BLOCK_HEAD = "# engramory: trust for its Codex hooks (Codex runs no untrusted hook); `engramory uninstall --host codex` takes this block out"
RESTART = "Codex reads hooks when a session starts: start a new session (`/hooks` in Codex lists them as trusted)."


def codex_home(env: Mapping[str, str] | None = None) -> str:
    environ = os.environ if env is None else env
    home = environ.get("CODEX_HOME", "").strip()
    return os.path.abspath(os.path.expanduser(home)) if home else os.path.join(os.path.expanduser("~"), ".codex")


class Target:
    """Where one scope's bundle, hooks.json and trust records are. Quacks like
    engramory.install.Target where plan_skill / apply_skill look."""

    def __init__(self, scope: str, env: Mapping[str, str] | None = None, cwd: str | None = None) -> None:
        self.scope = scope
        self.home = codex_home(env)
        self.project = os.path.abspath(cwd or os.getcwd())
        self.base = self.home if scope == "user" else os.path.join(self.project, ".codex")
        self.settings = os.path.join(self.base, "hooks.json")
        self.config = os.path.join(self.home, "config.toml")
        self.skills = os.path.join(self.base, "skills")
        self.skill_dir = os.path.join(self.skills, FOLDER)

    @property
    def link_manifest(self) -> str:
        return os.path.join(self.skills, LINK_MANIFEST)

    def manifest_path(self) -> str:
        if os.path.islink(self.skill_dir):
            return self.link_manifest
        return os.path.join(self.skill_dir, MANIFEST)

    def script(self, name: str) -> str:
        return os.path.join(self.skill_dir, "hooks", name)

    @property
    def trust_file(self) -> str:
        """hooks.json as Codex names it in its trust keys: by its canonical path (a symlinked
        CODEX_HOME included: measured on 0.171.0)."""
        return os.path.join(os.path.realpath(self.base), "hooks.json")


# -- hooks and their trust -----------------------------------------------------------------


def handler(interpreter: str, script: str) -> dict[str, Any]:
    return {"type": "command", "command": hook_command(interpreter, script), "timeout": HOOK_TIMEOUT}


def wanted(target: Target, interpreter: str) -> list[tuple[str, str | None, dict[str, Any]]]:
    return [(event, matcher, handler(interpreter, target.script(script))) for event, matcher, script in HOOKS]


def is_ours(item: Any) -> bool:
    if not isinstance(item, dict) or not isinstance(item.get("command"), str):
        return False
    command = item["command"].replace("\\\\", "/").replace("\\", "/")
    return any("/%s/hooks/%s" % (FOLDER, s) in command for s in SCRIPTS)


def trust_hash(event: str, matcher: str | None, item: Mapping[str, Any]) -> str:
    """The hash Codex stores for a reviewed hook: sha256 over the compact, key-sorted JSON of
    the event, the matcher (left out when absent) and the one handler with its defaults."""
    hook: dict[str, Any] = {
        "type": "command",
        "command": item.get("command"),
        "timeout": item.get("timeout", 600),
        "async": bool(item.get("async", False)),
    }
    if item.get("statusMessage") is not None:
        hook["statusMessage"] = item["statusMessage"]
    obj: dict[str, Any] = {"event_name": EVENT_KEYS.get(event, event), "hooks": [hook]}
    if matcher is not None:
        obj["matcher"] = matcher
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def trust_entries(hooks_file: str, data: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(event, state key, trusted hash) for each of our handlers in a hooks.json's data."""
    out: list[tuple[str, str, str]] = []
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in EVENT_KEYS:
        groups = hooks.get(event)
        if not isinstance(groups, list):
            continue
        for gi, group in enumerate(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            matcher = group.get("matcher") if isinstance(group.get("matcher"), str) else None
            for hi, item in enumerate(group["hooks"]):
                if is_ours(item):
                    key = "%s:%s:%d:%d" % (hooks_file, EVENT_KEYS[event], gi, hi)
                    out.append((event, key, trust_hash(event, matcher, item)))
    return out


# -- config.toml, as text ------------------------------------------------------------------


def toml_string(s: str) -> str:
    out = ['"']
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\b\t\n\f\r":
            out.append({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def trust_block(entries: Sequence[tuple[str, str, str]], nl: str = "\n") -> str:
    lines = [BLOCK_HEAD]
    for _, key, digest in entries:
        lines.append("[hooks.state.%s]" % toml_string(key))
        lines.append("trusted_hash = %s" % toml_string(digest))
    return nl.join(lines) + nl


_INLINE_HOOKS = re.compile(r"^[ \t]*(?:hooks[ \t]*=|hooks[ \t]*\.[ \t]*state[ \t]*=|\[\[[ \t]*hooks[ \t]*\.[ \t]*state\b)", re.M)
_STATE_INLINE = re.compile(r"^\[[ \t]*hooks[ \t]*\][^\n]*\n(?:(?!\[)[^\n]*\n)*?[ \t]*state[ \t]*=", re.M)


def _tomllib() -> Any:
    try:
        import tomllib  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return tomllib


def read_config(path: str) -> tuple[bytes | None, str]:
    try:
        with open(path, "rb") as f:
            raw: bytes | None = f.read()
    except FileNotFoundError:
        return None, ""
    except OSError as exc:
        raise SettingsError("%s: cannot be read (%s); check its permissions" % (path, exc.strerror)) from None
    assert raw is not None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SettingsError(
            "%s: not UTF-8 text (byte %d); Codex reads config.toml as UTF-8: fix it, then run this again" % (path, exc.start)
        ) from None
    return raw, text


def state_of(text: str, path: str) -> dict[str, Any] | None:
    """`hooks.state` as Codex would read it (tomllib), or None when tomllib is missing."""
    lib = _tomllib()
    if lib is None:
        return None
    try:
        data = lib.loads(text)
    except Exception as exc:  # noqa: BLE001 - tomllib.TOMLDecodeError and friends
        raise SettingsError("%s: not valid TOML (%s); Codex cannot read it either: fix it, then run this again" % (path, exc)) from None
    hooks = data.get("hooks", {})
    state = hooks.get("state", {}) if isinstance(hooks, dict) else None
    if not isinstance(state, dict):
        raise SettingsError("%s: `hooks.state` is not a table; fix it, then run this again" % path)
    return state


def plan_trust(path: str, text: str, old_block: str | None, entries: Sequence[tuple[str, str, str]]) -> tuple[str, str]:
    """(new text, the block appended) for config.toml holding `text`: our old block (if any)
    taken out, the new one appended. Raises SettingsError when that cannot be done safely."""
    base = text
    if old_block and old_block in base:
        base = base.replace(old_block, "", 1)
    elif text.count(BLOCK_HEAD) == 1:
        base = remove_block_by_shape(base)
    nl = "\r\n" if "\r\n" in base else "\n"
    if not entries:
        return base, ""
    if _INLINE_HOOKS.search(base) or _STATE_INLINE.search(base):
        raise SettingsError(
            "%s writes `hooks` or `hooks.state` inline, where no table can be added after it; add these "
            "lines to it yourself (in the same table), then run `engramory install --host codex --check`:\n%s"
            % (path, trust_block(entries))
        )
    state = state_of(base, path)
    for _, key, _digest in entries:
        quoted = toml_string(key)
        if state is not None:
            if key in state:
                raise SettingsError(
                    "%s already holds a trust record for %s (%s): a hook engramory did not record. Remove "
                    "that [hooks.state] table (or review the hook in Codex's /hooks), then run this again"
                    % (path, key, state[key])
                )
        elif quoted in base or key in base:
            raise SettingsError(
                "%s already mentions %s outside engramory's block; remove that [hooks.state] table, then run "
                "this again" % (path, key)
            )
    block = trust_block(entries, nl)
    prefix = ""
    if base and not base.endswith("\n"):
        prefix = nl
    if base.strip():
        prefix += nl
    appended = prefix + block
    after = base + appended
    if state is not None:
        new_state = state_of(after, path)
        want = dict(state)
        want.update({key: {"trusted_hash": digest} for _, key, digest in entries})
        if new_state != want:
            raise SettingsError(
                "%s: adding the trust records would not give Codex the intended `hooks.state`; add these "
                "lines yourself:\n%s" % (path, block)
            )
    return after, appended


def remove_block_by_shape(text: str) -> str:
    """`text` without a block that starts with our marker line and holds only trust tables."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.rstrip("\r\n") != BLOCK_HEAD:
            continue
        j = i + 1
        while j + 1 < len(lines) and lines[j].startswith("[hooks.state.") and lines[j + 1].startswith("trusted_hash = "):
            j += 2
        start = i
        if start > 0 and not lines[start - 1].strip():
            start -= 1  # the blank line install put before it
        return "".join(lines[:start] + lines[j:])
    return text


def project_trusted(config_text: str, project: str) -> bool | None:
    """Whether config.toml marks `project` trusted (None: cannot tell without tomllib)."""
    lib = _tomllib()
    if lib is not None:
        try:
            data = lib.loads(config_text)
        except Exception:  # noqa: BLE001
            return False
        projects = data.get("projects", {})
        entry = projects.get(project) if isinstance(projects, dict) else None
        return isinstance(entry, dict) and entry.get("trust_level") == "trusted"
    head = "[projects.%s]" % toml_string(project)
    at = config_text.find(head)
    if at < 0:
        return False
    body = config_text[at + len(head):].split("\n[", 1)[0]
    return re.search(r'^[ \t]*trust_level[ \t]*=[ \t]*"trusted"', body, re.M) is not None


def _project_trusted(config_text: str, project: str) -> bool | None:
    answers = {project_trusted(config_text, p) for p in (project, os.path.realpath(project))}
    return True if True in answers else (None if None in answers else False)


def trust_project_hint(project: str) -> str:
    return (
        "Codex loads a project's .codex/hooks.json only in a project you trusted: open %s in Codex and "
        "trust it, or run `codex exec --trust -C %s` once" % (project, shlex.quote(project))
    )


# -- install -------------------------------------------------------------------------------


def _files(source: str) -> list[str]:
    files, notes = bundle_files(source, ["hooks/" + s for s in SCRIPTS])
    missing = missing_required(notes)
    if missing:
        raise SettingsError(missing[0] + "; this bundle cannot guard Codex: reinstall engramory")
    return [f for f in files if f.startswith(RUNTIME_DIRS) or f in TOP or f in ["hooks/" + s for s in SCRIPTS]]


def _options(args: argparse.Namespace) -> tuple[str, bool, bool]:
    return getattr(args, "scope", "user") or "user", bool(getattr(args, "dry_run", False)), bool(getattr(args, "link", False))


def install(args: argparse.Namespace) -> int:
    """`engramory install --host codex`: 0 done, 1 refused (nothing changed), 64 usage."""
    scope, dry_run, link = _options(args)
    if scope not in SCOPES:
        sys.stderr.write(
            "engramory install: --scope %s is not a Codex scope; use --scope user ($CODEX_HOME or ~/.codex) "
            "or --scope project (./.codex)\n" % scope
        )
        return 64
    target = Target(scope)
    if getattr(args, "check", False):
        return run_check(target)
    try:
        return install_to(target, dry_run, link)
    except SettingsError as exc:
        sys.stderr.write("engramory install: %s\n" % exc)
        sys.stderr.write("engramory install: nothing was changed.\n")
        return 1
    except BrokenPipeError:
        raise  # `... | head`: the reader left (engramory.cli handles it)
    except OSError as exc:
        sys.stderr.write(
            "engramory install: could not write %s: %s; check the permissions and free space, then run "
            "this again\n" % (exc.filename or target.base, exc.strerror or exc)
        )
        return 1


def install_to(target: Target, dry_run: bool = False, link: bool = False, interpreter: str | None = None) -> int:
    out = sys.stdout.write
    exe = interpreter or sys.executable
    if not exe or not os.path.isabs(exe):
        raise SettingsError(
            "cannot tell which Python runs this (sys.executable is %r); run the installer with an absolute "
            "interpreter path, e.g. /usr/bin/python3 -m engramory install --host codex" % (exe,)
        )
    bad = interpreter_problem(exe)
    if bad:
        raise SettingsError("%s: hooks run with it could not run; install with a working Python" % bad)
    source = source_root()
    files = _files(source)
    doc = JsonDoc.load(target.settings, host="Codex")
    check_hooks_shape(doc, EVENT_KEYS)
    plan = plan_skill(target, source, files, link)
    old_manifest = read_manifest(target.manifest_path())
    new_data, created, report = add_hook_groups(doc.data, wanted(target, exe), is_ours)
    hooks_after = doc.raw if canonical(new_data) == canonical(doc.data) else doc.render(new_data)
    hooks_change = Change(target.settings, doc.raw, hooks_after)

    raw_config, text = read_config(target.config)
    old_trust = (old_manifest or {}).get("trust") if isinstance(old_manifest, dict) else None
    old_block = old_trust.get("appended") if isinstance(old_trust, dict) and isinstance(old_trust.get("appended"), str) else None
    entries = trust_entries(target.trust_file, new_data)
    if old_block and old_block in text and all(toml_string(k) in old_block and d in old_block for _, k, d in entries):
        new_text, appended = text, old_block  # already trusted exactly so
    else:
        new_text, appended = plan_trust(target.config, text, old_block, entries)
    config_after = raw_config if new_text == text else new_text.encode("utf-8")
    config_change = Change(target.config, raw_config, config_after)

    out("engramory install --host codex (%s scope%s)\n" % (target.scope, ", dry run: nothing is written" if dry_run else ""))
    if plan.mode == "in-place":
        out("  bundle: %s is this bundle itself; nothing to copy\n" % target.skill_dir)
    elif plan.mode == "link":
        out("  bundle: %s %s -> %s\n" % (target.skill_dir, "already links" if plan.link_ok else ("would link" if dry_run else "linked"), source))
    else:
        out("  bundle: %s %d files to %s (%d new, %d updated, %d unchanged)\n" % (
            "would copy" if dry_run else "copied", len(plan.add) + len(plan.update), target.skill_dir,
            len(plan.add), len(plan.update), len(plan.same)))
    out("  hooks: %s\n" % target.settings)
    for line in report:
        out("    %s\n" % line)
    out("  trust: %s: %s\n" % (
        target.config,
        "%d hook%s marked trusted" % (len(entries), "" if len(entries) == 1 else "s") if config_change.changed else "already trusted"))
    untrusted_project = False
    if target.scope == "project":
        trusted = _project_trusted(new_text, target.project)
        if trusted is None:
            out("  note: check that Codex trusts %s (tomllib is missing, so this could not be read); %s\n"
                % (target.project, trust_project_hint(target.project)))
        elif not trusted:
            untrusted_project = True
            out("  action needed: %s. Until then these hooks do not run.\n" % trust_project_hint(target.project))
    if dry_run:
        for ch in (hooks_change, config_change):
            diff = unified_diff(ch.path, ch.before, ch.after)
            if diff:
                out(diff)
        return 0
    base_missing = not os.path.isdir(target.base)
    # The bundle and its manifest first, then the hooks, then their trust: Codex never runs an
    # entry whose script is not there yet.
    apply_skill(plan, target, source)
    _record(target, plan.mode, plan.files, doc.exists, created, old_manifest, base_missing, raw_config is None, appended)
    for ch in (hooks_change, config_change):
        saved = apply_change(ch)
        if saved:
            out("  backup of the previous %s: %s\n" % (os.path.basename(ch.path), saved))
    if hooks_change.changed or config_change.changed:
        out("  " + RESTART + "\n")
    elif not plan.changed:
        out("  already installed: nothing changed.\n")
    if untrusted_project:
        out("  not running yet: the project is not trusted (see above).\n")
    return 0


def _record(
    target: Target, mode: str, files: list[str], existed: bool, created: list[str], old: dict[str, Any] | None,
    created_base: bool, created_config: bool, appended: str,
) -> None:
    manifest: dict[str, Any] = {"installer": "engramory", "host": HOST, "files": [], "settings": {}}
    if old is not None and isinstance(old.get("settings"), dict):
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
    old_trust = old.get("trust") if isinstance(old, dict) else None
    was_created = old_trust.get("created_file") if isinstance(old_trust, dict) else None
    manifest["trust"] = {
        "config": target.config,
        "appended": appended,
        "created_file": bool(was_created) if was_created is not None else created_config,
    }
    path = target.manifest_path()
    current = read_manifest(path)
    if current is not None and canonical(current) == canonical(manifest):
        return
    fsutil.write_atomic(path, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8"))


# -- uninstall -----------------------------------------------------------------------------


def uninstall(args: argparse.Namespace) -> int:
    scope, dry_run, _ = _options(args)
    if scope not in SCOPES:
        sys.stderr.write("engramory uninstall: --scope %s is not a Codex scope; use user or project\n" % scope)
        return 64
    target = Target(scope)
    try:
        return uninstall_from(target, dry_run)
    except SettingsError as exc:
        sys.stderr.write("engramory uninstall: %s\n" % exc)
        return 1
    except BrokenPipeError:
        raise  # `... | head`: the reader left (engramory.cli handles it)
    except OSError as exc:
        sys.stderr.write("engramory uninstall: could not write %s: %s\n" % (exc.filename or target.base, exc.strerror or exc))
        return 1


def uninstall_from(target: Target, dry_run: bool = False) -> int:
    out = sys.stdout.write
    doc = JsonDoc.load(target.settings, host="Codex")
    check_hooks_shape(doc, EVENT_KEYS)
    mpath = target.manifest_path()
    manifest = read_manifest(mpath)
    record = (manifest or {}).get("settings", {}).get(target.settings)
    created = record.get("created") if isinstance(record, dict) else None
    if not isinstance(created, list):
        created = None
    new_data, removed = remove_hooks(doc.data, is_ours, created)
    hooks_change = Change(target.settings, doc.raw, doc.raw)
    if removed:
        hooks_change.after = restore_bytes(doc, new_data)
        if not new_data and isinstance(record, dict) and record.get("created_file"):
            hooks_change.after = None

    raw_config, text = read_config(target.config)
    trust = (manifest or {}).get("trust")
    appended = trust.get("appended") if isinstance(trust, dict) else None
    if isinstance(appended, str) and appended and appended in text:
        new_text = text.replace(appended, "", 1)
    else:
        new_text = remove_block_by_shape(text)
    config_change = Change(target.config, raw_config, raw_config if new_text == text else new_text.encode("utf-8"))
    if config_change.changed and not new_text and isinstance(trust, dict) and trust.get("created_file"):
        config_change.after = None

    dest = target.skill_dir
    if os.path.islink(dest):
        action = "unlink"
    elif os.path.isdir(dest):
        action = "foreign" if manifest is None else ("manifest-only" if manifest.get("mode") == "in-place" else "remove")
    else:
        action = ""
    verb = "would remove" if dry_run else "removed"
    out("engramory uninstall --host codex (%s scope%s)\n" % (target.scope, ", dry run: nothing is written" if dry_run else ""))
    out("  hooks: %s: %s\n" % (target.settings, "%d engramory entr%s %s" % (removed, "y" if removed == 1 else "ies", verb)
                               if removed else "no engramory entry"))
    out("  trust: %s: %s\n" % (target.config, "engramory's trust records %s" % verb if config_change.changed else "no engramory trust record"))
    out(folder_action_line("bundle", action, dest, manifest, dry_run))
    if dry_run:
        for ch in (hooks_change, config_change):
            diff = unified_diff(ch.path, ch.before, ch.after)
            if diff:
                out(diff)
        return 0
    for ch in (config_change, hooks_change):
        if ch.after is None and ch.before is not None:
            _delete_if_unchanged(ch.path, ch.before)  # install created it; nothing of the user's in it
        else:
            saved = apply_change(ch)
            if saved:
                out("  backup of the previous %s: %s\n" % (os.path.basename(ch.path), saved))
    if action == "unlink":
        os.unlink(dest)
        try:
            os.unlink(target.link_manifest)
        except OSError:
            pass
    elif action == "remove" and manifest is not None:
        remove_listed(dest, [f for f in manifest.get("files", []) if isinstance(f, str)] + [MANIFEST])
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
    for folder in (target.skills, target.base) if isinstance(record, dict) and record.get("created_base") else (target.skills,):
        try:
            os.rmdir(folder)  # only when empty
        except OSError:
            pass
    return 0


def _delete_if_unchanged(path: str, expected: bytes) -> None:
    try:
        with open(path, "rb") as f:
            current = f.read()
    except FileNotFoundError:
        return
    if current != expected:
        raise SettingsError("%s: changed on disk while this ran; nothing was written to it: run this again" % path)
    os.unlink(path)


# -- install --check -----------------------------------------------------------------------


def _payload(event: str, cwd: str) -> dict[str, Any]:
    """A call each hook must let through in silence (PreToolUse) or answer quickly."""
    payload: dict[str, Any] = {"hook_event_name": event, "session_id": "engramory-install-check", "cwd": cwd}
    if event == "PreToolUse":
        payload.update(tool_name="Bash", tool_input={"command": "true"})
    elif event == "PostToolUse":
        payload.update(tool_name="Bash", tool_input={"command": "true"}, tool_response="")
    else:
        payload["source"] = "startup"
    return payload


def _run_problem(command: str, event: str, timeout: float, cwd: str) -> str | None:
    """Run one installed hook command as Codex would: it must exit 0 (exit 2 with text blocks
    the call; any other failure lets it through unchecked), print nothing for a call it has
    no opinion on, and answer within its timeout."""
    try:
        argv = split_command(command).argv()
    except ValueError as exc:
        return "its command cannot be parsed (%s)" % exc
    run = smoke(argv, _payload(event, cwd), cwd=cwd, timeout=timeout)
    if run.error:
        return run.error.replace("the host", "Codex")
    if run.rc == 2:
        return "it exited 2, which Codex reads as a block of every matched call: %s" % run.last_error_line()
    if run.rc != 0:
        err = run.last_error_line()
        return "it exited %d%s, so Codex runs no check (the call goes through)" % (run.rc, ": " + err if err else "")
    if event == "PreToolUse" and run.stdout.strip():
        return "it printed %r for a call it should let through" % run.stdout[:120]
    return None


def check_target(target: Target, report: Report) -> None:
    reinstall = "run `engramory install --host codex --scope %s` again, then start a new Codex session" % target.scope
    try:
        doc = JsonDoc.load(target.settings, host="Codex")
        check_hooks_shape(doc, EVENT_KEYS)
        _, text = read_config(target.config)
        state = state_of(text, target.config)
    except SettingsError as exc:
        report.problem(str(exc), "fix that file, then " + reinstall)
        return
    if not doc.exists:
        report.problem("%s does not exist: engramory is not installed for Codex in this scope" % target.settings, reinstall)
        return
    entries = {key: digest for _, key, digest in trust_entries(target.trust_file, doc.data)}
    hooks = doc.data.get("hooks") or {}
    checked_bundle: set[str] = set()
    for event, matcher, script in HOOKS:
        found = []
        groups = hooks.get(event)
        for gi, group in enumerate(groups if isinstance(groups, list) else []):
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                for hi, item in enumerate(group["hooks"]):
                    if is_ours(item) and script in str(item.get("command")):
                        found.append((gi, hi, group, item))
        label = "%s (%s)" % (event, script)
        if not found:
            report.problem("no %s entry for hooks/%s in %s" % (event, script, target.settings), reinstall)
            continue
        if len(found) > 1:
            report.problem("%d %s entries run hooks/%s: each call would be judged more than once" % (len(found), event, script), reinstall)
        gi, hi, group, item = found[0]
        if group.get("matcher") != matcher:
            report.problem("%s: its matcher is %r, not %r, so some calls are not seen" % (label, group.get("matcher"), matcher), reinstall)
        key = "%s:%s:%d:%d" % (target.trust_file, EVENT_KEYS[event], gi, hi)
        stored = _stored_hash(state, text, key)
        if stored is None:
            report.problem("%s is not trusted in %s, so Codex silently does not run it" % (label, target.config),
                           reinstall + " (or review it in Codex's /hooks)")
            continue
        if stored != entries[key]:
            report.problem("%s changed since it was trusted (stored %s, now %s), so Codex silently does not run it"
                           % (label, stored[:19], entries[key][:19]), reinstall)
            continue
        command = str(item.get("command"))
        try:
            hook = split_command(command)
        except ValueError as exc:
            report.problem("%s: its command cannot be parsed (%s)" % (label, exc), reinstall)
            continue
        bad = interpreter_problem(hook.interpreter)
        if bad:
            report.problem("%s: %s: the hook fails and Codex lets every call through unchecked" % (label, bad),
                           "reinstall with a working Python: `<python3> -m engramory install --host codex`")
            continue
        if not os.path.isfile(hook.script):
            report.problem("%s: the script %s does not exist: the guard is off" % (label, hook.script), reinstall)
            continue
        folder = os.path.dirname(os.path.dirname(hook.script))
        if folder not in checked_bundle:
            checked_bundle.add(folder)
            for problem in bundle_problems(folder, hook.interpreter):
                report.problem("the bundle is damaged: %s" % problem, reinstall)
        timeout = item.get("timeout", 600)
        failure = _run_problem(command, event, float(timeout) if isinstance(timeout, (int, float)) else 600.0, target.project)
        if failure:
            report.problem("%s: %s" % (label, failure), reinstall)
            continue
        report.ok("%s: trusted, runs (%s)" % (label, hook.interpreter))
    if target.scope == "project" and _project_trusted(text, target.project) is False:
        report.problem("the project is not trusted, so Codex loads none of %s" % target.settings, trust_project_hint(target.project))


def _stored_hash(state: dict[str, Any] | None, text: str, key: str) -> str | None:
    if state is not None:
        entry = state.get(key)
        value = entry.get("trusted_hash") if isinstance(entry, dict) else None
        return value if isinstance(value, str) else None
    head = "[hooks.state.%s]" % toml_string(key)
    at = text.find(head)
    if at < 0:
        return None
    m = re.match(r'\s*trusted_hash\s*=\s*"([^"]*)"', text[at + len(head):])
    return m.group(1) if m else None


def run_check(target: Target) -> int:
    report = Report("engramory install --host codex --check (%s scope): %s" % (target.scope, target.settings))
    check_target(target, report)
    return report.finish("all %d hooks are wired, trusted and run" % len(HOOKS))


def check(args: argparse.Namespace) -> int:
    """The registry's INSTALLER contract: `engramory install --host codex --check`."""
    scope = getattr(args, "scope", "user") or "user"
    if scope not in SCOPES:
        sys.stderr.write("engramory install: --scope %s is not a Codex scope; use user or project\n" % scope)
        return 64
    return run_check(Target(scope))

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

Install and uninstall are the shared flow, engramory.install.jsonflow: `Target` is the Wiring
(hooks.json is its settings file, config.toml's trust block its Extra, written after
hooks.json and taken out before it), so the bundle copy, manifest, byte-keeping edit,
refusals and messages are decided there. What stays here is Codex's own: its paths, the trust
keys and hashes, the TOML block, project trust and `--check`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex

from engramory.install import jsonflow as flow
from engramory.install.bundle import RUNTIME_DIRS
from engramory.install.hookcommands import split_command
from engramory.install.settings import Change, JsonDoc, SettingsError, check_hooks_shape
from engramory.install.smoke import Report, bundle_problems, interpreter_problem, smoke

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

HOST = "codex"
FOLDER = "engramory"
SCOPES = ("user", "project")
# Every hook runs the generic entry, `hooks/engramory_hook.py codex <event>` (issue 20).
ENTRY = "engramory_hook.py"
# The scripts installs wired before the generic entry, one per event: still recognised as ours
# (--check passes them and says a reinstall moves them; install replaces them, uninstall takes
# them out), and still shipped, as shims, because those installs run them.
GUARD_SCRIPT = "engramory_codex_guard.py"
POST_SCRIPT = "engramory_codex_post_tool.py"
START_SCRIPT = "engramory_codex_session_start.py"
# (event, matcher or None, the script an earlier install wired for it). Codex matchers are
# regexes over its tool names: the patch tool is `apply_patch`, the shell (exec_command) is `Bash`.
HOOKS: tuple[tuple[str, str | None, str], ...] = (
    ("PreToolUse", "apply_patch|Bash", GUARD_SCRIPT),
    ("PostToolUse", "Bash", POST_SCRIPT),
    ("SessionStart", None, START_SCRIPT),
)
LEGACY_SCRIPTS = tuple(s for _, _, s in HOOKS)
_GENERIC = re.compile(r"/%s/hooks/%s['\"]? +%s +([A-Za-z]+)(?:\s|$)" % (FOLDER, re.escape(ENTRY), HOST))
EVENT_KEYS = {"PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use", "SessionStart": "session_start"}
TOP = ("SKILL.md", "rules-snippet.md")
BLOCK_HEAD = "# engramory: trust for its Codex hooks (Codex runs no untrusted hook); `engramory uninstall --host codex` takes this block out"
RESTART = "Codex reads hooks when a session starts: start a new session (`/hooks` in Codex lists them as trusted)."


def codex_home(env: Mapping[str, str] | None = None) -> str:
    environ = os.environ if env is None else env
    home = environ.get("CODEX_HOME", "").strip()
    return os.path.abspath(os.path.expanduser(home)) if home else os.path.join(os.path.expanduser("~"), ".codex")


class Target(flow.Wiring):
    """Where one scope's bundle, hooks.json and trust records are, and what Codex's wiring
    holds; install and uninstall are engramory.install.jsonflow's flow, with the trust records
    in config.toml as its extra file."""

    host, title = HOST, "Codex"
    restart = RESTART
    settings_label = "hooks"
    scopes = (("user", "$CODEX_HOME or ~/.codex"), ("project", "./.codex"))
    bundle_dirs, bundle_top = RUNTIME_DIRS, TOP

    def __init__(self, scope: str, env: Mapping[str, str] | None = None, cwd: str | None = None) -> None:
        self.home = codex_home(env)
        self.project = os.path.abspath(cwd or os.getcwd())
        self.base = self.home if scope == "user" else os.path.join(self.project, ".codex")
        self.skills = os.path.join(self.base, "skills")
        super().__init__(settings=os.path.join(self.base, "hooks.json"),
                         bundle_dir=os.path.join(self.skills, FOLDER), scope=scope)
        self.config = os.path.join(self.home, "config.toml")

    @classmethod
    def for_scope(cls, scope: str) -> Target:
        return cls(scope)

    def script(self, name: str) -> str:
        return os.path.join(self.skill_dir, "hooks", name)

    @property
    def trust_file(self) -> str:
        """hooks.json as Codex names it in its trust keys: by its canonical path (a symlinked
        CODEX_HOME included: measured on 0.171.0)."""
        return os.path.join(os.path.realpath(self.base), "hooks.json")

    def hooks(self, interpreter: str) -> list[tuple[str, str | None, dict[str, Any]]]:
        out = []
        for event, matcher, _legacy in HOOKS:
            handler = self.handler(interpreter, ENTRY)
            handler["command"] += " %s %s" % (HOST, event)
            out.append((event, matcher, handler))
        return out

    def script_of(self, handler: Any) -> str | None:
        """ENTRY for a handler of ours in today's form, the old script's name for one an
        earlier install wrote, None for anything else."""
        found = ours_as(handler)
        return found[1] if found else None

    def backup_label(self, path: str) -> str:
        return os.path.basename(path)

    def uninstall_shape(self, doc: JsonDoc) -> None:
        self.check_shape(doc)

    def leftover_dirs(self, created_base: bool) -> list[str]:
        return [self.skills, self.base] if created_base else [self.skills]

    def install_extras(self, new_data: dict[str, Any], old_manifest: dict[str, Any] | None,
                       dry_run: bool) -> list[flow.Extra]:
        """The trust records for the hooks in `new_data`, appended to config.toml."""
        raw_config, text = read_config(self.config)
        old_trust = (old_manifest or {}).get("trust")
        old_block = old_trust.get("appended") if isinstance(old_trust, dict) else None
        old_block = old_block if isinstance(old_block, str) else None
        entries = trust_entries(self.trust_file, new_data)
        if old_block and old_block in text and all(toml_string(k) in old_block and d in old_block for _, k, d in entries):
            new_text, appended = text, old_block  # already trusted exactly so
        else:
            new_text, appended = plan_trust(self.config, text, old_block, entries)
        change = Change(self.config, raw_config, raw_config if new_text == text else new_text.encode("utf-8"))
        lines = ["trust: %s: %s" % (self.config, "%d hook%s marked trusted" % (
            len(entries), "" if len(entries) == 1 else "s") if change.changed else "already trusted")]
        last = []
        if self.scope == "project":
            trusted = _project_trusted(new_text, self.project)
            if trusted is None:
                lines.append("note: check that Codex trusts %s (tomllib is missing, so this could not be read); %s"
                             % (self.project, trust_project_hint(self.project)))
            elif not trusted:
                lines.append("action needed: %s. Until then these hooks do not run." % trust_project_hint(self.project))
                last.append("not running yet: the project is not trusted (see above).")
        was_created = old_trust.get("created_file") if isinstance(old_trust, dict) else None
        trust = {"config": self.config, "appended": appended,
                 "created_file": bool(was_created) if was_created is not None else raw_config is None}
        return [flow.Extra(change, lines, {"trust": trust}, last)]

    def uninstall_extras(self, manifest: dict[str, Any] | None, record: Any, dry_run: bool) -> list[flow.Extra]:
        """config.toml without our block of trust records (found by the manifest, else by its shape)."""
        raw_config, text = read_config(self.config)
        trust = (manifest or {}).get("trust")
        appended = trust.get("appended") if isinstance(trust, dict) else None
        if isinstance(appended, str) and appended and appended in text:
            new_text = text.replace(appended, "", 1)
        else:
            new_text = remove_block_by_shape(text)
        change = Change(self.config, raw_config, raw_config if new_text == text else new_text.encode("utf-8"))
        if change.changed and not new_text and isinstance(trust, dict) and trust.get("created_file"):
            change.after = None
        verb = "would remove" if dry_run else "removed"
        line = "trust: %s: %s" % (self.config, "engramory's trust records %s" % verb if change.changed
                                  else "no engramory trust record")
        return [flow.Extra(change, [line], first=True)]

    def run_check(self, interpreter: str | None = None, out: Callable[[str], Any] | None = None) -> int:
        return run_check(self)


# -- hooks and their trust -----------------------------------------------------------------


def ours_as(item: Any) -> tuple[str, str] | None:
    """(the event, the script) of a handler that runs our hook: the generic entry with
    `codex <event>`, or an earlier install's own script for its event; None otherwise."""
    if not isinstance(item, dict) or not isinstance(item.get("command"), str):
        return None
    command = item["command"].replace("\\\\", "/").replace("\\", "/")
    m = _GENERIC.search(command)
    if m and m.group(1) in EVENT_KEYS:
        return m.group(1), ENTRY
    return next(((e, s) for e, _, s in HOOKS if "/%s/hooks/%s" % (FOLDER, s) in command), None)


def is_ours(item: Any) -> bool:
    return ours_as(item) is not None


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
        _refuse_foreign_record(path, base, state, key)
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


def _refuse_foreign_record(path: str, base: str, state: dict[str, Any] | None, key: str) -> None:
    """SettingsError when config.toml (without our block) already holds a trust record for `key`:
    by tomllib's reading when there is tomllib, else by the key's text anywhere in it."""
    if state is not None:
        if key in state:
            raise SettingsError(
                "%s already holds a trust record for %s (%s): a hook engramory did not record. Remove "
                "that [hooks.state] table (or review the hook in Codex's /hooks), then run this again"
                % (path, key, state[key])
            )
    elif toml_string(key) in base or key in base:
        raise SettingsError(
            "%s already mentions %s outside engramory's block; remove that [hooks.state] table, then run "
            "this again" % (path, key)
        )


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


# -- install / uninstall: the shared flow -------------------------------------------------


def install(args: argparse.Namespace) -> int:
    """`engramory install --host codex`: 0 done, 1 refused (nothing changed), 64 usage."""
    return flow.main(Target, "install", args)


def uninstall(args: argparse.Namespace) -> int:
    """`engramory uninstall --host codex`: 0 done, 1 refused (nothing changed), 64 usage."""
    return flow.main(Target, "uninstall", args)


def install_to(target: Target, dry_run: bool = False, link: bool = False, interpreter: str | None = None) -> int:
    """Install into `target`, raising SettingsError where `install` reports it."""
    return flow.apply_install(target, dry_run, link, interpreter)


def uninstall_from(target: Target, dry_run: bool = False) -> int:
    """Uninstall from `target`, raising SettingsError where `uninstall` reports it."""
    return flow.apply_uninstall(target, dry_run)


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
    for event, matcher, _legacy in HOOKS:
        found = _ours_for(hooks.get(event), event)
        if not found:
            report.problem("no %s entry runs hooks/%s %s %s in %s" % (event, ENTRY, HOST, event, target.settings), reinstall)
            continue
        if len(found) > 1:
            report.problem("%d %s entries run engramory's hook: each call would be judged more than once" % (len(found), event), reinstall)
        gi, hi, group, item = found[0]
        script = target.script_of(item) or ENTRY
        label = "%s (%s)" % (event, script)
        if script != ENTRY:
            report.note("%s: wired by an earlier install (hooks/%s, which still runs); a reinstall moves it to "
                        "hooks/%s" % (event, script, ENTRY))
        if group.get("matcher") != matcher:
            report.problem("%s: its matcher is %r, not %r, so some calls are not seen" % (label, group.get("matcher"), matcher), reinstall)
        key = "%s:%s:%d:%d" % (target.trust_file, EVENT_KEYS[event], gi, hi)
        if _trust_problem(report, label, target.config, _stored_hash(state, text, key), entries, key, reinstall):
            continue
        _check_runs(target, report, event, label, item, checked_bundle, reinstall)
    if target.scope == "project" and _project_trusted(text, target.project) is False:
        report.problem("the project is not trusted, so Codex loads none of %s" % target.settings, trust_project_hint(target.project))


def _ours_for(groups: Any, event: str) -> list[tuple[int, int, dict[str, Any], dict[str, Any]]]:
    """(group index, handler index, group, handler) for each of our handlers that runs the hook
    of `event` (today's command or an earlier install's)."""
    found = []
    for gi, group in enumerate(groups if isinstance(groups, list) else []):
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            for hi, item in enumerate(group["hooks"]):
                if (ours_as(item) or ("", ""))[0] == event:
                    found.append((gi, hi, group, item))
    return found


def _trust_problem(report: Report, label: str, config: str, stored: str | None, entries: dict[str, str], key: str,
                   reinstall: str) -> bool:
    """Report the handler when Codex would not trust it (no record, or one for other bytes
    than `entries[key]`, the hash of what is wired now)."""
    if stored is None:
        report.problem("%s is not trusted in %s, so Codex silently does not run it" % (label, config),
                       reinstall + " (or review it in Codex's /hooks)")
        return True
    if stored != entries[key]:
        report.problem("%s changed since it was trusted (stored %s, now %s), so Codex silently does not run it"
                       % (label, stored[:19], entries[key][:19]), reinstall)
        return True
    return False


def _check_runs(target: Target, report: Report, event: str, label: str, item: dict[str, Any],
                checked_bundle: set[str], reinstall: str) -> None:
    """The handler's command starts, its script and bundle are whole, and a smoke run passes.
    Each bundle folder is checked once (`checked_bundle`)."""
    command = str(item.get("command"))
    try:
        hook = split_command(command)
    except ValueError as exc:
        report.problem("%s: its command cannot be parsed (%s)" % (label, exc), reinstall)
        return
    bad = interpreter_problem(hook.interpreter)
    if bad:
        report.problem("%s: %s: the hook fails and Codex lets every call through unchecked" % (label, bad),
                       "reinstall with a working Python: `<python3> -m engramory install --host codex`")
        return
    if not os.path.isfile(hook.script):
        report.problem("%s: the script %s does not exist: the guard is off" % (label, hook.script), reinstall)
        return
    folder = os.path.dirname(os.path.dirname(hook.script))
    if folder not in checked_bundle:
        checked_bundle.add(folder)
        for problem in bundle_problems(folder, hook.interpreter):
            report.problem("the bundle is damaged: %s" % problem, reinstall)
    timeout = item.get("timeout", 600)
    failure = _run_problem(command, event, float(timeout) if isinstance(timeout, (int, float)) else 600.0, target.project)
    if failure:
        report.problem("%s: %s" % (label, failure), reinstall)
        return
    report.ok("%s: trusted, runs (%s)" % (label, hook.interpreter))


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
    return flow.main(Target, "check", args)

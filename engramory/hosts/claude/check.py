"""`engramory install --check` for Claude Code: is the guard really on, for this project?

The guard can be off while every hook file exists and exits 0, so this reads what Claude
Code reads and runs what it would run:

- every settings scope it merges for the current folder: managed
  (`/etc/claude-code/managed-settings.json` on Linux, the macOS and Windows paths elsewhere),
  user (`$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`), project
  (`./.claude/settings.json`) and local (`./.claude/settings.local.json`); a file the host
  cannot parse is named (the host ignores it whole);
- `disableAllHooks: true` (in force by precedence managed > local > project > user), and
  `allowManagedHooksOnly` in managed settings;
- `env` blocks and this shell's environment: every ENGRAMORY_* variable the hooks would
  inherit, and which ones make the guard watch another file or let an index past the host's
  window;
- our three handlers wherever they are: the matcher must select the tools the hook exists for
  (Edit and Write, a note without Bash; Bash and Monitor), and none be `"async": true` (an
  async PreToolUse hook cannot deny; an async PostToolUse report comes after the model moved on);
- an `engramory@<marketplace>` plugin enabled by `enabledPlugins` (the highest scope naming
  it decides): its folder found as Claude Code finds it (a local marketplace's folder, run in
  place; else installed_plugins.json; else the newest copy under plugins/cache/), and the
  handlers of its hooks/hooks.json checked and smoke-run like settings handlers, with
  CLAUDE_PLUGIN_ROOT set;
- the interpreter and the script of each command (with `$VAR` expanded as the shell would,
  `$CLAUDE_PROJECT_DIR` included), every module of the installed bundle imported the way the
  hooks import it;
- a smoke run of each hook, in a throw-away config folder and project, with the environment
  the host would give it: the guard must deny an over-cap Write of the index, the PostToolUse
  backstop must report an index a shell command grew over its cap, the SessionStart notice
  must name an over-cap index.

Exit 0 only when every one of these says the guard acts; otherwise 1, with one problem line
per reason and the fix for it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile

from engramory import config
from engramory.automemory import auto_memory_index, claude_config_dir, sanitize_project_path
from engramory.install.hookcommands import split_command
from engramory.install.settings import JsonDoc, SettingsError
from engramory.install.smoke import Report, Smoke, bundle_problems, interpreter_problem, smoke

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

GUARD_SCRIPT = "engramory_index_guard.py"
POST_TOOL_SCRIPT = "engramory_post_tool.py"
SESSION_START_SCRIPT = "engramory_session_start.py"

# (event, script, tool names its matcher must select, what it is for)
NEEDS: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    ("PreToolUse", GUARD_SCRIPT, ("Edit", "Write"), "the guard (denies over-cap Edit/Write)"),
    ("PostToolUse", POST_TOOL_SCRIPT, ("Bash", "Monitor"), "the shell backstop"),
    ("SessionStart", SESSION_START_SCRIPT, (), "the session notice"),
    ("UserPromptSubmit", POST_TOOL_SCRIPT, (), "the late-write backstop (UserPromptSubmit)"),
)
SCRIPTS = tuple(dict.fromkeys(script for _, script, _, _ in NEEDS))
# the tool each matcher selects since issue 22, which an earlier install's leaves out (a note)
SINCE_22 = {"PreToolUse": ("Bash", "shell writes to an index are judged only after they run"),
            "PostToolUse": ("Read", "a Bash rewrite of an index from a stale Read is not refused")}
# Installs wire the generic entry, `hooks/engramory_hook.py claude <event>` (issue 20); the
# scripts above are what earlier installs wired (shims of it now). Each hook is named by the
# script that was its own: the event argument of the generic command -> that script.
ENTRY = "engramory_hook.py"
ROLES = {"PreToolUse": GUARD_SCRIPT, "PostToolUse": POST_TOOL_SCRIPT, "UserPromptSubmit": POST_TOOL_SCRIPT,
         "SessionStart": SESSION_START_SCRIPT}
SCOPE_ORDER = ("managed", "local", "project", "user")  # highest precedence first

# The host's window (Claude Code 2.1.332): caps above it no longer protect anything.
WINDOW_LINES = 200
WINDOW_UNITS = 25_000


def managed_settings_path() -> str:
    if sys.platform == "darwin":
        return "/Library/Application Support/ClaudeCode/managed-settings.json"
    if os.name == "nt":
        return os.path.join(os.environ.get("ProgramData", r"C:\ProgramData"), "ClaudeCode", "managed-settings.json")
    return "/etc/claude-code/managed-settings.json"


def scope_files(env: Mapping[str, str], cwd: str) -> list[tuple[str, str]]:
    """(scope, settings path) in precedence order, highest first."""
    project = os.path.join(cwd, ".claude")
    return [("managed", managed_settings_path()), ("local", os.path.join(project, "settings.local.json")),
            ("project", os.path.join(project, "settings.json")), ("user", os.path.join(claude_config_dir(env), "settings.json"))]


def matcher_selects(matcher: Any, tool: str) -> bool:
    """Whether Claude Code runs a group with this matcher for `tool`: none, "" and "*" select
    every tool; letters, digits, '_' and '|' are a list of exact names; anything else is a
    JavaScript regular expression tested against the name (unanchored)."""
    if matcher is None or matcher == "" or matcher == "*":
        return True
    if not isinstance(matcher, str):
        return False
    if re.fullmatch(r"[A-Za-z0-9_|]+", matcher):
        return tool in matcher.split("|")
    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return False


class Found:
    """One handler of ours in one settings file."""

    def __init__(self, scope: str, path: str, event: str, group: dict[str, Any], handler: dict[str, Any], script: str) -> None:
        self.scope, self.path, self.event = scope, path, event
        self.group, self.handler, self.script = group, handler, script
        self.legacy = False  # wired as an earlier install wrote it (the script itself, not ENTRY)
        self.what = script
        self.extra: dict[str, str] = {}  # variables the host sets for this handler (CLAUDE_PLUGIN_ROOT)

    @property
    def reinstall(self) -> str:
        if self.scope.startswith("plugin "):
            pid = self.scope[len("plugin "):]
            return "reinstall the plugin (`claude plugin uninstall %s`, then `claude plugin install %s`)" % (pid, pid)
        return "run `engramory install` again"

    @property
    def where(self) -> str:
        if self.scope.startswith("plugin "):
            return "%s, %s" % (self.scope, self.path)
        return "%s settings %s" % (self.scope, self.path)


def _script_of(handler: Any, marker: str = "/skills/engramory/hooks/") -> tuple[str, bool] | None:
    """(the hook's own script, whether it is wired as an earlier install wrote it) for a handler
    of ours, else None."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return None
    command = handler["command"].replace("\\\\", "/").replace("\\", "/")
    m = re.search(re.escape(marker + ENTRY) + r"['\"]? +claude +([A-Za-z]+)(?:\s|$)", command)
    if m and m.group(1) in ROLES:
        return ROLES[m.group(1)], False
    return next(((script, True) for script in SCRIPTS if marker + script in command), None)


def find_ours(scope: str, path: str, data: Mapping[str, Any], marker: str = "/skills/engramory/hooks/") -> list[Found]:
    out: list[Found] = []
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        for group in groups:
            if not (isinstance(group, dict) and isinstance(group.get("hooks"), list)):
                continue
            for handler in group["hooks"]:
                found = _script_of(handler, marker)
                if found:
                    out.append(Found(scope, path, event, group, handler, found[0]))
                    out[-1].legacy = found[1]
    return out


def _lines(n: int, width: int = 60) -> str:
    return "".join("- [note %d](note-%d.md) %s\n" % (i, i, "x" * width) for i in range(n))


def smoke_payload(event: str, project: str, index: str, n: int) -> dict[str, Any]:
    """A payload of `event` the hook must answer: a 400-line Write of the index (deny), or,
    for the backstops, a session whose index is at 400 lines (report). A session id of its
    own per run, so no run sees another's stamps."""
    base: dict[str, Any] = {"session_id": "engramory-install-check-%d" % n, "transcript_path": "", "cwd": project,
                            "hook_event_name": event}
    if event == "PreToolUse":
        base.update(tool_name="Write", permission_mode="acceptEdits", tool_use_id="check",
                    tool_input={"file_path": index, "content": _lines(400)})
    elif event == "PostToolUse":
        base.update(tool_name="Bash", tool_input={"command": "cat more >> MEMORY.md"}, tool_response={"stdout": ""})
    elif event == "SessionStart":
        base.update(source="startup")
    elif event == "UserPromptSubmit":
        base.update(prompt="go on")
    return base


def _context(answer: Any) -> str:
    if not isinstance(answer, dict):
        return ""
    out = answer.get("hookSpecificOutput")
    return str(out.get("additionalContext", "")) if isinstance(out, dict) else ""


def judge_smoke(event: str, ran: Smoke) -> str | None:
    """Why this hook's answer to its smoke payload shows it would not act, or None."""
    if ran.error:
        return ran.error
    if ran.rc == 2:
        return "it exited 2, which Claude Code reads as a deny of every call it matches"
    if ran.rc != 0:
        err = ran.last_error_line()
        return "it exited %d%s: the host reports a hook error and lets the call through" % (ran.rc, ": " + err if err else "")
    answer = ran.json()
    shown = ran.stdout.decode("utf-8", "replace").strip()[:120]
    why = ran.last_error_line()
    if event == "PreToolUse":
        out = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
        if not (isinstance(out, dict) and out.get("permissionDecision") == "deny"):
            return "it allowed a 400-line Write of the index (answer %r%s)" % (shown, "; stderr: " + why if why else "")
        return None
    if "engramory" not in _context(answer):
        return "it said nothing about an index of 400 lines (answer %r%s)" % (shown, "; stderr: " + why if why else "")
    return None


def _env_problems(env_sources: Mapping[str, str], effective: Mapping[str, str], report: Report) -> None:
    """ENGRAMORY_* values that make the guard look elsewhere or let an index past the window."""
    def where(var: str) -> str:
        return env_sources.get(var, "this shell's environment")

    def fix(var: str) -> str:
        src = where(var)
        if src == "this shell's environment":
            return "unset %s before starting Claude Code" % var
        return "remove %s from the \"env\" block of %s" % (var, src)

    for var, attr in config.ENV_CAPS:
        if var not in effective:
            continue
        value = config.positive_int(effective[var])
        limit = WINDOW_LINES if attr.endswith("lines") else WINDOW_UNITS
        if value is not None and value > limit:
            report.problem(
                "%s=%s (from %s) is above the %s Claude Code loads (%d): the cap no longer protects the index"
                % (var, effective[var][:40], where(var), "lines" if attr.endswith("lines") else "UTF-16 units", limit),
                fix(var),
            )
    name = effective.get("ENGRAMORY_INDEX_NAME", "").strip()
    if name and name != config.INDEX_NAME:
        report.problem(
            "ENGRAMORY_INDEX_NAME=%s (from %s): the guard watches %s, but Claude Code loads %s"
            % (name[:60], where("ENGRAMORY_INDEX_NAME"), name[:60], config.INDEX_NAME), fix("ENGRAMORY_INDEX_NAME"))
    paths = effective.get("ENGRAMORY_INDEX_PATH", "").strip()
    if paths:
        listed = [p for p in paths.split(os.pathsep) if p.strip()]
        gone = [p for p in listed if not os.path.isdir(os.path.dirname(os.path.abspath(os.path.expanduser(p))) or ".")]
        if gone:
            report.problem(
                "ENGRAMORY_INDEX_PATH (from %s) lists %s, whose folder does not exist; only the listed files are "
                "guarded, so the index Claude Code loads is not" % (where("ENGRAMORY_INDEX_PATH"), ", ".join(gone[:3])),
                fix("ENGRAMORY_INDEX_PATH") + ", or list the real index",
            )
        else:
            report.note("ENGRAMORY_INDEX_PATH (from %s): only %s are guarded" % (where("ENGRAMORY_INDEX_PATH"), ", ".join(listed[:3])))


# -- the Claude Code plugin ----------------------------------------------------------------

PLUGIN_NAME = "engramory"


def enabled_plugins(docs: Mapping[str, JsonDoc]) -> list[tuple[str, str]]:
    """(plugin id, scope that enables it) for every `engramory@<marketplace>` that is on:
    `enabledPlugins` is read per id, and the highest scope that names an id decides (a
    project's `false` turns off a user's `true`)."""
    decided: dict[str, tuple[bool, str]] = {}
    for name in SCOPE_ORDER:
        doc = docs.get(name)
        block = doc.data.get("enabledPlugins") if doc is not None else None
        if not isinstance(block, dict):
            continue
        for key, value in block.items():
            if isinstance(key, str) and key.split("@", 1)[0] == PLUGIN_NAME and key not in decided:
                decided[key] = (value is True, name)
    return sorted((key, scope) for key, (on, scope) in decided.items() if on)


def _local_marketplace_folder(plugins: str, name: str, market: str) -> str | None:
    """A plugin of a local (`directory`) marketplace: Claude Code 2.1.332 runs its hooks from
    the marketplace folder itself (CLAUDE_PLUGIN_ROOT is that folder), not from the copy it
    records in installed_plugins.json: measured, tests/hosts/claude/test_install_check_real.py."""
    try:
        known = JsonDoc.load(os.path.join(plugins, "known_marketplaces.json"), host="Claude Code").data
    except SettingsError:
        return None
    entry = known.get(market)
    source = entry.get("source") if isinstance(entry, dict) else None
    if not (isinstance(source, dict) and source.get("source") == "directory"):
        return None
    assert isinstance(entry, dict)
    root = entry.get("installLocation") or source.get("path")
    if not isinstance(root, str) or not root:
        return None
    try:
        listing = JsonDoc.load(os.path.join(root, ".claude-plugin", "marketplace.json"), host="Claude Code").data
    except SettingsError:
        return None
    meta = listing.get("metadata")
    base = meta.get("pluginRoot") if isinstance(meta, dict) and isinstance(meta.get("pluginRoot"), str) else ""
    for item in listing.get("plugins") or []:
        if isinstance(item, dict) and item.get("name") == name and isinstance(item.get("source"), str):
            rel = item["source"]
            folder = os.path.normpath(os.path.join(root, rel if rel.startswith("./") or not base else os.path.join(base, rel)))
            return folder if os.path.isdir(folder) else None
    return None


def plugin_folder(config_dir: str, plugin_id: str, cwd: str) -> tuple[str | None, str]:
    """Where Claude Code runs plugin `plugin_id` from, found as it finds it: for a local
    (`directory`) marketplace, the plugin's folder inside it (known_marketplaces.json and the
    marketplace's own marketplace.json); otherwise the entry in
    `<config>/plugins/installed_plugins.json` (one for this project, else the user's), else
    the newest version under `<config>/plugins/cache/<marketplace>/<plugin>/`. (folder, how
    found) or (None, why not)."""
    plugins = os.path.join(config_dir, "plugins")
    record = os.path.join(plugins, "installed_plugins.json")
    name, _, market = plugin_id.partition("@")
    local = _local_marketplace_folder(plugins, name, market)
    if local is not None:
        return local, "%s (the local marketplace %s, run in place)" % (local, market)
    try:
        ranked = _installed_paths(record, plugin_id, cwd)
    except SettingsError as exc:
        return None, "%s cannot be read (%s)" % (record, exc)
    for path in ranked:
        if os.path.isdir(path):
            return path, "%s (%s)" % (path, record)
    if ranked:
        return None, "%s names %s, which does not exist" % (record, ranked[0])
    cache = os.path.join(plugins, "cache", market, name)
    try:
        versions = [os.path.join(cache, v) for v in os.listdir(cache)]
    except OSError:
        versions = []
    versions = [v for v in versions if os.path.isfile(os.path.join(v, "hooks", "hooks.json"))]
    if versions:
        newest = max(versions, key=lambda p: os.stat(p).st_mtime)
        return newest, "%s (newest in %s)" % (newest, cache)
    return None, "no entry for it in %s and nothing under %s" % (record, cache)


def _installed_paths(record: str, plugin_id: str, cwd: str) -> list[str]:
    """The install paths installed_plugins.json gives `plugin_id`, this project's entries
    before the user's (another project's left out). Raises SettingsError."""
    doc = JsonDoc.load(record, host="Claude Code")
    listed = doc.data.get("plugins")
    entries = listed.get(plugin_id) if isinstance(listed, dict) else None
    if isinstance(entries, dict):  # version 1 of the file: one entry per id
        entries = [entries]
    ranked: list[tuple[int, str]] = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("installPath"), str):
            continue
        project = entry.get("projectPath")
        if not (isinstance(project, str) and project):
            ranked.append((1, entry["installPath"]))
        elif same_dir(project, cwd):
            ranked.append((0, entry["installPath"]))
        # else: installed for another project
    return [path for _, path in sorted(ranked)]


def same_dir(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def plugin_handlers(plugin_id: str, folder: str, report: Report) -> list[Found]:
    """Our handlers in the plugin's hooks/hooks.json (Claude Code loads that file by itself)."""
    path = os.path.join(folder, "hooks", "hooks.json")
    label = "plugin %s" % plugin_id
    try:
        doc = JsonDoc.load(path, host="Claude Code")
    except SettingsError as exc:
        report.problem("%s: %s; Claude Code loads none of its hooks" % (label, exc), "reinstall the plugin: "
                       "`claude plugin uninstall %s` then `claude plugin install %s`" % (plugin_id, plugin_id))
        return []
    if not doc.exists:
        report.problem("%s: %s does not exist; the plugin wires no hook" % (label, path),
                       "reinstall the plugin: `claude plugin install %s`" % plugin_id)
        return []
    found = find_ours(label, path, doc.data, marker="/hooks/")
    for f in found:
        f.extra = {"CLAUDE_PLUGIN_ROOT": folder}
    report.ok("%s is enabled and installed at %s" % (label, folder))
    return found


def run(env: Mapping[str, str] | None = None, cwd: str | None = None, scope: str = "user",
        out: Callable[[str], Any] | None = None, as_json: bool = False) -> int:
    environ = dict(os.environ if env is None else env)
    here = os.path.abspath(cwd or os.getcwd())
    report = Report("engramory install --check (Claude Code, for %s)" % here)
    docs = _read_scopes(environ, here, report)  # 1. every scope the host reads
    _switch_problems(docs, report)  # 2. disableAllHooks / allowManagedHooksOnly
    effective = _effective_env(environ, docs, report)  # 3. env blocks
    found = _our_handlers(docs, environ, here, report)  # 4. our handlers
    effective.setdefault("CLAUDE_PROJECT_DIR", here)
    _wiring_problems(found, effective, report)
    if found:  # 5. smoke runs, in a throw-away config folder and project
        _smoke_all(found, effective, report)
    if as_json:
        (out or sys.stdout.write)(json.dumps(report.as_json(), indent=2) + "\n")
        return 0 if report.healthy else 1
    status = report.finish("the guard, the shell backstop and the session notice are wired and act "
                           "(%d handler%s checked)" % (len(found), "" if len(found) == 1 else "s"), out)
    if status and scope:
        (out or sys.stdout.write)(
            "  after fixing: `engramory install --check` again (install: `%s -m engramory install --scope %s`)\n"
            % (sys.executable or "python3", scope))
    return status


def _read_scopes(environ: Mapping[str, str], here: str, report: Report) -> dict[str, JsonDoc]:
    """The settings files Claude Code merges here, by scope name; one it cannot parse is a problem."""
    docs: dict[str, JsonDoc] = {}
    for name, path in scope_files(environ, here):
        try:
            doc = JsonDoc.load(path, host="Claude Code")
        except SettingsError as exc:
            report.problem("%s settings: %s; Claude Code ignores this whole file" % (name, exc),
                           "fix the file (or move it away), then run this again")
            continue
        if doc.exists:
            docs[name] = doc
            report.ok("%s settings read: %s" % (name, path))
    return docs


def _switch_problems(docs: Mapping[str, JsonDoc], report: Report) -> None:
    """disableAllHooks in force (the highest scope that sets it decides), allowManagedHooksOnly."""
    for name in SCOPE_ORDER:
        setter = docs.get(name)
        if setter is None or "disableAllHooks" not in setter.data:
            continue
        if setter.data["disableAllHooks"] is True:
            report.problem(
                "\"disableAllHooks\": true in %s settings (%s): Claude Code runs no hook at all, the guard included"
                % (name, setter.path),
                "remove \"disableAllHooks\" from %s (or set it to false)" % setter.path,
            )
        break  # the highest scope that sets it decides
    managed = docs.get("managed")
    if managed is not None and managed.data.get("allowManagedHooksOnly") is True:
        report.problem("managed settings (%s) allow managed hooks only: hooks in user and project settings do not run"
                       % managed.path, "ask the administrator to add engramory's hooks to the managed settings")


def _effective_env(environ: Mapping[str, str], docs: Mapping[str, JsonDoc], report: Report) -> dict[str, str]:
    """The environment the hooks inherit: this shell's, then the env blocks (lowest precedence
    first, so higher scopes win); the ENGRAMORY_* values in it are judged."""
    effective = {k: v for k, v in environ.items()}
    sources: dict[str, str] = {}
    for name in reversed(SCOPE_ORDER):
        layer = docs.get(name)
        block = layer.data.get("env") if layer is not None else None
        if layer is None or not isinstance(block, dict):
            continue
        for k, v in block.items():
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                effective[k] = str(v)
                if k.startswith("ENGRAMORY_"):
                    sources[k] = "%s settings (%s)" % (name, layer.path)
    _env_problems(sources, effective, report)
    return effective


def _our_handlers(docs: Mapping[str, JsonDoc], environ: Mapping[str, str], here: str, report: Report) -> list[Found]:
    """Our handlers in every settings scope, then in each enabled engramory plugin."""
    found: list[Found] = []
    for name in SCOPE_ORDER:
        if name in docs:
            found.extend(find_ours(name, docs[name].path, docs[name].data))
    for plugin_id, where in enabled_plugins(docs):
        folder, how = plugin_folder(claude_config_dir(environ), plugin_id, here)
        if folder is None:
            # Not a problem by itself: settings hooks may do the work (checked below).
            report.note("the plugin %s is enabled (%s settings) but Claude Code has no copy of it: %s; it runs "
                        "none of its hooks (`claude plugin install %s` to install it)" % (plugin_id, where, how, plugin_id))
            continue
        found.extend(plugin_handlers(plugin_id, folder, report))
    return found


def _wiring_problems(found: Sequence[Found], effective: Mapping[str, str], report: Report) -> None:
    """Each hook engramory needs is wired (once), and each handler of it can run."""
    expected = {(event, script) for event, script, _, _ in NEEDS}
    for f in found:
        if (f.event, f.script) not in expected:
            report.note("hooks/%s also runs on %s (%s); engramory does not wire it there"
                        % (f.script, f.event, f.where))
    for event, script, tools, what in NEEDS:
        mine = [f for f in found if f.script == script and f.event == event]
        if not mine:
            report.problem("%s is not wired: no %s handler runs hooks/%s claude %s in any settings file Claude Code "
                           "reads here" % (what, event, ENTRY, event), "run `engramory install` (user scope) and restart Claude Code")
            continue
        if len(mine) > 1:
            plugin_too = any(f.extra for f in mine) and not all(f.extra for f in mine)
            report.note("%s is wired %d times (%s): each call is judged more than once%s"
                        % (what, len(mine), "; ".join(f.where for f in mine),
                           "; keep one way in (`claude plugin disable <id>`, or `engramory uninstall`)" if plugin_too else ""))
        for f in mine:
            _check_handler(f, event, tools, what, effective, report)


def _check_matcher(f: Found, event: str, tools: Sequence[str], label: str, report: Report) -> None:
    matcher = f.group.get("matcher")
    missed = [t for t in tools if not matcher_selects(matcher, t)]
    if missed:
        report.problem("%s: the matcher %s does not select %s (matchers are case-sensitive)"
                       % (label, json.dumps(matcher), ", ".join(missed)),
                       f.reinstall + " (it writes the matcher back) or fix it by hand")
    elif event in SINCE_22 and not matcher_selects(matcher, SINCE_22[event][0]):  # an install before issue 22
        report.note("%s: its matcher %s leaves out %s, so %s; %s adds it"
                    % (label, json.dumps(matcher), SINCE_22[event][0], SINCE_22[event][1], f.reinstall))


def _check_handler(f: Found, event: str, tools: Sequence[str], what: str, effective: Mapping[str, str],
                   report: Report) -> None:
    label = "%s (%s)" % (what, f.where)
    f.what = what
    _check_matcher(f, event, tools, label, report)
    if f.handler.get("async") is True:
        report.problem("%s is marked \"async\": true: Claude Code does not wait for it, so it cannot %s"
                       % (label, "deny" if event == "PreToolUse" else "report in time"),
                       "remove \"async\" from that handler in %s" % f.path)
    if f.handler.get("type", "command") != "command":
        report.problem("%s has type %r, not \"command\"" % (label, f.handler.get("type")), f.reinstall)
    try:
        parsed = split_command(str(f.handler.get("command")), dict(effective, **f.extra))
    except ValueError as exc:
        report.problem("%s: the command cannot be followed (%s)" % (label, exc), f.reinstall)
        return
    problem = interpreter_problem(parsed.interpreter)
    if problem:
        report.problem("%s: %s: the hook cannot start, and Claude Code lets every call through" % (label, problem),
                       f.reinstall + " with a Python that stays (e.g. /usr/bin/python3 -m engramory install)" if not f.extra else "install a python3 on PATH (the plugin's hooks run python3)")
        return
    if parsed.unset:
        report.problem("%s: the command uses $%s, which is not set when the hook runs" % (label, ", $".join(parsed.unset)),
                       f.reinstall)
        return
    if not os.path.isfile(parsed.script):
        report.problem("%s: the script %s does not exist: the hook fails on every call and the guard is off"
                       % (label, parsed.script or "(none)"), f.reinstall)
        return
    f.handler["_argv"] = parsed.argv()  # for the smoke run; never written anywhere
    bundle = os.path.dirname(os.path.dirname(parsed.script))
    exe = shutil.which(parsed.interpreter) or parsed.interpreter
    for line in bundle_problems(bundle, exe):
        report.problem("%s: %s: the hook would load nothing and let every call through" % (label, line),
                       f.reinstall + " (it copies the whole bundle)")
    report.ok("%s: %s runs with %s" % (label, parsed.script, parsed.interpreter))
    if f.legacy:
        report.note("%s: wired by an earlier install (hooks/%s, which still runs); %s moves it to hooks/%s claude %s"
                    % (label, f.script, "a plugin update" if f.extra else "a reinstall", ENTRY, event))


def _smoke_all(found: Sequence[Found], effective: Mapping[str, str], report: Report) -> None:
    with tempfile.TemporaryDirectory(prefix="engramory-check-") as tmp:
        project = os.path.join(tmp, "project")
        config_dir = os.path.join(tmp, "config")
        os.makedirs(project)
        env = dict(effective)
        env.update(CLAUDE_CONFIG_DIR=config_dir, CLAUDE_PROJECT_DIR=project, TMPDIR=tmp)
        env.pop("CLAUDE_PLUGIN_DATA", None)
        env.pop("CLAUDE_CODE_PROJECT_DIR_NAME", None)
        index = auto_memory_index(os.path.realpath(project), env) or os.path.join(
            config_dir, "projects", sanitize_project_path(os.path.realpath(project)), "memory", "MEMORY.md")
        os.makedirs(os.path.dirname(index), exist_ok=True)
        for n, f in enumerate(found):
            argv = f.handler.pop("_argv", None)
            if not argv:
                continue
            label = "%s (%s)" % (f.what, f.where)
            # The backstops report an index grown over its cap; the guard judges a Write of it.
            with open(index, "w", encoding="utf-8") as fh:
                fh.write(_lines(10 if f.script == GUARD_SCRIPT else 400))
            payload = smoke_payload(f.event, os.path.realpath(project), index, n)
            ran = smoke(argv, payload, env=dict(env, **f.extra), cwd=project)
            why = judge_smoke(f.event, ran)
            if why:
                culprits = sorted(k for k in effective if k.startswith("ENGRAMORY_"))
                report.problem(
                    "%s: a smoke run shows it would not act: %s%s" % (
                        label, why, "; ENGRAMORY_* in force: %s" % ", ".join(culprits) if culprits else ""),
                    "fix what the lines above name (or %s), then run this again" % f.reinstall,
                )
            else:
                report.ok("%s: a smoke run %s" % (label, "was denied" if f.script == GUARD_SCRIPT else "was reported"))

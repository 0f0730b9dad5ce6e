"""`engramory install --host openclaw` / `uninstall --host openclaw`: the guard as a native
OpenClaw plugin, enabled in the config.

- The runtime is copied to `~/.openclaw/engramory/` (`$OPENCLAW_HOME/.openclaw/` when set) and
  the plugin (`openclaw.plugin.json`, `package.json`, `index.mjs`) written to
  `~/.openclaw/engramory-plugin/`, with the interpreter and the entry script's path in it: the
  generic entry, `hooks/engramory_hook.py`, which `index.mjs` runs with `openclaw` after it. An
  `index.mjs` an install from before it wrote (running `hooks/engramory_openclaw_hook.py`, a shim
  now) still guards: --check passes it with a note, install replaces it.
- The config (`$OPENCLAW_CONFIG_PATH`, else `~/.openclaw/openclaw.json`, JSON with comments) gets
  the plugin folder in `plugins.load.paths` and `plugins.entries.engramory.enabled: true`: the
  two keys `openclaw plugins install --link … --accept-capabilities` and `plugins enable` write.
  Only those are edited (the rest of the file keeps its bytes), and uninstall takes them out
  again, giving the file's bytes back.

User scope only: OpenClaw has one config per user (or per `OPENCLAW_HOME`).
"""

from __future__ import annotations

import json
import os
import sys

from engramory import __version__, fsutil
from engramory.hosts import openclaw as host
from engramory.install.bundle import (
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
    unlink_quietly,
)
from engramory.install.pluginfile import ASK_JS, EARLIER, ENTRY, OTHER, form, smoke_plugin
from engramory.install.settings import (
    Change,
    JsonDoc,
    SettingsError,
    apply_change,
    canonical,
    restore_bytes,
    unified_diff,
)
from engramory.install.steps import (
    apply_or_delete,
    earlier_note,
    finish_problems,
    header,
    interpreter,
    reinstall_step,
    run_verb,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping
    from typing import Any

PLUGIN_ID = "engramory"
SCRIPT = ENTRY  # hooks/engramory_hook.py, run with HOST (openclaw) after it
LEGACY_SCRIPT = "engramory_openclaw_hook.py"  # what index.mjs ran before the generic entry (a shim now)
TIMEOUT_MS = 5000  # the plugin's own bound; OpenClaw blocks the call when a hook takes 15 s

MANIFEST_JSON = {
    "id": PLUGIN_ID,
    "name": "engramory",
    "description": "Keeps memory indexes inside the window OpenClaw loads (installed by engramory).",
    "activation": {"onStartup": True, "onCapabilities": ["hook"]},
    "configSchema": {"type": "object", "additionalProperties": False},
}
PACKAGE_JSON = {"name": "engramory-openclaw-plugin", "version": __version__, "private": True, "type": "module",
                "openclaw": {"extensions": ["./index.mjs"]}}

INDEX_TEMPLATE = r'''// engramory guard for OpenClaw, installed by `engramory install --host openclaw`.
//
// before_tool_call: for `write`, `edit` and `apply_patch` it asks engramory's Python core
// whether the change would grow a memory index past its cap, or drop lines another writer
// added since this session last read it, and blocks the call with the reason if so. Before
// `read` it tells the guard what the session is about to be shown (after_tool_call would be
// too late: OpenClaw 2026.9.6 does not wait for it before the next request; a read of a file
// that is not an index is answered at once). OpenClaw BLOCKS a call whose hook throws or takes 15 s, so nothing here
// throws, every call is bounded (TIMEOUT_MS) and anything but a clear deny lets the tool run.
// before_prompt_build (once per run, before the model's first request; OpenClaw runs it only
// with plugins.entries.engramory.hooks.allowConversationAccess): engramory's session-start
// notice, prepended to the prompt. OpenClaw 2026.9.6 gives a plugin no way to reach the model
// between a tool and the next request, so there is no post-tool notice.
// Node built-ins only. OpenClaw 2026.9.6 does not run plugin hooks under `agent exec`.
import { spawn } from "node:child_process";

const PYTHON = "__PYTHON__";
const SCRIPT = "__SCRIPT__";
const HOST = "openclaw";
const TIMEOUT_MS = 5000;
const GUARDED = new Set(["write", "edit", "apply_patch"]);
const READ = new Set(["read"]);

''' + ASK_JS + r'''
export default {
  id: "engramory",
  name: "engramory",
  description: "Keeps memory indexes inside the window OpenClaw loads.",
  register(api) {
    api.on("before_tool_call", async (event, ctx) => {
      try {
        if (event && READ.has(event.toolName)) {
          await ask({ event: "read", tool: event.toolName, params: event.params || {}, sessionId: (ctx && ctx.sessionId) || "" });
          return undefined;
        }
        if (!event || !GUARDED.has(event.toolName)) return undefined;
        const answer = await ask({ event: "before", tool: event.toolName, params: event.params || {}, derivedPaths: event.derivedPaths || [], sessionId: (ctx && ctx.sessionId) || "" });
        if (typeof answer.deny === "string" && answer.deny) return { block: true, blockReason: answer.deny };
      } catch {}
      return undefined;
    });
    api.on("before_prompt_build", async (event, ctx) => {
      try {
        const answer = await ask({ event: "start", sessionId: (ctx && ctx.sessionId) || "" });
        if (typeof answer.context === "string" && answer.context) return { prependContext: answer.context };
      } catch {}
      return undefined;
    });
  },
};
'''


class Target(Place):
    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        environ = os.environ if env is None else env
        self.scope = "user"
        home = environ.get("OPENCLAW_HOME") or environ.get("HOME") or os.path.expanduser("~")
        self.base = os.path.join(os.path.abspath(home), ".openclaw")
        self.settings = host.config_path(environ)
        self.plugin_dir = os.path.join(self.base, "engramory-plugin")
        self.skills = self.base
        self.skill_dir = os.path.join(self.base, "engramory")
        self.script = os.path.join(self.skill_dir, "hooks", SCRIPT)


def plugin_files(interpreter: str, script: str) -> dict[str, bytes]:
    index = INDEX_TEMPLATE.replace('"__PYTHON__"', json.dumps(interpreter)).replace('"__SCRIPT__"', json.dumps(script))
    return {
        "openclaw.plugin.json": (json.dumps(MANIFEST_JSON, indent=2) + "\n").encode(),
        "package.json": (json.dumps(PACKAGE_JSON, indent=2) + "\n").encode(),
        "index.mjs": index.encode(),
    }


def merge(data: Mapping[str, Any], plugin_dir: str) -> tuple[dict[str, Any], list[str]]:
    """`data` with the plugin folder loaded and its entry enabled; the keys created."""
    new = json.loads(json.dumps(data))
    created: list[str] = []
    plugins = new.setdefault("plugins", {}) if isinstance(new.get("plugins", {}), dict) else None
    if plugins is None:
        raise SettingsError("\"plugins\" in the OpenClaw config is not an object; fix it, then run this again")
    if "plugins" not in data:
        created.append("plugins")
    load = plugins.setdefault("load", {})
    if not isinstance(load, dict):
        raise SettingsError("\"plugins.load\" in the OpenClaw config is not an object; fix it, then run this again")
    if "load" not in (data.get("plugins") or {}):
        created.append("plugins/load")
    paths = load.setdefault("paths", [])
    if not isinstance(paths, list):
        raise SettingsError("\"plugins.load.paths\" in the OpenClaw config is not an array; fix it, then run this again")
    if "paths" not in ((data.get("plugins") or {}).get("load") or {}):
        created.append("plugins/load/paths")
    if plugin_dir not in paths:
        paths.append(plugin_dir)
    entries = plugins.setdefault("entries", {})
    if not isinstance(entries, dict):
        raise SettingsError("\"plugins.entries\" in the OpenClaw config is not an object; fix it, then run this again")
    if "entries" not in (data.get("plugins") or {}):
        created.append("plugins/entries")
    entry = entries.get(PLUGIN_ID)
    # allowConversationAccess: without it OpenClaw never calls before_prompt_build (the notice).
    hooks = entry.get("hooks") if isinstance(entry, dict) else None
    hooks = dict(hooks, allowConversationAccess=True) if isinstance(hooks, dict) else {"allowConversationAccess": True}
    entries[PLUGIN_ID] = dict(entry, enabled=True, hooks=hooks) if isinstance(entry, dict) else {"enabled": True, "hooks": hooks}
    return new, created


def unmerge(data: Mapping[str, Any], plugin_dir: str, created: list[str]) -> tuple[dict[str, Any], int]:
    new = json.loads(json.dumps(data))
    plugins = new.get("plugins")
    if not isinstance(plugins, dict):
        return new, 0
    removed = 0
    load = plugins.get("load")
    if isinstance(load, dict) and isinstance(load.get("paths"), list) and plugin_dir in load["paths"]:
        load["paths"] = [p for p in load["paths"] if p != plugin_dir]
        removed += 1
        if not load["paths"] and "plugins/load/paths" in created:
            del load["paths"]
        if not load and "plugins/load" in created:
            del plugins["load"]
    entries = plugins.get("entries")
    if isinstance(entries, dict) and PLUGIN_ID in entries:
        del entries[PLUGIN_ID]
        removed += 1
        if not entries and "plugins/entries" in created:
            del plugins["entries"]
    if not plugins and "plugins" in created:
        del new["plugins"]
    return new, removed


def _bad_scope(args: argparse.Namespace, what: str) -> bool:
    scope = getattr(args, "scope", "user") or "user"
    if scope != "user":
        sys.stderr.write("engramory %s: OpenClaw has one config per user; use --scope user (the default)\n" % what)
        return True
    return False


def install(args: argparse.Namespace) -> int:
    if _bad_scope(args, "install"):
        return 64
    target = Target()
    if getattr(args, "check", False):
        return run_check(target)
    return run_verb("install", lambda: _install(target, bool(getattr(args, "dry_run", False)),
                                                bool(getattr(args, "link", False))), target.base)


def _install(target: Target, dry_run: bool, link: bool) -> int:
    out = sys.stdout.write
    exe = interpreter(None, "openclaw")
    doc = JsonDoc.load(target.settings, comments=True, host="OpenClaw")
    new_data, created = merge(doc.data, target.plugin_dir)
    after = doc.raw if canonical(new_data) == canonical(doc.data) else doc.render(new_data)
    change = Change(target.settings, doc.raw, after)
    source = source_root()
    files, _ = runtime_files(source, [SCRIPT])
    plan = plan_skill(target, source, files, link)
    out(header("install", "openclaw", "user", dry_run))
    out("  bundle: %s -> %s\n  plugin: %s\n  config: %s\n" % (source, target.skill_dir, target.plugin_dir, target.settings))
    if dry_run:
        out(unified_diff(target.settings, change.before, change.after) or "  config: no change\n")
        return 0
    old = read_manifest(target.manifest_path())
    apply_skill(plan, target, source)
    for name, data in plugin_files(exe, target.script).items():
        fsutil.write_atomic(os.path.join(target.plugin_dir, name), data)
    # A later install keeps the first one's record: what it created is what uninstall takes out.
    record_install(target.manifest_path(), "openclaw", plan, target.settings,
                   {"created_file": not doc.exists, "created": created}, old)
    saved = apply_change(change)
    if saved:
        out("  backup of the previous config: %s\n" % saved)
    out("  OpenClaw loads plugins when the Gateway or an `agent --local` run starts; `agent exec` never runs them.\n")
    return 0


def uninstall(args: argparse.Namespace) -> int:
    if _bad_scope(args, "uninstall"):
        return 64
    target = Target()
    return run_verb("uninstall", lambda: _uninstall(target, bool(getattr(args, "dry_run", False))), target.base)


def _uninstall(target: Target, dry_run: bool) -> int:
    out = sys.stdout.write
    doc = JsonDoc.load(target.settings, comments=True, host="OpenClaw")
    mpath = target.manifest_path()
    manifest = read_manifest(mpath)
    record = ((manifest or {}).get("settings") or {}).get(target.settings) or {}
    created = [c for c in record.get("created", []) if isinstance(c, str)] if isinstance(record, dict) else []
    new_data, removed = unmerge(doc.data, target.plugin_dir, created)
    change = Change(target.settings, doc.raw, doc.raw)
    if removed:
        change.after = restore_bytes(doc, new_data)
        if not new_data and record.get("created_file"):
            change.after = None
    dest = target.skill_dir
    action = bundle_action(dest, manifest)
    out(header("uninstall", "openclaw", "user", dry_run))
    out("  config: %s: %s\n" % (target.settings, "%d engramory entr%s removed" % (removed, "y" if removed == 1 else "ies")
                                if removed else "no engramory entry"))
    out(folder_action_line("bundle", action, dest, manifest, dry_run))
    if dry_run:
        diff = unified_diff(target.settings, change.before, change.after)
        if diff:
            out(diff)
        return 0
    apply_or_delete(change)
    for name in plugin_files("", ""):
        unlink_quietly(os.path.join(target.plugin_dir, name))
    remove_made_dirs([target.plugin_dir])
    out(take_out_bundle(dest, action, manifest, mpath, target.link_manifest))
    return 0


def check(args: argparse.Namespace) -> int:
    return 64 if _bad_scope(args, "install") else run_check(Target())


def _config_problems(target: Target) -> list[str]:
    """What openclaw.json lacks for OpenClaw to load the guard, enable it and call the session-start hook."""
    try:
        doc = JsonDoc.load(target.settings, comments=True, host="OpenClaw")
    except SettingsError as exc:
        return [str(exc)]
    problems: list[str] = []
    raw_plugins = doc.data.get("plugins")
    plugins: dict[str, Any] = raw_plugins if isinstance(raw_plugins, dict) else {}
    load, entries = plugins.get("load"), plugins.get("entries")
    paths = load.get("paths") if isinstance(load, dict) else None
    entry = entries.get(PLUGIN_ID) if isinstance(entries, dict) else None
    if not isinstance(paths, list) or target.plugin_dir not in paths:
        problems.append("%s does not list %s in plugins.load.paths: OpenClaw does not load the guard" % (target.settings, target.plugin_dir))
    if not (isinstance(entry, dict) and entry.get("enabled") is True):
        problems.append("plugins.entries.%s.enabled is not true in %s: the guard is off" % (PLUGIN_ID, target.settings))
        return problems
    hooks = entry.get("hooks")
    if not (isinstance(hooks, dict) and hooks.get("allowConversationAccess") is True):
        problems.append("plugins.entries.%s.hooks.allowConversationAccess is not true in %s: OpenClaw never calls "
                        "before_prompt_build, so the session-start notice is off" % (PLUGIN_ID, target.settings))
    return problems


def _plugin_problems(target: Target, out: Callable[[str], Any]) -> list[str]:
    """What is wrong with the plugin file: missing, not ours, not answering, or without the session-start hook."""
    index = os.path.join(target.plugin_dir, "index.mjs")
    try:
        with open(index, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return ["%s is missing: OpenClaw has no guard plugin to load" % index]
    if not text:
        return []
    problems: list[str] = []
    found = form(text, lambda exe, script: plugin_files(exe, script)["index.mjs"].decode(), "openclaw", LEGACY_SCRIPT)
    if found == EARLIER:
        out("  note: %s\n" % earlier_note(index, LEGACY_SCRIPT, "openclaw"))
    elif found == OTHER:
        problems.append("%s is not the plugin this engramory writes (an older or edited copy): what it does is not "
                        "what is checked here (an older one does not tell the guard what `read` showed, so a "
                        "stale write is not refused)" % index)
    problems.extend(smoke_plugin(text, target.skill_dir, {"event": "before", "tool": "read", "params": {}},
                                 TIMEOUT_MS / 1000.0, SCRIPT, out))
    if "before_prompt_build" not in text:
        problems.append("%s has no before_prompt_build hook: the session-start notice is off (reinstall)" % index)
    return problems


def run_check(target: Target) -> int:
    out = sys.stdout.write
    out("engramory install --host openclaw --check: %s\n" % target.settings)
    problems = _config_problems(target) + _plugin_problems(target, out)
    return finish_problems(problems, reinstall_step("openclaw"), "the plugin is loaded and enabled, the guard answers "
                           "and the session-start notice is on (not under `agent exec`)")

"""`engramory install --host opencode` / `uninstall --host opencode`: the guard as an opencode
plugin file.

- `--scope user` (default): `$XDG_CONFIG_HOME/opencode/plugins/engramory.js` (default
  `~/.config/opencode/`), with the runtime copied to `.../opencode/engramory/`.
- `--scope project`: the same under the project's `.opencode/`. opencode loads every `*.js`
  in a plugins folder with no trust or enable step.

The plugin file is engramory's alone: install writes it (with the interpreter and the script
path written in) and uninstall deletes it; an existing `engramory.js` that is not ours is
refused. It imports only Node built-ins, because opencode installs `@opencode-ai/plugin` into a
config folder in the background and a plugin must not wait for that. Every call it makes is
bounded (opencode has no hook timeout of its own) and anything but a clear deny lets the tool
run. opencode itself may add `package.json`, `package-lock.json` and `node_modules/` to the
folder on its first run; those are opencode's and stay.
"""

from __future__ import annotations

import json
import os
import sys

from engramory import __version__, fsutil
from engramory import install_settingshooks as core
from engramory.installer import (
    LINK_MANIFEST,
    MANIFEST,
    SettingsError,
    apply_skill,
    bundle_files,
    bundle_problems,
    canonical,
    folder_action_line,
    plan_skill,
    prune_empty,
    read_manifest,
    remove_listed,
    source_root,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

HOST = "opencode"
SCRIPT = "engramory_opencode_hook.py"
PLUGIN = "engramory.js"
MARKER = "// engramory guard for opencode"
SCOPES = ("project", "user")
TIMEOUT_MS = 5000  # the plugin's own bound on each call; the check's smoke run must beat it

PLUGIN_TEMPLATE = r'''// engramory guard for opencode, installed by `engramory install --host opencode`.
//
// Before `write`, `edit` and `apply_patch` it asks engramory's Python core whether the change
// would grow a memory index past its hard cap, and throws the reason if so (opencode hands a
// thrown message to the model verbatim). After `bash` and at the start of a session it adds a
// notice when an index is over its cap.
//
// opencode gives a plugin no timeout: a hook that never settles hangs the session. So every
// call here is bounded (TIMEOUT_MS) and anything other than a clear deny lets the tool run:
// a missing, slow or broken guard never blocks the user. Node built-ins only: nothing is
// imported from @opencode-ai/plugin at run time.
import { spawn } from "node:child_process";

const PYTHON = "__PYTHON__";
const SCRIPT = "__SCRIPT__";
const TIMEOUT_MS = 5000;
const GUARDED = new Set(["write", "edit", "apply_patch"]);
const SHELL = new Set(["bash"]);

function ask(question) {
  return new Promise((resolve) => {
    let settled = false;
    let out = "";
    let child;
    let timer;
    const finish = (answer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer && typeof answer === "object" ? answer : {});
    };
    try {
      child = spawn(PYTHON, ["-I", "-S", SCRIPT], { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      finish({});
      return;
    }
    timer = setTimeout(() => {
      try { child.kill("SIGKILL"); } catch {}
      finish({});
    }, TIMEOUT_MS);
    child.on("error", () => finish({}));
    child.stdout.on("data", (chunk) => { out += chunk; });
    child.on("close", () => {
      try { finish(JSON.parse(out || "{}")); } catch { finish({}); }
    });
    child.stdin.on("error", () => {});
    try { child.stdin.end(JSON.stringify(question)); } catch { finish({}); }
  });
}

export const EngramoryGuard = async (ctx) => {
  const directory = (ctx && ctx.directory) || process.cwd();
  let started = null;
  return {
    "tool.execute.before": async (input, output) => {
      let answer = {};
      try {
        if (!input || !GUARDED.has(input.tool)) return;
        answer = await ask({ event: "before", tool: input.tool, args: (output && output.args) || {}, directory, sessionID: input.sessionID });
      } catch {
        return;
      }
      if (answer && typeof answer.deny === "string" && answer.deny) throw new Error(answer.deny);
    },
    "tool.execute.after": async (input, output) => {
      try {
        if (!input || !SHELL.has(input.tool) || !output) return;
        const answer = await ask({ event: "after", tool: input.tool, directory, sessionID: input.sessionID });
        if (answer.context && typeof output.output === "string") output.output += "\n\n" + answer.context;
      } catch {}
    },
    "experimental.chat.system.transform": async (input, output) => {
      try {
        if (started === null) started = ask({ event: "start", directory, sessionID: input && input.sessionID });
        const answer = await started;
        if (answer.context && output && Array.isArray(output.system)) output.system.push(answer.context);
      } catch {}
    },
  };
};
'''


def plugin_text(interpreter: str, script: str) -> str:
    return PLUGIN_TEMPLATE.replace('"__PYTHON__"', json.dumps(interpreter)).replace('"__SCRIPT__"', json.dumps(script))


class Target:
    def __init__(self, scope: str, cwd: str | None = None, env: Mapping[str, str] | None = None) -> None:
        environ = os.environ if env is None else env
        self.scope = scope
        self.project = os.path.abspath(cwd or os.getcwd())
        if scope == "user":
            config = environ.get("XDG_CONFIG_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".config")
            self.base = os.path.join(os.path.abspath(config), "opencode")
        else:
            self.base = os.path.join(self.project, ".opencode")
        self.plugins = os.path.join(self.base, "plugins")
        self.settings = os.path.join(self.plugins, PLUGIN)
        self.skills = self.base
        self.skill_dir = os.path.join(self.base, "engramory")
        self.script = os.path.join(self.skill_dir, "hooks", SCRIPT)

    @property
    def link_manifest(self) -> str:
        return os.path.join(self.base, LINK_MANIFEST)

    def manifest_path(self) -> str:
        return self.link_manifest if os.path.islink(self.skill_dir) else os.path.join(self.skill_dir, MANIFEST)


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(1 << 20)
    except FileNotFoundError:
        return None


def _ours(raw: bytes | None) -> bool:
    return raw is not None and raw.startswith(MARKER.encode())


def _scope(args: argparse.Namespace, what: str) -> str | None:
    scope = getattr(args, "scope", None) or "project"
    if scope == "local":
        scope = "project"
    if scope not in SCOPES:
        sys.stderr.write("engramory %s: --scope %s is not an opencode scope; use --scope project (./.opencode) or "
                         "--scope user (~/.config/opencode)\n" % (what, scope))
        return None
    return scope


def install(args: argparse.Namespace) -> int:
    scope = _scope(args, "install")
    if scope is None:
        return 64
    target = Target(scope)
    if getattr(args, "check", False):
        return run_check(target)
    try:
        return _install(target, bool(getattr(args, "dry_run", False)), bool(getattr(args, "link", False)))
    except SettingsError as exc:
        sys.stderr.write("engramory install: %s\nengramory install: nothing was changed.\n" % exc)
        return 1
    except OSError as exc:
        sys.stderr.write("engramory install: could not write %s: %s; check the permissions, then run this again\n"
                         % (exc.filename or target.base, exc.strerror or exc))
        return 1


def _install(target: Target, dry_run: bool, link: bool) -> int:
    out = sys.stdout.write
    exe = sys.executable
    if not exe or not os.path.isabs(exe):
        raise SettingsError("cannot tell which Python runs this (sys.executable is %r); run the installer with an "
                            "absolute interpreter path" % (exe,))
    raw = _read(target.settings)
    if raw is not None and not _ours(raw):
        raise SettingsError("%s exists and is not engramory's plugin; move it aside, then run this again" % target.settings)
    source = source_root()
    files, _ = bundle_files(source, required=["hooks/" + SCRIPT])
    files = [f for f in files if f.startswith(core.RUNTIME_DIRS) or f == "hooks/" + SCRIPT]
    plan = plan_skill(target, source, files, link)
    after = plugin_text(exe, target.script).encode("utf-8")
    out("engramory install --host opencode (%s scope%s)\n" % (target.scope, ", dry run: nothing is written" if dry_run else ""))
    out("  bundle: %s -> %s\n" % (source, target.skill_dir))
    out("  plugin: %s: %s\n" % (target.settings, "unchanged" if raw == after else ("would write" if dry_run else "written")))
    if dry_run:
        return 0
    created = {"created_base": not os.path.isdir(target.base), "created_plugins_dir": not os.path.isdir(target.plugins)}
    apply_skill(plan, target, source)
    old = read_manifest(target.manifest_path())
    manifest = {"installer": "engramory", "host": HOST, "version": __version__, "mode": plan.mode,
                "files": sorted(plan.files) if plan.mode in ("copy", "link") else [],
                "settings": {target.settings: created}}
    if old is not None and isinstance(old["settings"].get(target.settings), dict):
        manifest["settings"] = dict(old["settings"])
    if old is None or canonical(old) != canonical(manifest):
        fsutil.write_atomic(target.manifest_path(), (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    if raw != after:
        fsutil.write_atomic(target.settings, after)
        out("  opencode loads plugins when a session starts: start a new one for the guard to apply.\n")
    return 0


def uninstall(args: argparse.Namespace) -> int:
    scope = _scope(args, "uninstall")
    if scope is None:
        return 64
    target = Target(scope)
    out = sys.stdout.write
    dry_run = bool(getattr(args, "dry_run", False))
    raw = _read(target.settings)
    if raw is not None and not _ours(raw):
        sys.stderr.write("engramory uninstall: %s is not engramory's plugin; left alone\n"
                         "engramory uninstall: nothing was changed.\n" % target.settings)
        return 1
    manifest = read_manifest(target.manifest_path())
    record = ((manifest or {}).get("settings") or {}).get(target.settings) or {}
    out("engramory uninstall --host opencode (%s scope%s)\n" % (target.scope, ", dry run: nothing is written" if dry_run else ""))
    out("  plugin: %s: %s\n" % (target.settings, ("would remove" if dry_run else "removed") if raw is not None else "not there"))
    dest = target.skill_dir
    action = "unlink" if os.path.islink(dest) else ("remove" if manifest is not None and os.path.isdir(dest) else
                                                    ("foreign" if os.path.isdir(dest) else ""))
    out(folder_action_line("bundle", action, dest, manifest, dry_run))
    if dry_run:
        return 0
    if raw is not None:
        os.unlink(target.settings)
    if action == "unlink":
        os.unlink(dest)
        try:
            os.unlink(target.link_manifest)
        except OSError:
            pass
    elif action == "remove" and manifest is not None:
        remove_listed(dest, [f for f in manifest["files"] if isinstance(f, str)] + [MANIFEST])
        prune_empty(dest)
        try:
            os.rmdir(dest)
        except OSError:
            out("  note: %s still holds files engramory did not install; left in place\n" % dest)
    for key, folder in (("created_plugins_dir", target.plugins), ("created_base", target.base)):
        if record.get(key):
            try:
                os.rmdir(folder)  # only when empty: install made it
            except OSError:
                pass
    return 0


def check(args: argparse.Namespace) -> int:
    scope = _scope(args, "install")
    return 64 if scope is None else run_check(Target(scope))


def run_check(target: Target) -> int:
    import subprocess
    import time

    out = sys.stdout.write
    out("engramory install --host opencode --check (%s scope): %s\n" % (target.scope, target.settings))
    problems: list[str] = []
    raw = _read(target.settings)
    if raw is None:
        problems.append("%s does not exist: the guard is not installed in this scope" % target.settings)
    elif not _ours(raw):
        problems.append("%s is not engramory's plugin" % target.settings)
    else:
        text = raw.decode("utf-8", "replace")
        try:
            exe = json.loads(text.split("const PYTHON = ", 1)[1].split(";", 1)[0])
            script = json.loads(text.split("const SCRIPT = ", 1)[1].split(";", 1)[0])
        except (IndexError, ValueError):
            exe = script = ""
        if not (isinstance(exe, str) and os.path.isabs(exe) and os.access(exe, os.X_OK)):
            problems.append("the interpreter %s does not exist or cannot run: the plugin lets every edit through" % (exe or "(none)"))
        elif not (isinstance(script, str) and os.path.isfile(script)):
            problems.append("the script %s does not exist: the guard is off (edits go through unchecked)" % script)
        else:
            problems.extend(bundle_problems(target.skill_dir, exe))
            question = {"event": "before", "tool": "read", "args": {}, "directory": target.project}
            started = time.monotonic()
            budget = TIMEOUT_MS / 1000.0
            try:
                proc = subprocess.run([exe, "-I", "-S", script], input=json.dumps(question).encode(), capture_output=True,
                                      timeout=budget)
                took = time.monotonic() - started
                if proc.returncode != 0 or proc.stdout.strip() != b"{}" or proc.stderr.strip():
                    problems.append("a smoke run exited %d and answered %r %s" % (
                        proc.returncode, proc.stdout[:80], proc.stderr.decode("utf-8", "replace").strip()[-300:]))
                else:
                    out("  ok: %s answers in %.2f s\n" % (SCRIPT, took))
            except subprocess.TimeoutExpired:
                problems.append("a smoke run did not answer within %.1f s: the plugin gives up then and lets the edit "
                                "through unchecked" % budget)
    for problem in problems:
        out("  problem: %s\n" % problem)
    if problems:
        out("  next step: run `%s -m engramory install --host opencode --scope %s` from the engramory checkout\n"
            % (sys.executable or "python3", target.scope))
        return 1
    out("  healthy: the plugin is in place and the guard answers\n")
    return 0

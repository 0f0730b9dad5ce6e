"""The installer every host whose guard is a plugin file of engramory's own uses (opencode,
Cline): the runtime copied to `<base>/engramory/`, and one plugin file written into the host's
plugins folder with the interpreter and the entry script's path in it. The plugin file is
engramory's alone: install writes it and uninstall deletes it (and the folders install made);
an existing file of that name that is not ours is refused. Each host installer module is a
`Spec` and three one-line functions.
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
    from collections.abc import Callable, Mapping


class Spec:
    def __init__(
        self, host: str, title: str, script: str, plugin: str, marker: str, template: str,
        base: Callable[[str, str, Mapping[str, str]], str], plugins_dir: str, timeout_ms: int, note: str,
        scope_help: str,
    ) -> None:
        self.host = host
        self.title = title
        self.script = script  # hooks/<script>, the Python side the plugin runs
        self.plugin = plugin  # the plugin file's name
        self.marker = marker  # its first line: how a file of ours is recognised
        self.template = template  # with "__PYTHON__" and "__SCRIPT__" to fill in
        self.base = base  # (scope, project, env) -> the host's config folder for that scope
        self.plugins_dir = plugins_dir  # under base
        self.timeout_ms = timeout_ms  # the plugin's own bound on each call
        self.note = note
        self.scope_help = scope_help


SCOPES = ("user", "project")



# The one bounded, fail-open call from a JavaScript plugin to the Python hook, shared by every
# plugin shim (opencode, Cline, OpenClaw): the Python child gets the question on stdin and has
# TIMEOUT_MS to answer; a crash, a timeout, a spawn failure or an unreadable answer is {}
# (no opinion), so a broken bundle or a hung guard never blocks or ends the host's run.
ASK_JS = r'''function ask(question) {
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
'''

def plugin_text(spec: Spec, interpreter: str, script: str) -> str:
    return spec.template.replace('"__PYTHON__"', json.dumps(interpreter)).replace('"__SCRIPT__"', json.dumps(script))


class Target:
    def __init__(self, spec: Spec, scope: str, cwd: str | None = None, env: Mapping[str, str] | None = None) -> None:
        environ = os.environ if env is None else env
        self.scope = scope
        self.project = os.path.abspath(cwd or os.getcwd())
        self.base = spec.base(scope, self.project, environ)
        self.plugins = os.path.join(self.base, spec.plugins_dir)
        self.settings = os.path.join(self.plugins, spec.plugin)
        self.skills = self.base
        self.skill_dir = os.path.join(self.base, "engramory")
        self.script = os.path.join(self.skill_dir, "hooks", spec.script)

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


def _ours(spec: Spec, raw: bytes | None) -> bool:
    return raw is not None and raw.startswith(spec.marker.encode())


def _scope(spec: Spec, args: argparse.Namespace, what: str) -> str | None:
    scope = getattr(args, "scope", None) or "user"
    if scope == "local":
        scope = "project"
    if scope not in SCOPES:
        sys.stderr.write("engramory %s: --scope %s is not a %s scope; %s\n" % (what, scope, spec.title, spec.scope_help))
        return None
    return scope


def install(spec: Spec, args: argparse.Namespace) -> int:
    scope = _scope(spec, args, "install")
    if scope is None:
        return 64
    target = Target(spec, scope)
    if getattr(args, "check", False):
        return run_check(spec, target)
    try:
        return _install(spec, target, bool(getattr(args, "dry_run", False)), bool(getattr(args, "link", False)))
    except SettingsError as exc:
        sys.stderr.write("engramory install: %s\nengramory install: nothing was changed.\n" % exc)
        return 1
    except OSError as exc:
        sys.stderr.write("engramory install: could not write %s: %s; check the permissions, then run this again\n"
                         % (exc.filename or target.base, exc.strerror or exc))
        return 1


def _install(spec: Spec, target: Target, dry_run: bool, link: bool) -> int:
    out = sys.stdout.write
    exe = sys.executable
    if not exe or not os.path.isabs(exe):
        raise SettingsError("cannot tell which Python runs this (sys.executable is %r); run the installer with an "
                            "absolute interpreter path" % (exe,))
    raw = _read(target.settings)
    if raw is not None and not _ours(spec, raw):
        raise SettingsError("%s exists and is not engramory's plugin; move it aside, then run this again" % target.settings)
    source = source_root()
    files, _ = bundle_files(source, required=["hooks/" + spec.script])
    files = [f for f in files if f.startswith(core.RUNTIME_DIRS) or f == "hooks/" + spec.script]
    plan = plan_skill(target, source, files, link)
    after = plugin_text(spec, exe, target.script).encode("utf-8")
    out("engramory install --host %s (%s scope%s)\n" % (spec.host, target.scope, ", dry run: nothing is written" if dry_run else ""))
    out("  bundle: %s -> %s\n" % (source, target.skill_dir))
    out("  plugin: %s: %s\n" % (target.settings, "unchanged" if raw == after else ("would write" if dry_run else "written")))
    if dry_run:
        return 0
    created = {"created_base": not os.path.isdir(target.base), "created_plugins_dir": not os.path.isdir(target.plugins)}
    apply_skill(plan, target, source)
    old = read_manifest(target.manifest_path())
    manifest = {"installer": "engramory", "host": spec.host, "version": __version__, "mode": plan.mode,
                "files": sorted(plan.files) if plan.mode in ("copy", "link") else [],
                "settings": {target.settings: created}}
    if old is not None and isinstance(old["settings"].get(target.settings), dict):
        manifest["settings"] = dict(old["settings"])
    if old is None or canonical(old) != canonical(manifest):
        fsutil.write_atomic(target.manifest_path(), (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    if raw != after:
        fsutil.write_atomic(target.settings, after)
        out("  " + spec.note + "\n")
    return 0


def uninstall(spec: Spec, args: argparse.Namespace) -> int:
    scope = _scope(spec, args, "uninstall")
    if scope is None:
        return 64
    target = Target(spec, scope)
    out = sys.stdout.write
    dry_run = bool(getattr(args, "dry_run", False))
    raw = _read(target.settings)
    if raw is not None and not _ours(spec, raw):
        sys.stderr.write("engramory uninstall: %s is not engramory's plugin; left alone\n"
                         "engramory uninstall: nothing was changed.\n" % target.settings)
        return 1
    manifest = read_manifest(target.manifest_path())
    record = ((manifest or {}).get("settings") or {}).get(target.settings) or {}
    out("engramory uninstall --host %s (%s scope%s)\n" % (spec.host, target.scope, ", dry run: nothing is written" if dry_run else ""))
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


def check(spec: Spec, args: argparse.Namespace) -> int:
    scope = _scope(spec, args, "install")
    return 64 if scope is None else run_check(spec, Target(spec, scope))


def run_check(spec: Spec, target: Target) -> int:
    import subprocess
    import time

    out = sys.stdout.write
    out("engramory install --host %s --check (%s scope): %s\n" % (spec.host, target.scope, target.settings))
    problems: list[str] = []
    raw = _read(target.settings)
    if raw is None:
        problems.append("%s does not exist: the guard is not installed in this scope" % target.settings)
    elif not _ours(spec, raw):
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
            budget = spec.timeout_ms / 1000.0
            try:
                proc = subprocess.run([exe, "-I", "-S", script], input=json.dumps(question).encode(), capture_output=True,
                                      timeout=budget)
                took = time.monotonic() - started
                if proc.returncode != 0 or proc.stdout.strip() != b"{}" or proc.stderr.strip():
                    problems.append("a smoke run exited %d and answered %r %s" % (
                        proc.returncode, proc.stdout[:80], proc.stderr.decode("utf-8", "replace").strip()[-300:]))
                else:
                    out("  ok: %s answers in %.2f s\n" % (spec.script, took))
            except subprocess.TimeoutExpired:
                problems.append("a smoke run did not answer within %.1f s: the plugin gives up then and lets the edit "
                                "through unchecked" % budget)
    for problem in problems:
        out("  problem: %s\n" % problem)
    if problems:
        out("  next step: run `%s -m engramory install --host %s --scope %s` from the engramory checkout\n"
            % (sys.executable or "python3", spec.host, target.scope))
        return 1
    out("  healthy: the plugin is in place and the guard answers\n")
    return 0

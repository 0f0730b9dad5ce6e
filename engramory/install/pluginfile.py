"""The installer every host whose guard is a plugin file of engramory's own uses (opencode,
Kilo, Cline): the runtime copied to `<base>/engramory/`, and one plugin file written into the
host's plugins folder with the interpreter and the entry script's path in it (the generic
entry, `hooks/engramory_hook.py`, which the plugin runs with the host's name after it). The
plugin file is engramory's alone: install writes it and uninstall deletes it (and the folders
install made); an existing file of that name that is not ours is refused. A plugin an install
from before the generic entry wrote (running the host's own script, a shim now) is still ours:
--check passes it with a note, install replaces it. Each host installer module is a `Spec` and
three one-line functions.
"""

from __future__ import annotations

import json
import os
import sys

from engramory import fsutil
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
)
from engramory.install.hookcommands import LAUNCHER
from engramory.install.settings import SettingsError
from engramory.install.smoke import bundle_problems
from engramory.install.steps import (
    earlier_note,
    finish_problems,
    header,
    interpreter,
    reinstall_step,
    run_verb,
    scope_of,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any


class Spec:
    def __init__(
        self, host: str, title: str, legacy_script: str, plugin: str, marker: str, template: str,
        base: Callable[[str, str, Mapping[str, str]], str], plugins_dir: str, timeout_ms: int, note: str,
        scopes: Sequence[tuple[str, str]],
        prove: Callable[[Target, Callable[[str], Any]], list[str]] | None = None,
    ) -> None:
        self.host = host
        self.title = title
        self.script = ENTRY  # hooks/<script>, the Python side the plugin runs (with HOST after it)
        # hooks/<legacy_script>: what the plugin of an install from before the generic entry
        # runs (a shim, still shipped); such a plugin stays ours (see `form`)
        self.legacy_script = legacy_script
        self.plugin = plugin  # the plugin file's name
        self.marker = marker  # its first line: how a file of ours is recognised
        self.template = template  # with "__PYTHON__" and "__SCRIPT__" to fill in
        self.base = base  # (scope, project, env) -> the host's config folder for that scope
        self.plugins_dir = plugins_dir  # under base
        self.timeout_ms = timeout_ms  # the plugin's own bound on each call
        self.note = note
        self.scopes = tuple(scopes)  # (scope, where it installs), for the --scope usage error
        # (target, out) -> problems: --check's proof that the host itself can load the plugin
        # file, for a host that skips a plugin it cannot load without a word (Kilo)
        self.prove = prove


# The generic entry every plugin spawns, `hooks/engramory_hook.py <host>`: the plugin file
# names the host in `const HOST` (HOST_LINE) and passes it after the script, as the settings
# hosts' commands do (issue 20). Plugins written before it ran the host's own entry script with
# nothing after it (LEGACY_SPAWN, no HOST line): those scripts stay as shims.
ENTRY = "engramory_hook.py"
SPAWN = '["-I", "-S", "-c", LAUNCHER, SCRIPT, HOST]'
LEGACY_SPAWN = '["-I", "-S", "-c", LAUNCHER, SCRIPT]'
HOST_LINE = "const HOST = %s;\n"  # % json.dumps(host), after `const SCRIPT = ...;` in every template

# The one bounded, fail-open call from a JavaScript plugin to the Python hook, shared by every
# plugin (opencode, Kilo, Cline, OpenClaw): the Python child gets the question on stdin and has
# TIMEOUT_MS to answer; a crash, a timeout, a spawn failure or an unreadable answer is {}
# (no opinion), so a broken bundle or a hung guard never blocks or ends the host's run. The
# child runs the entry script through the launcher the settings hosts use (engramory.install.
# hookcommands.LAUNCHER): imported, the script runs from its cached bytecode, where `python3
# SCRIPT` compiled its source on every call (2.7% of a bare interpreter start in instructions,
# measured with callgrind); a missing script is still no answer, hence {}.
ASK_JS = ("const LAUNCHER = %s;\n" % json.dumps(LAUNCHER)) + r'''function ask(question) {
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
      child = spawn(PYTHON, ''' + SPAWN + r''', { stdio: ["pipe", "pipe", "ignore"] });
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
    return fill(spec.template, interpreter, script)


def fill(template: str, interpreter: str, script: str) -> str:
    """A plugin template with its interpreter and its entry script's path written in."""
    return template.replace('"__PYTHON__"', json.dumps(interpreter)).replace('"__SCRIPT__"', json.dumps(script))


def legacy_text(text: str, host: str) -> str:
    """The plugin an install from before the generic entry wrote, from today's `text` for `host`
    filled in with that install's script: the same file without the HOST line, spawning the
    script with nothing after it."""
    return text.replace(HOST_LINE % json.dumps(host), "", 1).replace(SPAWN, LEGACY_SPAWN, 1)


def form(text: str, current: Callable[[str, str], str], host: str, legacy_script: str) -> str:
    """What a plugin file of ours is: CURRENT (the file this engramory writes, for the
    interpreter and script it names), EARLIER (the one the install before the generic entry
    wrote, running hooks/<legacy_script>: it still guards, a reinstall moves it on), or OTHER
    (an older or edited copy). `current(interpreter, script)` renders today's file."""
    exe, script = plugin_consts(text)
    if not (isinstance(exe, str) and isinstance(script, str)):
        return OTHER
    if text == current(exe, script):
        return CURRENT
    if script.replace("\\", "/").endswith("/hooks/" + legacy_script) and text == legacy_text(current(exe, script), host):
        return EARLIER
    return OTHER


CURRENT, EARLIER, OTHER = "current", "earlier", "other"


class Target(Place):
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


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(1 << 20)
    except FileNotFoundError:
        return None


def _ours(spec: Spec, raw: bytes | None) -> bool:
    return raw is not None and raw.startswith(spec.marker.encode())


def _target(spec: Spec, args: argparse.Namespace, verb: str) -> Target | None:
    scope = getattr(args, "scope", None) or "user"
    scope = scope_of(args, verb, spec.title, spec.scopes, "project" if scope == "local" else scope)
    return None if scope is None else Target(spec, scope)


def install(spec: Spec, args: argparse.Namespace) -> int:
    target = _target(spec, args, "install")
    if target is None:
        return 64
    if getattr(args, "check", False):
        return run_check(spec, target)
    return run_verb("install", lambda: _install(spec, target, bool(getattr(args, "dry_run", False)),
                                                bool(getattr(args, "link", False))), target.base)


def _install(spec: Spec, target: Target, dry_run: bool, link: bool) -> int:
    out = sys.stdout.write
    exe = interpreter(None, spec.host)
    raw = _read(target.settings)
    if raw is not None and not _ours(spec, raw):
        raise SettingsError("%s exists and is not engramory's plugin; move it aside, then run this again" % target.settings)
    source = source_root()
    files, _ = runtime_files(source, [spec.script])
    plan = plan_skill(target, source, files, link)
    after = plugin_text(spec, exe, target.script).encode("utf-8")
    out(header("install", spec.host, target.scope, dry_run))
    out("  bundle: %s -> %s\n" % (source, target.skill_dir))
    out("  plugin: %s: %s\n" % (target.settings, "unchanged" if raw == after else ("would write" if dry_run else "written")))
    if dry_run:
        return 0
    created = {"created_base": not os.path.isdir(target.base), "created_plugins_dir": not os.path.isdir(target.plugins)}
    old = read_manifest(target.manifest_path())
    apply_skill(plan, target, source)
    record_install(target.manifest_path(), spec.host, plan, target.settings, created, old)
    if raw != after:
        fsutil.write_atomic(target.settings, after)
        out("  " + spec.note + "\n")
    return 0


def uninstall(spec: Spec, args: argparse.Namespace) -> int:
    target = _target(spec, args, "uninstall")
    if target is None:
        return 64
    return run_verb("uninstall", lambda: _uninstall(spec, target, bool(getattr(args, "dry_run", False))), target.base)


def _uninstall(spec: Spec, target: Target, dry_run: bool) -> int:
    out = sys.stdout.write
    raw = _read(target.settings)
    if raw is not None and not _ours(spec, raw):
        raise SettingsError("%s is not engramory's plugin; left alone" % target.settings)
    mpath = target.manifest_path()
    manifest = read_manifest(mpath)
    record = ((manifest or {}).get("settings") or {}).get(target.settings) or {}
    out(header("uninstall", spec.host, target.scope, dry_run))
    out("  plugin: %s: %s\n" % (target.settings, ("would remove" if dry_run else "removed") if raw is not None else "not there"))
    dest = target.skill_dir
    action = bundle_action(dest, manifest)
    out(folder_action_line("bundle", action, dest, manifest, dry_run))
    if dry_run:
        return 0
    if raw is not None:
        os.unlink(target.settings)
    out(take_out_bundle(dest, action, manifest, mpath, target.link_manifest))
    remove_made_dirs(folder for key, folder in (("created_plugins_dir", target.plugins), ("created_base", target.base))
                     if record.get(key))  # only when empty: install made them
    return 0


def check(spec: Spec, args: argparse.Namespace) -> int:
    target = _target(spec, args, "install")
    return 64 if target is None else run_check(spec, target)


def verbs(spec: Spec) -> tuple[Callable[[argparse.Namespace], int], ...]:
    """The registry's INSTALLER contract for `spec`'s host: (install, uninstall, check)."""
    return (lambda args: install(spec, args), lambda args: uninstall(spec, args), lambda args: check(spec, args))


def plugin_consts(text: str) -> tuple[Any, Any]:
    """The interpreter and the script a plugin file names (`const PYTHON = ...;`), or ("", "")."""
    try:
        exe = json.loads(text.split("const PYTHON = ", 1)[1].split(";", 1)[0])
        script = json.loads(text.split("const SCRIPT = ", 1)[1].split(";", 1)[0])
    except (IndexError, ValueError):
        return "", ""
    return exe, script


def plugin_args(text: str) -> list[str]:
    """What a plugin file passes after its script: [HOST] for one that spawns the generic entry
    with `const HOST = ...;`, [] for one written before it (or one it cannot read)."""
    if SPAWN not in text:
        return []
    try:
        host = json.loads(text.split("\nconst HOST = ", 1)[1].split(";", 1)[0])
    except (IndexError, ValueError):
        return []
    return [host] if isinstance(host, str) else []


def smoke_plugin(text: str, bundle_dir: str, question: Mapping[str, Any], budget: float, name: str,
                 out: Callable[[str], Any]) -> list[str]:
    """Problems that keep the plugin in `text` from guarding: its interpreter or script is
    missing, the bundle is damaged, or its Python side does not answer `question` with `{}`
    and exit 0 within `budget` seconds (the plugin's own bound); "ok" goes to `out`."""
    import subprocess
    import time

    exe, script = plugin_consts(text)
    if not (isinstance(exe, str) and os.path.isabs(exe) and os.access(exe, os.X_OK)):
        return ["the interpreter %s does not exist or cannot run: the plugin lets every edit through" % (exe or "(none)")]
    if not (isinstance(script, str) and os.path.isfile(script)):
        return ["the script %s does not exist: the guard is off (edits go through unchecked)" % script]
    problems = bundle_problems(bundle_dir, exe)
    started = time.monotonic()
    try:
        proc = subprocess.run([exe, "-I", "-S", "-c", LAUNCHER, script, *plugin_args(text)],
                              input=json.dumps(question).encode(), capture_output=True, timeout=budget)
    except subprocess.TimeoutExpired:
        return problems + ["a smoke run did not answer within %.1f s: the plugin gives up then and lets the edit "
                           "through unchecked" % budget]
    took = time.monotonic() - started
    if proc.returncode != 0 or proc.stdout.strip() != b"{}" or proc.stderr.strip():
        problems.append("a smoke run exited %d and answered %r %s" % (
            proc.returncode, proc.stdout[:80], proc.stderr.decode("utf-8", "replace").strip()[-300:]))
    else:
        out("  ok: %s answers in %.2f s\n" % (name, took))
    return problems


def run_check(spec: Spec, target: Target) -> int:
    out = sys.stdout.write
    out("engramory install --host %s --check (%s scope): %s\n" % (spec.host, target.scope, target.settings))
    problems: list[str] = []
    raw = _read(target.settings)
    if raw is None:
        problems.append("%s does not exist: the guard is not installed in this scope" % target.settings)
    elif not _ours(spec, raw):
        problems.append("%s is not engramory's plugin" % target.settings)
    else:
        question = {"event": "before", "tool": "read", "args": {}, "directory": target.project}
        problems.extend(smoke_plugin(raw.decode("utf-8", "replace"), target.skill_dir, question,
                                     spec.timeout_ms / 1000.0, spec.script, out))
        if spec.prove is not None and not problems:
            problems.extend(spec.prove(target, out))
        found = form(raw.decode("utf-8", "replace"), lambda exe, script: plugin_text(spec, exe, script), spec.host,
                     spec.legacy_script)
        if found == EARLIER:
            out("  note: %s\n" % earlier_note(target.settings, spec.legacy_script, spec.host))
        elif found == OTHER:
            problems.append("%s is not the plugin this engramory writes (an older or edited copy): an older one "
                            "does not tell the guard what `read` showed, so a stale write is not refused"
                            % target.settings)
    return finish_problems(problems, reinstall_step(spec.host, target.scope),
                           "the plugin is in place and the guard answers")

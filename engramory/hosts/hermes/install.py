"""`engramory install --host hermes` / `engramory uninstall --host hermes`: put the index
guard plugin into Hermes Agent and enable it; take out exactly that.

Where things go (the Hermes home is $HERMES_HOME when set, else ~/.hermes):
- `<home>/plugins/engramory/`: the plugin (plugin.yaml, __init__.py), a copy of the
  engramory package beside it, and the shell hook under hooks/ (the generic entry, run as
  `engramory_hook.py hermes`, and the shim earlier `hooks:` entries name), with a manifest of
  the files copied. A copy, not a pointer to this checkout: Hermes imports the plugin in its
  own Python, and the copy keeps working if the checkout moves or goes.
- `<home>/config.yaml`: `engramory` added to `plugins.enabled` (Hermes loads no plugin that
  is not listed there) and taken out of `plugins.disabled` (which would win).

config.yaml is the user's YAML: the edit is one minimal line edit, shown as a diff (--dry-run)
or backed up and replaced atomically, and refused, untouched, for any shape it does not fully
understand (engramory.hosts.hermes.configyaml); a second install changes nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys

from engramory import __version__, fsutil
from engramory.hosts.hermes.configyaml import (
    BOM,
    PLUGIN,
    ConfigText,
    check_with_yaml,
    disable_text,
    enable_text,
)
from engramory.hosts.hermes.shellcheck import (
    LEGACY_SHELL_HOOK,
    SHELL_HOOK,
    check_wired_shell_hooks,
    culprits,
    shell_hook_command,
    shell_hook_yaml,
    smoke_env,
    smoke_shell_hook,
)
from engramory.install.bundle import (
    MANIFEST,
    prune_empty,
    read_manifest,
    remove_listed,
    safe_rel,
    source_root,
    take_out_bundle,
)
from engramory.install.settings import Change, SettingsError, apply_change, read_regular, unified_diff
from engramory.install.smoke import Report, modules_of
from engramory.install.steps import apply_or_delete, run_verb

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping
    from typing import Any

HOST = "hermes"
PLUGIN_SOURCE = "hermes/engramory"  # in the bundle: plugin.yaml and __init__.py
RESTART = "Hermes loads plugins when a session starts: start a new session (`hermes plugins list` shows it enabled)."


def hermes_home(env: Mapping[str, str] | None = None) -> str:
    environ = os.environ if env is None else env
    home = environ.get("HERMES_HOME", "").strip()
    if home:
        return os.path.abspath(os.path.expanduser(home))
    if sys.platform == "win32":
        local = environ.get("LOCALAPPDATA", "").strip()
        return os.path.join(local, "hermes") if local else os.path.expanduser("~/AppData/Local/hermes")
    return os.path.expanduser("~/.hermes")


class Target:
    def __init__(self, home: str) -> None:
        self.home = home
        self.config = os.path.join(home, "config.yaml")
        self.plugin_dir = os.path.join(home, "plugins", PLUGIN)
        self.manifest = os.path.join(self.plugin_dir, MANIFEST)


# -- the plugin folder ---------------------------------------------------------------------------


def plugin_files(source: str) -> list[tuple[str, str]]:
    """(source path, path inside the plugin folder) for everything the plugin needs."""
    out: list[tuple[str, str]] = []
    for name in ("plugin.yaml", "__init__.py"):
        out.append((os.path.join(source, PLUGIN_SOURCE, name), name))
    package = os.path.join(source, "engramory")
    for folder, dirs, names in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for n in sorted(names):
            if n.endswith(".py") or n == "py.typed":
                full = os.path.join(folder, n)
                out.append((full, os.path.relpath(full, source).replace(os.sep, "/")))
    for hook in (SHELL_HOOK, LEGACY_SHELL_HOOK):
        out.append((os.path.join(source, hook), hook))
    return out


def _read(path: str) -> bytes | None:
    """Stat first, regular files only, bounded (installer.read_regular): None when missing."""
    return read_regular(path)


def _plan_files(target: Target, files: list[tuple[str, str]]) -> tuple[list[str], list[str], list[str]]:
    """(new, updated, stale) relative paths; raises when the folder is not ours."""
    manifest = read_manifest(target.manifest)
    if os.path.lexists(target.plugin_dir):
        if os.path.islink(target.plugin_dir) or not os.path.isdir(target.plugin_dir):
            raise SettingsError("%s exists and is not a folder engramory installed; move it away, then run this again" % target.plugin_dir)
        if manifest is None and os.listdir(target.plugin_dir):
            raise SettingsError(
                "%s exists but was not installed by engramory (no %s in it); move it away, then run this again"
                % (target.plugin_dir, MANIFEST)
            )
    new, updated = [], []
    for src, rel in files:
        have = _read(os.path.join(target.plugin_dir, rel))
        if have is None:
            new.append(rel)
        elif have != _read(src):
            updated.append(rel)
    wanted = {rel for _, rel in files}
    stale = [f for f in (manifest or {}).get("files", []) if isinstance(f, str) and f not in wanted and safe_rel(f)]
    return new, updated, stale


# -- install / uninstall ------------------------------------------------------------------------


def _usage(args: argparse.Namespace, what: str) -> int | None:
    if (getattr(args, "scope", "user") or "user") != "user":
        sys.stderr.write(
            "engramory %s: --scope %s does not apply to Hermes: a plugin lives in the Hermes home "
            "(set HERMES_HOME to choose another)\n" % (what, args.scope)
        )
        return 64
    if getattr(args, "link", False):
        sys.stderr.write("engramory %s: --link is not available for --host hermes; the plugin is always a copy\n" % what)
        return 64
    return None


def install(args: argparse.Namespace) -> int:
    """`engramory install --host hermes`: 0 done, 1 refused (nothing changed), 64 usage."""
    bad = _usage(args, "install")
    if bad is not None:
        return bad
    target = Target(hermes_home())
    if getattr(args, "check", False):
        return run_check(target, as_json=bool(getattr(args, "json", False)))
    return run_verb("install", lambda: _install(target, bool(getattr(args, "dry_run", False))), target.home)


def _config_change(target: Target, enable: bool, drop_empty: bool = False) -> tuple[Change, list[str]]:
    raw = _read(target.config) if not os.path.isdir(target.config) else None
    if os.path.isdir(target.config):
        raise SettingsError("%s is a folder, not a file; move it away, then run this again" % target.config)
    cfg = ConfigText(target.config, raw)
    report = enable_text(cfg) if enable else disable_text(cfg, drop_empty=drop_empty)
    after = cfg.render() if report else raw
    if report:
        assert after is not None
        check_with_yaml(raw, after, target.config, PLUGIN, enable)
    return Change(target.config, raw, after), report


def _print_plan(target: Target, files: list[tuple[str, str]], plan: tuple[list[str], list[str], list[str]],
                report: list[str], dry_run: bool) -> None:
    out = sys.stdout.write
    new, updated, stale = plan
    out("engramory install --host hermes (%s%s)\n" % (target.home, ", dry run: nothing is written" if dry_run else ""))
    out("  plugin: %s %d files to %s (%d new, %d updated, %d unchanged)\n" % (
        "would copy" if dry_run else "copied", len(new) + len(updated), target.plugin_dir,
        len(new), len(updated), len(files) - len(new) - len(updated)))
    for rel in stale:
        out("    - %s (no longer in the bundle: %s)\n" % (rel, "would remove" if dry_run else "removed"))
    out("  config: %s\n" % target.config)
    for line in report or ["%s is already in plugins.enabled" % PLUGIN]:
        out("    %s\n" % line)
    out("  shell hook, for a `hooks:` entry instead of the plugin (PORTING.md, Hermes), in config.yaml:\n")
    for line in shell_hook_yaml(shell_hook_command(target.plugin_dir, sys.executable)):
        out("    %s\n" % line)
    if shutil.which("hermes") is None:
        out("  note: no `hermes` command on PATH; the plugin takes effect in sessions of the Hermes "
            "that uses %s\n" % target.home)
    if os.environ.get("HERMES_SAFE_MODE", "").strip().lower() in ("1", "true", "yes"):
        out("  note: HERMES_SAFE_MODE is set: Hermes loads no plugin while it is\n")


def _write_plugin(target: Target, files: list[tuple[str, str]], plan: tuple[list[str], list[str], list[str]],
                  old_manifest: dict[str, Any] | None) -> None:
    """The manifest first (it claims every file about to be written), then the files."""
    new, updated, stale = plan
    claim: dict[str, Any] = {"installer": "engramory", "host": HOST, "version": __version__,
             "files": sorted({rel for _, rel in files} | set((old_manifest or {}).get("files", [])))}
    claim["config"] = (old_manifest or {}).get("config") or {}
    fsutil.write_atomic(target.manifest, (json.dumps(claim, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    for src, rel in files:
        if rel in new or rel in updated:
            with open(src, "rb") as f:
                data = f.read()
            fsutil.write_atomic(os.path.join(target.plugin_dir, rel), data, mode=os.stat(src).st_mode & 0o777)
    remove_listed(target.plugin_dir, stale)
    prune_empty(target.plugin_dir)


def _install(target: Target, dry_run: bool) -> int:
    out = sys.stdout.write
    source = source_root()
    files = plugin_files(source)
    missing = [src for src, _ in files if not os.path.isfile(src)]
    if missing:
        raise SettingsError("%s is missing from this bundle: it cannot install the Hermes plugin" % missing[0])
    plan = _plan_files(target, files)
    new, updated, stale = plan
    old_manifest = read_manifest(target.manifest)
    change, report = _config_change(target, enable=True)
    _print_plan(target, files, plan, report, dry_run)
    if dry_run:
        diff = unified_diff(target.config, change.before, change.after)
        out(diff if diff else "  config: no change\n")
        return 0

    # The plugin's files and manifest first, config.yaml last: Hermes never sees the plugin
    # enabled before its files are all there.
    if new or updated or stale or old_manifest is None:
        _write_plugin(target, files, plan, old_manifest)
    _record(target, files, old_manifest, change)
    saved = apply_change(change)
    if saved:
        out("  backup of the previous config.yaml: %s\n" % saved)
    if change.changed or new or updated:
        out("  " + RESTART + "\n")
    else:
        out("  already installed: nothing changed.\n")
    return 0


def _record(target: Target, files: list[tuple[str, str]], old: dict[str, Any] | None, change: Change) -> None:
    config = dict((old or {}).get("config") or {})
    if change.changed and "created_file" not in config:
        config["created_file"] = change.before is None
        before = ConfigText(target.config, change.before)
        config["created_plugins"] = before.top_key("plugins") is None
    manifest = {"installer": "engramory", "host": HOST, "version": __version__,
                "files": sorted(rel for _, rel in files), "config": config}
    current = read_manifest(target.manifest)
    if current is not None and json.dumps(current, sort_keys=True) == json.dumps(manifest, sort_keys=True):
        return  # a no-op install writes nothing
    fsutil.write_atomic(target.manifest, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def uninstall(args: argparse.Namespace) -> int:
    """`engramory uninstall --host hermes`: 0 done, 1 refused (nothing changed), 64 usage."""
    bad = _usage(args, "uninstall")
    if bad is not None:
        return bad
    target = Target(hermes_home())
    return run_verb("uninstall", lambda: _uninstall(target, bool(getattr(args, "dry_run", False))), target.home)


def _uninstall(target: Target, dry_run: bool) -> int:
    out = sys.stdout.write
    manifest = read_manifest(target.manifest)
    record = (manifest or {}).get("config") or {}
    change, report = _config_change(target, enable=False, drop_empty=bool(record.get("created_plugins")))
    if change.after is not None and record.get("created_file") and not change.after.strip(BOM + b" \r\n"):
        change.after = None  # install created the file and nothing else is in it now
    verb = "would remove" if dry_run else "removed"
    out("engramory uninstall --host hermes (%s%s)\n" % (target.home, ", dry run: nothing is written" if dry_run else ""))
    out("  config: %s: %s\n" % (target.config, "; ".join(report) if report else "%s is not in plugins.enabled" % PLUGIN))
    if manifest is not None:
        out("  plugin: %s %s (%d files)\n" % (verb, target.plugin_dir, len(manifest["files"])))
    elif os.path.isdir(target.plugin_dir):
        out("  plugin: %s was not installed by engramory; left alone\n" % target.plugin_dir)
    else:
        out("  plugin: nothing installed at %s\n" % target.plugin_dir)
    if dry_run:
        diff = unified_diff(target.config, change.before, change.after)
        if diff:
            out(diff)
        return 0
    # config.yaml first: Hermes never finds the plugin enabled while its files are gone.
    saved = apply_or_delete(change)
    if manifest is not None:
        out(take_out_bundle(target.plugin_dir, "remove", manifest, target.manifest, target.manifest))
    if saved:
        out("  backup of the previous config.yaml: %s\n" % saved)
    return 0


# -- install --check ------------------------------------------------------------------------

# Run with Hermes's own Python: import the plugin the way hermes_cli.plugins does (as
# `hermes_plugins.<slug>` from its folder), call its register(ctx) with a stand-in context that
# records the hooks, import every module of the package the plugin put on sys.path, then feed
# each pre_tool_call callback a write_file of a 400-line MEMORY.md and print what it answered.
_PLUGIN_SMOKE = r"""
import importlib, importlib.util, json, os, sys, types
plugin_dir, index, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
out = {"hooks": [], "bad": [], "answers": [], "error": None, "package": None}
try:
    if "hermes_plugins" not in sys.modules:
        ns = types.ModuleType("hermes_plugins")
        ns.__path__ = []
        sys.modules["hermes_plugins"] = ns
    name = "hermes_plugins.engramory"
    spec = importlib.util.spec_from_file_location(name, os.path.join(plugin_dir, "__init__.py"),
                                                  submodule_search_locations=[plugin_dir])
    module = importlib.util.module_from_spec(spec)
    module.__package__ = name
    module.__path__ = [plugin_dir]
    sys.modules[name] = module
    spec.loader.exec_module(module)
    hooks = {}
    class Ctx:
        def register_hook(self, hook, fn):
            hooks.setdefault(hook, []).append(fn)
        def __getattr__(self, attr):
            return lambda *a, **k: None
    module.register(Ctx())
    out["hooks"] = sorted(hooks)
    for m in modules:
        try:
            importlib.import_module(m)
        except BaseException as exc:
            out["bad"].append("%s: %r" % (m, exc))
    pkg = sys.modules.get("engramory")
    out["package"] = getattr(pkg, "__file__", None)
    out["foreign"] = sorted(n for n, m in list(sys.modules.items()) if (n == "engramory" or n.startswith("engramory."))
                            and not os.path.realpath(getattr(m, "__file__", None) or plugin_dir).startswith(
                                os.path.realpath(plugin_dir) + os.sep))
    body = "".join("- [note %d](note-%d.md) %s\n" % (i, i, "x" * 60) for i in range(400))
    for fn in hooks.get("pre_tool_call", []):
        answer = fn(tool_name="write_file", args={"path": index, "content": body}, task_id="engramory-check",
                    tool_call_id="engramory-check", session_id="engramory-check")
        out["answers"].append(answer if isinstance(answer, (dict, type(None))) else repr(answer))
except BaseException as exc:
    out["error"] = repr(exc)
print(json.dumps(out, default=repr))
"""
_PIP_EXEC = re.compile(r"""^'''exec' "([^"]+)" """)


def _shebang_python(script: str) -> str | None:
    """The Python a pip-made console script (`hermes`) runs with: its `#!` line, or the
    `exec` line pip writes when that path holds a space."""
    try:
        head = read_regular(script, limit=1 << 16)
    except SettingsError:
        return None
    if not head or not head.startswith(b"#!"):
        return None
    lines = head.decode("utf-8", "replace").splitlines()
    first = lines[0][2:].strip()
    if first and " " not in first and "python" in os.path.basename(first):
        return first
    m = _PIP_EXEC.match(lines[1] if len(lines) > 1 else "")
    return m.group(1) if m else None


def hermes_python(env: Mapping[str, str] | None = None) -> tuple[str | None, str]:
    """(Hermes's Python, where it was found): $ENGRAMORY_HERMES_PYTHON, else the interpreter
    of the `hermes` command on PATH. (None, why) when neither is known."""

    environ = os.environ if env is None else env
    configured = environ.get("ENGRAMORY_HERMES_PYTHON", "").strip()
    if configured:
        if os.path.isfile(configured) and os.access(configured, os.X_OK):
            return configured, "ENGRAMORY_HERMES_PYTHON"
        return None, "ENGRAMORY_HERMES_PYTHON=%s is not a Python that can run" % configured
    command = shutil.which("hermes", path=environ.get("PATH"))
    if command is None:
        return None, "no `hermes` command on PATH"
    python = _shebang_python(command)
    if python and os.path.isfile(python) and os.access(python, os.X_OK):
        return python, "the `hermes` command (%s)" % command
    return None, "the `hermes` command (%s) does not name a Python this can run" % command


def _smoke_plugin(target: Target, python: str, modules: list[str], environ: Mapping[str, str], report: Any) -> None:
    import subprocess
    import tempfile

    fix = "run `engramory install --host hermes` again (it copies the whole plugin), then start a new Hermes session"
    with tempfile.TemporaryDirectory(prefix="engramory-check-") as tmp:
        index = os.path.join(tmp, "MEMORY.md")
        try:
            proc = subprocess.run([python, "-c", _PLUGIN_SMOKE, target.plugin_dir, index, *modules],
                                  capture_output=True, timeout=60, env=smoke_env(target, environ, tmp), cwd=tmp)
        except (OSError, subprocess.SubprocessError) as exc:
            report.problem("could not run Hermes's Python %s to load the plugin: %s" % (python, exc),
                           "set ENGRAMORY_HERMES_PYTHON to the Python of the Hermes venv, then run this again")
            return
    lines = proc.stdout.decode("utf-8", "replace").strip().splitlines()
    err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    try:
        got = json.loads(lines[-1]) if lines else None
    except ValueError:
        got = None
    if not isinstance(got, dict):
        report.problem("loading the plugin with %s failed (exit %d%s)"
                       % (python, proc.returncode, ": " + err[-1][:200] if err else ""), fix)
        return
    if got.get("error"):
        report.problem("Hermes could not load the plugin (%s): Hermes lists it with that error and every "
                       "tool runs unguarded" % str(got["error"])[:300], fix)
        return
    for line in got.get("bad") or []:
        report.problem("%s does not import with Hermes's Python: the guard would allow every write" % str(line)[:300], fix)
    package = got.get("package")
    if isinstance(package, str) and not os.path.realpath(package).startswith(os.path.realpath(target.plugin_dir) + os.sep):
        report.note("the plugin runs the engramory package at %s, not its own copy" % package)
    foreign = [str(n) for n in got.get("foreign") or []]
    if foreign:
        report.note("%d engramory module%s came from outside the plugin's copy (another engramory installed in "
                    "that Python: %s)" % (len(foreign), "" if len(foreign) == 1 else "s", ", ".join(foreign[:5])))
    if "pre_tool_call" not in (got.get("hooks") or []):
        report.problem("the plugin's register() set no pre_tool_call hook: nothing judges write_file or patch", fix)
        return
    answers = got.get("answers") or []
    if not any(isinstance(a, dict) and a.get("action") == "block" for a in answers):
        report.problem(
            "a smoke run shows the guard would not act: the plugin's pre_tool_call allowed a write_file of a "
            "400-line MEMORY.md (answer %r%s%s)" % (answers[0] if answers else None,
                                                    "; stderr: " + err[-1][:200] if err else "", culprits(environ)),
            "fix what the lines above name (unset the ENGRAMORY_* variables named), or " + fix)
        return
    report.ok("the plugin loads with %s and its pre_tool_call blocked a smoke write_file of a 400-line MEMORY.md" % python)


def run_check(target: Target, env: Mapping[str, str] | None = None, as_json: bool = False) -> int:
    """`engramory install --host hermes --check`: is the guard really on in Hermes? The
    plugin's files are there; it is enabled (and not disabled, and no safe mode); its package
    imports with Hermes's own Python the way Hermes imports a plugin; a smoke write_file of a
    400-line MEMORY.md fed to its pre_tool_call is blocked; and the shell-hook copy blocks
    the same under `python3 -I -S`. 0 healthy, 1 a problem (each with its fix). Changes
    nothing."""

    environ = os.environ if env is None else env
    report = Report("engramory install --host hermes --check (%s)" % target.home)
    reinstall = "run `engramory install --host hermes`, then start a new Hermes session"
    manifest = read_manifest(target.manifest)
    files: list[str] = []
    if manifest is None:
        report.problem("no engramory plugin in %s" % target.plugin_dir, reinstall)
    else:
        files = [f for f in manifest["files"] if isinstance(f, str) and safe_rel(f)]
        gone = [f for f in files if not os.path.isfile(os.path.join(target.plugin_dir, f))]
        if gone:
            report.problem("%d plugin files are missing (%s)" % (len(gone), ", ".join(gone[:3])), reinstall)
        else:
            report.ok("plugin files: all %d in %s" % (len(files), target.plugin_dir))
    try:
        cfg = ConfigText(target.config, _read(target.config))
        todo = enable_text(cfg)
        if todo:
            report.problem("%s is not enabled in %s (to do: %s): Hermes does not load it"
                           % (PLUGIN, target.config, "; ".join(todo)),
                           "run `engramory install --host hermes` (or `hermes plugins enable %s`)" % PLUGIN)
        else:
            report.ok("%s is in plugins.enabled of %s" % (PLUGIN, target.config))
    except SettingsError as exc:
        report.problem(str(exc), "fix config.yaml, then run this again")
    if environ.get("HERMES_SAFE_MODE", "").strip().lower() in ("1", "true", "yes"):
        report.problem("HERMES_SAFE_MODE is set in this environment: Hermes loads no plugin while it is",
                       "unset HERMES_SAFE_MODE before starting Hermes")
    if manifest is not None and os.path.isfile(os.path.join(target.plugin_dir, "__init__.py")):
        python, where = hermes_python(environ)
        if python is None:
            python = sys.executable
            report.note("Hermes's Python is not known (%s): the plugin was loaded with %s instead; set "
                        "ENGRAMORY_HERMES_PYTHON to the Python of the Hermes venv to check with that one" % (where, python))
        else:
            report.ok("Hermes's Python: %s (from %s)" % (python, where))
            check_wired_shell_hooks(target, python, environ, report)
        _smoke_plugin(target, python, modules_of(files), environ, report)
        smoke_shell_hook(target, environ, report)
    if as_json:
        sys.stdout.write(json.dumps(report.as_json(), indent=2) + "\n")
        return 0 if report.healthy else 1
    return report.finish("the plugin is installed and enabled, loads, and blocks an over-cap write_file")


def check(args: argparse.Namespace) -> int:
    """The registry's INSTALLER contract: `install --host hermes --check`."""
    return run_check(Target(hermes_home()), as_json=bool(getattr(args, "json", False)))

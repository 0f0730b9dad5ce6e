"""`engramory install --host kilo` / `uninstall --host kilo`: the guard as a Kilo Code CLI
plugin file, opencode's plugin filled in for Kilo (engramory.install.pluginfile does the work).

- `--scope user` (default): `$XDG_CONFIG_HOME/kilo/plugins/engramory.js` (default
  `~/.config/kilo/`), with the runtime copied to `.../kilo/engramory/`.
- `--scope project`: the same under the project's `.kilo/`. Kilo loads every `*.js` in a
  plugins folder of its config folders with no trust or enable step, headless included.

Kilo skips a plugin file it cannot load without a word (the run goes on unguarded), so
`--check` does more than opencode's: it loads the installed file in a JavaScript runtime (Kilo's
own binary as Bun when it is on PATH, else `bun`, else `node`), calls its
`tool.execute.before` with a write that grows an index past its cap and one that does not, and
fails unless the first throws engramory's refusal and the second passes.

The plugin imports only Node built-ins: Kilo installs `@kilocode/plugin` into a config folder
that holds a local plugin, at the version of the CLI, which was never published (7.7.9), so an
import of it would fail everywhere. Offline, that install stalls Kilo's start for about 70 s
(PORTING.md says how to avoid it); Kilo may leave `package.json`, `package-lock.json` and
`node_modules/` in the folder, which are Kilo's and stay at uninstall.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile

from engramory import fsutil, scope
from engramory.hosts import kilo
from engramory.install import opencodeplugin
from engramory.install import pluginfile as core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

TIMEOUT_MS = opencodeplugin.TIMEOUT_MS  # the plugin's own bound on each call (one template)
PROVE_TIMEOUT = 20.0  # seconds for the whole load proof: a runtime start and two bounded asks
RUNTIMES = ("kilo", "bun", "node")  # in this order: Kilo's own runtime first

PLUGIN_TEMPLATE = opencodeplugin.plugin_template(kilo.TITLE, kilo.NAME, kilo.PLUGIN_PACKAGE)

# Run by the runtime as `<runtime> <this file> <plugin> <project> <index> <other>`: one JSON
# line, {"loaded": false, "error"} or {"loaded": true, "hook", "denied", "passed"}.
PROVE_JS = r'''import { pathToFileURL } from "node:url";
const [plugin, directory, index, other] = process.argv.slice(2);
const say = (o) => { process.stdout.write(JSON.stringify(o) + "\n"); };
let hooks;
try {
  const mod = await import(pathToFileURL(plugin).href);
  const factories = Object.values(mod).filter((f) => typeof f === "function");
  if (factories.length === 0) throw new Error("it exports no plugin function");
  hooks = await factories[0]({ directory, worktree: directory, project: {}, client: {}, $: null });
} catch (e) {
  say({ loaded: false, error: String((e && e.message) || e) });
  process.exit(0);
}
const before = hooks && hooks["tool.execute.before"];
if (typeof before !== "function") { say({ loaded: true, hook: false }); process.exit(0); }
const call = async (filePath, content) => {
  try {
    await before({ tool: "write", sessionID: "engramory-check", callID: "check" }, { args: { filePath, content } });
    return null;
  } catch (e) {
    return String((e && e.message) || e);
  }
};
const big = Array.from({ length: 400 }, (_, i) => `- [n${i}](n${i}.md) - check`).join("\n") + "\n";
const denied = await call(index, big);
const passed = (await call(other, big)) === null;
say({ loaded: true, hook: true, denied, passed });
process.exit(0);
'''


_base = opencodeplugin.config_base("kilo", ".kilo")


def _is_binary(path: str) -> bool:
    """Kilo's Bun-built executable, not an npm wrapper script (which would start a session)."""
    try:
        return scope.read_bounded(path, 4)[0][:4] == b"\x7fELF"
    except OSError:
        return False


def runtime(env: Mapping[str, str]) -> tuple[list[str], dict[str, str]] | None:
    """(the command that runs a JavaScript file the way Kilo would, its environment), or None."""
    path = env.get("PATH", os.defpath)
    full = dict(env)
    for name in RUNTIMES:
        found = shutil.which(name, path=path)
        if found is None or (name == "kilo" and not _is_binary(found)):
            continue
        if name == "kilo":
            full["BUN_BE_BUN"] = "1"  # a Bun-compiled binary runs as plain Bun with this set
        return [found], full
    return None


def prove(target: core.Target, out: Callable[[str], Any], env: Mapping[str, str] | None = None) -> list[str]:
    """Problems that show Kilo would not run the installed plugin file: it does not load, has
    no `tool.execute.before`, or does not refuse a growing write to an index."""
    environ = dict(os.environ if env is None else env)
    found = runtime(environ)
    if found is None:
        return ["cannot prove the plugin loads: none of %s is on PATH (Kilo skips a plugin it cannot load "
                "without a word, and the guard is then off)" % ", ".join(RUNTIMES)]
    argv, full = found
    with tempfile.TemporaryDirectory(prefix="engramory-kilo-check-") as tmp:
        script = os.path.join(tmp, "prove.mjs")
        fsutil.write_atomic(script, PROVE_JS.encode("utf-8"))
        index, other = os.path.join(tmp, "memory", "MEMORY.md"), os.path.join(tmp, "notes.txt")
        try:
            done = subprocess.run([*argv, script, target.settings, tmp, index, other], capture_output=True,
                                  timeout=PROVE_TIMEOUT, env=full, cwd=tmp)
        except subprocess.TimeoutExpired:
            return ["loading the plugin in %s did not finish within %.0f s" % (argv[0], PROVE_TIMEOUT)]
        except OSError as exc:
            return ["cannot run %s to load the plugin: %s" % (argv[0], exc.strerror or exc)]
    return _verdict(done, argv[0], target.settings, out)


def _verdict(done: subprocess.CompletedProcess[bytes], runner: str, plugin: str, out: Callable[[str], Any]) -> list[str]:
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    try:
        said = json.loads(lines[-1]) if lines else None
    except ValueError:
        said = None
    if not isinstance(said, dict):
        tail = done.stderr.decode("utf-8", "replace").strip()[-300:]
        return ["%s could not load %s (exit %s): %s. Kilo skips such a file without a word: the guard is off"
                % (runner, plugin, done.returncode, tail or "no answer")]
    if not said.get("loaded"):
        return ["%s does not load (%s): Kilo skips it without a word, so the guard is off" % (plugin, said.get("error"))]
    if not said.get("hook"):
        return ["%s loads but has no tool.execute.before hook: the guard is off" % plugin]
    denied = said.get("denied")
    if not (isinstance(denied, str) and denied.startswith("engramory blocked")):
        return ["%s loads but let a write that grows an index to 400 lines through (%r): the guard is off"
                % (plugin, denied)]
    if not said.get("passed"):
        return ["%s loads but refused a write to a file that is not an index" % plugin]
    out("  ok: %s loads in %s and refuses a growing index write\n" % (os.path.basename(plugin), os.path.basename(runner)))
    return []


SPEC = core.Spec(
    host=kilo.NAME, title=kilo.TITLE, legacy_script="engramory_kilo_hook.py", plugin="engramory.js",
    marker="// engramory guard for " + kilo.TITLE, template=PLUGIN_TEMPLATE, base=_base, plugins_dir="plugins",
    timeout_ms=TIMEOUT_MS,
    note="Kilo loads plugins when a session starts: start a new one for the guard to apply. Offline, set "
         "npm_config_fetch_retries=0 or Kilo waits about 70 s at start for a package it cannot fetch (PORTING.md).",
    scopes=(("user", "~/.config/kilo"), ("project", "./.kilo")), prove=lambda target, out: prove(target, out),
)


def plugin_text(interpreter: str, script: str) -> str:
    return core.plugin_text(SPEC, interpreter, script)


install, uninstall, check = core.verbs(SPEC)

"""`engramory install --host opencode` / `uninstall --host opencode`: the guard as an opencode
plugin file (engramory.install.pluginfile does the work).

- `--scope user` (default): `$XDG_CONFIG_HOME/opencode/plugins/engramory.js` (default
  `~/.config/opencode/`), with the runtime copied to `.../opencode/engramory/`.
- `--scope project`: the same under the project's `.opencode/`. opencode loads every `*.js`
  in a plugins folder with no trust or enable step.

The plugin imports only Node built-ins, because opencode installs `@opencode-ai/plugin` into a
config folder in the background and a plugin must not wait for that. Every call it makes is
bounded (opencode has no hook timeout of its own) and anything but a clear deny lets the tool
run. opencode itself may add `package.json`, `package-lock.json` and `node_modules/` to the
folder on its first run; those are opencode's and stay.
"""

from __future__ import annotations

import os

from engramory.install import pluginfile as core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

TIMEOUT_MS = 5000  # the plugin's own bound on each call; the check's smoke run must beat it

def plugin_template(title: str, host: str, package: str) -> str:
    """The plugin every host of the opencode family loads (one dialect: opencode, and its forks
    such as Kilo), for `title` (how its comments name the host), `host` (`--host`) and
    `package` (the host's plugin package, which the plugin must never import)."""
    return PLUGIN_BODY.replace("__TITLE__", title).replace("__HOST__", host).replace("__PACKAGE__", package)


PLUGIN_BODY = r'''// engramory guard for __TITLE__, installed by `engramory install --host __HOST__`.
//
// Before `write`, `edit` and `apply_patch` it asks engramory's Python core whether the change
// would grow a memory index past its hard cap, or drop lines another writer added since this
// session last read it, and throws the reason if so (__TITLE__ hands a thrown message to the
// model verbatim). After `read` it tells the guard what the session was shown (a read of a file
// that is not an index is answered at once). After `bash` and at the start of a session it
// adds a notice when an index is over its cap.
//
// __TITLE__ gives a plugin no timeout: a hook that never settles hangs the session. So every
// call here is bounded (TIMEOUT_MS) and anything other than a clear deny lets the tool run:
// a missing, slow or broken guard never blocks the user. Node built-ins only: nothing is
// imported from __PACKAGE__ at run time.
import { spawn } from "node:child_process";

const PYTHON = "__PYTHON__";
const SCRIPT = "__SCRIPT__";
const TIMEOUT_MS = 5000;
const GUARDED = new Set(["write", "edit", "apply_patch"]);
const SHELL = new Set(["bash"]);
const READ = new Set(["read"]);

''' + core.ASK_JS + r'''
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
        if (input && READ.has(input.tool)) {
          await ask({ event: "read", tool: input.tool, args: input.args || {}, directory, sessionID: input.sessionID });
          return;
        }
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


PLUGIN_TEMPLATE = plugin_template("opencode", "opencode", "@opencode-ai/plugin")


def _base(scope: str, project: str, env: Mapping[str, str]) -> str:
    if scope == "user":
        config = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
        return os.path.join(os.path.abspath(config), "opencode")
    return os.path.join(project, ".opencode")


SPEC = core.Spec(
    host="opencode", title="opencode", script="engramory_opencode_hook.py", plugin="engramory.js",
    marker="// engramory guard for opencode", template=PLUGIN_TEMPLATE, base=_base, plugins_dir="plugins",
    timeout_ms=TIMEOUT_MS, note="opencode loads plugins when a session starts: start a new one for the guard to apply.",
    scopes=(("user", "~/.config/opencode"), ("project", "./.opencode")),
)


def plugin_text(interpreter: str, script: str) -> str:
    return core.plugin_text(SPEC, interpreter, script)


install, uninstall, check = core.verbs(SPEC)

"""The plugin file every host of the opencode family loads (one JS dialect: opencode, and its
forks such as Kilo Code), shared by their installers (engramory.hosts.opencode.install and
engramory.hosts.kilo.install) so that no host imports another host's installer. The file's
writing, checking and removal are engramory.install.pluginfile's."""

from __future__ import annotations

import os

from engramory.install import pluginfile as core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

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
const HOST = "__HOST__";
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


def config_base(folder: str, project_folder: str) -> Callable[[str, str, Mapping[str, str]], str]:
    """The host's config folder for a scope: `$XDG_CONFIG_HOME/<folder>` (default
    `~/.config/<folder>`) for the user, `<project>/<project_folder>` for a project."""

    def base(scope: str, project: str, env: Mapping[str, str]) -> str:
        if scope == "user":
            config = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".config")
            return os.path.join(os.path.abspath(config), folder)
        return os.path.join(project, project_folder)

    return base

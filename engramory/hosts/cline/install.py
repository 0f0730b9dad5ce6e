"""`engramory install --host cline` / `uninstall --host cline`: the guard as a Cline CLI plugin
file (engramory.install.pluginfile does the work).

- `--scope user` (default): `~/.cline/plugins/engramory.js`, with the runtime copied to
  `~/.cline/engramory/`.
- `--scope project`: the same under the workspace's `.cline/`. Cline 3.0.65 loads plugins from
  both with no trust step, in a sandboxed child process.

A plugin that throws, or takes longer than 3 s (`hookTimeoutMs`, not settable from outside),
ends the whole run; `{skip: true, reason}` blocks only the one call. So the plugin catches
everything, bounds each call to TIMEOUT_MS, and returns nothing (the tool runs) unless the guard
clearly denies. It never answers `stop` or `cancel`.
"""

from __future__ import annotations

import os

from engramory.install import pluginfile as core

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

TIMEOUT_MS = 2000  # well under Cline's 3 s plugin budget

PLUGIN_TEMPLATE = r'''// engramory guard for Cline, installed by `engramory install --host cline`.
//
// Before `editor` and `apply_patch` it asks engramory's Python core whether the change would
// grow a memory index past its hard cap, and answers {skip: true, reason} if so: only that call
// is blocked and the model reads the reason. After `run_commands` and when a run starts it adds
// a notice when an index is over its cap.
//
// Cline ends the whole run when a plugin hook throws or takes more than 3 s. So nothing here
// throws, every call is bounded (TIMEOUT_MS), and anything but a clear deny lets the tool run.
import { spawn } from "node:child_process";

const PYTHON = "__PYTHON__";
const SCRIPT = "__SCRIPT__";
const HOST = "cline";
const TIMEOUT_MS = 2000;
const GUARDED = new Set(["editor", "apply_patch"]);
const SHELL = new Set(["run_commands"]);

''' + core.ASK_JS + r'''
function toolName(p) {
  return (p && p.tool && p.tool.name) || (p && p.toolCall && p.toolCall.toolName) || "";
}

function toolInput(p) {
  if (p && p.toolCall && p.toolCall.input && typeof p.toolCall.input === "object") return p.toolCall.input;
  return (p && p.input) || {};
}

export default {
  name: "engramory",
  manifest: { capabilities: ["hooks"] },
  hooks: {
    beforeTool: async (p) => {
      try {
        const name = toolName(p);
        if (!GUARDED.has(name)) return undefined;
        const answer = await ask({ event: "before", tool: name, input: toolInput(p), cwd: process.cwd() });
        if (typeof answer.deny === "string" && answer.deny) return { skip: true, reason: answer.deny };
      } catch {}
      return undefined;
    },
    afterTool: async (p) => {
      try {
        const name = toolName(p);
        if (!SHELL.has(name)) return undefined;
        const answer = await ask({ event: "after", tool: name, cwd: process.cwd() });
        if (typeof answer.context === "string" && answer.context) return { appendContext: answer.context };
      } catch {}
      return undefined;
    },
    beforeRun: async () => {
      try {
        const answer = await ask({ event: "start", cwd: process.cwd() });
        if (typeof answer.context === "string" && answer.context) return { appendContext: answer.context };
      } catch {}
      return undefined;
    },
  },
};
'''


def _base(scope: str, project: str, env: Mapping[str, str]) -> str:
    if scope == "user":
        return os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cline")
    return os.path.join(project, ".cline")


SPEC = core.Spec(
    host="cline", title="Cline CLI", legacy_script="engramory_cline_hook.py", plugin="engramory.js",
    marker="// engramory guard for Cline", template=PLUGIN_TEMPLATE, base=_base, plugins_dir="plugins",
    timeout_ms=TIMEOUT_MS, note="Cline loads plugins when a run starts: the next run is guarded.",
    scopes=(("user", "~/.cline"), ("project", "./.cline")),
)


def plugin_text(interpreter: str, script: str) -> str:
    return core.plugin_text(SPEC, interpreter, script)


install, uninstall, check = core.verbs(SPEC)

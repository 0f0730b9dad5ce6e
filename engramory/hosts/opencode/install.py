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

from engramory.install import opencodeplugin
from engramory.install import pluginfile as core

TIMEOUT_MS = opencodeplugin.TIMEOUT_MS
PLUGIN_TEMPLATE = opencodeplugin.plugin_template("opencode", "opencode", "@opencode-ai/plugin")
_base = opencodeplugin.config_base("opencode", ".opencode")

SPEC = core.Spec(
    host="opencode", title="opencode", legacy_script="engramory_opencode_hook.py", plugin="engramory.js",
    marker="// engramory guard for opencode", template=PLUGIN_TEMPLATE, base=_base, plugins_dir="plugins",
    timeout_ms=TIMEOUT_MS, note="opencode loads plugins when a session starts: start a new one for the guard to apply.",
    scopes=(("user", "~/.config/opencode"), ("project", "./.opencode")),
)


def plugin_text(interpreter: str, script: str) -> str:
    return core.plugin_text(SPEC, interpreter, script)


install, uninstall, check = core.verbs(SPEC)

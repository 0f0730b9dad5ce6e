"""Run tool calls through the real Hermes pre-tool-call path, in Hermes's own Python.

    <hermes venv>/bin/python drive_tools.py <cases.json> <results.json> [--shell | --shell-config]

Expects HERMES_HOME (already holding the engramory plugin, enabled) and TERMINAL_CWD (the
work folder) in the environment. Plugins are discovered the way `hermes chat` does at start
(hermes_cli.plugins.discover_plugins); with --shell, config.yaml's `hooks:` are registered
too (agent.shell_hooks.register_from_config, as `hermes chat` does at start). Each
case writes its files, then calls model_tools.handle_function_call, the dispatcher that runs
resolve_pre_tool_block before the tool, and records the tool's result and the files after.

cases: [{"name", "files": {path: hex bytes}, "tool", "args", "watch": [path, ...]}]; a path
starting with "$HOME/" is under HERMES_HOME, others under TERMINAL_CWD.
"""

import json
import os
import sys
import time


def where(path):
    if path.startswith("$HOME/"):
        return os.path.join(os.environ["HERMES_HOME"], path[len("$HOME/"):])
    return os.path.join(os.environ["TERMINAL_CWD"], path)


def main():
    cases_path, results_path = sys.argv[1], sys.argv[2]
    # --shell: consent as `--accept-hooks` gives it; --shell-config: only config.yaml's
    # hooks_auto_accept may give it (no TTY here, so Hermes never asks).
    shell = "--shell" in sys.argv[3:] or "--shell-config" in sys.argv[3:]
    accept = "--shell" in sys.argv[3:]
    t0 = time.monotonic()
    import model_tools
    from hermes_cli.plugins import discover_plugins, get_plugin_manager

    discover_plugins()
    info = {"plugins": {}}
    for key, loaded in get_plugin_manager()._plugins.items():
        info["plugins"][key] = {"enabled": loaded.enabled, "error": loaded.error, "hooks": list(loaded.hooks_registered)}
    if shell:
        from agent import shell_hooks
        from hermes_cli.config import load_config

        info["shell_hooks"] = len(shell_hooks.register_from_config(load_config(), accept_hooks=accept))
    with open(cases_path, encoding="utf-8") as f:
        cases = json.load(f)
    results = []
    for n, case in enumerate(cases):
        for path, data in case.get("files", {}).items():
            full = where(path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(bytes.fromhex(data))
        for path in case.get("absent", []):
            if os.path.exists(where(path)):
                os.unlink(where(path))
        trace = os.environ.get("ENGRAMORY_TRACE_FILE")
        seen = os.path.getsize(trace) if trace and os.path.exists(trace) else 0
        result = model_tools.handle_function_call(
            case["tool"], case["args"], task_id="engramory-test", tool_call_id="call_%d" % n, session_id="engramory-test",
        )
        after = {}
        for path in case.get("watch", []):
            try:
                with open(where(path), "rb") as f:
                    after[path] = f.read().hex()
            except FileNotFoundError:
                after[path] = None
        predictions = []
        if trace and os.path.exists(trace):
            with open(trace, "rb") as f:
                f.seek(seen)
                predictions = [json.loads(line) for line in f.read().decode("utf-8").splitlines() if line]
        results.append({"name": case["name"], "result": result, "after": after, "predicted": predictions})
    info["results"] = results
    info["seconds"] = time.monotonic() - t0
    with open(results_path, "w", encoding="utf-8") as f:
        json.dump(info, f)
    os._exit(0)  # skip Hermes's atexit handlers (they recreate sandbox folders in HERMES_HOME)


if __name__ == "__main__":
    main()

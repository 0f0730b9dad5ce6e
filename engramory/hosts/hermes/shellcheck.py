"""`engramory install --host hermes --check`, the shell-hook part: the copy a `hooks:` entry of
config.yaml runs (`python3 -I -S <plugin>/hooks/engramory_hook.py hermes`) blocks a smoke
over-cap write_file, and every such entry config.yaml holds is read and run by Hermes's own
shell-hook code (under Hermes's Python), with a note for an entry that names the shim
`hooks/engramory_hermes_shell_hook.py` of earlier instructions. Also the environment the smoke
runs share with the plugin's (smoke_env, culprits)."""

from __future__ import annotations

import json
import os
import shutil
import sys

from engramory.install.hookcommands import LAUNCHER, hook_command
from engramory.install.smoke import smoke

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Protocol

    class Where(Protocol):
        """Where an install is (engramory.hosts.hermes.install.Target)."""

        home: str
        config: str
        plugin_dir: str

HOST = "hermes"
# A config.yaml `hooks:` entry runs `SHELL_HOOK hermes`; older ones name the shim (copied still, noted).
SHELL_HOOK = "hooks/engramory_hook.py"
LEGACY_SHELL_HOOK = "hooks/engramory_hermes_shell_hook.py"


def shell_hook_command(plugin_dir: str, python: str) -> str:
    """The command of a config.yaml `hooks: pre_tool_call:` entry that runs the shell hook: the
    `-c` launcher every installer writes, so Python keeps the entry script compiled (run as
    `python3 -I -S <script>`, it is compiled on every call: measured, 1.2M instructions, 4% of
    a bare start). Hermes splits it with shlex and runs it without a shell."""
    return "%s %s" % (hook_command(python, os.path.join(plugin_dir, SHELL_HOOK)), HOST)


def shell_hook_yaml(command: str) -> list[str]:
    """The config.yaml lines of that entry, the command YAML-single-quoted (it holds both quotes)."""
    return ["hooks:", "  pre_tool_call:", '    - matcher: "write_file|patch"',
            "      command: '%s'" % command.replace("'", "''")]


def smoke_env(target: Where, environ: Mapping[str, str], tmp: str) -> dict[str, str]:
    env = dict(environ)
    env.update(HERMES_HOME=target.home, TERMINAL_CWD=tmp)
    return env


def culprits(environ: Mapping[str, str]) -> str:
    names = sorted(k for k in environ if k.startswith("ENGRAMORY_") and k != "ENGRAMORY_HERMES_PYTHON")
    return "; ENGRAMORY_* in force: " + ", ".join(names) if names else ""


def smoke_shell_hook(target: Where, environ: Mapping[str, str], report: Any) -> None:
    """The shell-hook copy (for a `hooks:` entry in config.yaml) blocks, run as the command
    `shell_hook_command` gives runs it."""
    import tempfile

    script = os.path.join(target.plugin_dir, SHELL_HOOK)
    python = shutil.which("python3", path=environ.get("PATH")) or sys.executable
    if not (python and os.path.isfile(script)):
        return
    with tempfile.TemporaryDirectory(prefix="engramory-check-") as tmp:
        index = os.path.join(tmp, "MEMORY.md")
        body = "".join("- [note %d](note-%d.md) %s\n" % (i, i, "x" * 60) for i in range(400))
        payload = {"hook_event_name": "pre_tool_call", "tool_name": "write_file", "cwd": tmp,
                   "tool_input": {"path": index, "content": body}}
        ran = smoke([python, "-I", "-S", "-c", LAUNCHER, script, HOST], payload, env=smoke_env(target, environ, tmp), cwd=tmp)
    answer = ran.json()
    if ran.error or not (isinstance(answer, dict) and answer.get("action") == "block"):
        why = ran.error or ran.last_error_line()
        report.problem("the shell hook %s %s (for a `hooks:` entry in config.yaml) did not block a smoke write_file "
                       "of a 400-line MEMORY.md under %s -I -S (exit %d, %r%s%s)"
                       % (script, HOST, python, ran.rc, ran.stdout[:80], "; " + why if why else "", culprits(environ)),
                       "run `engramory install --host hermes` again")
    else:
        report.ok("the shell hook %s %s blocks a smoke write_file under %s -I -S" % (SHELL_HOOK, HOST, python))


# Run with Hermes's own Python: read config.yaml's `hooks:` as Hermes reads them, and give
# each pre_tool_call entry that runs our shell hook the callback Hermes would register for it
# (agent.shell_hooks, hermes-agent 0.19.0) a write_file of a 400-line MEMORY.md.
_SHELL_SMOKE = r"""
import json, re, sys
index = sys.argv[1]
ours = re.compile(r"engramory_hermes_shell_hook\.py|engramory_hook\.py['\"]?\s+hermes(?:\s|['\"]|$)")
out = {"entries": [], "error": None}
try:
    from hermes_cli.config import load_config
    from agent import shell_hooks
    cfg = load_config()
    accept = shell_hooks._resolve_effective_accept(cfg, False)
    body = "".join("- [note %d](note-%d.md) %s\n" % (i, i, "x" * 60) for i in range(400))
    for spec in shell_hooks.iter_configured_hooks(cfg):
        if not ours.search(spec.command.replace("\\", "/")):
            continue
        entry = {"event": spec.event, "command": spec.command, "matcher": spec.matcher,
                 "tools": [t for t in ("write_file", "patch") if spec.matches_tool(t)],
                 "consent": bool(accept or shell_hooks._is_allowlisted(spec.event, spec.command))}
        if spec.event == "pre_tool_call":
            answer = shell_hooks._make_callback(spec)(tool_name="write_file", args={"path": index, "content": body},
                                                      task_id="engramory-check", session_id="engramory-check")
            entry["answer"] = answer if isinstance(answer, (dict, type(None))) else repr(answer)
        out["entries"].append(entry)
except BaseException as exc:
    out["error"] = repr(exc)
print(json.dumps(out, default=repr))
"""


def check_wired_shell_hooks(target: Where, python: str, environ: Mapping[str, str], report: Any) -> None:
    """Shell-hook entries of config.yaml that run our hook, read and run by Hermes's own code."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="engramory-check-") as tmp:
        try:
            proc = subprocess.run([python, "-c", _SHELL_SMOKE, os.path.join(tmp, "MEMORY.md")], capture_output=True,
                                  timeout=60, env=smoke_env(target, environ, tmp), cwd=tmp)
        except (OSError, subprocess.SubprocessError) as exc:
            report.note("the shell hooks in config.yaml were not checked: %s" % exc)
            return
    lines = proc.stdout.decode("utf-8", "replace").strip().splitlines()
    try:
        got = json.loads(lines[-1]) if lines else None
    except ValueError:
        got = None
    if not isinstance(got, dict) or got.get("error"):
        why = got.get("error") if isinstance(got, dict) else "exit %d" % proc.returncode
        report.note("the shell hooks in config.yaml were not checked: Hermes's hook code did not run (%s)" % str(why)[:200])
        return
    fix = ("fix the `hooks: pre_tool_call:` entry in %s: matcher \"write_file|patch\", command %s (as "
           "`engramory install --host hermes` prints it)" % (target.config, shell_hook_command(target.plugin_dir, python)))
    for entry in got.get("entries") or []:
        if isinstance(entry, dict):
            _judge_shell_entry(entry, fix, environ, report)


def _judge_shell_entry(entry: dict[str, Any], fix: str, environ: Mapping[str, str], report: Any) -> None:
    """One config.yaml shell-hook entry that runs our hook, as Hermes's own code read and ran it."""
    label = "the shell hook `%s` (config.yaml hooks.%s)" % (str(entry.get("command"))[:120], entry.get("event"))
    if LEGACY_SHELL_HOOK.split("/")[1] in str(entry.get("command")):
        report.note("%s runs %s, the shim an earlier engramory named (it still guards): point it at `%s hermes`"
                    % (label, LEGACY_SHELL_HOOK, SHELL_HOOK))
    if " -c " not in str(entry.get("command")):
        report.note("%s runs the entry script without the launcher: Python compiles it on every call (4%% of a "
                    "bare start); the command `engramory install --host hermes` prints keeps it compiled" % label)
    if entry.get("event") != "pre_tool_call":
        report.problem("%s is not under pre_tool_call: Hermes never asks it before a write" % label, fix)
        return
    missed = [t for t in ("write_file", "patch") if t not in (entry.get("tools") or [])]
    if missed:
        report.problem("%s: its matcher %r does not select %s" % (label, entry.get("matcher"), ", ".join(missed)), fix)
    answer = entry.get("answer")
    if not (isinstance(answer, dict) and answer.get("action") == "block"):
        report.problem("%s let a smoke write_file of a 400-line MEMORY.md through (answer %r%s)"
                       % (label, answer, culprits(environ)), fix)
    else:
        report.ok("%s blocks a smoke write_file (run by Hermes's own shell-hook code)" % label)
    if not entry.get("consent"):
        report.note("%s has no recorded consent: Hermes without a terminal leaves it out unless --accept-hooks, "
                    "HERMES_ACCEPT_HOOKS=1 or `hooks_auto_accept: true` (the plugin needs none)" % label)



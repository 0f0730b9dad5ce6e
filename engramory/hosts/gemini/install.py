"""`engramory install --host gemini` / `engramory uninstall --host gemini`: wire the guard and
its notices into Gemini CLI's hooks, and take out exactly that.

Where things go (scope user: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`; scope project:
`./.gemini` of the current folder):
- `<base>/engramory/`: a copy of the bundle's runtime (the engramory package, the Gemini hook
  script, the check tools) with a manifest of the files copied (`--link`: links instead).
- `<base>/settings.json`: three entries under `hooks`, each one command hook named
  `engramory-*` with its timeout in milliseconds (Gemini's unit; 10,000 = 10 s):
  `BeforeTool` (matcher `write_file|replace|run_shell_command`: Gemini's matchers are
  case-sensitive regexes with no Claude aliases), `AfterTool` (the same and `read_file`: what
  the agent read is recorded for the stale-write rule, engramory.stale) and `SessionStart`.

The command is `[ -x "<python>" ] && [ -f "<script>" ] && "<python>" -I -S -c <launcher>
"<script>"; exit 0`. Gemini reads every non-zero exit with text as a deny (127 from a missing
interpreter, 2 from Python given a missing script), so without the tests and the final
`exit 0` a deleted bundle or a moved Python would block every write_file, replace and shell
call. The deny itself travels as JSON on stdout, which Gemini honours whatever the exit code.

Install and uninstall are the shared flow, engramory.install.jsonflow (a `Wiring`: JSONC
settings, the bundle copy and its manifest, the byte-keeping edit): a file that cannot be
parsed is refused and left alone, foreign keys and hooks are kept, a no-op install writes
nothing, a change is backed up and replaced atomically, `--dry-run` shows the diff, and
uninstall gives back the user's own bytes. What is Gemini's own stays here: the paths, the
fail-open command, the entries, a project uninstall taking our entries back out of
`trusted_hooks.json` (where Gemini records project hooks it has seen), and `--check`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

from engramory.install import jsonflow as flow
from engramory.install.bundle import RUNTIME_DIRS
from engramory.install.hookcommands import LAUNCHER, sh_quote
from engramory.install.settings import Change, JsonDoc, SettingsError, check_hooks_shape, restore_bytes
from engramory.install.smoke import Report, bundle_problems, interpreter_problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

HOST = "gemini"
FOLDER = "engramory"
# The hook runs the generic entry, `hooks/engramory_hook.py gemini` (issue 20): the host module
# dispatches on the payload's hook_event_name, so one command serves every event.
SCRIPT = "engramory_hook.py"
# The script installs wired before the generic entry: still recognised as ours (--check passes
# it and says a reinstall moves it; install replaces it, uninstall takes it out), and still
# shipped, as a shim, because those installs run it.
LEGACY_SCRIPT = "engramory_gemini_hook.py"
_GENERIC = re.compile(r"/%s/hooks/%s['\"]? +%s(?:[\s;]|$)" % (FOLDER, re.escape(SCRIPT), HOST))
SCOPES = ("user", "project")
TIMEOUT_MS = 10_000
TOOL_MATCHER = "write_file|replace|run_shell_command"
# AfterTool also sees read_file: what the agent read is recorded for the stale-write rule
AFTER_MATCHER = TOOL_MATCHER + "|read_file"
# (event, matcher or None for every source, hook name)
HOOKS: tuple[tuple[str, str | None, str], ...] = (
    ("BeforeTool", TOOL_MATCHER, "engramory-guard"),
    ("AfterTool", AFTER_MATCHER, "engramory-after-tool"),
    ("SessionStart", None, "engramory-session-start"),
)
EVENTS = tuple(event for event, _, _ in HOOKS)
RESTART = "Gemini CLI reads its hooks when a session starts: start a new session (`/hooks` lists them)."
TRUSTED_HOOKS = "trusted_hooks.json"
TITLE = "Gemini CLI"


def gemini_base(env: Mapping[str, str] | None = None) -> str:
    env = os.environ if env is None else env
    home = env.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    return os.path.join(os.path.abspath(home), ".gemini")


class Target(flow.Wiring):
    """Where one scope's bundle copy and settings.json are, and what Gemini's wiring holds."""

    host, title = HOST, TITLE
    comments = True  # Gemini's settings.json is JSONC
    restart = RESTART
    scopes = (("user", "$GEMINI_CLI_HOME/.gemini or ~/.gemini"), ("project", "./.gemini"))
    bundle_dirs, bundle_top = RUNTIME_DIRS, ()

    def __init__(self, scope: str, cwd: str | None = None, env: Mapping[str, str] | None = None) -> None:
        self.project = os.path.abspath(cwd or os.getcwd())
        self.user_base = gemini_base(env)
        self.base = self.user_base if scope == "user" else os.path.join(self.project, ".gemini")
        super().__init__(settings=os.path.join(self.base, "settings.json"),
                         bundle_dir=os.path.join(self.base, FOLDER), scope=scope)
        self.script = os.path.join(self.skill_dir, "hooks", SCRIPT)
        self.trusted_hooks = os.path.join(self.user_base, TRUSTED_HOOKS)

    @classmethod
    def for_scope(cls, scope: str) -> Target:
        return cls(scope)

    def hooks(self, interpreter: str) -> list[tuple[str, str | None, dict[str, Any]]]:
        return wanted(interpreter, self.script)

    def script_of(self, handler: Any) -> str | None:
        """SCRIPT for a handler of ours in today's form, LEGACY_SCRIPT for an earlier install's."""
        if not is_ours(handler):
            return None
        return SCRIPT if _GENERIC.search(_slashed(handler["command"])) else LEGACY_SCRIPT

    def record_fields(self) -> dict[str, Any]:
        return {"trusted_hooks_existed": os.path.exists(self.trusted_hooks)}

    def uninstall_shape(self, doc: JsonDoc) -> None:
        check_hooks_shape(doc, ())

    def uninstall_extras(self, manifest: dict[str, Any] | None, record: Any, dry_run: bool) -> list[flow.Extra]:
        if self.scope != "project":
            return []
        existed = bool(record.get("trusted_hooks_existed", True)) if isinstance(record, dict) else True
        trusted = _trusted_change(self, [name for _, _, name in HOOKS], existed)
        if trusted is None:
            return []
        verb = "would remove" if dry_run else "removed"
        return [flow.Extra(trusted, ["%s: our entries for %s %s" % (self.trusted_hooks, self.project, verb)])]

    def run_check(self, interpreter: str | None = None, out: Callable[[str], Any] | None = None) -> int:
        return run_check(self)


# -- the entries -------------------------------------------------------------------------


def command(interpreter: str, script: str) -> str:
    """The hook command (run by Gemini as `bash -c`): runs the script only when it and the
    interpreter exist, and always exits 0, so a broken install allows instead of denying."""
    exe, path = sh_quote(interpreter), sh_quote(script)
    return "[ -x %s ] && [ -f %s ] && %s -I -S -c %s %s %s; exit 0" % (exe, path, exe, sh_quote(LAUNCHER), path, HOST)


def wanted(interpreter: str, script: str) -> list[tuple[str, str | None, dict[str, Any]]]:
    cmd = command(interpreter, script)
    return [
        (event, matcher, {"type": "command", "name": name, "command": cmd, "timeout": TIMEOUT_MS})
        for event, matcher, name in HOOKS
    ]


def _slashed(text: str) -> str:
    return text.replace("\\\\", "/").replace("\\", "/")


def runs_ours(text: str) -> bool:
    """Whether a command (or a hooksConfig/trusted_hooks entry naming one) runs our Gemini hook
    from an `engramory` folder: the generic entry with `gemini`, or an earlier install's script."""
    text = _slashed(text)
    return _GENERIC.search(text) is not None or "/%s/hooks/%s" % (FOLDER, LEGACY_SCRIPT) in text


def is_ours(handler: Any) -> bool:
    """A handler that runs our Gemini hook from an `engramory` folder."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    return runs_ours(handler["command"])


def command_paths(cmd: str) -> tuple[str, str]:
    """(interpreter, script) named by one of our commands; "" for what cannot be read."""
    try:
        words = [w.replace("\\$", "$").replace("\\`", "`") for w in shlex.split(cmd)]
    except ValueError:
        return "", ""
    exe = script = ""
    for i, word in enumerate(words[:-1]):
        if word == "-x" and not exe:
            exe = words[i + 1]
        elif word == "-f" and not script:
            script = words[i + 1]
    if not exe and words:  # a hand-written plain `<python> <script>` entry
        exe = words[0]
        script = next((w for w in words[1:] if w.endswith((SCRIPT, LEGACY_SCRIPT))), "")
    return exe, script


# -- install / uninstall: the shared flow -------------------------------------------------


def install(args: argparse.Namespace) -> int:
    """`engramory install --host gemini`: 0 done, 1 refused (nothing changed), 64 usage."""
    return flow.main(Target, "install", args)


def uninstall(args: argparse.Namespace) -> int:
    """`engramory uninstall --host gemini`: 0 done, 1 refused (nothing changed), 64 usage."""
    return flow.main(Target, "uninstall", args)


def _trusted_change(target: Target, names: Sequence[str], existed: bool) -> Change | None:
    """trusted_hooks.json without the entries Gemini recorded for our project hooks."""
    try:
        doc = JsonDoc.load(target.trusted_hooks, host=TITLE)
    except SettingsError:
        return None
    listed = doc.data.get(target.project)
    if not isinstance(listed, list):
        return None
    kept = [e for e in listed if not (isinstance(e, str) and e.split(":", 1)[0] in names and runs_ours(e))]
    if len(kept) == len(listed):
        return None
    data = dict(doc.data)
    if kept:
        data[target.project] = kept
    else:
        del data[target.project]
    after: bytes | None = restore_bytes(doc, data)
    if not data and not existed:
        after = None
    return Change(target.trusted_hooks, doc.raw, after)


# -- install --check -----------------------------------------------------------------------


def settings_layers(target: Target, env: Mapping[str, str] | None = None) -> list[str]:
    """Gemini's settings files, lowest precedence first: system defaults, user, workspace,
    system (the order of 0.61.0's mergeSettings; the workspace file counts only in a trusted
    folder)."""
    env = os.environ if env is None else env
    system = env.get("GEMINI_CLI_SYSTEM_SETTINGS_PATH") or (
        "/Library/Application Support/GeminiCli/settings.json" if sys.platform == "darwin"
        else "C:\\ProgramData\\gemini-cli\\settings.json" if os.name == "nt" else "/etc/gemini-cli/settings.json"
    )
    defaults = env.get("GEMINI_CLI_SYSTEM_DEFAULTS_PATH") or os.path.join(os.path.dirname(system), "system-defaults.json")
    return [defaults, os.path.join(target.user_base, "settings.json"),
            os.path.join(target.project, ".gemini", "settings.json"), system]


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


# (name, the keys of a boolean switch in Gemini's settings); the last layer that sets one wins.
_SWITCHES = (
    ("enabled", ("hooksConfig", "enabled")),
    ("llm_fix", ("tools", "disableLLMCorrection")),
    ("trust", ("security", "folderTrust", "enabled")),
)


def gemini_switches(target: Target, env: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(problems, notes) from Gemini settings that turn our hooks off or change what they see."""
    problems: list[str] = []
    notes: list[str] = []
    switches, disabled = _read_switches(target, env, notes)
    enabled = switches.get("enabled")
    llm_fix = switches.get("llm_fix")
    trust = switches.get("trust")
    if enabled is not None and not enabled[0]:
        problems.append("hooksConfig.enabled is false in %s: Gemini runs no hook at all, so the guard is off" % enabled[1])
    for item, path in disabled:
        problems.append("hooksConfig.disabled in %s lists %r: Gemini skips that hook" % (path, item))
    if llm_fix is not None and not llm_fix[0]:
        notes.append("tools.disableLLMCorrection is false in %s: a failing replace is re-written by a model after "
                     "the guard ran, so what lands can differ from what was checked (AfterTool reports it); "
                     "Gemini's default, true, avoids that" % llm_fix[1])
    if trust is not None and trust[0]:
        notes.append("security.folderTrust.enabled is true (%s): Gemini runs hooks, and reads ./.gemini/settings.json, "
                     "only in folders it trusts; in an untrusted folder the guard does not run" % trust[1])
    return problems, notes


def _read_switches(target: Target, env: Mapping[str, str] | None,
                   notes: list[str]) -> tuple[dict[str, tuple[bool, str]], list[tuple[str, str]]]:
    """({switch name: (value, the file that set it last)}, [(our hook named in
    hooksConfig.disabled, the file)]) over every settings layer; a layer that cannot be read
    is a note."""
    switches: dict[str, tuple[bool, str]] = {}
    disabled: list[tuple[str, str]] = []
    names = {name for _, _, name in HOOKS}
    for path in settings_layers(target, env):
        if not os.path.isfile(path):
            continue
        try:
            data = JsonDoc.load(path, comments=True, host=TITLE).data
        except SettingsError as exc:
            notes.append("cannot read %s (%s); Gemini may not read it either" % (path, exc))
            continue
        for switch, keys in _SWITCHES:
            value = _get(data, *keys)
            if isinstance(value, bool):
                switches[switch] = (value, path)
        listed = _get(data, "hooksConfig", "disabled")
        if isinstance(listed, list):
            disabled.extend((item, path) for item in listed if isinstance(item, str) and (item in names or runs_ours(item)))
    return switches, disabled


def _smoke(cmd: str, timeout_ms: int) -> tuple[str | None, float]:
    """Run the installed command the way Gemini does (`bash -c`) on a BeforeTool write_file
    that grows a throw-away MEMORY.md past the cap. (problem or None, milliseconds)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "GEMINI_"))}
    with tempfile.TemporaryDirectory(prefix="engramory-gemini-check-") as tmp:
        env["GEMINI_CLI_HOME"] = tmp
        index = os.path.join(tmp, "MEMORY.md")
        payload = json.dumps({
            "session_id": "engramory-install-check", "cwd": tmp, "hook_event_name": "BeforeTool",
            "tool_name": "write_file",
            "tool_input": {"file_path": index, "content": "- [n](n.md) note\n" * 300},
        })
        shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
        start = time.monotonic()
        try:
            proc = subprocess.run([shell, "-c", cmd], input=payload.encode(), capture_output=True, cwd=tmp, env=env,
                                  timeout=max(30.0, timeout_ms / 1000 * 3))
        except (OSError, subprocess.SubprocessError) as exc:
            return "could not run it: %s" % exc, 0.0
        elapsed = (time.monotonic() - start) * 1000
    try:
        answer = json.loads(proc.stdout.decode("utf-8", "replace"))
    except ValueError:
        answer = None
    if not (isinstance(answer, dict) and answer.get("decision") == "deny" and answer.get("reason")):
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return ("a write_file growing an index to 300 lines was not denied (exit %d, stdout %r%s): the guard is "
                "not working" % (proc.returncode, proc.stdout[:80], ", stderr: " + err[-1][:200] if err else "")), elapsed
    if proc.returncode != 0:
        return "it exited %d; Gemini reads a non-zero exit with text as a deny of every call" % proc.returncode, elapsed
    return None, elapsed


def check_wiring(target: Target, report: Report) -> None:
    """Our entries in the target's settings.json: present once, matching every tool they must,
    their interpreter and script there, the bundle whole, and a run that denies in time."""
    fix = "run `%s -m engramory install --host gemini --scope %s` from the engramory checkout, then start a new " \
          "Gemini session" % (sys.executable or "python3", target.scope)
    try:
        doc = JsonDoc.load(target.settings, comments=True, host=TITLE)
        check_hooks_shape(doc, EVENTS)
    except SettingsError as exc:
        report.problem(str(exc), "fix the file, then run this again")
        return
    if not doc.exists:
        report.problem("%s does not exist: engramory is not installed in this scope" % target.settings, fix)
        return
    hooks = doc.data.get("hooks") or {}
    smoked: dict[str, tuple[str | None, float]] = {}
    bundles: set[tuple[str, str]] = set()
    for event, matcher, name in HOOKS:
        groups = [g for g in hooks.get(event, []) if isinstance(g, dict) and isinstance(g.get("hooks"), list)]
        found = [(g, h) for g in groups for h in g["hooks"] if is_ours(h)]
        if not found:
            report.problem("no %s entry runs hooks/%s in %s" % (event, SCRIPT, target.settings), fix)
            continue
        if len(found) > 1:
            report.problem("%d %s entries run hooks/%s: each call would be judged more than once"
                           % (len(found), event, SCRIPT), fix)
        group, handler = found[0]
        if not _GENERIC.search(_slashed(handler["command"])):
            report.note("%s: wired by an earlier install (hooks/%s, which still runs); a reinstall moves it to "
                        "hooks/%s" % (event, LEGACY_SCRIPT, SCRIPT))
        if matcher is not None:
            _matcher_problem(report, fix, event, matcher, group.get("matcher"))
        _check_handler(report, fix, event, name, handler, smoked, bundles)
    for folder, exe in sorted(bundles):
        for problem in bundle_problems(folder, exe):
            report.problem(problem, fix)


def _matcher_problem(report: Report, fix: str, event: str, matcher: str, have: Any) -> None:
    """Report the tools of `matcher` that the wired matcher `have` leaves out."""
    tools = [t for t in matcher.split("|") if not _matches(have, t)]
    if tools:
        report.problem("%s matcher %r does not match %s: %s"
                       % (event, have, ", ".join(tools),
                          "those reads are not recorded, so a stale write_file is not refused"
                          if tools == ["read_file"] else "those calls are not checked"), fix)


def _check_handler(report: Report, fix: str, event: str, name: str, handler: dict[str, Any],
                   smoked: dict[str, tuple[str | None, float]], bundles: set[tuple[str, str]]) -> None:
    """One handler: its interpreter and script exist, and a smoke run (once per command, kept
    in `smoked`) denies within its timeout. Its bundle folder goes to `bundles`."""
    exe, script = command_paths(str(handler.get("command", "")))
    bad = interpreter_problem(exe) if exe and os.path.isabs(exe) else "the command names no absolute interpreter"
    if bad:
        report.problem("%s: %s: the hook exits 0 without running, so Gemini lets every call through unchecked"
                       % (event, bad), fix)
        return
    if not os.path.isfile(script):
        report.problem("%s: the script %s does not exist (the bundle was moved or deleted): the hook exits 0 "
                       "without running, so Gemini lets every call through unchecked" % (event, script or "(none)"), fix)
        return
    bundles.add((os.path.dirname(os.path.dirname(script)), exe))
    timeout = handler.get("timeout")
    timeout_ms = timeout if isinstance(timeout, int) and not isinstance(timeout, bool) and timeout > 0 else 60_000
    cmd = str(handler["command"])
    if cmd not in smoked:
        smoked[cmd] = _smoke(cmd, timeout_ms)
    failure, elapsed = smoked[cmd]
    if failure:
        report.problem("%s: %s" % (event, failure), fix)
        return
    if elapsed >= timeout_ms:
        report.problem("%s: a run took %d ms, past its timeout of %d ms (Gemini counts milliseconds): Gemini "
                       "kills it and lets the call through unchecked" % (event, elapsed, timeout_ms),
                       "set \"timeout\" back to %d, or run install again" % TIMEOUT_MS)
        return
    if elapsed * 2 > timeout_ms:
        report.note("%s: a run took %d ms, more than half its %d ms timeout" % (event, elapsed, timeout_ms))
    report.ok("%s: %s runs (%s, %d ms, timeout %d ms)" % (event, name, exe, elapsed, timeout_ms))


def _matches(matcher: Any, tool: str) -> bool:
    """Gemini's matcher test: an unanchored regex, exact compare when it does not compile."""
    import re

    if matcher in (None, "", "*"):
        return True
    if not isinstance(matcher, str):
        return False
    try:
        return re.search(matcher, tool) is not None
    except re.error:
        return matcher == tool


def run_check(target: Target) -> int:
    """Verify the wiring and run it once; change nothing. 0 healthy, 1 a problem found."""
    report = Report("engramory install --host gemini --check (%s scope): %s" % (target.scope, target.settings))
    check_wiring(target, report)
    problems, notes = gemini_switches(target)
    for problem in problems:
        report.problem(problem, "remove that setting, or set it to let the engramory-* hooks run")
    for note in notes:
        report.note(note)
    return report.finish("all %d hooks are wired, run, and a smoke write past the cap was denied" % len(HOOKS))


def check(args: argparse.Namespace) -> int:
    """The registry's INSTALLER contract: `engramory install --host gemini --check`."""
    return flow.main(Target, "check", args)

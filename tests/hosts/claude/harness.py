"""Drive the real Claude Code CLI headless, offline, against a scripted model.

Measured recipe (shared/reference/measured-claude-code.md): the CLI from
``@anthropic-ai/claude-code`` (pinned in ``package.json`` beside this file) talks
to a loopback :class:`fake_model.FakeModel` through ``ANTHROPIC_BASE_URL``, with a
throw-away ``HOME`` so no real user config, memory or credential is read, and
``--permission-mode acceptEdits`` because ``--dangerously-skip-permissions`` is
refused for root.

Install the CLI with ``npm ci`` in this folder (``npm ci --prefix tests/e2e``
from the repo root). Standard library only.

Typical use::

    result = run_claude([ToolUse("Write", {...}), Text("done")], home=h, cwd=p)
    assert result.tool_results()[0].is_error
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Sequence, Union

from fake_model import (
    FakeModel,
    RecordedRequest,
    Script,
    Text,
    ToolUse,
    Turn,
    text_of,
)

__all__ = [
    "CLI_PATH",
    "CLI_VERSION",
    "E2E_DIR",
    "ClaudeRunError",
    "Result",
    "RunClaude",
    "Text",
    "ToolResult",
    "ToolUse",
    "Turn",
    "cli_missing_reason",
    "cli_version",
    "claude_env",
    "find_cli",
    "pretooluse_hook_settings",
    "run_claude",
    "write_json",
]

E2E_DIR = Path(__file__).resolve().parent
CLI_PATH = E2E_DIR / "node_modules" / ".bin" / "claude"
# The pin lives in package.json only; the fixture checks the installed CLI against it.
CLI_VERSION: str = json.loads((E2E_DIR / "package.json").read_text(encoding="utf-8"))["dependencies"][
    "@anthropic-ai/claude-code"
]

PathLike = Union[str, "os.PathLike[str]"]

# Inherited variables that would point the CLI at a real account, a real config
# dir or a telemetry sink; a test run must depend on none of them.
_SCRUB_PREFIXES = ("ANTHROPIC_", "CLAUDE", "OTEL_", "AWS_BEARER_TOKEN_BEDROCK", "VERTEX_")
# Anchored at a line start: the system prompt also mentions the tag in prose.
_REMINDER = re.compile(r"^<system-reminder>\n?(.*?)</system-reminder>", re.S | re.M)


class ClaudeRunError(AssertionError):
    """The CLI failed, timed out, or the fake model saw a problem."""


# -- finding the CLI --------------------------------------------------------------


def _is_native_cli(path: Path) -> bool:
    # Without its postinstall (npm --ignore-scripts) the package leaves a
    # ~500-byte stub that only prints an error; the real binary is ~400 MB.
    try:
        return path.is_file() and os.access(path, os.X_OK) and path.stat().st_size > 1 << 20
    except OSError:
        return False


def find_cli() -> Path | None:
    """The pinned CLI installed beside this file, or None when not installed.

    Falls back to the binary in the platform package (an optional dependency)
    when the postinstall that copies it over the stub did not run.
    """
    if _is_native_cli(CLI_PATH):
        return CLI_PATH
    for candidate in sorted((E2E_DIR / "node_modules" / "@anthropic-ai").glob("claude-code-*/claude*")):
        if _is_native_cli(candidate):
            return candidate
    return None


def cli_missing_reason() -> str | None:
    """Why the end-to-end tests cannot run here, or None when they can."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        return f"{' and '.join(missing)} not on PATH: the e2e tests need Node.js to run the Claude Code CLI"
    if find_cli() is None:
        return (
            f"Claude Code CLI not installed at {CLI_PATH.relative_to(E2E_DIR.parents[2])}: "
            "run `npm ci --prefix tests/e2e`"
        )
    return None


def cli_version(cli: PathLike | None = None, timeout: float = 30) -> str:
    """What ``claude --version`` prints, e.g. ``2.1.332 (Claude Code)``."""
    exe = str(cli or find_cli() or CLI_PATH)
    done = subprocess.run(
        [exe, "--version"],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=claude_env(home=None),
    )
    return done.stdout.strip()


# -- settings helpers -------------------------------------------------------------


def write_json(path: PathLike, obj: Any) -> Path:
    """Write ``obj`` as strict JSON (the CLI rejects comments and trailing commas)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")
    return p


def pretooluse_hook_settings(
    command: str, matcher: str = "Edit|Write|MultiEdit", timeout: int = 10
) -> Dict[str, Any]:
    """A settings.json body with one PreToolUse command hook."""
    return {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": matcher,
                    "hooks": [{"type": "command", "command": command, "timeout": timeout}],
                }
            ]
        }
    }


# -- results ----------------------------------------------------------------------


@dataclass(frozen=True)
class ToolResult:
    """One ``tool_result`` block the CLI sent back to the model."""

    tool_use_id: str
    tool_name: str | None  # from the matching tool_use, when found
    text: str
    is_error: bool


@dataclass
class Result:
    """Everything one CLI run produced, plus what the model was shown."""

    argv: List[str]
    home: Path
    cwd: Path
    returncode: int | None  # None when killed on timeout
    stdout: str
    stderr: str
    duration: float  # seconds of wall time for the CLI process
    requests: List[RecordedRequest]  # every HTTP request, in arrival order
    server_errors: List[str] = field(default_factory=list)
    overruns: int = 0  # turns asked for past the end of the script
    timed_out: bool = False

    @property
    def output(self) -> Dict[str, Any] | None:
        """The ``--output-format json`` object (or the stream's ``result`` event)."""
        try:
            obj: Any = json.loads(self.stdout)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            return dict(obj)
        results = [e for e in self.events if e.get("type") == "result"]
        return results[-1] if results else None

    @property
    def events(self) -> List[Dict[str, Any]]:
        """The events of ``--output-format stream-json`` (one JSON object a line)."""
        out: List[Dict[str, Any]] = []
        for line in self.stdout.splitlines():
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                out.append(obj)
        return out

    def turn_requests(self) -> List[RecordedRequest]:
        """Requests that answered a script turn (they carry ``tools``)."""
        return [r for r in self.requests if r.kind == "turn"]

    def side_requests(self) -> List[RecordedRequest]:
        """Message requests without tools (titles, summaries)."""
        return [r for r in self.requests if r.kind == "side"]

    @property
    def last_request(self) -> RecordedRequest:
        turns = self.turn_requests()
        if not turns:
            raise ClaudeRunError("the CLI sent no model request\n" + self.describe())
        return turns[-1]

    def system_prompt(self, index: int = 0) -> str:
        """System text of one turn request: the ``system`` field and any
        ``role: system`` messages (2.1.332 puts the environment and the skills
        listing in such a message, not in ``system``)."""
        req = self.turn_requests()[index]
        parts = [req.system_text]
        parts += [text_of(m.get("content")) for m in req.messages if m.get("role") == "system"]
        return "\n".join(p for p in parts if p)

    def tool_results(self) -> List[ToolResult]:
        """Each tool_result the model received, once, in conversation order."""
        names: Dict[str, str] = {}
        seen: Dict[str, ToolResult] = {}
        for req in self.turn_requests():
            for msg in req.messages:
                content = msg.get("content")
                if not isinstance(content, list):
                    continue
                for block in content:
                    if not isinstance(block, dict):
                        continue
                    if block.get("type") == "tool_use":
                        names[str(block.get("id"))] = str(block.get("name"))
                    elif block.get("type") == "tool_result":
                        tid = str(block.get("tool_use_id"))
                        if tid not in seen:
                            seen[tid] = ToolResult(
                                tool_use_id=tid,
                                tool_name=names.get(tid),
                                text=text_of(block.get("content")),
                                is_error=bool(block.get("is_error", False)),
                            )
        return list(seen.values())

    def all_text_shown(self, include_side: bool = False) -> str:
        """All text the model was shown (system prompts, user and system
        messages, tool results), each distinct piece once, for ``in`` checks."""
        pieces: Dict[str, None] = {}  # an ordered set
        reqs = self.requests if include_side else self.turn_requests()
        for req in reqs:
            if req.body is None:
                continue
            pieces.setdefault(req.system_text)
            for msg in req.messages:
                if msg.get("role") == "assistant":
                    continue  # the model's own words, not something it was shown
                content = msg.get("content")
                for block in content if isinstance(content, list) else [content]:
                    pieces.setdefault(text_of(block))
        return "\n".join(p for p in pieces if p)

    def system_reminders(self) -> List[str]:
        """Bodies of the ``<system-reminder>`` blocks the model was shown."""
        return [m.strip() for m in _REMINDER.findall(self.all_text_shown())]

    def describe(self, tail: int = 4000) -> str:
        """A failure report: command, exit, stderr, stdout and the request log."""
        lines = [
            f"command: {' '.join(self.argv)}",
            f"cwd: {self.cwd}",
            f"exit: {'timeout' if self.timed_out else self.returncode} after {self.duration:.1f}s",
            f"stderr (tail):\n{self.stderr[-tail:] or '<empty>'}",
            f"stdout (tail):\n{self.stdout[-tail:] or '<empty>'}",
            "requests:",
        ]
        for r in self.requests:
            turn = f" turn={r.turn_index}" if r.turn_index is not None else ""
            lines.append(f"  {r.method} {r.path} [{r.kind}{turn}]")
        if self.overruns:
            lines.append(f"script overrun: the CLI asked for {self.overruns} turn(s) past the script end")
        for err in self.server_errors:
            lines.append(f"fake model error:\n{err}")
        return "\n".join(lines)

    def check(self) -> Result:
        """Raise :class:`ClaudeRunError` unless the run ended cleanly."""
        problems = []
        if self.timed_out:
            problems.append("the CLI timed out")
        elif self.returncode != 0:
            problems.append(f"the CLI exited {self.returncode}")
        if self.server_errors:
            problems.append("the fake model raised")
        if self.overruns:
            problems.append("the script ran out of turns")
        out = self.output
        if out is not None and out.get("is_error"):
            problems.append(f"the CLI reported an error result: {out.get('result')!r}")
        if problems:
            raise ClaudeRunError("; ".join(problems) + "\n" + self.describe())
        return self


# -- running ----------------------------------------------------------------------

# The type of ``run_claude`` with home, cwd and cli already bound (the fixture).
RunClaude = Callable[..., Result]


def claude_env(
    home: PathLike | None, base_url: str | None = None, extra: Mapping[str, str] | None = None
) -> Dict[str, str]:
    """The CLI's environment: this process's, minus account and config variables,
    plus an isolated HOME and the offline switches."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUB_PREFIXES)}
    env.update(
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        ANTHROPIC_API_KEY="dummy",
        # A proxy in the caller's environment must not see loopback traffic.
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    if home is not None:
        h = Path(home)
        env["HOME"] = str(h)
        # XDG dirs too, so nothing is read from or left in the real user's dirs.
        for var, sub in (
            ("XDG_CONFIG_HOME", ".config"),
            ("XDG_CACHE_HOME", ".cache"),
            ("XDG_DATA_HOME", ".local/share"),
            ("XDG_STATE_HOME", ".local/state"),
        ):
            env[var] = str(h / sub)
    if base_url is not None:
        env["ANTHROPIC_BASE_URL"] = base_url
    if extra:
        env.update(extra)
    return env


def _descendants(pid: int) -> List[int]:
    """Process ids below ``pid`` (Linux /proc; empty elsewhere)."""
    children: Dict[int, List[int]] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            stat = entry.read_text()
        except OSError:
            continue  # the process ended while we looked
        # The name field may hold spaces and parentheses: ppid follows the last ')'.
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.parent.name))
    found: List[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _kill_tree(pid: int) -> None:
    """Kill a timed-out CLI and everything it started. The Bash tool runs commands
    in their own process group, so killing the CLI's group alone leaves them."""
    tree = _descendants(pid)
    for target in [pid, *tree]:
        try:
            os.kill(target, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.killpg(pid, signal.SIGKILL)  # whatever else is left in the CLI's own group
    except (ProcessLookupError, PermissionError):
        pass


def run_claude(
    script: Script,
    *,
    home: PathLike,
    cwd: PathLike,
    prompt: str = "go",
    allowed_tools: Iterable[str] | None = None,
    permission_mode: str = "acceptEdits",
    output_format: str = "json",
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
    check: bool = True,
    cli: PathLike | None = None,
) -> Result:
    """Run ``claude -p PROMPT`` once in ``cwd`` with the model playing ``script``.

    ``allowed_tools`` becomes ``--allowedTools`` (Bash needs it). ``env`` is
    added on top of the isolated environment. With ``check`` (the default) a
    failed, timed-out or over-run session raises :class:`ClaudeRunError` whose
    message holds the CLI's stderr and the request log.
    """
    exe = Path(cli) if cli is not None else find_cli()
    if exe is None:
        raise ClaudeRunError(cli_missing_reason() or "Claude Code CLI not found")
    home_p, cwd_p = Path(home), Path(cwd)
    home_p.mkdir(parents=True, exist_ok=True)
    cwd_p.mkdir(parents=True, exist_ok=True)

    argv = [str(exe), "-p", prompt, "--permission-mode", permission_mode, "--output-format", output_format]
    if output_format == "stream-json":
        argv.append("--verbose")  # the CLI refuses stream-json in -p mode without it
    if allowed_tools is not None:
        # `=` form: the flag is variadic and would otherwise swallow what follows.
        argv.append("--allowedTools=" + ",".join(allowed_tools))
    argv += list(extra_args)

    with FakeModel(script) as model:
        proc_env = claude_env(home_p, model.base_url, env)
        start = time.monotonic()
        # Own session, so a timeout can take down the CLI's group and its children.
        proc = subprocess.Popen(
            argv,
            cwd=str(cwd_p),
            env=proc_env,
            stdin=subprocess.DEVNULL,  # -p must not wait for piped input
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
        )
        timed_out = False
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_tree(proc.pid)
            stdout, stderr = proc.communicate()
        duration = time.monotonic() - start

    result = Result(
        argv=argv,
        home=home_p,
        cwd=cwd_p,
        returncode=None if timed_out else proc.returncode,
        stdout=stdout,
        stderr=stderr,
        duration=duration,
        requests=list(model.requests),
        server_errors=list(model.errors),
        overruns=model.overruns,
        timed_out=timed_out,
    )
    return result.check() if check else result

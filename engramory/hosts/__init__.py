"""The host registry: every agent host engramory guards is one module of this package.

A host module declares, at module level, what is truly its own (pre-commit's `languages/`
is the model: one module per member, one table that lists them):

- ``NAME``: the registry key (``engramory install --host NAME``); ``TITLE``: how people call it.
- ``VERIFIED``: the host version the module was verified on, end to end on the real host in
  CI; ``""`` when it could not be (then ``UNVERIFIED_WHY`` says why, in one line).
- ``window() -> size.Window``: how the host loads an index into the model's context (unit,
  lines, trimming, which part is kept). The guard, check, doctor and the backstops judge an
  index by the window of the host that loads it.
- ``respond(raw: bytes, env) -> (stdout, stderr, exit_code)``: the pre-write hook dialect,
  payload in, the host's own answer out. Never an answer the host reads as "block everything".
- ``INSTALLER``: the module (under `engramory`) whose ``install(args)``, ``uninstall(args)`` and
  ``check(args)`` wire this host, take it back out and tell the truth about the wiring.
- ``index_paths(cwd, env) -> list[str]``: where the host's own indexes live for a project
  (settings that move them included); ``[]`` when the host keeps none.

Optional, read by the hook runtime (`run` below): ``STDIN_LIMIT`` (bytes of payload
read; default 256 MiB), ``TAG`` (how its stderr lines start), ``FAIL_OPEN`` (what stdout says
when the guard itself fails: "" unless the host needs an answer, "{}" for Cursor) and
``FAIL_OPEN_EXIT`` (0), and ``ENTRIES`` (the event argument of the hook command -> the name of
the module's entry point; "respond" for an event the table does not hold). Every host is wired
through the one generic entry script, ``hooks/engramory_hook.py <NAME> [event]`` (``main``
below); the older per-host file names stay as shims of it (``finish`` ends the process without
the interpreter's teardown: see its docstring).

How a host module decides (one pipeline, read -> predict -> judge; see engramory.guard):
parse the payload into ``edits.Request`` objects (``edits.normalise`` reads most dialects)
and call ``guard.evaluate(req, env, window())``, which reads the file and predicts with the
Claude-shaped edit model; or, when the module predicts its own host's bytes, call
``guard.judge(path, before, after, env, window(), tool)`` with them (``scope.read_regular``
reads ``before`` safely), or ``guard.judge_bound(...)`` with the text an edit adds when the
result cannot be predicted. Render the Decision (``.action`` DENY / NUDGE, ``.message``,
``.before`` / ``.after`` as (lines, units), ``.unit``, ``.caps``) in the host's dialect.

A window is ``size.Window(unit, lines, size, trim, skip_frontmatter, skip_comments, keep,
note, head, tail)``: e.g. Qwen Code ``Window(unit=size.UTF16, lines=200, size=25_000,
trim=True)``, a host with no cap ``Window(lines=None, size=None)`` (guarded with the standard
caps, see Window.caps), OpenClaw ``Window(unit=size.CHARS, lines=None, size=20_000,
keep=size.HEAD_TAIL)``.

Adding a host (Crush, Windsurf, Kiro, Trae and Auggie were added this way) takes these six touch
points (tests/unit/hosts/test_host_protocol.py holds the list to six):

1. ``engramory/hosts/<name>/``: ``__init__.py`` with the declarations above (a Claude-schema
   host builds a ``claudelike.Dialect`` in its ``dialect()`` and takes ``claude_entries``; a
   JS-plugin host asks ``plugin_quiet`` before it imports engramory.hosts.plugin: see "the
   ignored path" below), ``ENTRIES`` when its hook command passes an event, and
   ``install.py`` (a settings-file host is an ``engramory.install.settingshooks.Spec``, whose
   ``smoke_deny`` payload ``--check`` and bench/bench_hooks.py both use; what it shares with
   another host goes to engramory/install/, never an import of that host's installer). Its
   command runs the generic entry, ``hooks/engramory_hook.py <name> [event]``: no entry script
   of its own. ``__init__.py`` ends with the block through which mypy --strict checks it
   against ``protocol.Host`` (never run; tests/unit/hosts/test_host_protocol.py fails without
   it): ``if TYPE_CHECKING:``, ``from engramory.hosts import <name> as _self``, ``from
   engramory.hosts.protocol import Host``, ``_host: Host = _self``.
2. ``tests/hosts/<name>/``: its tests (``tests/hosts/contract.py`` holds the checks every
   host passes).
3. One row in REGISTRY below.
4. One row in README's host table (tests/test_docs.py holds the rows to the registry).
5. One section (and its row) in PORTING.md, the source of every fact.
6. For a host that runs here, ``tests/hosts/<name>/ci-install.sh`` installing its pinned CLI.

The wheel's packages are derived from the tree (setup.py), so a host folder needs no line in
pyproject.toml; every list of hosts in the tests, the docs checks and the bench is read from
the registry (CONTRIBUTING.md, "Adding a host", names the two lines still kept by hand).

This file must stay cheap: every hook imports the package on its hot path. Host modules are
imported only when asked for.
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from types import ModuleType
    from typing import Any, NoReturn

    from engramory.hosts.claudelike import Dialect

# name -> module (adding a host: see the module's docstring).
REGISTRY = {
    "claude": "engramory.hosts.claude",
    "cursor": "engramory.hosts.cursor",
    "hermes": "engramory.hosts.hermes",
    "codex": "engramory.hosts.codex",
    "gemini": "engramory.hosts.gemini",
    "qwen": "engramory.hosts.qwen",
    "droid": "engramory.hosts.droid",
    "copilot": "engramory.hosts.copilot",
    "opencode": "engramory.hosts.opencode",
    "cline": "engramory.hosts.cline",
    "openclaw": "engramory.hosts.openclaw",
    "kilo": "engramory.hosts.kilo",
    # from their own contracts, not verified on the real host (UNVERIFIED_WHY)
    "crush": "engramory.hosts.crush",
    "windsurf": "engramory.hosts.windsurf",
    "kiro": "engramory.hosts.kiro",
    "trae": "engramory.hosts.trae",
    "auggie": "engramory.hosts.auggie",
    # no hook: the MCP server (engramory.mcp) is their way to the store
    "claude-desktop": "engramory.hosts.claude_desktop",
    "zed": "engramory.hosts.zed",
}


def names() -> "list[str]":
    return list(REGISTRY)


def load(name: str) -> "ModuleType":
    """The module of host `name`; KeyError for a name the registry does not hold."""
    import importlib

    return importlib.import_module(REGISTRY[name])


# --- reading only the fields a backstop needs (issue 9) ---------------------------------------
#
# A PostToolUse payload carries the tool's whole output (`tool_response`), megabytes after a
# verbose command, yet the backstop needs four short fields that Claude Code sends before it.
# `top_fields` reads the top-level object key by key, jumps over values it does not need with
# bytes.find (strings) and bracket counting (containers), and stops once the fields it needs
# are found: the cost is flat in the size of the output. Anything it cannot read this way
# falls back to the full parser.

NEEDED = ("session_id", "cwd", "tool_name", "hook_event_name")
WANTED = frozenset(NEEDED + ("stop_hook_active", "source", "transcript_path"))
_WS = b" \t\r\n"


def _skip_ws(raw: bytes, i: int) -> int:
    n = len(raw)
    while i < n and raw[i] in _WS:
        i += 1
    return i


def _string_end(raw: bytes, i: int) -> int:
    """Index just past the JSON string that opens at `i`."""
    j = i + 1
    while True:
        k = raw.find(b'"', j)
        if k < 0:
            raise ValueError("unterminated string")
        b = k - 1
        while raw[b] == 0x5C:  # backslash: count the run before the quote
            b -= 1
        if (k - 1 - b) % 2 == 0:
            return k + 1
        j = k + 1


def _value_end(raw: bytes, i: int) -> int:
    c = raw[i]
    if c == 0x22:
        return _string_end(raw, i)
    if c in b"{[":
        depth = 0
        n = len(raw)
        while i < n:
            c = raw[i]
            if c == 0x22:
                i = _string_end(raw, i)
                continue
            if c in b"{[":
                depth += 1
            elif c in b"}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        raise ValueError("unterminated container")
    j = i
    n = len(raw)
    while j < n and raw[j] not in b",}] \t\r\n":
        j += 1
    return j


def _members(body: bytes, i: int) -> "Iterator[tuple[str, int, int]]":
    """(key, start, end of its value) of each member of the JSON object that opens at `i`,
    in order; ValueError or IndexError when it is not one."""
    from engramory import jsonlite  # lazy: every hook loads this package, not every one parses

    i = _skip_ws(body, i + 1)
    if body[i] == 0x7D:
        return
    while True:
        if body[i] != 0x22:
            raise ValueError("key expected")
        end = _string_end(body, i)
        key = jsonlite.loads(body[i:end].decode("utf-8", "replace"))
        i = _skip_ws(body, end)
        if body[i] != 0x3A:
            raise ValueError("colon expected")
        v = _skip_ws(body, i + 1)
        e = _value_end(body, v)
        yield key, v, e
        i = _skip_ws(body, e)
        if body[i] == 0x2C:
            i = _skip_ws(body, i + 1)
            continue
        if body[i] == 0x7D:
            return
        raise ValueError("comma expected")


def parse_object(raw: bytes) -> "dict[str, Any] | None":
    """The whole payload parsed, when it is a JSON object; else None."""
    from engramory import jsonlite  # lazy: every hook loads this package, not every one parses

    try:
        payload = jsonlite.loads(jsonlite.decode_payload(raw))
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def top_fields(raw: bytes, wanted: "frozenset[str]" = WANTED, needed: "Sequence[str]" = NEEDED) -> "dict[str, Any] | None":
    """The `wanted` top-level fields of a JSON object payload, read without parsing the
    rest; None when `raw` is not a JSON object. Stops once every `needed` field is found."""
    from engramory import jsonlite  # lazy: every hook loads this package, not every one parses

    try:
        body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw
        i = _skip_ws(body, 0)
        if i >= len(body) or body[i] != 0x7B:
            return parse_object(raw)
        out: dict[str, Any] = {}
        for key, v, e in _members(body, i):
            if key in wanted:
                out[key] = jsonlite.loads(body[v:e].decode("utf-8", "replace"))
                if all(k in out for k in needed) and out.get("hook_event_name") != "Stop":
                    return out
        return out
    except (ValueError, IndexError):
        return parse_object(raw)


def path_of(tool_input: "Any", keys: "tuple[str, ...]") -> "str | None":
    """The file a tool's arguments (a dict) name under the first of `keys` that holds one, or
    None: the one reading of a path argument for the Claude-shaped dialects (claudelike) and
    the JS plugins (plugin), here since both are on every hook's path."""
    if not isinstance(tool_input, dict):
        return None
    for key in keys:
        value = tool_input.get(key)
        if isinstance(value, str) and value and "\x00" not in value:
            return value
    return None


# --- the ignored path of a file-tool hook, before any dialect is imported ---------------------
#
# Most calls a pre-write hook sees write a file no store holds. A host module asks `quiet`
# before it imports its dialect (engramory.hosts.claudelike, engramory.hosts.plugin), so such a
# call costs the modules every hook loads anyway and no more (each module is about 0.35M
# instructions of a 27M bare start: tests/fixtures/hook_modules.json fixes the sets).

WRITE = "write"  # the edit kinds of a host's tool table (claudelike and plugin spell them so too)
EDIT = "edit"


def quiet(tool: "Any", tool_input: "Any", cwd: "Any", tools: "Mapping[str, str]", path_keys: "tuple[str, ...]",
          env: "Mapping[str, str] | None", judged: "Sequence[str]" = ()) -> bool:
    """True when a call surely leaves the guard nothing to judge: `tool` is none of the host's
    file tools (`tools`) nor of the tools it always judges (`judged`: patch tools, whose input
    names its files itself), its input (a dict) names no path under `path_keys`, or the path
    (a relative one joined to `cwd`) is neither an index nor in a store (scope.interesting).
    False: ask the host's dialect, which answers the same for everything `quiet` passes (a
    relative path without an absolute `cwd` is left to it: a host may have a base of its own)."""
    if not isinstance(tool, str) or not isinstance(tool_input, dict):
        return True
    if tool in judged:
        return False
    if tool not in tools:
        return True
    raw = path_of(tool_input, path_keys)
    if raw is None:
        return True
    from engramory import scope  # lazy: loaded already by every hook that gets here, not by this package

    full = _resolved(raw, cwd)
    return full is not None and not scope.interesting(full, scope.environ() if env is None else env)


def plugin_quiet(payload: "Mapping[str, Any]", args_key: str, cwd_key: str, tools: "Mapping[str, str]",
                 path_keys: "tuple[str, ...]", env: "Mapping[str, str] | None", judged: "Sequence[str]" = (),
                 shell_tools: "Sequence[str]" = ()) -> bool:
    """True when a JS plugin's question (engramory.hosts.plugin) surely gets `{}`: a `before`
    that `quiet` passes, a `read` of a file that is no index (scope.guards_index), an `after`
    of a tool that is none of `shell_tools`, or an event the protocol does not have; the
    tool's input is under `args_key`, its base folder under `cwd_key`. A `start` is never."""
    event, args, cwd = payload.get("event"), payload.get(args_key), payload.get(cwd_key)
    if event == "before":
        return quiet(payload.get("tool"), args, cwd, tools, path_keys, env, judged)
    if event == "after":
        return payload.get("tool") not in shell_tools
    if event != "read":
        return event != "start"
    raw = path_of(args, path_keys)
    if raw is None:
        return True
    from engramory import scope  # lazy: loaded already by every hook that gets here, not by this package

    full = _resolved(raw, cwd)
    return full is not None and not scope.guards_index(full, scope.environ() if env is None else env)


def _resolved(raw: str, cwd: "Any") -> "str | None":
    """`raw` made absolute (scope.resolve_path), or None for a relative path without an
    absolute `cwd`: a host may join it to a base of its own, so it is left to the dialect."""
    from engramory import scope  # lazy: loaded already by every hook that gets here, not by this package

    if not scope.isabs(scope.expanduser(raw)) and not (isinstance(cwd, str) and scope.isabs(cwd)):
        return None
    return scope.resolve_path(raw, cwd)


def claude_entries(
    dialect: "Callable[[], Dialect]",
    tools: "Mapping[str, str]",
    path_keys: "tuple[str, ...]",
    payload_of: "Callable[[dict[str, Any]], tuple[Any, Any, Any]] | None" = None,
    judged: "Sequence[str]" = (),
) -> "tuple[Callable[..., tuple[str, str, int]], ...]":
    """(respond, post, start), the entry points of a Claude-schema host. `dialect()` builds
    its engramory.hosts.claudelike.Dialect (the host module imports claudelike there, lazily);
    `tools`, `path_keys`, `payload_of` and `judged` (its patch tools) are the same declarations
    that Dialect is built from, for `quiet`: `respond` (PreToolUse) answers a quiet call itself,
    ("", "", 0), what the dialect answers when it has nothing to say
    (tests/unit/hosts/test_quiet.py holds the two to the same answers), and hands every other
    call, and the other two events, to the dialect, built once on first use."""
    built: list[Dialect] = []

    def spoken() -> "Dialect":
        if not built:
            built.append(dialect())
        return built[0]

    def pre(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
        payload = parse_object(raw)
        if payload is None:
            return "", "", 0
        if payload_of is not None:
            tool, tool_input, cwd = payload_of(payload)
        else:
            tool, tool_input, cwd = payload.get("tool_name"), payload.get("tool_input"), payload.get("cwd")
        if quiet(tool, tool_input, cwd, tools, path_keys, env, judged):
            return "", "", 0
        return spoken().pre(payload, env)

    def post(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
        return spoken().post(raw, env)

    def start(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
        return spoken().start(raw, env)

    return pre, post, start


# --- the hook runtime, the one process under every entry script ---------------------------
#
# It lives here because every hook imports this package anyway, and each module import costs
# a hook about 0.15 ms. An entry script (hooks/engramory_hook.py and its shims) puts the bundle
# root on sys.path and calls
#
#     from engramory.hosts import finish, run
#     finish(run("claude"))            # the host module's respond(raw, env)
#     finish(run("claude", "post"))    # or another of its entry points
#
# `finish(code)` flushes stdout and stderr and ends the process at once, without the
# interpreter's teardown (which costs a hook more than its own work); in process (tests) call
# `run` alone and use the code it returns. `run_respond(respond, tag, limit, fail_open)` is
# the same process around any callable. `run(host, entry="respond")` imports
# `engramory.hosts.<host>` (or, for a dotted name, that module), reads stdin up to the
# module's STDIN_LIMIT (default 256 MiB; one byte more means "not a payload we can judge":
# the fail-open answer, with one line on stderr), calls `<entry>(raw, env)` -> (stdout,
# stderr, exit code), and writes them: stdout with a trailing newline when not empty, stderr
# as given.
#
# Fail-open policy, the same for every host: any exception of ours (import, parse, decide,
# write) prints the module's FAIL_OPEN stdout ("" unless the host needs an answer, e.g. "{}"
# for Cursor), one line on stderr naming the hook, and exits FAIL_OPEN_EXIT (0). Never an exit
# the host reads as "block everything". A closed stdout pipe is ignored (the exit code still
# carries the answer). KeyboardInterrupt also fails open.

STDIN_LIMIT = 256 << 20
HOSTS_PACKAGE = "engramory.hosts."


def _module(host: str) -> "object":
    name = host if "." in host else HOSTS_PACKAGE + host
    __import__(name)
    return sys.modules[name]


def _write(stream: "object", text: str) -> None:
    try:
        stream.write(text)  # type: ignore[attr-defined]
        stream.flush()  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - the host closed the pipe; nothing left to tell it
        pass


def answer(
    respond: "Callable[[bytes, Mapping[str, str] | None], tuple[str, str, int]]",
    raw: bytes,
    tag: str,
    limit: int = STDIN_LIMIT,
    fail_open: "tuple[str, int]" = ("", 0),
    env: "Mapping[str, str] | None" = None,
) -> "tuple[str, str, int]":
    """(stdout, stderr, exit) for `raw`, under the fail-open policy (for tests and for hosts
    that call the runtime in process)."""
    if len(raw) > limit:
        return fail_open[0], "%s: the payload is over %d bytes, not one it can judge; allowed\n" % (tag, limit), fail_open[1]
    try:
        out, err, code = respond(raw, env)
    except BaseException as exc:  # noqa: BLE001 - a guard must never lock the user out
        return fail_open[0], "%s: internal error, allowed: %r\n" % (tag, exc), fail_open[1]
    return out, err, code


def main(args: "Sequence[str]") -> int:
    """The hook process of the generic entry script, `hooks/engramory_hook.py <host> [event]`
    (`args` is what follows the script): the registry's module for `host`, its entry point
    for `event` from the module's ENTRIES table ("respond" when the table has no such event),
    run as `run` runs it. A name the registry does not hold is no guard to run: allowed, with
    one line on stderr (a hook command with a typo must not block the user)."""
    host = args[0] if args else ""
    module = REGISTRY.get(host)
    if module is None:
        return _emit("", "engramory hook: %r is not a host engramory knows (`engramory hosts` "
                     "lists them); allowed\n" % (host,), 0)
    event = args[1] if len(args) > 1 else ""
    entry = "respond"
    try:
        entries = getattr(_module(module), "ENTRIES", None)
        if entries:
            entry = str(entries.get(event, "respond"))
    except BaseException:  # noqa: BLE001 - run() reports the import error and fails open
        pass
    return run(module, entry)


def run(host: str, entry: str = "respond", tag: str = "") -> int:
    """The whole hook process for a host module's `entry` (see the runtime's comment above)."""
    fail_open: tuple[str, int] = ("", 0)
    explicit = tag
    tag = tag or "engramory %s hook" % host.rsplit(".", 1)[-1]
    try:
        mod = _module(host)
        fail_open = (getattr(mod, "FAIL_OPEN", ""), int(getattr(mod, "FAIL_OPEN_EXIT", 0)))
        tag = explicit or str(getattr(mod, "TAG", tag))
        limit = int(getattr(mod, "STDIN_LIMIT", STDIN_LIMIT))
        respond = getattr(mod, entry)
    except BaseException as exc:  # noqa: BLE001 - a guard must never lock the user out
        return _emit(fail_open[0], "%s: internal error, allowed: %r\n" % (tag, exc), fail_open[1])
    return run_respond(respond, tag, limit, fail_open)


def run_respond(
    respond: "Callable[[bytes, Mapping[str, str] | None], tuple[str, str, int]]",
    tag: str,
    limit: int = STDIN_LIMIT,
    fail_open: "tuple[str, int]" = ("", 0),
) -> int:
    """The hook process around one `respond(raw, env)`: read stdin (at most `limit` + 1
    bytes), answer under the fail-open policy, write the answer; returns the exit code."""
    try:
        raw = sys.stdin.buffer.read(limit + 1)
        out, err, code = answer(respond, raw, tag, limit, fail_open)
    except BaseException as exc:  # noqa: BLE001 - a guard must never lock the user out
        out, err, code = fail_open[0], "%s: internal error, allowed: %r\n" % (tag, exc), fail_open[1]
    return _emit(out, err, code)


def finish(code: int) -> "NoReturn":
    """End the hook process with exit status `code`, now: flush stdout and stderr, then leave
    without the interpreter's teardown. Tearing down frees every module and object one by one
    and costs a hook process more than its own work does (about 1 ms of a 2 ms deny, measured
    by bench/bench_hook.py); nothing of a hook needs it, since every file a hook writes is
    closed by the time it answers and none registers an atexit handler. A stream that cannot
    be flushed (the host closed the pipe) is ignored, as `_write` ignores it: the exit status
    still carries the answer. In-process callers (tests, Hermes) use `run` instead."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - nothing left to tell a closed pipe
            pass
    status = code if isinstance(code, int) and 0 <= code <= 255 else 0
    if sys.platform == "win32":
        import os

        os._exit(status)
    import posix  # what `os` would import for it; `os` itself costs a hook 0.2 ms

    posix._exit(status)


def _emit(out: str, err: str, code: int) -> int:
    if err:
        _write(sys.stderr, err)
    if out:
        _write(sys.stdout, out if out.endswith("\n") else out + "\n")
    return code

"""The one hook runtime under every entry script: read the payload, call the host's answer,
write it back, and fail open.

An entry script (hooks/engramory_<host>_*.py) puts the bundle root on sys.path and calls

    from engramory.hookrun import run
    raise SystemExit(run("claude"))            # the host module's respond(raw, env)
    raise SystemExit(run("claude", "post"))    # or another of its entry points

`run(host, entry="respond")` imports `engramory.hosts.<host>` (or, for a dotted name, that
module), reads stdin up to the module's STDIN_LIMIT (default 256 MiB; one byte more means
"not a payload we can judge": the fail-open answer, with one line on stderr), calls
`<entry>(raw, env)` -> (stdout, stderr, exit code), and writes them: stdout with a trailing
newline when not empty, stderr as given.

Fail-open policy, the same for every host: any exception of ours (import, parse, decide,
write) prints the module's FAIL_OPEN stdout ("" unless the host needs an answer, e.g. "{}"
for Cursor), one line on stderr naming the hook, and exits FAIL_OPEN_EXIT (0). Never an exit
the host reads as "block everything". A closed stdout pipe is ignored (the exit code still
carries the answer). KeyboardInterrupt also fails open.

Imports nothing beyond sys (already loaded): it runs on every hook call.
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

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


def run(host: str, entry: str = "respond", tag: str = "") -> int:
    """The whole hook process: see the module docstring. Returns the exit code."""
    fail_open: tuple[str, int] = ("", 0)
    explicit = tag
    tag = tag or "engramory %s hook" % host.rsplit(".", 1)[-1]
    try:
        mod = _module(host)
        fail_open = (getattr(mod, "FAIL_OPEN", ""), int(getattr(mod, "FAIL_OPEN_EXIT", 0)))
        tag = explicit or str(getattr(mod, "TAG", tag))
        limit = int(getattr(mod, "STDIN_LIMIT", STDIN_LIMIT))
        respond = getattr(mod, entry)
        raw = sys.stdin.buffer.read(limit + 1)
        out, err, code = answer(respond, raw, tag, limit, fail_open)
    except BaseException as exc:  # noqa: BLE001 - a guard must never lock the user out
        out, err, code = fail_open[0], "%s: internal error, allowed: %r\n" % (tag, exc), fail_open[1]
    if err:
        _write(sys.stderr, err)
    if out:
        _write(sys.stdout, out if out.endswith("\n") else out + "\n")
    return code

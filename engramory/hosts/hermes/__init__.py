"""Hermes Agent adapter: the `pre_tool_call` plugin callback and the shell-hook variant.

Hermes (hermes-agent, verified on 0.19.0) asks every `pre_tool_call` callback before a tool
runs; a dict `{"action": "block", "message": ...}` stops the tool and the message reaches the
model as the tool's `{"error": ...}` result. Anything else lets the tool run. This module
turns Hermes's `write_file` and `patch` arguments into `edits.Request`s whose content is the
file as Hermes will write it, and hands each one to `guard.evaluate`: the same rule, caps and
configuration as every other host.

How Hermes writes (tools/file_operations.py, tools/patch_parser.py in 0.19.0):
- write_file writes `content` as given, except that a file whose first 4,096 bytes hold a
  CRLF gets all its line endings turned into CRLF, and a file that starts with a UTF-8 BOM
  keeps it;
- patch, replace mode, reads the file without its BOM, replaces `old_string` with
  Hermes's fuzzy matcher (exact first, then eight looser strategies that also re-indent
  `new_string`), normalises every line ending to the file's own, then writes as above;
- patch, patch mode, takes a V4A text in its own dialect (markers optional, empty lines
  dropped, `*** Move File: a -> b` moves a file unchanged, an added file gets no final
  newline) and applies it all or nothing.
Inside Hermes the adapter runs Hermes's own matcher and V4A code on the current files, so
the prediction is exact. Outside it (the shell hook runs under a bare `python3 -I -S`) it
applies exact matches itself, and where only a fuzzy match could apply the edit it judges by
the size change the edit's own text states.

Relative paths resolve where Hermes resolves them: inside Hermes, against the task's live
terminal folder (a `cd` in the terminal tool moves it); otherwise against $TERMINAL_CWD, then
the shell-hook payload's cwd, then this process's cwd.

Hermes's built-in memory (`$HERMES_HOME/memories/`, and `profiles/<name>/memories/`) is
Hermes's own business, kept under its own character limits by its `memory` tool: files
there are never judged here.

Contract: the callback never raises (a failure of ours allows the tool, with one line on
stderr) and accepts any keyword Hermes adds. The warn-zone nudge has no channel before the
tool runs, so it is kept by tool_call_id and added to the tool's result afterwards
(`transform_tool_result`).
"""

import sys

from engramory import jsonlite, scope
from engramory.hosts import run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from engramory.edits import Request
    from engramory.guard import Decision
    from engramory.size import Window
    from engramory.stale import Session

TAG = "engramory hermes guard"
WRITE_TOOL = "write_file"
PATCH_TOOL = "patch"
GUARDED_TOOLS = (WRITE_TOOL, PATCH_TOOL)
READ_TOOL = "read_file"  # post_tool_call only: what the agent read, for the stale-write rule (engramory.stale)
# Hermes versions whose private matcher and V4A code this adapter was checked against.
VERIFIED_VERSIONS = ("0.19.",)

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "hermes"
TITLE = "Hermes Agent"
VERIFIED = "0.19.0"
INSTALLER = "engramory.hosts.hermes.install"
def window() -> "Window":
    """How this host loads an index (imported only when asked: hot path)."""
    from engramory import size  # lazy: the ignored path must not load size

    return size.Window(note="Hermes loads no MEMORY.md of its own: the standard caps, in bytes")


def index_paths(cwd: "str", env: "Mapping[str, str]") -> "list[str]":
    return []  # Hermes's own memories are kept by its memory tool, under its own limits
BOM = b"\xef\xbb\xbf"
LINE_ENDING_SCAN = 4096  # Hermes decides CRLF from this much of the file's head
# TERMINAL_CWD values Hermes treats as "not configured".
CWD_SENTINELS = frozenset(["", ".", "./", "auto", "cwd"])
PENDING_LIMIT = 64


# Appended to a message whose numbers come from the edit's stated size, not an exact prediction.
ESTIMATE_NOTE = (
    " (Estimated from the size of the edit's own text: Hermes would apply it with a fuzzy "
    "match this guard cannot reproduce outside Hermes.)"
)


# -- where files are ------------------------------------------------------------------------


def base_dirs(env: "Mapping[str, str]", payload_cwd: "Any" = None) -> "list[str]":
    """Where Hermes's file tools resolve a relative path: $TERMINAL_CWD (when it names an
    absolute folder), then the shell-hook payload's cwd, then this process's cwd."""
    bases: list[str] = []
    terminal = env.get("TERMINAL_CWD", "").strip()
    if terminal.lower() not in CWD_SENTINELS and scope.isabs(scope.expanduser(terminal)):
        bases.append(scope.expanduser(terminal))
    if isinstance(payload_cwd, str) and scope.isabs(payload_cwd):
        bases.append(payload_cwd)
    try:
        bases.append(scope.getcwd())
    except OSError:
        pass
    return bases


def resolve(raw: "str", bases: "Sequence[str]") -> "str":
    return scope.resolve_path(raw, bases[0] if bases else None, bases[1:])


def hermes_roots(env: "Mapping[str, str]") -> "list[str]":
    """Hermes homes whose memories/ folders belong to Hermes: $HERMES_HOME, the profile root
    above it, and the platform default."""
    roots: list[str] = []
    home = env.get("HERMES_HOME", "").strip()
    if home:
        home = scope.expanduser(home)
        roots.append(home)
        parent = scope.dirname(scope.normpath(home))
        if scope.basename(parent) == "profiles":
            roots.append(scope.dirname(parent))
    if sys.platform == "win32":
        local = env.get("LOCALAPPDATA", "").strip()
        roots.append(scope.join(local, "hermes") if local else scope.expanduser("~/AppData/Local/hermes"))
    else:
        roots.append(scope.expanduser("~/.hermes"))
    override = _hermes_home_override()
    if override:
        roots.append(override)
    return roots


def _hermes_home_override() -> "str | None":
    # Inside Hermes a task may run under another profile's home (a context-local override).
    module = sys.modules.get("hermes_constants")
    if module is None:
        return None
    try:
        return str(module.get_hermes_home())
    except Exception:  # noqa: BLE001 - a private API; its absence changes nothing
        return None


def is_hermes_memory(path: "str", env: "Mapping[str, str]") -> "bool":
    """Whether `path` lies in one of Hermes's own memories/ folders."""
    real = scope.realpath(path)
    for root in hermes_roots(env):
        base = scope.realpath(root)
        memories = scope.join(base, "memories")
        if real == memories or real.startswith(memories + scope.sep):
            return True
        profiles = scope.join(base, "profiles") + scope.sep
        if real.startswith(profiles):
            parts = real[len(profiles):].split(scope.sep)
            if len(parts) >= 2 and parts[1] == "memories":
                return True
    return False


def guarded(path: "str", env: "Mapping[str, str]") -> "bool":
    """Cheap first look: is this a file the guard may have something to say about?"""
    return scope.interesting(path, env) and not is_hermes_memory(path, env)


# -- how Hermes writes ------------------------------------------------------------------------


def normalise_line_endings(text: "str", ending: "str") -> "str":
    """Hermes's _normalize_line_endings: CRLF and lone CR become LF, then LF becomes CRLF
    when that is the target."""
    lf = text.replace("\r\n", "\n").replace("\r", "\n")
    return lf.replace("\n", "\r\n") if ending == "\r\n" else lf


def line_ending(text: "str") -> "str | None":
    """Hermes's _detect_line_ending: CRLF if one appears in the first 4,096 characters."""
    head = text[:LINE_ENDING_SCAN]
    if "\r\n" in head:
        return "\r\n"
    if "\n" in head:
        return "\n"
    return None


def decode(raw: "bytes") -> "str":
    """A file as Hermes's terminal reads it (`cat`): UTF-8, bad bytes replaced."""
    return raw.decode("utf-8", "replace")


def text_of(raw: "bytes") -> "str":
    """The text read_file_raw / patch_replace match against: no leading BOM."""
    text = decode(raw)
    return text[1:] if text.startswith("\ufeff") else text


def write_bytes(before: "bytes | None", content: "str") -> "bytes":
    """What Hermes's write_file leaves on disk for `content` over a file now `before`."""
    if before is not None and b"\r\n" in before[:LINE_ENDING_SCAN]:
        content = normalise_line_endings(content, "\r\n")
    if before is not None and before.startswith(BOM) and not content.startswith("\ufeff"):
        content = "\ufeff" + content
    from engramory.edits import encode  # lazy: the ignored path must not load edits

    return encode(content)


def _truthy(value: "Any") -> "bool":
    # Hermes coerces "true"/"false" strings for boolean parameters; other values keep
    # their Python truthiness (the matcher tests `not replace_all`).
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "false"):
            return low == "true"
    return bool(value)


def unescape_like_hermes(new: "str", matched: "str") -> "str":
    """Hermes's _maybe_unescape_new_string: `\\t` / `\\r` in new_string become real tab / CR
    when the matched text holds one."""
    if "\\t" in new and "\t" in matched:
        new = new.replace("\\t", "\t")
    if "\\r" in new and "\r" in matched:
        new = new.replace("\\r", "\r")
    return new


REFUSED = "refused"  # Hermes reports an error and writes nothing
UNKNOWN = "unknown"  # only a fuzzy match could apply it: not reproducible here


def replace_exact(text: "str", old: "str", new: "str", replace_all: "bool") -> "str":
    """Hermes's matcher where its first strategy (exact) decides; REFUSED / UNKNOWN else."""
    if not old or old == new:
        return REFUSED
    count = text.count(old)  # non-overlapping, as Hermes's exact strategy counts
    if count == 0:
        return UNKNOWN
    if count > 1 and not replace_all:
        return REFUSED
    return text.replace(old, unescape_like_hermes(new, old))


def replace_estimate(text: "str", old: "str", new: "str") -> "str":
    """A stand-in with the size the edit states: `old_string`'s worth of text taken off the
    end, `new_string` put on. Its lines past the window are the ones being added."""
    cut = text[: max(0, len(text) - len(old))]
    if text.endswith("\n") and cut and not cut.endswith("\n") and not new.startswith("\n"):
        cut += "\n"
    return cut + new


# -- Hermes's own code, when we run inside Hermes ---------------------------------------------

_HERMES: "dict[str, Any]" = {}


def hermes_internals() -> "dict[str, Any] | None":
    """Hermes's matcher and V4A functions when this runs inside a verified Hermes, else None.
    They are private APIs: used only on versions checked against, looked up once."""
    if "hermes_cli" not in sys.modules:
        return None  # not inside Hermes (the shell hook, the tests)
    if "loaded" not in _HERMES:
        _HERMES["loaded"] = True
        try:
            from importlib.metadata import version

            if version("hermes-agent").startswith(VERIFIED_VERSIONS):
                from tools.fuzzy_match import fuzzy_find_and_replace  # type: ignore[import-not-found]
                from tools.patch_parser import (  # type: ignore[import-not-found]
                    apply_v4a_operations,
                    parse_v4a_patch,
                )

                _HERMES.update(fuzzy=fuzzy_find_and_replace, parse=parse_v4a_patch, apply=apply_v4a_operations)
                from tools.file_tools import _resolve_base_dir  # type: ignore[import-not-found]

                _HERMES["base"] = _resolve_base_dir
        except Exception:  # noqa: BLE001 - a Hermes we do not know: emulate instead
            pass
    return _HERMES if "fuzzy" in _HERMES else None


# -- predictions --------------------------------------------------------------------------------


def read_file(path: "str") -> "bytes | None":
    return scope.read_regular(path)


def predict_replace(
    before: "bytes | None", old: "Any", new: "Any", replace_all: "Any", internals: "dict[str, Any] | None"
) -> "tuple[bytes | None, bool]":
    """(bytes after a replace-mode patch, whether they are an estimate). None: Hermes
    refuses the patch and writes nothing."""
    if before is None or not isinstance(old, str) or not isinstance(new, str):
        return None, False
    text = text_of(before)
    flag = _truthy(replace_all)
    estimate = False
    if internals is not None:
        result, count, _strategy, error = internals["fuzzy"](text, old, new, flag)
        if error or count == 0:
            return None, False
    else:
        result = replace_exact(text, old, new, flag)
        if result is REFUSED:
            return None, False
        if result is UNKNOWN:
            if not old or old == new:
                return None, False
            result = replace_estimate(text, old, new)
            estimate = True
    ending = line_ending(text)
    if ending:
        result = normalise_line_endings(result, ending)
    return write_bytes(before, result), estimate


# -- requests -----------------------------------------------------------------------------------


def write_request(tool: "str", path: "str", after: "bytes") -> "Request":
    """A whole-file write whose predicted bytes (edits.predict) are `after`."""
    from engramory import edits  # lazy: the ignored path must not load edits

    req = edits.Request(tool, path, edits.WRITE)
    req.content = after.decode("utf-8", "replace")
    req.after = after  # judged as these exact bytes, never re-encoded
    return req


def delete_request(tool: "str", path: "str") -> "Request":
    from engramory import edits  # lazy: the ignored path must not load edits

    return edits.Request(tool, path, edits.DELETE)


def task_base(task_id: "Any") -> "str | None":
    """Inside Hermes: the folder Hermes resolves this task's relative paths against (its
    terminal's live cwd, which a `cd` in the terminal tool moves), or None."""
    internals = hermes_internals()
    if internals is None or "base" not in internals:
        return None
    try:
        base = str(internals["base"](task_id if isinstance(task_id, str) and task_id else "default", container_paths=False))
    except Exception:  # noqa: BLE001 - a private API: fall back to $TERMINAL_CWD
        return None
    return base if scope.isabs(base) else None


def requests_for(
    tool_name: "Any", args: "Any", env: "Mapping[str, str]", payload_cwd: "Any" = None, notes: "list[str] | None" = None,
    task_id: "Any" = None,
) -> "list[tuple[Request, bool]]":
    """(request, estimated) for every guarded file this tool call changes."""
    notes = notes if notes is not None else []
    if tool_name not in GUARDED_TOOLS or not isinstance(args, dict):
        return []
    bases = base_dirs(env, payload_cwd)
    first = task_base(task_id) if task_id is not None else None
    if first:
        bases.insert(0, first)
    if tool_name == WRITE_TOOL:
        raw, content = args.get("path"), args.get("content")
        if not isinstance(raw, str) or not raw or "\x00" in raw or not isinstance(content, str):
            return []
        path = resolve(raw, bases)
        if not guarded(path, env):
            return []
        return [(write_request(tool_name, path, write_bytes(read_file(path), content)), False)]
    mode = args.get("mode", "replace")
    if mode == "replace":
        raw = args.get("path")
        if not isinstance(raw, str) or not raw or "\x00" in raw:
            return []
        path = resolve(raw, bases)
        if not guarded(path, env):
            return []
        after, estimated = predict_replace(
            read_file(path), args.get("old_string"), args.get("new_string"), args.get("replace_all", False),
            hermes_internals(),
        )
        return [] if after is None else [(write_request(tool_name, path, after), estimated)]
    if mode == "patch" and isinstance(args.get("patch"), str) and args["patch"]:
        return _patch_requests(tool_name, args["patch"], bases, env, notes)
    return []


def _mentions_guarded(text: "str", bases: "Sequence[str]", env: "Mapping[str, str]") -> "bool":
    import re  # lazy: only a patch-mode call reads its headers

    for m in re.finditer(r"^\*\*\*\s*(?:(?:Update|Add|Delete)\s+File:\s*(.+)|Move\s+File:\s*(.+?)\s*->\s*(.+))$", text, re.M):
        for raw in m.groups():
            if raw and guarded(resolve(raw.strip(), bases), env):
                return True
    return False


def _patch_requests(
    tool: "str", text: "str", bases: "Sequence[str]", env: "Mapping[str, str]", notes: "list[str]"
) -> "list[tuple[Request, bool]]":
    if not _mentions_guarded(text, bases, env):
        return []  # the common case: a patch to files no store cares about
    from engramory.hosts import hermes as this  # passed to v4a, which never imports it back

    # lazy: only a patch that names a guarded file loads the V4A code (and engramory.patches)
    from engramory.hosts.hermes import v4a

    internals = hermes_internals()
    if internals is not None:
        return v4a.patch_with_hermes(this, tool, text, bases, env, internals)
    return v4a.patch_emulated(this, tool, text, bases, env, notes)


# -- the decision -------------------------------------------------------------------------------


def decide(
    tool_name: "Any", args: "Any", env: "Mapping[str, str] | None" = None, payload_cwd: "Any" = None, task_id: "Any" = None,
    seen: "Session | None" = None,
) -> "tuple[Decision | None, list[str]]":
    """(the deny, or None; nudge and diagnostic lines) for one tool call. `seen`: the Hermes
    agent whose reads post_tool_call recorded (engramory.stale), for the stale-write rule."""
    environ = scope.environ() if env is None else env
    notes: list[str] = []
    requests = requests_for(tool_name, args, environ, payload_cwd, notes, task_id)
    if not requests:
        return None, notes
    from engramory import guard  # lazy: only a call that changes a guarded file loads guard

    win = window()
    for req, estimated in requests:
        if req.after is not None:
            # Our own exact prediction of what Hermes writes: judged as it is (a UTF-16LE
            # index that Hermes rewrites as UTF-8 is sized as UTF-8, not re-encoded).
            guard.trace_prediction(req, req.after, environ)
            decision = guard.judge(req.path, scope.read_regular(req.path), req.after, env, win, req.tool, seen)
        else:
            decision = guard.evaluate(req, env, win, seen)
        if decision is None:
            continue
        if estimated:
            decision.message += ESTIMATE_NOTE
        if decision.action == guard.DENY:
            return decision, notes
        notes.append(decision.message)
    return None, notes


# -- the shell-hook variant ---------------------------------------------------------------------


def handle_shell(raw: "bytes", env: "Mapping[str, str] | None" = None) -> "tuple[str, str]":
    """Shell-hook stdin bytes -> (stdout, stderr). stdout is a block directive or empty."""
    try:
        payload = jsonlite.loads(jsonlite.decode_payload(raw))
    except ValueError as exc:
        return "", "%s: stdin is not JSON (%s); tool allowed\n" % (TAG, exc)
    if not isinstance(payload, dict):
        return "", "%s: stdin is not a JSON object; tool allowed\n" % TAG
    event = payload.get("hook_event_name")
    if isinstance(event, str) and event != "pre_tool_call":
        return "", ""
    tool_input = payload.get("tool_input")
    if tool_input is None:
        tool_input = payload.get("args")  # the shape `hermes hooks test --payload-file` sends
    decision, notes = decide(payload.get("tool_name"), tool_input, env, payload.get("cwd"))
    err = "".join(n + "\n" for n in notes)
    if decision is None:
        return "", err
    return jsonlite.dumps({"action": "block", "message": decision.message}), err


def main(argv: "list[str] | None" = None) -> "int":
    """The shell hook (engramory.hosts.run): always exit 0; a block is printed, an allow
    prints nothing."""
    return run(NAME)


def respond(raw: "bytes", env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """The registry's dialect entry: the shell hook's answer, always exit 0."""
    out, err = handle_shell(raw, env)
    return out, err, 0


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import hermes as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self

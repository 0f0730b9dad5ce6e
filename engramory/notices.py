"""Backstop hooks for writes the PreToolUse guard cannot see.

A shell command (`cat >> MEMORY.md`, `sed -i`, a script) or an MCP tool can grow an index
without any Edit/Write call, so no pre-write deny is possible. Two hooks close the gap after
the fact: PostToolUse (on Bash, PowerShell and MCP tools) tells the model, with numbers, when
a known index is now over its hard cap; SessionStart says once when a known index starts the
session over its caps. Both stay silent otherwise.

"Known index" = the auto-memory index of the session's project and every
ENGRAMORY_INDEX_PATH entry. PostToolUse runs after every shell call, so it costs one stat per
index when nothing changed: the last (size, mtime) per index is kept in a small per-session
state file, and a change is reported once, not after every later command.

Contract of both entry points: exit 0 always, nothing on stdout unless there is something to
say (then one hookSpecificOutput object), failures of our own go to stderr (fail open).
Imports only what the interpreter has already loaded, plus our own modules: hot path.
"""

from engramory import jsonlite, scope

# part of this module's interface: the watched indexes and the session state live in automemory
# (the after-tool hooks' cheap test reads them without importing this module)
from engramory.automemory import STATE_MAX_BYTES as STATE_MAX_BYTES
from engramory.automemory import _session_key as _session_key
from engramory.automemory import auto_memory_index as auto_memory_index
from engramory.automemory import claude_config_dir as claude_config_dir
from engramory.automemory import config_paths as config_paths
from engramory.automemory import config_state_path as config_state_path
from engramory.automemory import folder_key as folder_key
from engramory.automemory import known_indexes as known_indexes
from engramory.automemory import load_state as load_state
from engramory.automemory import project_candidates as project_candidates
from engramory.automemory import sanitize_project_path as sanitize_project_path
from engramory.automemory import signature as signature
from engramory.automemory import state_dir as state_dir
from engramory.automemory import state_path as state_path
from engramory.hosts import NEEDED, WANTED, run_respond, top_fields  # noqa: F401 - NEEDED, WANTED: read here by the hosts and tests
from engramory.size import OK, OVER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

POST_TOOL_USE = "PostToolUse"
SESSION_START = "SessionStart"
STDIN_LIMIT = 64 << 20
STATE_MAX_AGE = 7 * 24 * 3600  # state files of sessions idle this long are pruned at start


# -- measuring (engramory.describe: the one reader and describer) ------------------------

if TYPE_CHECKING:
    from engramory.describe import Reading


def read_index(path: str, env: "Mapping[str, str]") -> "Reading | None":
    """Measure one index as Claude Code counts it; None when it does not exist or is not a
    readable regular file."""
    # lazy: notices only on the after-tool and session-start paths
    from engramory.describe import read_index as _read
    from engramory.guard import READ_LIMIT  # a hook: bounded like the guard

    return _read(path, env, limit=READ_LIMIT)


def over_message(r: "Reading", tool: str) -> str:
    """What PostToolUse tells the model about an index over its hard cap."""
    # lazy: notices only on the after-tool and session-start paths
    from engramory.describe import caps_text, outside_text, size_text
    from engramory.guard import COMPACT_STEPS  # lazy: the after-tool path must not load the guard

    text = (
        "engramory: after this %s call, the memory index %s is over its hard cap: %s "
        "(%s). The host loads only %s of it, so what lies past that is never recalled"
        % (tool or "tool", r.path, size_text(r), caps_text(r.caps, r.unit), r.window.describe())
    )
    outside = outside_text(r, 80)
    if outside:
        text += "; now outside the window: %s" % outside
    text += ". Compact it now: `%s` shows the plan. %s Do not edit the index with other shell commands: " \
        "the guard checks only the file tools." % (compact_command(scope.dirname(r.path)), COMPACT_STEPS)
    if r.notes:
        text += " " + " ".join(r.notes)
    return text


def start_line(r: "Reading") -> str:
    """One line of the SessionStart notice for an index past its warn or hard cap."""
    # lazy: notices only on the after-tool and session-start paths
    from engramory.describe import caps_text, outside_text, size_text

    if r.status == OVER:
        lost = outside_text(r, 80)
        return (
            "the memory index %s is over its hard cap: %s (%s), so %s; compact it first: `engramory compact` "
            "on its folder plans it without losing a fact; show the plan, then apply it with --apply -."
            % (
                r.path, size_text(r), caps_text(r.caps, r.unit),
                ("these entries were not loaded: %s" % lost) if lost else "it is past what the guard allows",
            )
        )
    return (
        "the memory index %s is past its warn cap: %s (%s); plan a compaction pass before adding much more "
        "(`engramory compact` on its folder shows one)."
        % (r.path, size_text(r), caps_text(r.caps, r.unit, warn=True))
    )


# -- per-session state -------------------------------------------------------------------


def _private_dir(path: str) -> bool:
    """Create `path` for this user only; refuse one that another user owns or that is a
    link, since a shared temp dir is writable by everyone."""
    import os

    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return False
    import stat as _stat

    if not _stat.S_ISDIR(st.st_mode):
        return False
    uid = getattr(os, "getuid", None)
    return uid is None or st.st_uid == uid()


def folder_stamps(indexes: "Sequence[str]") -> "dict[str, str]":
    """{folder key: signature} of each index's store folder: one stat each. A folder's mtime
    moves when a note in it is deleted, created or replaced (rm, mv, sed -i), not when one
    is appended to in place; SessionStart's full review catches those."""
    return {folder_key(p): signature(scope.dirname(p)) for p in indexes}


def save_state(path: "str | None", state: "Mapping[str, str]") -> None:
    if path is None or not _private_dir(scope.dirname(path)):
        return
    from engramory.fsutil import write_atomic  # lazy: os only when the state changed

    body = "".join("%s %s\n" % (sig, index) for index, sig in state.items() if "\n" not in index)
    try:
        write_atomic(path, body.encode("utf-8"), mode=0o600)
    except OSError:
        pass


def prune_state(folder: "str | None", now: float) -> None:
    """Drop state files of sessions idle for a week, so the folder does not grow forever."""
    if folder is None:
        return
    import os

    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not name.endswith(".state"):
            continue
        p = os.path.join(folder, name)
        try:
            if now - os.stat(p).st_mtime > STATE_MAX_AGE:
                os.unlink(p)
        except OSError:
            pass


# -- the two hooks -----------------------------------------------------------------------


def render(event: str, context: str) -> str:
    """The hook's answer, every secret in the notice masked (paths and store names too)."""
    from engramory.guard import masked  # lazy: the ignored path must not load the guard

    return jsonlite.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": masked(context)}})


def parse(raw: bytes) -> "dict[str, Any] | None":
    try:
        payload = jsonlite.loads(jsonlite.decode_payload(raw))
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def post_tool(payload: "Mapping[str, Any]", env: "Mapping[str, str] | None" = None) -> str:
    """PostToolUse: "" unless an index changed since last seen and is now over its hard cap."""
    messages = post_tool_messages(payload, env)
    return render(POST_TOOL_USE, "\n\n".join(messages)) if messages else ""


def post_tool_messages(
    payload: "Mapping[str, Any]", env: "Mapping[str, str] | None" = None, indexes: "list[str] | None" = None
) -> "list[str]":
    """One message per known index that changed since last seen and is now over its hard cap."""
    if env is None:
        env = scope.environ()
    if indexes is None:
        indexes = known_indexes(payload, env)
    if not indexes:
        return []
    spath = state_path(env, payload.get("session_id"))
    state = load_state(spath)
    now = {p: signature(p) for p in indexes}
    folders = folder_stamps(indexes)
    changed = [p for p in indexes if state.get(p) != now[p]]
    # The review (engramory.store.review) reads every note's stamp: worth it only when the store's
    # folder itself changed (a note deleted, created or replaced), which one stat tells.
    moved = [p for p in indexes if state.get(folder_key(p)) != folders[folder_key(p)]]
    tool = payload.get("tool_name")
    reviewed = reconcile_stores(moved, "after " + (tool[:80] if isinstance(tool, str) else "a tool"), False) \
        if moved else []
    if not changed and not moved:
        return reviewed
    merged = dict(state)
    merged.update(now)
    merged.update(folders)
    save_state(spath, merged)
    tool = payload.get("tool_name")
    tool = tool if isinstance(tool, str) else ""
    messages = []
    for p in changed:
        if now[p] == "-":
            continue
        reading = read_index(p, env)
        if reading is not None and reading.status == OVER:
            messages.append(over_message(reading, tool[:80]))
    messages.extend(reviewed)
    return messages


# --- doctor (issue 11): the doctor part of SessionStart, after the notice, on a budget ---
# (engramory.doctornotice; its names stay reachable here, as "engramory.notices:
# save_doctor_summary" is how the detached reconcile of a large store calls back)
DOCTOR_BUDGET = 0.2  # seconds for the doctor part of SessionStart, whatever the store's size
_DOCTOR_NAMES = ("DOCTOR_SKIP", "doctor_line", "save_doctor_summary", "load_doctor_summary")


def __getattr__(name: str) -> "Any":
    if name in _DOCTOR_NAMES:
        from engramory import doctornotice  # lazy: only a session start with a store runs the doctor

        return getattr(doctornotice, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def doctor_lines(roots: "Sequence[str]", env: "Mapping[str, str] | None", budget: float = DOCTOR_BUDGET) -> "list[str]":
    """doctor_line for each store, sharing one time budget (engramory.doctornotice)."""
    if not roots:
        return []
    from engramory import doctornotice  # lazy: only a session start with a store runs the doctor

    return doctornotice.doctor_lines(roots, env, budget)




# --- verify (issue 23): notes naming code that is gone, from verify's summary, on a budget ---
VERIFY_BUDGET = 0.15  # seconds; past it the stores are verified by a detached process instead


def verify_lines(roots: "Sequence[str]", payload: "Mapping[str, Any]", env: "Mapping[str, str]",
                 budget: float = VERIFY_BUDGET) -> "list[str]":
    """At most 5 notes per store whose paths, symbols or commands are stale or moved, fenced
    as data (engramory.verify.notice). Never edits, never blocks past `budget`, never raises."""
    try:
        from engramory.verify import notice  # lazy: notices only on the after-tool and session-start paths

        return notice.session_lines(roots, payload, env, budget)
    except Exception:  # noqa: BLE001 - a failing verify must not cost the session its start
        return []


def session_start(payload: "Mapping[str, Any]", env: "Mapping[str, str] | None" = None) -> str:
    """SessionStart: one short notice when a known index is past its warn or hard cap (or its
    store has doctor errors); "" otherwise. Also seeds the PostToolUse state, so a state that
    was already reported here is not reported again after the first shell command. The size
    notice is made first; the doctor part runs after it, on a time budget."""
    if env is None:
        env = scope.environ()
    indexes = known_indexes(payload, env)
    spath = state_path(env, payload.get("session_id"))
    if spath is not None:
        import time

        prune_state(scope.dirname(spath), time.time())
    save_state(spath, dict({p: signature(p) for p in indexes}, **folder_stamps(indexes)))
    lines = []
    roots = []
    for p in indexes:
        reading = read_index(p, env)
        if reading is None:
            continue
        if reading.status != OK:
            lines.append(start_line(reading))
        roots.append(scope.dirname(p))
    lines.extend(reconcile_stores(indexes, "at session start", True))
    lines += doctor_lines(roots, env)
    lines += verify_lines(roots, payload, env)
    if not lines:
        return ""
    return render(SESSION_START, "engramory: " + " ".join(lines))


# -- review of what others changed (engramory.store.review; owner: compact) ------------------------


def compact_command(root: str) -> str:
    """The command line that plans a compaction of the store at `root`, runnable as it is:
    this bundle's tools/engramory.py under this interpreter (nothing installed needed)."""
    import os
    import shlex
    import sys

    tool = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "engramory.py")
    if os.path.isfile(tool):
        return "%s %s compact %s" % (shlex.quote(sys.executable or "python3"), shlex.quote(tool), shlex.quote(root))
    return "engramory compact %s" % shlex.quote(root)


def reconcile_stores(indexes: "Sequence[str]", source: str, notice: bool) -> "list[str]":
    """Reconcile the content manifest of each known store that exists (one stat per note;
    only files whose size or mtime moved are read) and journal what something else changed.
    Returns lines for the model: at session start (`notice`), one per store with unreviewed
    deletions or changes; after a tool, one per store where that tool deleted notes. Never
    raises: a failing review must not cost the session its hook."""
    out: list[str] = []
    for index in indexes:
        root = scope.dirname(index)
        if not scope.isfile(index):
            continue
        try:
            from engramory.store import review  # lazy: only when a store folder changed

            if notice and review.large_store(root):
                # A large store's review (one stat per note, the manifest parsed) would cost
                # SessionStart most of its budget: it runs in a child the hook does not wait
                # for, and what it finds is in the journal for the next notice and for review.
                review.reconcile_in_background(root, source, "engramory.notices:save_doctor_summary" if notice else "")
                line = review.notice_line(root)
                if line:
                    out.append(line)
                continue
            found = review.reconcile(root, source)
            if notice:
                line = review.notice_line(root)
                if line:
                    out.append(line)
            elif found.deleted and found.entry is not None:
                out.append(
                    "engramory: this call deleted %d note%s from the memory store %s (%s); journal entry %d "
                    "keeps them: `engramory undo %d` brings them back, `engramory review %s` lists them."
                    % (len(found.deleted), "" if len(found.deleted) == 1 else "s", root,
                       ", ".join(found.deleted[:5]) + (" and more" if len(found.deleted) > 5 else ""),
                       found.entry.id, found.entry.id, root))
        except Exception:  # noqa: BLE001 - see the docstring
            continue
    return out


# -- entry points ------------------------------------------------------------------------


def backstop(event: str, payload: "Mapping[str, Any]", env: "Mapping[str, str]") -> str:
    """PostToolUse (`event` POST_TOOL_USE) or SessionStart for a host's own hook, in the
    environment automemory.watched made (its indexes added to the watched ones)."""
    return post_tool(payload, env) if event == POST_TOOL_USE else session_start(payload, env)


TAG = "engramory backstop hook"


# -- reading only the fields the backstop needs: engramory.hosts.top_fields (NEEDED, WANTED)


def _respond_with(event: str, handler: "Any") -> "Any":
    """stdin bytes -> (stdout, stderr, exit) for `handler(payload, env)`. A PostToolUse payload
    is read flat (top_fields): only the fields the backstop needs, whatever the output size."""
    reader = top_fields if event == POST_TOOL_USE else parse

    def respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
        payload = reader(raw)
        return (handler(payload, env) if payload is not None else ""), "", 0

    return respond


def post_tool_respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """PostToolUse (and the late re-check on UserPromptSubmit): stdin bytes -> (stdout, stderr,
    exit). The payload is read flat (top_fields): only the fields needed, whatever the output size."""
    return _respond_with(POST_TOOL_USE, after_tool_or_late)(raw, env)  # type: ignore[no-any-return]


def session_start_respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """SessionStart, plus the first stamps of the store configs: stdin bytes -> (stdout, stderr, exit)."""
    return _respond_with(SESSION_START, session_start_and_seed)(raw, env)  # type: ignore[no-any-return]


def _run(event: str, handler: "Any") -> int:
    """The hook process for `handler(payload, env) -> stdout text`, on the shared hook
    runtime (engramory.hosts.run_respond): bounded stdin, one fail-open policy."""
    return run_respond(_respond_with(event, handler), "engramory %s hook" % event, STDIN_LIMIT)


def post_tool_main(argv: "Sequence[str] | None" = None) -> int:
    return _run(POST_TOOL_USE, after_tool_or_late)


def session_start_main(argv: "Sequence[str] | None" = None) -> int:
    return _run(SESSION_START, session_start_and_seed)


# -- late writes and the store config (install branch, issue 10) ----------------------------
#
# Measured on Claude Code 2.1.332: a Bash call with run_in_background (and a Monitor command)
# fires PostToolUse when it is launched, before it writes. When it finishes, the CLI hands the
# model a task notification, and UserPromptSubmit fires for it (Stop also fires, at the end of
# every turn, but its output reaches the model only by blocking the stop). The same entry
# script is wired to UserPromptSubmit and re-checks the known indexes by their size:mtime
# stamps (one stat each), so a late write is reported on the next event the host fires.
# The store config beside each index is watched the same way: a shell command that changes
# it is reported, since it decides what the guard enforces.

USER_PROMPT_SUBMIT = "UserPromptSubmit"
LATE_EVENTS = (USER_PROMPT_SUBMIT,)


def after_tool_or_late(payload: "Mapping[str, Any]", env: "Mapping[str, str] | None" = None) -> str:
    """The PostToolUse entry script's handler: PostToolUse, or a late re-check when wired to
    UserPromptSubmit. Store config changes are reported on both."""
    event = payload.get("hook_event_name")
    if event in LATE_EVENTS:
        return late_check(payload, env)
    if env is None:
        env = scope.environ()
    indexes = known_indexes(payload, env)
    messages = post_tool_messages(payload, env, indexes)
    tool = payload.get("tool_name")
    when = "after this %s call" % (tool if isinstance(tool, str) else "tool")[:80]
    messages.extend(config_messages(payload, env, when, indexes))
    return render(POST_TOOL_USE, "\n\n".join(messages)) if messages else ""


def late_check(payload: "Mapping[str, Any]", env: "Mapping[str, str] | None" = None) -> str:
    """UserPromptSubmit: report an index that grew over its hard cap (or a store config that
    changed) since the last hook looked, e.g. by a background command."""
    if env is None:
        env = scope.environ()
    indexes = known_indexes(payload, env)
    late = "since the last check (a background command, another program or an edit changed it)"
    messages = [
        m.replace("after this tool call", late, 1)
        for m in post_tool_messages(dict(payload, tool_name="tool"), env, indexes)
    ]
    messages.extend(config_messages(payload, env, late, indexes))
    if not messages:
        return ""
    return render(USER_PROMPT_SUBMIT, "\n\n".join(messages))


def config_messages(
    payload: "Mapping[str, Any]", env: "Mapping[str, str] | None", when: str, indexes: "list[str] | None" = None
) -> "list[str]":
    """One message per store config (beside a known index) that appeared, changed or went
    since the last look. The first look of a session only records the stamps."""
    if env is None:
        env = scope.environ()
    paths = config_paths(known_indexes(payload, env) if indexes is None else indexes)
    if not paths:
        return []
    spath = state_path(env, payload.get("session_id"))
    spath = config_state_path(spath)
    state = load_state(spath)
    now = {p: signature(p) for p in paths}
    changed = [p for p in paths if p in state and state[p] != now[p]]
    if any(state.get(p) != now[p] for p in paths):
        merged = dict(state)
        merged.update(now)
        save_state(spath, merged)
    out = []
    for p in changed:
        what = "was removed" if now[p] == "-" else ("was created" if state[p] == "-" else "changed")
        out.append(
            "engramory: %s, the store config %s %s. It sets the caps and the readOnly rules the guard "
            "enforces, and it is the user's to change, not the agent's: if a command of yours did this, "
            "put the file back as it was and tell the user; if the user asked for it, tell them what "
            "changed." % (when, p, what)
        )
    return out


def session_start_and_seed(payload: "Mapping[str, Any]", env: "Mapping[str, str] | None" = None) -> str:
    """SessionStart, plus the first stamps of the store configs (nothing is reported at start:
    there is no earlier state to compare with)."""
    config_messages(payload, env, "")
    return session_start(payload, env)

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

from __future__ import annotations

import os

from engramory import config, jsonlite
from engramory.automemory import (  # noqa: F401 - part of this module's interface
    auto_memory_index,
    claude_config_dir,
    project_candidates,
    sanitize_project_path,
)
from engramory.size import OK, OVER, Caps, count_lines, verdict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

POST_TOOL_USE = "PostToolUse"
SESSION_START = "SessionStart"
STDIN_LIMIT = 64 << 20
READ_LIMIT = 64 << 20  # same as the guard's: past this an index is judged by its size alone
SHOW_OUTSIDE = 3
STATE_MAX_BYTES = 1 << 16
STATE_MAX_AGE = 7 * 24 * 3600  # state files of sessions idle this long are pruned at start


def known_indexes(payload: Mapping[str, Any], env: Mapping[str, str] | None = None) -> list[str]:
    """Every index this session is known to use: ENGRAMORY_INDEX_PATH entries, then the
    auto-memory index of each project candidate. Paths may not exist."""
    if env is None:
        env = os.environ
    out: list[str] = []
    settings = config.from_env(env)
    for p in settings.index_paths or ():
        if p not in out:
            out.append(p)
    for project in project_candidates(payload, env):
        index = auto_memory_index(project, env)
        if index is not None and index not in out:
            out.append(index)
    return out


# -- measuring ---------------------------------------------------------------------------


class Reading:
    """One index as found on disk now."""

    __slots__ = ("path", "status", "lines", "nbytes", "caps", "outside", "more", "notes")

    def __init__(self, path: str, lines: int | None, nbytes: int, caps: Caps, notes: list[str]) -> None:
        self.path = path
        self.lines = lines
        self.nbytes = nbytes
        self.caps = caps
        self.status = verdict(lines, nbytes, caps)
        self.outside: list[str] = []
        self.more = 0
        self.notes = notes


def read_index(path: str, env: Mapping[str, str]) -> Reading | None:
    """Measure one index; None when it does not exist or is not a readable regular file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not os.path.isfile(path):
        return None
    caps, notes = config.caps_for(path, env)
    if st.st_size > READ_LIMIT:
        return Reading(path, None, st.st_size, caps, notes)
    try:
        with open(path, "rb") as f:
            data = f.read(READ_LIMIT + 1)
    except OSError:
        return None
    reading = Reading(path, count_lines(data), len(data), caps, notes)
    if reading.status == OVER:
        from engramory.excerpt import quote
        from engramory.size import lines_outside_window

        for number, line in lines_outside_window(data, caps):
            if len(reading.outside) < SHOW_OUTSIDE:
                reading.outside.append("line %d %s" % (number, quote(line)))
            else:
                reading.more += 1
    return reading


def _n(value: int) -> str:
    return "{:,}".format(value)


def _size_text(r: Reading) -> str:
    lines = "an unread number of lines" if r.lines is None else "%s lines" % _n(r.lines)
    return "%s and %s bytes" % (lines, _n(r.nbytes))


def over_message(r: Reading, tool: str) -> str:
    """What PostToolUse tells the model about an index over its hard cap."""
    from engramory.guard import COMPACT_STEPS

    c = r.caps
    text = (
        "engramory: after this %s call, the memory index %s is over its hard cap: %s "
        "(hard cap %s lines / %s bytes). The host loads only the first %s lines and %s bytes "
        "of it, so what lies past that is never recalled"
        % (tool or "tool", r.path, _size_text(r), _n(c.hard_lines), _n(c.hard_bytes),
           _n(c.hard_lines), _n(c.hard_bytes))
    )
    if r.outside:
        text += "; now outside the window: %s%s" % (
            "; ".join(r.outside), " and %s more" % _n(r.more) if r.more else "",
        )
    text += ". Compact it now: `%s` shows the plan. %s Do not edit the index with other shell commands: " \
        "the guard checks only the file tools." % (compact_command(os.path.dirname(r.path)), COMPACT_STEPS)
    if r.notes:
        text += " " + " ".join(r.notes)
    return text


def start_line(r: Reading) -> str:
    """One line of the SessionStart notice for an index past its warn or hard cap."""
    c = r.caps
    if r.status == OVER:
        return (
            "the memory index %s is over its hard cap: %s (hard cap %s lines / %s bytes), so "
            "its last entries were not loaded; compact it first: `engramory compact` on its folder "
            "(or the skill's tools/engramory.py compact) plans it without losing a fact; show the plan, "
            "then apply it with --apply -." % (r.path, _size_text(r), _n(c.hard_lines), _n(c.hard_bytes))
        )
    return (
        "the memory index %s is past its warn cap: %s (warn %s lines / %s bytes, hard %s / %s); "
        "plan a compaction pass before adding much more (`engramory compact` on its folder shows one)."
        % (r.path, _size_text(r), _n(c.warn_lines), _n(c.warn_bytes), _n(c.hard_lines), _n(c.hard_bytes))
    )


# -- per-session state -------------------------------------------------------------------


def state_dir(env: Mapping[str, str]) -> str | None:
    """Where per-session state lives: the plugin's data folder when run as a plugin, else a
    private folder of this user under the system temp dir. None when neither is usable."""
    plugin_data = env.get("CLAUDE_PLUGIN_DATA", "").strip()
    if plugin_data and os.path.isabs(plugin_data):
        return os.path.join(plugin_data, "backstop")
    # tempfile.gettempdir() imports random and friends: read the usual variables instead.
    tmp = env.get("TMPDIR") or env.get("TEMP") or env.get("TMP")
    if not tmp:
        tmp = "/tmp" if os.name != "nt" else None
    if not tmp:
        return None
    uid = getattr(os, "getuid", lambda: None)()
    return os.path.join(tmp, "engramory-backstop-%s" % (uid if uid is not None else "user"))


def _private_dir(path: str) -> bool:
    """Create `path` for this user only; refuse one that another user owns or that is a
    link, since a shared temp dir is writable by everyone."""
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


def _session_key(session_id: object) -> str:
    text = session_id if isinstance(session_id, str) else ""
    key = "".join(c for c in text if c.isascii() and (c.isalnum() or c in "-_"))[:100]
    return key or "no-session"


def state_path(env: Mapping[str, str], session_id: object) -> str | None:
    folder = state_dir(env)
    if folder is None:
        return None
    return os.path.join(folder, "%s.state" % _session_key(session_id))


def signature(path: str) -> str:
    """size:mtime_ns of `path`, or "-" when it is missing: a change means "look again"."""
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return "%d:%d" % (st.st_size, st.st_mtime_ns)


def load_state(path: str | None) -> dict[str, str]:
    """{index path: signature} as last seen; empty when there is no usable state."""
    if path is None:
        return {}
    try:
        raw = config.read_bounded(path, STATE_MAX_BYTES)  # stat first: never blocks on a FIFO
    except OSError:
        return {}
    out: dict[str, str] = {}
    for line in raw.decode("utf-8", "replace").splitlines():
        sig, sep, index = line.partition(" ")
        if sep and index:
            out[index] = sig
    return out


def save_state(path: str | None, state: Mapping[str, str]) -> None:
    if path is None or not _private_dir(os.path.dirname(path)):
        return
    from engramory.fsutil import write_atomic

    body = "".join("%s %s\n" % (sig, index) for index, sig in state.items() if "\n" not in index)
    try:
        write_atomic(path, body.encode("utf-8"), mode=0o600)
    except OSError:
        pass


def prune_state(folder: str | None, now: float) -> None:
    """Drop state files of sessions idle for a week, so the folder does not grow forever."""
    if folder is None:
        return
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
    return jsonlite.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}})


def parse(raw: bytes) -> dict[str, Any] | None:
    try:
        payload = jsonlite.loads(jsonlite.decode_payload(raw))
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def post_tool(payload: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str:
    """PostToolUse: "" unless an index changed since last seen and is now over its hard cap."""
    messages = post_tool_messages(payload, env)
    return render(POST_TOOL_USE, "\n\n".join(messages)) if messages else ""


def post_tool_messages(
    payload: Mapping[str, Any], env: Mapping[str, str] | None = None, indexes: list[str] | None = None
) -> list[str]:
    """One message per known index that changed since last seen and is now over its hard cap."""
    if env is None:
        env = os.environ
    if indexes is None:
        indexes = known_indexes(payload, env)
    if not indexes:
        return []
    tool = payload.get("tool_name")
    reviewed = reconcile_stores(indexes, "after " + (tool[:80] if isinstance(tool, str) else "a tool"), False)
    spath = state_path(env, payload.get("session_id"))
    state = load_state(spath)
    now = {p: signature(p) for p in indexes}
    changed = [p for p in indexes if state.get(p) != now[p]]
    if not changed:
        return reviewed
    merged = dict(state)
    merged.update(now)
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


# The doctor's own size findings repeat what the notice already says; git is a subprocess.
DOCTOR_SKIP = ("index-over-cap", "index-warn-zone", "store-in-git")


# --- doctor (issue 11): the doctor part of SessionStart, after the notice, on a budget ---
DOCTOR_BUDGET = 0.2  # seconds for the doctor part of SessionStart, whatever the store's size


def doctor_line(root: str, env: Mapping[str, str] | None = None, budget: float = DOCTOR_BUDGET) -> str | None:
    """One line when the store at `root` has doctor errors, or None. Runs once per session
    (never on the per-call path) and stops reading notes after `budget` seconds, so a store
    of any size starts the session in time (the host gives up on the hook at 10 s and then
    loses its notice too). A missing or failing doctor never costs the session its start."""
    try:
        from engramory import doctor

        errors, complete = doctor.quick_errors(root, env, budget, DOCTOR_SKIP)
    except Exception:  # noqa: BLE001 - a broken or absent doctor must not break the session start
        return None
    if errors <= 0:
        return None
    return "the memory store %s has %s%d doctor error%s; run `engramory doctor %s` to see and fix them." % (
        root, "" if complete else "at least ", errors, "" if errors == 1 else "s", root,
    )


def doctor_lines(roots: Sequence[str], env: Mapping[str, str] | None, budget: float = DOCTOR_BUDGET) -> list[str]:
    """doctor_line for each store, sharing one time budget."""
    import time

    end = time.monotonic() + budget
    out = []
    for root in roots:
        left = end - time.monotonic()
        if left <= 0:
            break
        line = doctor_line(root, env, left)
        if line:
            out.append(line)
    return out
# --- end doctor ---


def session_start(payload: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str:
    """SessionStart: one short notice when a known index is past its warn or hard cap (or its
    store has doctor errors); "" otherwise. Also seeds the PostToolUse state, so a state that
    was already reported here is not reported again after the first shell command. The size
    notice is made first; the doctor part runs after it, on a time budget."""
    if env is None:
        env = os.environ
    indexes = known_indexes(payload, env)
    spath = state_path(env, payload.get("session_id"))
    if spath is not None:
        import time

        prune_state(os.path.dirname(spath), time.time())
    save_state(spath, {p: signature(p) for p in indexes})
    lines = []
    roots = []
    for p in indexes:
        reading = read_index(p, env)
        if reading is None:
            continue
        if reading.status != OK:
            lines.append(start_line(reading))
        roots.append(os.path.dirname(p))
    lines.extend(reconcile_stores(indexes, "at session start", True))
    lines += doctor_lines(roots, env)
    if not lines:
        return ""
    return render(SESSION_START, "engramory: " + " ".join(lines))


# -- review of what others changed (engramory.review; owner: compact) ------------------------


def compact_command(root: str) -> str:
    """The command line that plans a compaction of the store at `root`, runnable as it is:
    this bundle's tools/engramory.py under this interpreter (nothing installed needed)."""
    import shlex
    import sys

    tool = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "engramory.py")
    if os.path.isfile(tool):
        return "%s %s compact %s" % (shlex.quote(sys.executable or "python3"), shlex.quote(tool), shlex.quote(root))
    return "engramory compact %s" % shlex.quote(root)


def reconcile_stores(indexes: Sequence[str], source: str, notice: bool) -> list[str]:
    """Reconcile the content manifest of each known store that exists (one stat per note;
    only files whose size or mtime moved are read) and journal what something else changed.
    Returns lines for the model: at session start (`notice`), one per store with unreviewed
    deletions or changes; after a tool, one per store where that tool deleted notes. Never
    raises: a failing review must not cost the session its hook."""
    out: list[str] = []
    for index in indexes:
        root = os.path.dirname(index)
        if not os.path.isfile(index):
            continue
        try:
            from engramory import review

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


TAG = "engramory backstop hook"


def post_tool_respond(raw: bytes, env: Mapping[str, str] | None = None) -> tuple[str, str, int]:
    """PostToolUse: stdin bytes -> (stdout, stderr, exit), for engramory.hookrun."""
    payload = parse(raw)
    # after_tool_or_late: PostToolUse, or the late re-check on UserPromptSubmit (below)
    return (after_tool_or_late(payload, env) if payload is not None else ""), "", 0


def session_start_respond(raw: bytes, env: Mapping[str, str] | None = None) -> tuple[str, str, int]:
    """SessionStart: stdin bytes -> (stdout, stderr, exit), for engramory.hookrun."""
    payload = parse(raw)
    # session_start_and_seed: also the first stamps of the store configs (below)
    return (session_start_and_seed(payload, env) if payload is not None else ""), "", 0


def post_tool_main(argv: Sequence[str] | None = None) -> int:
    from engramory.hookrun import run

    return run("engramory.backstop", "post_tool_respond", "engramory PostToolUse hook")


def session_start_main(argv: Sequence[str] | None = None) -> int:
    from engramory.hookrun import run

    return run("engramory.backstop", "session_start_respond", "engramory SessionStart hook")


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


def after_tool_or_late(payload: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str:
    """The PostToolUse entry script's handler: PostToolUse, or a late re-check when wired to
    UserPromptSubmit. Store config changes are reported on both."""
    event = payload.get("hook_event_name")
    if event in LATE_EVENTS:
        return late_check(payload, env)
    if env is None:
        env = os.environ
    indexes = known_indexes(payload, env)
    messages = post_tool_messages(payload, env, indexes)
    tool = payload.get("tool_name")
    when = "after this %s call" % (tool if isinstance(tool, str) else "tool")[:80]
    messages.extend(config_messages(payload, env, when, indexes))
    return render(POST_TOOL_USE, "\n\n".join(messages)) if messages else ""


def late_check(payload: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str:
    """UserPromptSubmit: report an index that grew over its hard cap (or a store config that
    changed) since the last hook looked, e.g. by a background command."""
    if env is None:
        env = os.environ
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


def config_paths(indexes: Sequence[str]) -> list[str]:
    out = []
    for index in indexes:
        p = os.path.join(os.path.dirname(index), config.CONFIG_NAME)
        if p not in out:
            out.append(p)
    return out


def config_messages(
    payload: Mapping[str, Any], env: Mapping[str, str] | None, when: str, indexes: list[str] | None = None
) -> list[str]:
    """One message per store config (beside a known index) that appeared, changed or went
    since the last look. The first look of a session only records the stamps."""
    if env is None:
        env = os.environ
    paths = config_paths(known_indexes(payload, env) if indexes is None else indexes)
    if not paths:
        return []
    spath = state_path(env, payload.get("session_id"))
    spath = spath[: -len(".state")] + ".config.state" if spath else None
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


def session_start_and_seed(payload: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str:
    """SessionStart, plus the first stamps of the store configs (nothing is reported at start:
    there is no earlier state to compare with)."""
    config_messages(payload, env, "")
    return session_start(payload, env)

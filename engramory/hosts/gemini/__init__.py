"""Google Gemini CLI: BeforeTool guard, AfterTool and SessionStart notices (one command for all
three, `hooks/engramory_hook.py gemini`, dispatching on `hook_event_name`; installs before the
generic entry run the shim hooks/engramory_gemini_hook.py).

Contract, measured on Gemini CLI 0.61.0 (shared reference, measured-codex-gemini Part B):
- BeforeTool stdin: `{session_id, transcript_path, cwd, hook_event_name, timestamp,
  tool_name, tool_input}`; `file_path` is exactly what the model sent, relative or absolute.
- A deny is stdout `{"decision":"deny","reason":"<text>"}` and nothing else (a trailing line
  turns it into an allow); the model then gets `Tool execution blocked: <reason>`. Anything
  else: no stdout, exit 0. Never `ask` (it hangs a headless session), never `allow` on
  purpose. When stdout is empty Gemini parses stderr instead, and plain text there on exit 0
  is an allow with a message for the user, so diagnostics on stderr never block.
- Gemini reads any other non-zero exit with text as a deny: a missing interpreter (127) or a
  missing script (Python's 2) would deny every call. The installed command therefore checks
  both exist and ends in `exit 0` (engramory/hosts/gemini/install.py), and this module exits 0.
- AfterTool `hookSpecificOutput.additionalContext` is appended to the tool result the model
  sees; SessionStart `additionalContext` goes before the first prompt (plain stdout does not
  reach the model).

Paths (tools/edit.js, write-file.js, utils/pathCorrector.js): a leading `@` may be dropped, the
path is URI-decoded and symlinks are resolved; a relative `replace` path that does not exist is
"corrected" to a file of that name found elsewhere in the workspace. Every place a call may
land is judged, so `replace MEMORY.md` on a project whose index is `notes/MEMORY.md` is
guarded too.

Window: Gemini loads its private index `<GEMINI_CLI_HOME or ~>/.gemini/tmp/<slug>/memory/
MEMORY.md` WHOLE into every session's system instruction, with no cap (measured to 1.2 MB).
Nothing is ever cut, so no entry "falls outside"; the standard caps are engramory's own
policy here, to keep every session's context small, and the messages say so.
"""


from engramory import jsonlite, scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from engramory.hosts.gemini.model import Outcome
    from engramory.judge import Decision
    from engramory.shellwrite import Predicted
    from engramory.size import Window
    from engramory.stale import Session

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "gemini"
TITLE = "Gemini CLI"
VERIFIED = "0.61.0"
INSTALLER = "engramory.hosts.gemini.install"

TAG = "engramory gemini hook"
BEFORE_TOOL = "BeforeTool"
AFTER_TOOL = "AfterTool"
SESSION_START = "SessionStart"
WRITE_FILE = "write_file"
REPLACE = "replace"
READ_FILE = "read_file"  # AfterTool only: what the agent saw, for the stale-write rule (engramory.stale)
SHELL = "run_shell_command"
SHELL_WRITE = "run_shell_command write (heredoc, printf or echo)"  # the label in the messages
GEMINI_DIR = ".gemini"
SEARCH_DIR_LIMIT = 2000  # Gemini's own search stops after 50 folders; look further, never less
WINDOW_TEXT = (
    "Gemini CLI loads this index whole into every session (it sets no limit of its own), so "
    "these caps are engramory's: they keep every session's context small"
)


def window() -> "Window":
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(
        unit=size.BYTES, lines=None, size=None,
        note="measured on Gemini CLI 0.61.0: MEMORY.md loads whole, no cap (up to 1.2 MB tried); "
        "the standard caps are engramory's own policy",
    )


# -- where Gemini keeps its index -------------------------------------------------------------


def gemini_home(env: "Mapping[str, str]") -> str:
    """The folder holding `.gemini/`: $GEMINI_CLI_HOME, else the home folder."""
    base = env.get("GEMINI_CLI_HOME") or env.get("HOME") or scope.expanduser("~")
    return scope.join(base, GEMINI_DIR)


def slugify(text: str) -> str:
    out = []
    for ch in text.lower():
        out.append(ch if ("a" <= ch <= "z" or "0" <= ch <= "9") else "-")
    slug = "".join(out)
    while "--" in slug:
        slug = slug.replace("--", "-")
    return slug.strip("-") or "project"


def project_slug(project: str, env: "Mapping[str, str]", scan: bool = True) -> str:
    """The short id Gemini files a project's temp folder under: its entry in projects.json,
    else the folder that names it as owner, else the slug it would be given."""
    base = gemini_home(env)
    project = scope.normpath(project)
    try:
        raw = scope.read_bounded(scope.join(base, "projects.json"), (1 << 20) - 1)[0]
        data = jsonlite.loads(raw.decode("utf-8", "replace"))
        slug = data.get("projects", {}).get(project) if isinstance(data, dict) else None
        if isinstance(slug, str) and slug and "/" not in slug and slug not in (".", ".."):
            return slug
    except (OSError, ValueError, AttributeError):
        pass
    if not scan:  # the hot path: Gemini registers the project in projects.json at startup
        return slugify(scope.basename(project) or "project")
    try:
        tmp = scope.join(base, "tmp")
        for name in sorted(scope.listdir(tmp)):
            try:
                raw = scope.read_bounded(scope.join(tmp, name, ".project_root"), 4095)[0]
            except OSError:
                continue
            if raw.decode("utf-8", "replace").strip() == project:
                return name
    except OSError:
        pass
    return slugify(scope.basename(project) or "project")


def private_index(project: str, env: "Mapping[str, str]", scan: bool = True) -> str:
    return scope.join(gemini_home(env), "tmp", project_slug(project, env, scan), "memory", scope.INDEX_NAME)




def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    """The project's private memory index (it need not exist yet)."""
    return [private_index(cwd, env)] if cwd else []


# -- where a call lands -------------------------------------------------------------------


def _uri_decode(text: str) -> str:
    """JavaScript's decodeURIComponent, or `text` itself where it would throw."""
    if "%" not in text:
        return text
    out = bytearray()
    i = 0
    raw = text.encode("utf-8", "surrogatepass")
    while i < len(raw):
        if raw[i] == 0x25:
            pair = raw[i + 1 : i + 3]
            if len(pair) != 2 or not all(c in b"0123456789abcdefABCDEF" for c in pair):
                return text
            out.append(int(pair, 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        return text


def _defensive(path: str, target: str) -> str:
    """Gemini's resolveDefensiveToolPath: `@dir/x` means `dir/x` unless `@dir` exists."""
    if scope.isfile(scope.join(target, path)) or scope.isdir(scope.join(target, path)):
        return path
    if path.startswith("@") and len(path) > 1:
        stripped = path[1:].lstrip("/\\")
        if path.startswith(("@/", "@\\")):
            return stripped or path
        first = stripped.replace("\\", "/").split("/")[0]
        if first:
            literal = scope.join(target, "@" + first)
            if scope.isfile(literal) or scope.isdir(literal):
                return path
            return stripped
    return path


def _exists(path: str) -> bool:
    try:
        scope.stat(path)
        return True
    except (OSError, ValueError):
        return False


def _real(path: str) -> "list[str]":
    """Gemini's resolveToRealPath of an absolute path: URI-decoded, then symlinks resolved.
    The path as named comes first when it is a link (a `MEMORY.md` link is the index Gemini
    loads, whatever its target is called), and both spellings when decoding changes it."""
    literal = scope.normpath(path)
    out = [scope.realpath(literal)]
    if out[0] != literal:
        out.insert(0, literal)
    decoded = _uri_decode(path[7:] if path.startswith("file://") else path)
    if decoded != path:
        extra = scope.realpath(scope.normpath(decoded if scope.isabs(decoded) else scope.join(scope.getcwd(), decoded)))
        if extra not in out:
            out.append(extra)
    return out


def search_workspace(root: str, rel: str, limit: int = SEARCH_DIR_LIMIT) -> "list[str]":
    """Files named like `rel` whose path ends with it, breadth first under `root` (regular
    files only, links not followed), as Gemini's path correction looks for them."""
    import os

    name = scope.basename(rel)
    tail = rel.replace("\\", "/")
    found: list[str] = []
    queue = [root]
    seen = 0
    while queue and seen < limit:
        folder = queue.pop(0)
        seen += 1
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    queue.append(entry.path)
                elif entry.name == name and entry.is_file(follow_symlinks=False) and entry.path.endswith(tail):
                    found.append(entry.path)
            except OSError:
                continue
    return found


def landing_paths(tool: str, raw: str, cwd: str, name: str, paths: "Sequence[str] | None") -> "list[str]":
    """Every absolute path this call may write, as Gemini resolves `file_path`. `name` and
    `paths`: the index name and ENGRAMORY_INDEX_PATH entries in force (see `names`)."""
    clean = raw.replace("\x00", "")
    if scope.isabs(clean) or clean.startswith("file://"):
        return _real(clean)
    sanitized = _defensive(clean, cwd)
    direct = scope.join(cwd, sanitized)
    out = _real(direct)
    if tool == REPLACE and not _exists(direct) and _may_be_index(scope.basename(sanitized), name, paths):
        for found in search_workspace(cwd, sanitized):
            for p in _real(found):
                if p not in out:
                    out.append(p)
    return out


def names(env: "Mapping[str, str]") -> "tuple[str, list[str] | None]":
    """(the index file name, the explicit index paths or None), without importing config."""
    return scope.index_name(env)[0], scope.index_paths(env)


def _may_be_index(base: str, name: str, paths: "Sequence[str] | None") -> bool:
    return base == name or base in {scope.basename(p) for p in paths or ()}


def guarded_index(path: str, name: str, paths: "Sequence[str] | None") -> bool:
    """An index this guard keeps (engramory.guard's identity: by name, by link, or by
    ENGRAMORY_INDEX_PATH). Gemini's private index is named MEMORY.md: guarded by default."""
    return scope.is_index(path, name, paths)


# -- judging ------------------------------------------------------------------------------



def _shape(lines: int, nbytes: int) -> bytes:
    """Bytes of exactly `lines` lines and `nbytes` bytes, for sizing a Bound by the one rule."""
    # Clamped: a bound past the read limit is over every cap anyway, and must not cost memory.
    lines = min(max(lines, 0), scope.READ_LIMIT)
    nbytes = min(max(nbytes, lines), scope.READ_LIMIT)
    if lines == 0:
        return b""
    return b"\n" * (lines - 1) + b"x" * (nbytes - lines + 1)


def _trace(env: "Mapping[str, str]", path: str, tool: str, outcome: "Outcome", strategy: str) -> None:
    # lazy: the edit model only for a call that may change an index
    from engramory.hosts.gemini.model import Bound
    from engramory.judge import TRACE_ENV  # lazy: the ignored path must not load the decision

    target = env.get(TRACE_ENV)
    if not target:
        return
    record: dict[str, Any] = {"host": NAME, "path": path, "tool": tool, "strategy": strategy,
                              "refused": outcome is None}
    if isinstance(outcome, Bound):
        record["bound"] = {"lines": outcome.lines, "bytes": outcome.nbytes}
        record["after"] = None
    else:
        record["after"] = outcome.hex() if outcome is not None else None
    try:
        with open(target, "a", encoding="utf-8") as f:
            f.write(jsonlite.dumps(record) + "\n")
    except OSError:
        pass


def judge(path: str, tool: str, before: "bytes | None", outcome: "Outcome", env: "Mapping[str, str]",
          seen: "Session | None" = None) -> "Decision | None":
    """The core's decision (judge.judge) on one predicted change; a Bound is judged as a
    file of exactly its size (and never by the stale-write rule: its bytes are not known).
    Read-only rules apply even when the host writes nothing."""
    # lazy: the ignored path must not load the decision; Gemini's own model predicts, so
    # engramory.guard (the Claude-shaped edit model) is not needed
    from engramory import judge as verdict

    # lazy: the edit model only for a call that may change an index
    from engramory.hosts.gemini.model import Bound

    if outcome is None:
        return verdict.judge(path, None, b"", env, window(), tool) if not _index(path, env) else None
    bound = isinstance(outcome, Bound)
    after = _shape(outcome.lines, outcome.nbytes) if isinstance(outcome, Bound) else outcome
    decision = verdict.judge(path, before, after, env, window(), tool, None if bound else seen)
    if decision is not None and decision.action == verdict.DENY and decision.caps is not None:
        if isinstance(outcome, Bound):
            decision.message = decision.message.replace(" would ", " would, at most, ", 1)
            decision.message += " (An upper bound: %s, so it is sized as if the edit lands.)" % outcome.why
        decision.message += " " + WINDOW_TEXT + "."
    return decision


def _index(path: str, env: "Mapping[str, str]") -> bool:
    return guarded_index(path, *names(env))


def _str(value: "Any") -> str:
    return value if isinstance(value, str) else ""


def decide(payload: "dict[str, Any]", env: "Mapping[str, str]") -> "Decision | None":
    """The deny for one BeforeTool payload, or None."""
    tool = _str(payload.get("tool_name"))
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    cwd = _str(payload.get("cwd")) or env.get("GEMINI_PROJECT_DIR", "") or env.get("GEMINI_CWD", "")
    if not scope.isabs(cwd):
        cwd = scope.getcwd()
    if tool == SHELL:
        return _shell_decision(payload, tool_input, cwd, env)
    if tool not in (WRITE_FILE, REPLACE):
        return None
    raw = tool_input.get("file_path")
    if not isinstance(raw, str) or not raw:
        return None
    return _landing_decision(payload, tool, tool_input, raw, cwd, env)


def _landing_decision(payload: "dict[str, Any]", tool: str, tool_input: "dict[str, Any]", raw: str, cwd: str,
                      env: "Mapping[str, str]") -> "Decision | None":
    """The first deny, else the first nudge, over every place a write_file or replace may land."""
    name, paths = names(env)
    worst: Decision | None = None
    private = private_index(cwd, env, scan=False)
    linked = scope.realpath(private) if scope.islink(private) else ""
    for path in landing_paths(tool, raw, cwd, name, paths):
        if linked and scope.realpath(path) == linked:
            path = private  # the target of Gemini's private index, written by its own name
        if guarded_index(path, name, paths):
            decision = _index_decision(tool, tool_input, path, env, _session(payload, path))
        elif scope.store_root_for(path, paths) is not None:
            decision = judge(path, tool, None, None, env)  # read-only rules only
        else:
            continue
        if decision is not None and decision.action == "deny":
            return decision
        worst = worst or decision
    return worst


def _session(payload: "Mapping[str, Any]", path: "str | None" = None) -> "Session | None":
    """The session for the stale-write rule: for a write of `path`, only when its store keeps a
    record (judge.session_for: one stat, engramory.stale not imported otherwise)."""
    if path is not None:
        from engramory.judge import session_for  # lazy: only for a write of an index

        return session_for(NAME, payload.get("session_id"), path)
    from engramory import stale  # lazy: the stale-write record only for a call on an index

    return stale.session(NAME, payload.get("session_id"))


def _index_decision(tool: str, tool_input: "dict[str, Any]", path: str, env: "Mapping[str, str]",
                    seen: "Session | None" = None) -> "Decision | None":
    # lazy: the edit model only for a call that may change an index
    from engramory.hosts.gemini import model as ge

    before = scope.read_regular(path)
    if before is None and _exists(path):
        return _unread_decision(tool, tool_input, path, env)
    outcome: Outcome
    if tool == WRITE_FILE:
        content = tool_input.get("content")
        if not isinstance(content, str):
            return None
        outcome = ge.write_file(before, content)
        strategy = ge.WRITE
        other = ge.unescape(content)
        if other != content:  # a model that is not Gemini 2/3 gets its content unescaped first
            alt = ge.write_file(before, other)
            if alt.count(b"\n") > outcome.count(b"\n") or len(alt) > len(outcome):
                outcome = ge.Bound(max(_lines(alt), _lines(outcome)), max(len(alt), len(outcome)),
                                   "Gemini unescapes write_file content for some models")
                strategy = "bound"
    else:
        old, new = tool_input.get("old_string"), tool_input.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        outcome, strategy = ge.replace(before, old, new, tool_input.get("allow_multiple") is True)
    _trace(env, path, tool, outcome, strategy)
    return judge(path, tool, before, outcome, env, seen)


def _unread_decision(tool: str, tool_input: "dict[str, Any]", path: str, env: "Mapping[str, str]") -> "Decision | None":
    """An index that exists but cannot be read in time (past guard.READ_LIMIT, not a regular
    file, no permission): a write_file is judged by its content (CRLF counted in), a replace
    by its worst case, new_string added in full."""
    from engramory import guard  # lazy: the ignored path must not load the guard

    try:
        size = scope.stat(path).st_size
    except (OSError, ValueError):
        size = 0
    from engramory.size import n as _n  # lazy: sizes only when a change is judged, not on the ignored path

    why = "the index could not be read (%s bytes, or not a regular file)" % _n(size)
    if tool == WRITE_FILE:
        content = tool_input.get("content")
        if not isinstance(content, str):
            return None
        # lazy: the edit model only for a call that may change an index
        from engramory.hosts.gemini import model as ge

        data = ge.encode(content)
        return judge(path, tool, None, ge.Bound(_lines(data), len(data) + data.count(b"\n"), why), env)
    new = tool_input.get("new_string")
    if not isinstance(new, str):
        return None
    decision = guard.judge_bound(path, None, new, env, window(), tool, why, (None, size))
    if decision is not None and decision.action == guard.DENY:
        decision.message += " " + WINDOW_TEXT + "."
    return decision


def _lines(data: bytes) -> int:
    # lazy: sizes only when a change is judged, not on the ignored path
    from engramory.size import count_lines

    return count_lines(data)


def _predicted(command: str, base: str, env: "Mapping[str, str]") -> "list[Predicted]":
    from engramory import shellwrite  # lazy: a command with a heredoc, or a `>` and printf or echo, only

    return shellwrite.predicted(command, base, lambda path: scope.interesting(path, env))


def _shell_decision(payload: "Mapping[str, Any]", tool_input: "dict[str, Any]", cwd: str,
                    env: "Mapping[str, str]") -> "Decision | None":
    """The first deny, else the first nudge, for a run_shell_command (engramory.hosts.gemini.shell):
    the writes whose bytes the command fixes judged as a write_file is, then every other
    append to an index at or over a hard cap denied. Other shell writes are reported after the
    fact (AfterTool)."""
    command = tool_input.get("command")
    if not isinstance(command, str):
        return None
    printed = "<<" in command or (">" in command and ("printf" in command or "echo" in command))
    if not printed and ">>" not in command and "tee" not in command:
        return None  # the common case: no write a rule here reads
    from engramory.hosts.gemini import shell  # lazy: a command that may write a file only

    base = _str(tool_input.get("dir_path"))
    base = scope.join(cwd, base) if base else cwd
    worst: Decision | None = None
    appended: list[str] = []
    for w in _predicted(command, base, env) if printed else []:
        if w.append:
            appended.append(w.target)
        _trace(env, w.path, SHELL_WRITE, w.after, "shell")
        decision = judge(w.path, SHELL_WRITE, w.before, w.after, env, _session(payload, w.path))
        if decision is not None and decision.action == "deny":
            return decision
        worst = worst or decision
    name, paths = names(env)
    for path in shell.unpredicted_appends(command, base, appended):
        if guarded_index(path, name, paths):
            decision = shell.at_cap(path, env, window(), WINDOW_TEXT)
            if decision is not None:
                return decision
    return worst


# -- the dialect ----------------------------------------------------------------------------


def parse(raw: bytes) -> "dict[str, Any] | None":
    """The payload object, or None. AfterTool's `tool_response` (the tool's whole output, up
    to megabytes) is cut off unread: nothing here needs it, and JSON.stringify puts it last
    (`,"tool_response":` cannot occur inside a JSON string, whose quotes are escaped)."""
    cut = raw.rfind(b',"tool_response":')
    if cut > 0 and raw.rstrip().endswith(b"}"):
        raw = raw[:cut] + b"}"
    try:
        payload = jsonlite.loads(jsonlite.decode_payload(raw))
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


def after_read(payload: "Mapping[str, Any]", env: "Mapping[str, str]") -> None:
    """AfterTool of read_file: when it read an index, what the agent saw is recorded for the
    stale-write rule (engramory.stale). Any other file: nothing imported, nothing opened."""
    tool_input = payload.get("tool_input")
    raw = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not isinstance(raw, str) or not raw:
        return
    cwd = _str(payload.get("cwd"))
    if not scope.isabs(cwd):
        return
    name, paths = names(env)
    if not _may_be_index(scope.basename(raw), name, paths) and not scope.guards_index(scope.resolve_path(raw, cwd), env):
        return
    from engramory import stale  # lazy: the stale-write record only for a call on an index

    who = _session(payload)
    for path in landing_paths(READ_FILE, raw, cwd, name, paths):
        if guarded_index(path, name, paths):
            stale.note_read(path, who)


def render_deny(decision: "Decision") -> str:
    return jsonlite.dumps({"decision": "deny", "reason": decision.message})


def respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """stdin bytes -> (stdout, stderr, exit code). Exit code is always 0."""
    environ = scope.environ() if env is None else env
    payload = parse(raw)
    if payload is None:
        return "", "", 0  # not a payload we can read: no opinion (an allow)
    event = payload.get("hook_event_name")
    if event == AFTER_TOOL and payload.get("tool_name") == READ_FILE:
        after_read(payload, environ)
        return "", "", 0
    if event in (AFTER_TOOL, SESSION_START):
        from engramory.hosts import gemini as this  # passed to notices, which never import it back
        from engramory.hosts.gemini import notices as gemini_notices  # lazy: AfterTool and SessionStart only

        handler = gemini_notices.after_tool if event == AFTER_TOOL else gemini_notices.session_start
        return handler(this, payload, environ), "", 0
    if event not in (BEFORE_TOOL, None):
        return "", "", 0
    decision = decide(payload, environ)
    if decision is not None and decision.action == "deny":
        return render_deny(decision), "", 0
    return "", "", 0


def main(argv: "list[str] | None" = None) -> int:
    from engramory.hosts import run  # lazy: the runtime only for the stand-alone entry

    return run(NAME)


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import gemini as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self

"""OpenAI Codex CLI: hook dialect, edit model and index locations (verified on 0.171.0).

Dialect (measured on the real CLI, shared reference "Codex CLI 0.171.0"):
- PreToolUse stdin: `tool_name` "apply_patch" with the raw patch, exactly as the model sent it,
  in `tool_input.command`; or "Bash" (Codex's `exec_command`) with the shell text in
  `tool_input.command` and its `workdir` as the payload's `cwd`. Codex intercepts an
  `apply_patch <<'EOF' ... EOF` heredoc run through the shell and applies it itself, and only
  the Bash hook sees it, so both are read here.
- The one deny Codex honours: stdout exactly
  `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",
  "permissionDecisionReason":"<non-empty>"}}`, exit 0. Any extra key, an empty reason or
  other text on stdout turns it into an allow, so nothing else is ever printed there.
- Exit 2 with text on stderr blocks the call: this module never exits 2, and every failure of
  its own is a silent exit 0 (fail open) with one line on stderr.
- A PreToolUse `additionalContext` without a decision reaches the model (a developer message):
  that is the nudge.

Edit model: engramory.patches with rules CODEX, the one V4A model, measured against this CLI
(tests/codex: generated and hand-picked patches through the tool and the shell). On top of it,
what only a whole patch shows: Add File writes over any file already there; Move to writes the
result at the destination (over any file there) and removes the source; every file is
computed before any is written, so one failure and nothing is written, and two operations on
one file refuse the whole patch.

Stale writes (measured, tests/hosts/codex/test_codex_stale.py): Codex has no read tool and no
staleness check; a read is a shell command, and PostToolUse's `tool_response` is its raw output.
When that output holds an index's bytes whole, `after_shell` records them as seen
(engramory.stale), so an Add over the index that drops lines another writer added since is
refused by the stale rule.

Codex's own managed memory ($CODEX_HOME/memories/) is Codex's business: its consolidation
agent rewrites MEMORY.md there through the same hooks, so it is never judged unless listed in
ENGRAMORY_INDEX_PATH or ENGRAMORY_CODEX_GUARD_MEMORIES=1. The index a user keeps for Codex
(the store its AGENTS.md names, or ENGRAMORY_INDEX_PATH) is guarded like any other.
"""

from engramory import jsonlite, scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from engramory import patches
    from engramory.judge import Decision
    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "codex"
TITLE = "OpenAI Codex CLI"
VERIFIED = "0.171.0"
INSTALLER = "engramory.hosts.codex.install"

TAG = "engramory codex guard"
PATCH_TOOL = "apply_patch"
SHELL_TOOL = "Bash"
SHELL_PATCH_TOOL = "apply_patch (through the shell)"
SHELL_WRITE_TOOL = "write through the shell (heredoc, printf or echo)"
GUARD_MEMORIES_ENV = "ENGRAMORY_CODEX_GUARD_MEMORIES"
AGENTS_FILES = ("AGENTS.override.md", "AGENTS.md")
AGENTS_READ_LIMIT = 1 << 20


def window() -> "Window":
    """Codex loads no MEMORY.md of its own into the model's context: the index a user keeps
    for Codex is read on demand, so it is held to the standard caps, in bytes."""
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(
        note="Codex loads AGENTS.md (32,768 bytes), not the index: the standard caps, in bytes",
    )


# --- where things are -------------------------------------------------------------------------


def codex_home(env: "Mapping[str, str]") -> str:
    home = env.get("CODEX_HOME", "").strip()
    return scope.abspath(scope.expanduser(home)) if home else scope.expanduser("~/.codex")


def memories_dir(env: "Mapping[str, str]") -> str:
    """Codex's own managed memory folder (real path)."""
    return scope.realpath(scope.join(codex_home(env), "memories"))


def exempt(path: str, env: "Mapping[str, str]") -> bool:
    """Whether `path` lies in Codex's own memory folder and is left to Codex."""
    if env.get(GUARD_MEMORIES_ENV, "").strip() not in ("", "0"):
        return False
    real = scope.realpath(path)
    mem = memories_dir(env)
    if not (real == mem or real.startswith(mem + scope.sep)):
        return False
    listed = scope.index_paths(env)
    return not (listed is not None and real in listed)


def _agents_files(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    """The instruction files Codex loads for `cwd`: $CODEX_HOME's, then each folder's from the
    project root (the nearest folder above holding .git) down to cwd; AGENTS.override.md
    replaces AGENTS.md in the same folder."""
    folders = []
    d = scope.abspath(cwd)
    chain = [d]
    while True:
        if scope.isdir(scope.join(d, ".git")) or scope.isfile(scope.join(d, ".git")):
            folders = list(reversed(chain))
            break
        parent = scope.dirname(d)
        if parent == d:
            folders = [scope.abspath(cwd)]
            break
        d = parent
        chain.append(d)
    out = []
    for folder in [codex_home(env)] + folders:
        for name in AGENTS_FILES:
            p = scope.join(folder, name)
            if scope.isfile(p):
                out.append(p)
                break
    return out


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    """The indexes the AGENTS.md files Codex loads for `cwd` name (any path ending in the
    index file name, relative ones taken from that file's folder), outside Codex's own memory
    folder. Paths may not exist."""
    name = scope.index_name(env)[0]
    pattern = None
    out: list[str] = []
    for path in _agents_files(cwd, env):
        try:
            text = scope.read_bounded(path, AGENTS_READ_LIMIT - 1)[0].decode("utf-8", "replace")
        except OSError:
            continue
        if name not in text:
            continue  # no match possible: `re` (~8 ms with enum) is loaded only for a file naming an index
        if pattern is None:
            import re

            pattern = re.compile(r"""(?:^|(?<=[\s`'"(<\[]))([^\s`'"()<>\[\]]*%s)(?=$|[\s`'")>\],.;:])""" % re.escape(name))
        base = scope.dirname(path)
        for m in pattern.finditer(text):
            raw = m.group(1)
            if "<" in raw or "*" in raw:
                continue  # a placeholder such as <root>/MEMORY.md
            full = scope.resolve_path(raw, base)
            if full not in out and not exempt(full, env):
                out.append(full)
    return out


# --- the edit model: Codex's apply_patch (engramory.patches, rules CODEX) ----------------------



def parse_patch(text: str) -> "list[patches.FileOp]":
    """A patch's file operations, read the way Codex reads them (a little more leniently
    about surrounding blank lines, which can only make the guard judge more).
    patches.PatchError when Codex would refuse it. (engramory.patches is imported only on
    the way to a patch: most calls this hook sees are shell commands without one.)"""
    from engramory import patches  # lazy: the patch parser only for a call that carries a patch

    return patches.parse_v4a(text, patches.CODEX)


def read_file(path: str) -> "bytes | None":
    return scope.read_regular(path)


class Write:
    """One file a patch changes: its bytes now and after (None: missing / removed)."""

    __slots__ = ("path", "before", "after")

    def __init__(self, path: str, before: "bytes | None", after: "bytes | None") -> None:
        self.path = path
        self.before = before
        self.after = after

    def __repr__(self) -> str:
        return "Write(%r, %s -> %s)" % (
            self.path, None if self.before is None else len(self.before), None if self.after is None else len(self.after),
        )


def predict(ops: "list[patches.FileOp]", cwd: "str | None", read: "Any" = read_file) -> "list[Write]":
    """Every file the patch writes or removes, with its bytes after; patches.PatchError when
    Codex would apply none of it (it verifies every file before writing any)."""
    from engramory import patches  # lazy: the patch parser only for a call that carries a patch

    writes: list[Write] = []
    seen: set[str] = set()
    for op in ops:
        path = scope.resolve_path(op.path, cwd)
        target = scope.resolve_path(op.move_to, cwd) if op.move_to else path
        for p in {path, target}:
            if p in seen:
                raise patches.PatchError("multiple operations target %s" % p)
            seen.add(p)
        if op.kind == patches.ADD:
            writes.append(Write(path, read(path), (op.content or "").encode("utf-8")))
            continue
        before = read(path)
        if before is None:
            raise patches.PatchError("failed to read %s" % path)
        if op.kind == patches.DELETE:
            writes.append(Write(path, before, None))
            continue
        after = patches.update(before, op.hunks, patches.CODEX, path)
        if target != path:
            writes.append(Write(target, read(target), after))
            writes.append(Write(path, before, None))
        else:
            writes.append(Write(path, before, after))
    return writes


# --- patches inside shell commands -------------------------------------------------------------


def shell_patches(command: str, cwd: "str | None") -> "list[tuple[str, str | None]]":
    """(patch text, folder it applies in) for every apply_patch a shell command runs:
    `apply_patch <<'EOF' ... EOF` (Codex intercepts it; `cd X &&` before it moves the folder),
    and, read generously, any other apply_patch with a patch in its text. Plain string
    scanning: importing `re` would double this hook's cost on every shell command."""
    out: list[tuple[str, str | None]] = []
    for name in ("apply_patch", "applypatch"):
        at = command.find(name)
        while at >= 0:
            end = at + len(name)
            before = command[at - 1] if at else " "
            after = command[end] if end < len(command) else " "
            if not (before.isalnum() or before in "_./-") and not (after.isalnum() or after in "_-"):
                line_start = command.rfind("\n", 0, at) + 1
                found = _patch_after(command[end:])
                if found is not None:
                    out.append((found, _cd_folder(command[line_start:at], cwd)))
            at = command.find(name, end)
    return out


def _patch_after(rest: str) -> "str | None":
    """The patch an apply_patch word is given: its heredoc body, or a patch in its text."""
    nl = rest.find("\n")
    head = rest if nl < 0 else rest[:nl]
    here = head.find("<<")
    if here >= 0 and nl >= 0 and not head[here + 2:here + 3] == "<":
        spec = head[here + 2:]
        strip_tabs = spec.startswith("-")
        spec = spec[1:] if strip_tabs else spec
        spec = spec.lstrip(" \t")
        if spec[:1] in ("'", '"'):
            close = spec.find(spec[0], 1)
            delim = spec[1:close] if close > 0 else ""
        else:
            stop = 0
            while stop < len(spec) and (spec[stop].isalnum() or spec[stop] in "_\\"):
                stop += 1
            delim = spec[:stop].replace("\\", "")
        if delim:
            body: list[str] = []
            for line in rest[nl + 1:].split("\n"):
                check = line.lstrip("\t") if strip_tabs else line
                if check.rstrip("\r") == delim:
                    return "\n".join(body) + "\n"
                body.append(check)
            # no closing line of its own (e.g. inside `bash -lc "..."`): read the patch's span
    from engramory.patches import BEGIN, END

    begin = rest.find(BEGIN)
    if begin >= 0:
        end = rest.find(END, begin)
        if end >= 0:
            return rest[begin:end + len(END)] + "\n"
    return None


def shell_cut(command: str, seps: "Sequence[str]") -> "list[str]":
    """`command` cut at every one of `seps`, one after the other, each from the right (so `&&&`
    leaves `&` before its last `&&`): the pieces in order, empty ones kept. Plain string work,
    for the PreToolUse `cd` and the PostToolUse words alike (`re` would double a hook's cost)."""
    pieces = [command]
    for sep in seps:
        pieces = [p for piece in pieces for p in piece.rsplit(sep)]
    return pieces


def _cd_folder(prefix: str, cwd: "str | None") -> "str | None":
    """The folder a `cd <dir> &&` just before the apply_patch moves to (else `cwd`)."""
    text = prefix.rstrip()
    if not text.endswith("&&"):
        return cwd
    last = shell_cut(text[:-2], ("&&", ";", "||", "|", "("))[-1].strip()
    if not (last.startswith("cd ") or last.startswith("cd\t")):
        return cwd
    raw = last[3:].strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        raw = raw[1:-1]
    elif not raw or any(c in raw for c in " \t$`"):
        return cwd  # an argument only a shell can work out: judge against the payload's folder
    return scope.resolve_path(raw, cwd)


# --- judging and answering -------------------------------------------------------------------


def judge(path: str, tool: str, before: "bytes | None", after: "bytes | None", env: "Mapping[str, str]",
          session_id: "object" = None) -> "Decision | None":
    """The core's decision on one predicted write (after None: the file is removed), with the
    stale-write rule for the session whose shell reads PostToolUse recorded (`after_shell`)."""
    # lazy: the ignored path must not load the decision. Codex predicts its own bytes, so the
    # decision is engramory.judge's without engramory.guard (the Claude-shaped edit model), and
    # the stale-write record is imported only for a store that keeps one (judge.session_for)
    from engramory import judge as verdict

    seen = verdict.session_for(NAME, session_id, path)
    return verdict.judge(path, before, after if after is not None else b"", env, window(), tool, seen)


def render_deny(reason: str) -> str:
    """The deny JSON. Codex shows the model `Command blocked by PreToolUse hook: <reason>.
    Command: <command>` (measured on 0.171.0), adding a period of its own: one final period of
    the reason is dropped so the model does not read "..". """
    reason = reason.strip() or "engramory blocked this edit: it would grow a memory index past its hard cap"
    if reason.endswith(".") and not reason.endswith(".."):
        reason = reason[:-1]
    return jsonlite.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    })


def render_context(text: str) -> str:
    return jsonlite.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text}})


def patches_of(payload: "Mapping[str, Any]") -> "list[tuple[str, str, str | None]]":
    """(tool label, patch text, folder) for every patch this call would apply."""
    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    cwd = payload.get("cwd")
    base = cwd if isinstance(cwd, str) and cwd else None
    if isinstance(tool_input, str):
        command: Any = tool_input
    elif isinstance(tool_input, dict):
        command = tool_input.get("command")
        if not isinstance(command, str):
            command = tool_input.get("input", tool_input.get("patch"))
    else:
        return []
    if not isinstance(command, str):
        return []
    if tool == SHELL_TOOL:
        return [(SHELL_PATCH_TOOL, text, folder) for text, folder in shell_patches(command, base)]
    from engramory.patches import BEGIN  # lazy: the patch parser only for a call that carries a patch

    if tool == PATCH_TOOL or BEGIN in command[:4096]:
        return [(PATCH_TOOL, command, base)]
    return []


def _mentions_guarded(ops: "list[patches.FileOp]", folder: "str | None", env: "Mapping[str, str]") -> bool:
    for op in ops:
        for raw in (op.path, op.move_to):
            if raw and scope.interesting(scope.resolve_path(raw, folder), env):
                return True
    return False


def shell_command(payload: "Mapping[str, Any]") -> "str | None":
    """The script of a shell call (`tool_input.command`), else None."""
    tool_input = payload.get("tool_input")
    if payload.get("tool_name") != SHELL_TOOL or not isinstance(tool_input, dict):
        return None
    command = tool_input.get("command")
    return command if isinstance(command, str) else None


def heredoc_writes(payload: "Mapping[str, Any]", env: "Mapping[str, str]") -> "list[tuple[str, Write]]":
    """(tool label, predicted write) for every guarded file a shell call replaces or appends to
    with `cat > FILE <<'EOF'`, `tee`, `printf` or `echo` (engramory.shellwrite: the forms whose
    bytes the command fixes; measured on 0.171.0, such a write after a stale read dropped the other writer's line,
    and one growing an index past its cap met no guard)."""
    command = shell_command(payload)
    if command is None or ("<<" not in command and ">" not in command):
        return []
    from engramory import shellwrite  # lazy: a shell command that carries a heredoc or a `>` only

    cwd = payload.get("cwd")
    base = cwd if isinstance(cwd, str) and cwd else None
    keep = lambda path: scope.interesting(path, env) and not exempt(path, env)  # noqa: E731
    return [(SHELL_WRITE_TOOL, Write(w.path, w.before, w.after)) for w in shellwrite.predicted(command, base, keep)]


def requests_of(payload: "Mapping[str, Any]", env: "Mapping[str, str]", notes: "list[str]") -> "list[tuple[str, Write]]":
    """(tool label, predicted write) for every guarded file this call changes."""
    out: list[tuple[str, Write]] = heredoc_writes(payload, env)
    found = patches_of(payload)
    if not found:
        return out
    from engramory import patches  # lazy: the patch parser only for a call that carries a patch

    for tool, text, folder in found:
        try:
            ops = parse_patch(text)
        except patches.PatchError:
            continue  # Codex refuses it and writes nothing
        if not _mentions_guarded(ops, folder, env):
            continue  # the common case: no store file in this patch; nothing is read
        try:
            writes = predict(ops, folder)
        except patches.PatchError as exc:
            # Codex verifies every file before writing any: this patch writes nothing.
            notes.append("%s: Codex will refuse this patch (%s); nothing to judge" % (TAG, exc))
            continue
        for w in writes:
            if scope.interesting(w.path, env) and not exempt(w.path, env):
                out.append((tool, w))
    return out


def handle(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """PreToolUse stdin bytes -> (stdout, stderr, exit code). Exit code is always 0."""
    environ = scope.environ() if env is None else env
    if (b"apply_patch" not in raw and b"applypatch" not in raw and b"*** Begin Patch" not in raw and b"<<" not in raw
            and (b">" not in raw or (b"printf" not in raw and b"echo" not in raw))):
        # Most calls are shell commands with no patch, no heredoc and no printf/echo into a file.
        # Codex writes the payload with serde, which never escapes ASCII letters, "<" or ">", so
        # none can hide from this test.
        return "", "", 0
    try:
        payload = jsonlite.loads(jsonlite.decode_payload(raw))
    except ValueError as exc:
        return "", "%s: stdin is not JSON (%s); call allowed\n" % (TAG, exc), 0
    if not isinstance(payload, dict):
        return "", "%s: stdin is not a JSON object; call allowed\n" % TAG, 0
    notes: list[str] = []
    nudges: list[str] = []
    for tool, w in requests_of(payload, environ, notes):
        decision = judge(w.path, tool, w.before, w.after, environ, payload.get("session_id"))
        if decision is None:
            continue
        from engramory.judge import DENY  # lazy: the ignored path must not load the decision

        if decision.action == DENY:
            return render_deny(decision.message), "", 0
        nudges.append(decision.message)
    err = "".join(n + "\n" for n in notes)
    if nudges:
        return render_context("\n\n".join(nudges)), err, 0
    return "", err, 0


def respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """The registry's dialect entry (same as `handle`), run by engramory.hosts.run: it fails
    open on any exception of ours (nothing on stdout, exit 0)."""
    return handle(raw, env)


# --- the backstops: PostToolUse and SessionStart ------------------------------------------------


def backstop_env(payload: "Mapping[str, Any]", env: "Mapping[str, str]") -> "dict[str, str]":
    """`env` with the indexes Codex's AGENTS.md files name added to ENGRAMORY_INDEX_PATH, so the
    shared backstops watch them too."""
    cwd = payload.get("cwd")  # scope, not os: os costs this hook ~1.5 ms
    found = index_paths(cwd if isinstance(cwd, str) and cwd else scope.getcwd(), env)
    out = dict(env)
    if found:
        listed = [p for p in env.get("ENGRAMORY_INDEX_PATH", "").split(scope.pathsep) if p.strip()]
        out["ENGRAMORY_INDEX_PATH"] = scope.pathsep.join(listed + [p for p in found if p not in listed])
    return out


# An index whose bytes a shell command's output holds whole is recorded as seen only up to
# this size: measured on 0.171.0, a `cat` of 28,560 bytes reached the model whole (PostToolUse's
# `tool_response` is the raw output, not the model's copy, which Codex may cut when larger).
SHELL_SEEN_LIMIT = 28000
_SHELL_SPLIT = " \t\r\n;|&<>()'\"`="


def _named_paths(command: str, name: str, cwd: "str | None") -> "list[str]":
    """Every word of `command` that ends in the index file name, as an absolute path."""
    out: list[str] = []
    for word in shell_cut(command, _SHELL_SPLIT):
        if word.endswith(name) and (word == name or word[-len(name) - 1] in "/\\"):
            full = scope.resolve_path(word, cwd)
            if full not in out:
                out.append(full)
    return out


def after_shell(payload: "Mapping[str, Any]", env: "Mapping[str, str]") -> None:
    """PostToolUse of a shell command (Codex's only way to read a file): when its output holds
    the bytes of an index it names, whole, record them as what this session saw
    (engramory.stale), so a later Add or Update that drops lines another writer added since is
    refused. Sound by construction: the record is made only of bytes the agent was shown, all
    of them; a partial or filtered read (`head`, `grep`, `nl`, a pipe) holds less and records
    nothing, nor does a read after which the file changed before this hook. Any other command:
    nothing opened."""
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    output = payload.get("tool_response")
    name = scope.index_name(env)[0]
    if not isinstance(command, str) or not isinstance(output, str) or name not in command or not output:
        return  # the common case: this command shows no index
    cwd = payload.get("cwd")
    shown = output.encode("utf-8", "surrogatepass")
    for path in _named_paths(command, name, cwd if isinstance(cwd, str) and cwd else None):
        if not scope.guards_index(path, env) or exempt(path, env):
            continue
        data = read_file(path)
        if not data or len(data) > SHELL_SEEN_LIMIT or data not in shown:
            continue
        from engramory import stale  # lazy: only a shell read that showed an index whole records

        stale.note_read(path, stale.session(NAME, payload.get("session_id")), data)


def post_tool_respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """PostToolUse (after Bash): what the agent saw of an index (`after_shell`), then the shared
    backstop, also watching the AGENTS.md-named index."""
    from engramory.hosts import parse_object  # the runtime's parser: loaded by every hook

    payload = parse_object(raw)
    if payload is None:
        return "", "", 0
    notice_env = backstop_env(payload, scope.environ() if env is None else env)
    try:
        after_shell(payload, notice_env)
    except Exception:  # noqa: BLE001 - a read that cannot be recorded is no record: fail open
        pass
    # lazy, both: after most shell commands nothing the backstop watches moved (one stat per
    # watched file), and notices is not imported (notices.post_tool watches no store config)
    from engramory import automemory

    if automemory.unchanged(payload, notice_env, configs=False):
        return "", "", 0
    from engramory import notices  # lazy: notices only when something it watches may have moved

    return notices.post_tool(payload, notice_env), "", 0


def session_start_respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """SessionStart: the shared notice, also for the AGENTS.md-named index."""
    from engramory import notices  # lazy: notices only on the after-tool and session-start paths

    payload = notices.parse(raw)
    if payload is None:
        return "", "", 0
    return notices.session_start(payload, backstop_env(payload, scope.environ() if env is None else env)), "", 0


# The event argument of the hook command -> the entry point (hooks/engramory_hook.py codex <event>).
ENTRIES = {"PreToolUse": "respond", "PostToolUse": "post_tool_respond", "SessionStart": "session_start_respond"}


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import codex as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self

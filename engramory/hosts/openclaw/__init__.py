"""OpenClaw (`openclaw`): a native plugin (written by `engramory install --host openclaw` and
enabled in the config) whose `before_tool_call` hook hands each `write`, `edit` and
`apply_patch` to this module through the generic entry, `hooks/engramory_hook.py openclaw`
(plugins of earlier installs run the shim `hooks/engramory_openclaw_hook.py`), and returns
`{block: true, blockReason}` when the answer is a deny (the model reads the reason verbatim).
A hook that throws or takes longer than 15 s BLOCKS the call ("before_tool_call hook failed"),
so the plugin catches everything, bounds each call to 5 s and lets the tool run otherwise.
OpenClaw 2026.9.6 runs plugin hooks under `openclaw agent --local` and the Gateway, NOT under
`openclaw agent exec`: there the guard never runs.

Protocol (the JS-plugin dialect, engramory.hosts.plugin): `{"event": "before", "tool", "params", "derivedPaths", "workspace",
"sessionId"}` -> `{"deny": R}` | `{"note": T}` | `{}`; `{"event": "read", "tool", "params",
"workspace", "sessionId"}` (from `before_tool_call` of `read`: what the session is about to be
shown of an index is recorded for the stale-write rule, engramory.stale; OpenClaw 2026.9.6 runs
`after_tool_call` without waiting for it, so a record made there could land after the next
request, and a write in between would be taken as seen) -> `{}`; and `{"event": "start", "sessionId", "workspace"}` (from
`before_prompt_build`, once per run, before the model's first request) -> `{"context": T}` | `{}`:
engramory's session-start backstop, which the plugin prepends to the prompt. OpenClaw 2026.9.6
has no channel from a plugin to the model between a tool and the next request (a mutated
`after_tool_call` result, `enqueueNextTurnInjection` and `tool_result_persist` are not delivered;
measured), so there is no post-tool notice: an index a shell command grew past its cap is
reported at the start of the next run.

Native memory: the agent workspace's `MEMORY.md` (`agents.defaults.workspace`, default
`~/.openclaw/workspace`) is injected into the main session's prompt with a cap in characters
(`bootstrapMaxChars`, 20,000): past it the first ~75 % and the last ~25 % are kept and the
middle is dropped (measured: 14,917 + 4,972 of a 35,600-character file). The guard judges that
file by that window, so its message names the entries in the dropped middle; any other index
keeps the standard window.

Edit model (from OpenClaw 2026.9.6's edit tool): every `oldText` is matched against the
ORIGINAL file (CRLF folded), exactly, else after trailing whitespace is trimmed per line and
quotes, dashes and odd spaces are folded (a fuzzy match keeps the file's own trailing
whitespace); each must be found once, none may overlap, and the call is all-or-nothing. Where
that fuzzy match runs on text Unicode NFKC normalisation changes (OpenClaw normalises both
sides and maps the span back through grapheme boundaries, not ported), the call is refused
when the normalised text is missing or ambiguous, and otherwise judged by its worst case (all
its new text added), never passed in silence. A file
whose line breaks were all CRLF is written CRLF; where endings were mixed the line count is
exact and the bytes within one per new line break (the per-line restoration is not ported).
`write` writes the content as given and drops an existing BOM. `apply_patch` is OpenClaw's own
parser and applier, ported (hosts/openclaw/patchmodel.py): old lines matched
exactly, then without trailing, then surrounding whitespace, then with typography made plain,
each refused when missing or found more than once; context lines and replaced lines keep the
file's own bytes and endings. A file that two operations of one patch change is judged by its
worst case (all new lines added), except a Delete of it followed by an Add of it: OpenClaw runs
the operations in order, so that leaves the Add's content, predicted exactly.
"""

from engramory import jsonlite, scope
from engramory.hosts import EDIT, WRITE, parse_object, path_of, plugin_quiet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.hosts.claudelike import Unknown
    from engramory.judge import Decision
    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "openclaw"
TITLE = "OpenClaw"
VERIFIED = "2026.9.6"
INSTALLER = "engramory.hosts.openclaw.install"
FAIL_OPEN = "{}"  # the plugin reads it as "go on"
TOOLS = {"write": WRITE, "edit": EDIT}
PATH_KEYS = ("path", "file_path")
PATCH_TOOLS = ("apply_patch",)  # judged whatever it names: the patch names its files
BOOTSTRAP_MAX_CHARS = 20_000
BOM = b"\xef\xbb\xbf"


def window() -> "Window":
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(
        unit=size.CHARS, lines=None, size=BOOTSTRAP_MAX_CHARS, keep=size.HEAD_TAIL,
        note="OpenClaw 2026.9.6 workspace MEMORY.md (bootstrapMaxChars): head and tail kept, the middle dropped",
    )


def config_path(env: "Mapping[str, str]") -> str:
    # scope's paths are os.path's without importing os (~1.5 ms on the deny path)
    explicit = env.get("OPENCLAW_CONFIG_PATH", "")
    if explicit:
        return scope.abspath(scope.expanduser(explicit))
    home = env.get("OPENCLAW_HOME") or env.get("HOME") or scope.expanduser("~")
    return scope.join(home, ".openclaw", "openclaw.json")


def workspace(env: "Mapping[str, str]") -> str:
    """The agent workspace: agents.defaults.workspace from the config, else ~/.openclaw/workspace."""
    path = config_path(env)
    raw = scope.read_regular(path)
    if raw is not None:
        try:
            data = jsonlite.loads(raw.decode("utf-8", "replace"))
            ws = data.get("agents", {}).get("defaults", {}).get("workspace") if isinstance(data, dict) else None
            if isinstance(ws, str) and ws:
                return scope.abspath(scope.expanduser(ws))
        except (ValueError, AttributeError):
            pass
    return scope.join(scope.dirname(path), "workspace")


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    return [scope.join(workspace(env), scope.INDEX_NAME)]


def _window_for(path: str, env: "Mapping[str, str]") -> "Window | None":
    own = index_paths("", env)[0]
    return window() if scope.realpath(path) == scope.realpath(own) else None


# --- the edit model ---------------------------------------------------------------------------

_FOLD = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
    "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2004": " ", "\u2005": " ", "\u2006": " ", "\u2007": " ",
    "\u2008": " ", "\u2009": " ", "\u200a": " ", "\u202f": " ", "\u205f": " ", "\u3000": " ",
})
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _fuzzy(text: str) -> "tuple[str, list[int], list[int]]":
    """(normalised text, start map, end map): each normalised offset's position in `text`,
    as OpenClaw's boundaries give them (a trimmed line end maps to the end of the kept text
    when a span ends there and past the trimmed whitespace when one starts there)."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pos = 0
    lines = text.split("\n")
    for k, line in enumerate(lines):
        kept = line.rstrip(_JS_SPACE)
        for i, ch in enumerate(kept):
            starts.append(pos + i)
            ends.append(pos + i)
            out.append(ch.translate(_FOLD))
        starts.append(pos + len(line))  # the boundary at the end of the kept text
        ends.append(pos + len(kept))
        if k < len(lines) - 1:
            out.append("\n")
        pos += len(line) + 1
    return "".join(out), starts, ends


def _nfkc_sensitive(content: str, old: str) -> bool:
    import unicodedata  # only for an oldText that does not match exactly

    return unicodedata.normalize("NFKC", content) != content or unicodedata.normalize("NFKC", old) != old


def _nfkc_count(content: str, old: str) -> int:
    """How often OpenClaw's normalised `old` occurs in its normalised `content` (NFKC, then
    each line's end trimmed and quotes, dashes and spaces folded); 0 also for an `old` that
    normalises to nothing (OpenClaw refuses that)."""
    import unicodedata

    want = _fuzzy(unicodedata.normalize("NFKC", old))[0]
    return _fuzzy(unicodedata.normalize("NFKC", content))[0].count(want) if want else 0


def _find(content: str, old: str, fuzzy: "tuple[str, list[int], list[int]] | None") -> "tuple[int, int] | None":
    """(index, length) of `old` in `content` as OpenClaw finds it; None: not found, ambiguous,
    or a fuzzy span it refuses."""
    if old in content:
        return (content.find(old), len(old)) if content.count(old) == 1 else None
    assert fuzzy is not None
    text, starts, ends = fuzzy
    want = _fuzzy(old)[0]
    if not want or text.count(want) != 1:
        return None
    i = text.find(want)
    a, b = starts[i], ends[i + len(want)]
    return (a, b - a) if b >= a else None


def _matched(content: str, olds: "list[tuple[str, str]]") -> "tuple[list[tuple[int, int, str]], bool] | None":
    """(index, length, new text) of every edit OpenClaw finds, and whether one is found only
    through its NFKC-aware match; None when one is missing or ambiguous (the call fails)."""
    fuzzy = _fuzzy(content) if any(o not in content for o, _ in olds) else None
    matched = []
    unknown = False
    for o, n in olds:
        if o not in content and _nfkc_sensitive(content, o):
            # OpenClaw normalises both with NFKC before its fuzzy match and maps the span
            # back through grapheme boundaries, which is not ported: whether it applies the
            # call is known only when the normalised text is missing or ambiguous.
            assert fuzzy is not None
            if _nfkc_count(content, o) != 1:
                return None
            unknown = True
            continue
        hit = _find(content, o, fuzzy)
        if hit is None:
            return None
        matched.append((hit[0], hit[1], n))
    return matched, unknown


def _spliced(content: str, matched: "list[tuple[int, int, str]]") -> "str | None":
    """Every edit applied to the original text at once; None where two overlap."""
    matched.sort()
    for (a, la, _), (b, _, _) in zip(matched, matched[1:]):
        if a + la > b:
            return None  # overlapping edits: the whole call fails
    parts, cursor = [], 0
    for a, la, n in matched:
        parts.append(content[cursor:a])
        parts.append(n)
        cursor = a + la
    parts.append(content[cursor:])
    return "".join(parts)


def _restored(raw: str, after: str, bom: bool) -> "tuple[bytes, int]":
    """The edited LF text written with the file's BOM and endings, and the byte bound."""
    from engramory.scope import encode  # loaded already (the one UTF-8 writer): no import on this path

    head = BOM if bom else b""
    crlf, lf_total = raw.count("\r\n"), raw.count("\n")
    if crlf == 0:
        return head + encode(after), 0
    if crlf == lf_total and "\r" not in raw.replace("\r\n", ""):
        return head + encode(after.replace("\n", "\r\n")), 0
    return head + encode(after), after.count("\n")  # mixed endings: restored line by line


def apply_edits(before: "bytes | None", edits: "list[tuple[str, str]]") -> "tuple[bytes | Unknown | None, int]":
    """(bytes written, None when refused or an Unknown when only OpenClaw's NFKC-aware match
    could apply it; byte bound: exact when 0)."""
    if before is None or not edits:
        return None, 0
    bom = before.startswith(BOM)
    raw = before[3 if bom else 0 :].decode("utf-8", "replace")
    content = _lf(raw)
    olds = [(_lf(o), _lf(n)) for o, n in edits]
    found = None if any(o == "" for o, _ in olds) else _matched(content, olds)
    if found is None:
        return None, 0
    matched, unknown = found
    if unknown:
        from engramory.hosts import claudelike  # lazy: only an edit the model cannot reproduce

        return claudelike.Unknown(
            "".join(n for _, n in olds),
            "OpenClaw may apply it through a match after Unicode NFKC normalisation, which "
            "engramory does not reproduce",
        ), 0
    after = _spliced(content, matched)
    if after is None or after == content:
        return None, 0
    return _restored(raw, after, bom)


def apply_write(content: str) -> bytes:
    from engramory.scope import encode  # loaded already (the one UTF-8 writer): no import on this path

    return encode(content[1:] if content.startswith("\ufeff") else content)


def _edits_of(params: "dict[str, Any]") -> "list[tuple[str, str]] | None":
    items = params.get("edits")
    if not isinstance(items, list):
        old, new = params.get("oldText"), params.get("newText")
        return [(old, new)] if isinstance(old, str) and isinstance(new, str) else None
    out = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("oldText"), str) or not isinstance(item.get("newText"), str):
            return None
        out.append((item["oldText"], item["newText"]))
    return out


def _patch(text: str, base: "str | None", derived: "list[str]", env: "Mapping[str, str] | None",
           environ: "Mapping[str, str]", session_id: "Any" = None) -> "Decision | None":
    from engramory import patches  # lazy: the patch parser only for a patch (never quiet)
    from engramory.hosts import claudelike, plugin  # lazy: the judge and the plugin dialect, likewise
    from engramory.hosts.openclaw import patchmodel  # lazy: only an apply_patch call loads the port

    try:
        ops = patchmodel.parse_openclaw(text)
    except patches.PatchError:
        return None  # OpenClaw refuses the whole patch and changes nothing
    touched = [{scope.resolve_path(op.path, base), scope.resolve_path(op.target, base)} for op in ops]
    for op in ops:
        target = scope.resolve_path(op.target, base)
        if op.kind == patches.DELETE or not scope.interesting(target, environ):
            continue
        source = scope.resolve_path(op.path, base)
        # another operation of this patch changes the file too: the result is not predicted
        # from the file on disk, so the worst case is judged (every op's new lines added)
        shared = [o for o, files in zip(ops, touched) if target in files]
        # ... except a Delete of the file and then an Add of it (patchmodel.rewrites)
        rewrite = patchmodel.rewrites(shared, op, base, target)
        added = "".join(_added(o) for o in shared) if len(shared) > 1 and not rewrite else None

        def run(before: "bytes | None", op: "Any" = op, source: str = source, target: str = target,
                added: "str | None" = added, rewrite: bool = rewrite) -> "bytes | Unknown | None":
            return patchmodel.predict_op(before, op, source, target, added, rewrite)

        seen = plugin.session(NAME, session_id, target)
        decision = claudelike.judge(target, "apply_patch", run, env, _window_for(target, environ), seen)
        if decision is not None:
            return decision
    return None


def _added(op: "Any") -> str:
    # lazy: patches loads only for a patch that names a guarded file
    from engramory import patches

    if op.kind == patches.ADD:
        return str(op.content)
    return "".join(n + "\n" for h in op.hunks for n in h.new)


def patch_update(old: bytes, op: "Any") -> "tuple[bytes | None, int]":
    """(bytes OpenClaw writes for a V4A update of a file holding `old`, byte bound): its own
    applier, ported (patchmodel.openclaw_update), so the bound is 0; None where it refuses."""
    # lazy: patches loads only for a patch that names a guarded file
    from engramory import patches
    from engramory.hosts.openclaw import patchmodel  # lazy: only an apply_patch call loads the port

    try:
        return patchmodel.openclaw_update(old, op.hunks), 0
    except patches.PatchError:
        return None, 0


def before_tool(payload: "dict[str, Any]", env: "Mapping[str, str] | None") -> "Decision | None":
    tool, params = payload.get("tool"), payload.get("params")
    if not isinstance(tool, str) or tool not in (*TOOLS, *PATCH_TOOLS) or not isinstance(params, dict):
        return None
    environ = scope.environ() if env is None else env
    ws = payload.get("workspace")
    if tool not in PATCH_TOOLS:
        return _file_decision(payload, str(tool), params, ws if isinstance(ws, str) and ws else None, env, environ)
    base = ws if isinstance(ws, str) and ws else workspace(environ)  # relative paths: the agent workspace
    text = params.get("input")
    derived = payload.get("derivedPaths")
    paths = [p for p in derived if isinstance(p, str)] if isinstance(derived, list) else []
    return _patch(text, base, paths, env, environ, payload.get("sessionId")) if isinstance(text, str) else None


def _file_decision(payload: "dict[str, Any]", tool: str, params: "dict[str, Any]", ws: "str | None",
                   env: "Mapping[str, str] | None", environ: "Mapping[str, str]") -> "Decision | None":
    """The decision on a `write` or an `edit` of one file (`ws`: the payload's workspace)."""
    raw = path_of(params, PATH_KEYS)
    if raw is None:
        return None
    if ws is None and not scope.isabs(scope.expanduser(raw)):
        ws = workspace(environ)  # a relative path: the agent workspace (its config is read only then)
    full = scope.resolve_path(raw, ws)
    if not scope.interesting(full, environ):
        return None
    from engramory.hosts import claudelike, plugin  # lazy: the host-side judge, only for a guarded file

    win = _window_for(full, environ)
    seen = plugin.session(NAME, payload.get("sessionId"), full)
    if tool == "write":
        content = params.get("content")
        if not isinstance(content, str):
            return None
        return claudelike.judge(full, "write", lambda before: apply_write(content), env, win, seen)
    edits = _edits_of(params)
    if edits is None:
        return None
    bound = [0]

    def run(before: "bytes | None") -> "bytes | Unknown | None":
        after, bound[0] = apply_edits(before, edits)
        return after

    return claudelike.lenient(claudelike.judge(full, "edit", run, env, win, seen), bound[0])


def before_read(payload: "dict[str, Any]", env: "Mapping[str, str] | None") -> None:
    """Before `read`: when it reads an index, record what the session is shown (engramory.stale).
    Any other file: nothing imported, nothing opened."""
    from engramory.hosts import plugin  # lazy: loaded already by a read that is not quiet

    raw = path_of(payload.get("params"), PATH_KEYS)
    if raw is None:
        return
    environ = scope.environ() if env is None else env
    ws = payload.get("workspace")
    if not (isinstance(ws, str) and ws) and not raw.startswith("/"):
        ws = workspace(environ)  # a relative path: the agent workspace (its config is read only then)
    plugin.record_read(NAME, payload.get("sessionId"), raw, ws if isinstance(ws, str) and ws else None, environ)


def respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """The plugin's question -> (stdout JSON, stderr, 0) (engramory.hosts.plugin); no `after`:
    OpenClaw has no channel from a plugin to the model between a tool and the next request. A
    question that surely gets `{}` (engramory.hosts.plugin_quiet; a relative path without a
    workspace is left to the dialect, which reads OpenClaw's config for the base) is answered
    before the plugin dialect is loaded."""
    payload = parse_object(raw)
    if payload is None or plugin_quiet(payload, "params", "workspace", TOOLS, PATH_KEYS, env, PATCH_TOOLS):
        return FAIL_OPEN, "", 0
    from engramory.hosts import plugin  # lazy: a quiet question never loads the plugin dialect

    host = plugin.Plugin(NAME, before_tool, index_paths, window, read=before_read, start=start_notice,
                         session_key="sessionId", cwd_key="workspace")
    return plugin.answer(payload, env, host)


def start_notice(payload: "dict[str, Any]", env: "Mapping[str, str] | None") -> str:
    """The session-start backstop for one run: `{"context": T}` when an index the session loads
    is past its warn or hard cap (the workspace MEMORY.md by OpenClaw's own 20,000-character
    window), or its store needs attention; else `{}`. The lines are engramory.notices's."""
    from engramory import automemory, notices  # lazy: notices only on the after-tool and session-start paths
    from engramory.describe import read_index  # lazy: notices only on the after-tool and session-start paths
    from engramory.guard import READ_LIMIT, masked  # lazy: the ignored path must not load the guard
    from engramory.size import OK  # lazy: sizes only when a change is judged, not on the ignored path

    environ = dict(scope.environ() if env is None else env)
    ws = payload.get("workspace")
    base = ws if isinstance(ws, str) and ws else workspace(environ)
    shaped = {"session_id": payload.get("sessionId"), "cwd": base}
    notice_env = automemory.watch_env(shaped, index_paths, environ)
    indexes = notices.known_indexes(shaped, notice_env)
    lines, roots = [], []
    for path in indexes:
        reading = read_index(path, notice_env, window=_window_for(path, notice_env), limit=READ_LIMIT)
        if reading is None:
            continue
        if reading.status != OK:
            lines.append(notices.start_line(reading))
        roots.append(scope.dirname(path))
    lines.extend(notices.reconcile_stores(indexes, "at session start", True))
    lines += notices.doctor_lines(roots, notice_env)
    return jsonlite.dumps({"context": masked("engramory: " + " ".join(lines))}) if lines else FAIL_OPEN


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import openclaw as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self

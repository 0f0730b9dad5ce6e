"""The three tools: their definitions (names, descriptions, input schemas, annotations) and
how a call becomes a result.

The parameter names are those of Anthropic's memory tool (paths under /memories, view_range,
file_text, old_str/new_str, insert_line/insert_text, old_path/new_path), so a model trained on it
uses them without coaching. A result carries its text (what the model reads) and, from protocol
2025-06-18 on, the same facts as structuredContent; a refusal is a result with isError, whose
text says what happened, with the numbers, and what to do next. Every string of a result is
masked (engramory.store.secrets.redact_json, the one masker), and no result is over RESULT_MAX
characters.
"""

from __future__ import annotations

import json

from engramory.curate import index as curate_index
from engramory.curate.notes import Refusal
from engramory.mcp import edit, paths, protocol, view
from engramory.mcp.result import RESULT_MAX, Answer, ToolError, cut
from engramory.store import journal
from engramory.store import secrets as excerpt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

SEARCH_MAX = 10
HIT_MAX = 300

_PATH = {"type": "string", "description": "/memories, /memories/MEMORY.md (the index) or /memories/<name>.md"}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "memory_view",
        "title": "View memory",
        "description": (
            "Read long-term memory. Call it on /memories at the start of a task: it names the store and lists "
            "every note (size, type, description; no bodies). /memories/MEMORY.md is the index as the host "
            "loads it; a note path shows the note with line numbers. view_range [start, end] pages a file or "
            "a listing (end -1: to the end)."),
        "inputSchema": {"type": "object", "properties": {
            "path": _PATH,
            "view_range": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}},
            "required": ["path"]},
        "annotations": {"title": "View memory", "readOnlyHint": True, "destructiveHint": False,
                        "idempotentHint": True, "openWorldHint": False},
    },
    {
        "name": "memory_edit",
        "title": "Edit memory",
        "description": (
            "Save or change long-term memory; one durable fact per note, never a secret. Every change is "
            "locked, journaled and answered with a receipt. create: file_text is the whole note, frontmatter "
            "(name = file name, description, type user|feedback|project|reference, created, updated as "
            "YYYY-MM-DD) then the body; feedback and project notes need **Why:** and **How to apply:** lines; "
            "its index line is added for you. str_replace: old_str (once) -> new_str. insert: insert_text "
            "after line insert_line (0: top). rename: old_path -> new_path. delete: archives the note (undoable). "
            "An edit that would grow MEMORY.md past what the host loads is refused with the numbers."),
        "inputSchema": {"type": "object", "properties": {
            "command": {"type": "string", "enum": ["create", "str_replace", "insert", "delete", "rename"]},
            "path": _PATH,
            "file_text": {"type": "string"},
            "old_str": {"type": "string"},
            "new_str": {"type": "string"},
            "insert_line": {"type": "integer", "minimum": 0},
            "insert_text": {"type": "string"},
            "old_path": {"type": "string"},
            "new_path": {"type": "string"}},
            "required": ["command"]},
        "annotations": {"title": "Edit memory", "readOnlyHint": False, "destructiveHint": True,
                        "idempotentHint": False, "openWorldHint": False},
    },
    {
        "name": "memory_search",
        "title": "Search memory",
        "description": (
            "Ranked search over every note, archived ones too (description first, then name and body; CJK "
            "too), for when the index has no fit: words, an error string, a file name. At most 10 hits, each "
            "with path:line and a snippet; open a hit with memory_view before relying on it."),
        "inputSchema": {"type": "object", "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX}},
            "required": ["query"]},
        "annotations": {"title": "Search memory", "readOnlyHint": True, "destructiveHint": False,
                        "idempotentHint": True, "openWorldHint": False},
    },
]
NAMES = tuple(t["name"] for t in TOOLS)


def definitions(version: str) -> list[dict[str, Any]]:
    """The tool list as protocol `version` has it: `title` from 2025-06-18, annotations from
    2025-03-26."""
    out = []
    for tool in TOOLS:
        t = dict(tool)
        if not protocol.at_least(version, "2025-06-18"):
            t.pop("title")
        if not protocol.at_least(version, "2025-03-26"):
            t.pop("annotations")
        out.append(t)
    return out


class Tools:
    """The tools over one store root."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.handlers: dict[str, Callable[[dict[str, Any]], Answer]] = {
            "memory_view": self.view, "memory_edit": self.edit, "memory_search": self.search}

    def call(self, name: str, arguments: dict[str, Any], version: str) -> dict[str, Any]:
        handler = self.handlers.get(name)
        if handler is None:
            raise protocol.ParamsError("unknown tool %s; this server has %s" % (cut(name, 60), ", ".join(NAMES)))
        try:
            answer = handler(arguments)
            result = _result(answer.text, answer.data, False, version)
        except ToolError as exc:
            result = _result(str(exc), dict(exc.data, ok=False, error=str(exc)), True, version)
        except paths.PathRefused as exc:
            result = _result(str(exc), {"ok": False, "error": str(exc)}, True, version)
        except Exception as exc:  # noqa: BLE001 - a library refusal or a file error: the model reads it
            message = failure(exc)
            if message is None:
                raise
            result = _result(message, {"ok": False, "error": message}, True, version)
        return _bounded(result, version)

    # -- the three tools ----------------------------------------------------------------------

    def view(self, args: dict[str, Any]) -> Answer:

        irel = curate_index.index_rel(self.root)
        target = paths.resolve(self.root, args.get("path"), irel)
        vr = args.get("view_range")
        if target.kind == paths.INDEX:
            return view.index(self.root, target, vr)
        if target.kind in (paths.ROOT, paths.ARCHIVE_DIR):
            return view.folder(self.root, target, vr, irel)
        import os

        if target.kind == paths.OTHER and os.path.isdir(target.full):
            return view.folder(self.root, target, vr, irel)
        return view.file(target, vr)

    def edit(self, args: dict[str, Any]) -> Answer:

        return edit.run(self.root, args)

    def search(self, args: dict[str, Any]) -> Answer:
        # the search index (sqlite3) only for a search call: not on the other tools' path
        from engramory.curate import searchindex

        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolError("memory_search needs query: words, an error string or a file name")
        limit = args.get("limit", SEARCH_MAX)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= SEARCH_MAX:
            raise ToolError("limit must be an integer from 1 to %d" % SEARCH_MAX)
        query = cut(query, 1000)  # a query past this is no recall key; nor is it held or echoed whole
        hits = searchindex.search(self.root, query, None, limit)  # the scan's hits, by the index when it can
        rows, lines = [], []
        for i, h in enumerate(hits, 1):
            d = h.doc
            path = paths.shown(d.rel)
            head = "%d. %s (%s%s) %s" % (i, path, d.type or "no type", ", archived" if d.archived else "",
                                         " ".join(d.description.split()))
            line = cut(head, 170) + "\n   %s:%d: %s" % (path, h.line, h.snippet)
            lines.append(cut(line, HIT_MAX))
            rows.append({"rank": i, "path": path, "type": d.type, "archived": d.archived,
                         "description": cut(" ".join(d.description.split()), 150), "line": h.line,
                         "snippet": cut(h.snippet, 120), "score": round(h.score, 4)})
        if not lines:
            text = ("no note matches %s; not finding a note proves nothing: memory is a curated selection"
                    % excerpt.quote(query, 80))
        else:
            text = "\n".join(lines + ["(open a note with memory_view before relying on it)"])
        return Answer(text, {"query": cut(query, 200), "results": rows})


def failure(exc: BaseException) -> str | None:
    """The model-facing message for what the curation library refuses or the disk does, or
    None for an exception that is a bug (the protocol layer answers -32603 for it)."""

    if isinstance(exc, Refusal):
        return str(exc)
    if isinstance(exc, (journal.JournalConflict, journal.LockTimeout)):
        return "%s (another writer held the store or changed a file under this edit; nothing was written: call " \
               "memory_edit again)" % exc
    if isinstance(exc, journal.JournalError):
        return "%s; nothing was written" % exc
    if isinstance(exc, UnicodeError):
        return "a text is not valid UTF-8 (a lone surrogate); nothing was written: send it as UTF-8 text"
    if isinstance(exc, OSError):
        return "%s: %s; nothing was written" % (exc.filename or "the store", exc.strerror or exc)
    return None


def _result(text: str, data: dict[str, Any], is_error: bool, version: str) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": is_error}
    if protocol.at_least(version, "2025-06-18"):
        # the text first: a client that shows the model only the structured copy (Claude Code
        # 2.1.332 does) still gives it the whole answer, numbers and next step included
        result["structuredContent"] = dict({"text": text}, **{k: v for k, v in data.items() if k != "text"})
    masked: dict[str, Any] = excerpt.redact_json(result)
    return masked


def size(result: dict[str, Any]) -> int:
    return len(json.dumps(result, ensure_ascii=False, separators=(",", ":")))


def _bounded(result: dict[str, Any], version: str) -> dict[str, Any]:
    """`result`, or a shortened one when it would pass RESULT_MAX (the views budget for it, so
    this is the last line of defence: a long refusal, many warnings)."""
    if size(result) <= RESULT_MAX:
        return result
    text = result["content"][0]["text"]
    data = result.get("structuredContent") or {}
    slim = {k: v for k, v in data.items() if isinstance(v, (bool, int, float, str)) or v is None}
    short = cut(text, RESULT_MAX // 2)
    out = _result(short, dict(slim, cut=True), bool(result.get("isError")), version)
    while size(out) > RESULT_MAX:
        short = cut(short, len(short) * 2 // 3)
        out = _result(short, {"cut": True}, bool(result.get("isError")), version)
    return out

"""Windsurf (Cascade): a `pre_write_code` hook in `hooks.json`, denied by exit 2 with the
reason on stderr; there is no JSON decision (engramory.hosts.claudelike with `deny="exit"` and
Windsurf's own payload keys). Not verified on the real host: Windsurf is a desktop IDE no
package registry ships. Facts from https://docs.windsurf.com/windsurf/cascade/hooks, as
PORTING.md says.

- Payload: `{"agent_action_name": "pre_write_code", "trajectory_id", "execution_id",
  "timestamp", "tool_info": {"file_path", "edits": [{"old_string", "new_string"}]}}`; no cwd
  (a relative path joins the hook's working directory).
- Answers: exit 2 denies and "Cascade will see the error message from stderr"; any other exit
  proceeds, so a pass is silence and exit 0.
- Edit model: the edits applied in order, each replacing one occurrence (which one does not
  change the size). How a whole-file write is encoded is undocumented: an empty
  `old_string` on a missing file creates it with `new_string`; an empty one on an existing
  file, or one not found, is judged by its worst case (its `new_string` added).
- Native memory: Cascade's memories are its own store, not a file; rule files have their own
  limit (12,000 characters). A store's index is held to the standard caps.
"""

from engramory.hosts import EDIT, claude_entries

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.hosts import claudelike
    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "windsurf"
TITLE = "Windsurf"
VERIFIED = ""
UNVERIFIED_WHY = ("Windsurf is a desktop IDE that no package registry reachable here ships; built from its hooks docs, "
                  "which do not show how a whole-file write appears in tool_info.edits")
INSTALLER = "engramory.hosts.windsurf.install"
EVENT = "pre_write_code"
TOOLS = {EVENT: EDIT}
PATH_KEYS = ("file_path",)


def window() -> "Window":
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(note="Windsurf loads no MEMORY.md of its own (its docs): the standard caps, in bytes")


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    return []


def payload_of(payload: "dict[str, Any]") -> "tuple[Any, Any, Any]":
    """(tool, tool input, cwd) of a `pre_write_code` payload; anything else is not ours."""
    tool = payload.get("agent_action_name")
    return (tool if tool == EVENT else None), payload.get("tool_info"), None


def predict(kind: str, before: "bytes | None", tool_info: "dict[str, Any]") -> "bytes | claudelike.Unknown | None":
    from engramory.edits import encode  # lazy: only a call that may change an index needs this
    from engramory.hosts.claudelike import Unknown  # lazy: loaded already once a call is judged

    items = tool_info.get("edits")
    if not isinstance(items, list) or not items:
        return None
    pairs = []
    for item in items:
        old = item.get("old_string") if isinstance(item, dict) else None
        new = item.get("new_string") if isinstance(item, dict) else None
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        pairs.append((old, new))
    if before is None:
        if pairs[0][0] != "":
            return Unknown("".join(n for _, n in pairs), "Windsurf's edit of a file that does not exist")
        text, rest = pairs[0][1], pairs[1:]
    else:
        text, rest = before.decode("utf-8", "replace"), pairs
    for old, new in rest:
        if old == "" or old not in text:
            return Unknown("".join(n for _, n in pairs), "how Windsurf applies this edit is not documented")
        text = text.replace(old, new, 1)
    return encode(text)  # a BOM decodes to U+FEFF and stays


def dialect() -> "claudelike.Dialect":
    """Windsurf's dialect: the shared one (engramory.hosts.claudelike) with its own tools,
    edit model, indexes and window; built only for a call the quiet check does not answer."""
    from engramory.hosts import claudelike  # lazy: a quiet call never loads the shared dialect

    return claudelike.Dialect(NAME, TOOLS, PATH_KEYS, predict, index_paths, window, deny="exit", payload_of=payload_of)


# The entry point engramory.hosts.run calls (hooks/engramory_hook.py windsurf pre_write_code).
respond = claude_entries(dialect, TOOLS, PATH_KEYS, payload_of)[0]
ENTRIES = {EVENT: "respond"}


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import windsurf as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self

"""Kiro (kiro.dev: the IDE and `kiro-cli`): a `PreToolUse` command hook, denied by exit 2 with
the reason on stderr (engramory.hosts.claudelike with `deny="exit"` and Kiro's own payload
keys). Not verified on the real host: the IDE ships from kiro.dev only and `kiro-cli` is not
in a package registry reachable here. Facts from https://kiro.dev/docs/cli/hooks and
https://kiro.dev/docs/cli/v3/hooks/ and from awslabs/aidlc-workflows#763, as PORTING.md says.

- Hooks: CLI 2.x keeps them in an agent config (`"hooks": {"preToolUse": [{"matcher",
  "command"}]}`), the IDE 1.0 and CLI v3 in hook files `.kiro/hooks/*.json` /
  `~/.kiro/hooks/*.json` (`{"version": "v1", "hooks": [{"name", "trigger": "PreToolUse",
  "matcher", "action": {"type": "command", "command"}, "timeout", "enabled"}]}`); the
  installer writes a hook file of its own, and the payload of either is read.
- Payload: `{"hook_event_name", "cwd", "tool_name", "tool_input"}` (CLI) or the IDE's
  `toolArgs` (camelCase; a JSON string is decoded too). The arguments come in three
  spellings, all read: v3 `fs_write {path, text}` and `str_replace {path, oldStr, newStr,
  replace_all}`; snake case `old_str` / `new_str`; and the Amazon Q lineage `fs_write {command:
  create | str_replace | insert | append, path, file_text, old_str, new_str, insert_line}`.
- Answers: exit 2 blocks and stderr is returned to the model (not on Windows 11: Kiro issue
  #8264); any other non-zero exit is a failed hook, shown to the user, and the call proceeds;
  a pass is silence and exit 0. The v3 PreToolUse matcher is a regular expression on the tool
  name (CLI 2.x: a name, `fs_*`, `@server` or `*`).
- Edit model: a write writes its text; a replace of text found replaces one occurrence (or
  all with `replace_all`); Kiro's matcher is not documented, so a replace of text not found,
  an insert and an append are judged by their worst case (the new text added).
- Native memory: none; steering files and `AGENTS.md` load with no documented cap. A store's
  index is held to the standard caps.
"""

from engramory.hosts import EDIT, WRITE, claude_entries, parse_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.hosts import claudelike
    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "kiro"
TITLE = "Kiro"
VERIFIED = ""
UNVERIFIED_WHY = ("Kiro's IDE and CLI ship only from kiro.dev, which cannot be reached here; built from its hooks docs, "
                  "which give no unit for the v3 timeout")
INSTALLER = "engramory.hosts.kiro.install"
TOOLS = {"fs_write": WRITE, "write": WRITE, "str_replace": EDIT}
PATH_KEYS = ("path", "file_path")
EDIT_MATCHER = "fs_write|write|str_replace"
CONTENT_KEYS = ("text", "file_text", "content")


def window() -> "Window":
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(note="Kiro loads no MEMORY.md of its own (its docs): the standard caps, in bytes")


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    return []


def payload_of(payload: "dict[str, Any]") -> "tuple[Any, Any, Any]":
    """(tool, tool input, cwd) in either of Kiro's spellings."""
    tool = payload.get("tool_name", payload.get("toolName"))
    tool_input = payload.get("tool_input", payload.get("toolArgs"))
    if isinstance(tool_input, str):
        tool_input = parse_object(tool_input.encode("utf-8"))
    return tool, tool_input, payload.get("cwd")


def _first(tool_input: "dict[str, Any]", keys: "tuple[str, ...]") -> "str | None":
    for key in keys:
        value = tool_input.get(key)
        if isinstance(value, str):
            return value
    return None


def _replace(before: "bytes | None", old: str, new: str, replace_all: bool) -> "bytes | claudelike.Unknown | None":
    from engramory.edits import encode  # lazy: only a call that may change an index needs this
    from engramory.hosts.claudelike import Unknown  # lazy: loaded already once a call is judged

    if before is None:
        return None  # nothing to replace in: the tool fails
    text = before.decode("utf-8", "replace")
    if old == "" or old not in text:
        return Unknown(new, "Kiro's matcher is not documented")
    return encode(text.replace(old, new) if replace_all else text.replace(old, new, 1))


def predict(kind: str, before: "bytes | None", tool_input: "dict[str, Any]") -> "bytes | claudelike.Unknown | None":
    from engramory.edits import encode  # lazy: only a call that may change an index needs this
    from engramory.hosts.claudelike import Unknown  # lazy: loaded already once a call is judged

    old = _first(tool_input, ("oldStr", "old_str", "old_string"))
    new = _first(tool_input, ("newStr", "new_str", "new_string"))
    command = tool_input.get("command")
    replace_all = tool_input.get("replace_all") is True or tool_input.get("replaceAll") is True
    if kind == EDIT or command == "str_replace":
        return _replace(before, old, new, replace_all) if old is not None and new is not None else None
    if command in ("insert", "append"):
        added = new if new is not None else _first(tool_input, CONTENT_KEYS)
        return Unknown(added + "\n", "Kiro's %s is judged by the text it adds" % command) if added is not None else None
    if command not in (None, "create"):
        return None
    content = _first(tool_input, CONTENT_KEYS)
    return encode(content) if content is not None else None


def dialect() -> "claudelike.Dialect":
    """Kiro's dialect: the shared one (engramory.hosts.claudelike) with its own tools,
    edit model, indexes and window; built only for a call the quiet check does not answer."""
    from engramory.hosts import claudelike  # lazy: a quiet call never loads the shared dialect

    return claudelike.Dialect(NAME, TOOLS, PATH_KEYS, predict, index_paths, window, deny="exit", payload_of=payload_of)


# The entry point engramory.hosts.run calls (hooks/engramory_hook.py kiro PreToolUse).
respond = claude_entries(dialect, TOOLS, PATH_KEYS, payload_of)[0]
ENTRIES = {"PreToolUse": "respond", "preToolUse": "respond"}


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import kiro as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self

"""Auggie (Augment Code's CLI, npm `@augmentcode/auggie`): Claude Code's hook schema in
`~/.augment/settings.json` or `<project>/.augment/settings.json`, a `PreToolUse` denied by exit
2 with the reason on stderr (engramory.hosts.claudelike with `deny="exit"`). Not verified on
the real CLI: it talks only to Augment's own backend, so it cannot run offline here. Facts
from https://docs.augmentcode.com/cli/hooks and .../cli/hooks-examples and from its npm
bundle (0.36.0), as PORTING.md says.

- Payload: `{tool_name, tool_input, ...}`; tools `save-file {path, file_content,
  add_last_line_newline?}` and `str-replace-editor {command: str_replace | insert | view,
  path, old_str_1, new_str_1, old_str_start_line_number_1, old_str_end_line_number_1,
  insert_line_1, old_str_2, ...}`, paths relative to the workspace root
  ($AUGMENT_PROJECT_DIR when the payload has no cwd).
- Answers: exit 2 blocks a PreToolUse (the docs' examples; the bundle, which also reads a
  `hookSpecificOutput` deny at exit 0); any other exit, a timeout (`timeout`, ms, default
  60,000) or a spawn error lets the call through; a pass is silence and exit 0.
- Edit model: `save-file` writes its content with a final newline added unless
  `add_last_line_newline` is false; `str-replace-editor` replaces each `old_str_N` found (its
  line numbers only pick among equal matches, which does not change the size); an entry not
  found, and an insert, are judged by their worst case (the new text added).
- Native memory: Augment's memories live in its backend; a store's index is held to the
  standard caps.
"""

from engramory.hosts import EDIT, WRITE, claude_entries

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.hosts import claudelike
    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "auggie"
TITLE = "Auggie"
VERIFIED = ""
UNVERIFIED_WHY = ("Auggie talks only to Augment's own backend, so it cannot run offline here; built from its docs and "
                  "its npm bundle's hook executor (0.36.0); what the model is shown and Windows spawning are unknown")
INSTALLER = "engramory.hosts.auggie.install"
WRITE_TOOL = "save-file"
EDIT_TOOL = "str-replace-editor"
TOOLS = {WRITE_TOOL: WRITE, EDIT_TOOL: EDIT}
PATH_KEYS = ("path", "file_path")
EDIT_MATCHER = "str-replace-editor|save-file"
MAX_ENTRIES = 64  # old_str_1 .. old_str_64: more than any call sends


def window() -> "Window":
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(note="Auggie loads no MEMORY.md of its own (its docs): the standard caps, in bytes")


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    return []


def payload_of(payload: "dict[str, Any]") -> "tuple[Any, Any, Any]":
    from engramory import scope  # lazy: only a call that may change an index needs this

    cwd = payload.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        cwd = scope.environ().get("AUGMENT_PROJECT_DIR")
    return payload.get("tool_name"), payload.get("tool_input"), cwd


def _entries(tool_input: "dict[str, Any]", key: str) -> "list[tuple[str | None, str]]":
    """(old_str_N or None, new_str_N) for N = 1, 2, ... (and the unnumbered pair)."""
    out: list[tuple[str | None, str]] = []
    for suffix in [""] + ["_%d" % n for n in range(1, MAX_ENTRIES + 1)]:
        new = tool_input.get("new_str" + suffix)
        if not isinstance(new, str):
            continue
        old = tool_input.get(key + suffix)
        out.append((old if isinstance(old, str) else None, new))
    return out


def predict(kind: str, before: "bytes | None", tool_input: "dict[str, Any]") -> "bytes | claudelike.Unknown | None":
    from engramory.edits import encode  # lazy: only a call that may change an index needs this
    from engramory.hosts.claudelike import Unknown  # lazy: loaded already once a call is judged

    if kind == WRITE:
        content = tool_input.get("file_content", tool_input.get("content"))
        if not isinstance(content, str):
            return None
        if tool_input.get("add_last_line_newline") is not False and not content.endswith("\n"):
            content += "\n"
        return encode(content)
    command = tool_input.get("command")
    if command == "insert":
        added = "".join(new + "\n" for _, new in _entries(tool_input, "old_str"))
        return Unknown(added, "an insert is judged by the text it adds") if added else None
    if command != "str_replace" or before is None:
        return None
    pairs = _entries(tool_input, "old_str")
    text = before.decode("utf-8", "replace")
    for old, new in pairs:
        if old is None or old == "" or old not in text:
            return Unknown("".join(n for _, n in pairs), "Auggie's matcher is not documented")
        text = text.replace(old, new, 1)
    return encode(text) if pairs else None


def dialect() -> "claudelike.Dialect":
    """Auggie's dialect: the shared one (engramory.hosts.claudelike) with its own tools,
    edit model, indexes and window; built only for a call the quiet check does not answer."""
    from engramory.hosts import claudelike  # lazy: a quiet call never loads the shared dialect

    return claudelike.Dialect(NAME, TOOLS, PATH_KEYS, predict, index_paths, window, deny="exit", payload_of=payload_of)


# The entry point engramory.hosts.run calls (hooks/engramory_hook.py auggie PreToolUse).
respond = claude_entries(dialect, TOOLS, PATH_KEYS, payload_of)[0]
ENTRIES = {"PreToolUse": "respond"}


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import auggie as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self

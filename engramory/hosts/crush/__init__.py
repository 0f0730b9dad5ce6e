"""Crush (charmbracelet/crush, npm `@charmland/crush`): a `PreToolUse` hook in `crush.json`,
Claude's payload with `event` for `hook_event_name`, denied by exit 2 with the reason on
stderr (engramory.hosts.claudelike with `deny="exit"`). Not verified on the real CLI: its npm
package only downloads the binary from GitHub releases in a postinstall, which cannot be
fetched here. Every fact below is from Crush's source (charmbracelet/crush `main` at 37f36e9,
after v0.90.0) or its `docs/hooks/README.md`, as PORTING.md says.

- Payload: `{"event": "PreToolUse", "session_id", "cwd", "tool_name", "tool_input"}`, the
  tool input the model's raw JSON. Tools: `write {file_path, content}`, `edit {file_path,
  old_string, new_string, replace_all?}`, `multiedit {file_path, edits: [{old_string,
  new_string, replace_all?}]}`; relative paths join the working dir (`cwd`).
- Answers: exit 2 with the reason on stderr denies (the model gets `Tool call blocked by
  hook. Reason: R`); exit 49 halts the whole turn (never used here); any other exit, unparsable
  output or the 30 s timeout is no opinion (`internal/hooks/runner.go` `runOne`). So a
  pass is silence and exit 0, and a warn-zone nudge is silence too (Crush's JSON `context`
  rides with `decision`, and an `allow` would skip the user's permission prompt).
- Edit model: `write` writes the bytes as given. `edit` on a file with any CRLF edits it as
  LF and writes every line break back as CRLF, unless the result still holds a CRLF (a CRLF
  `new_string`); an exact match first (unique unless `replace_all`), else a whitespace-
  normalised whole-line match that re-indents `new_string` (not ported: judged by its worst
  case, `new_string` added); `old_string: ""` creates a missing file and is refused on an
  existing one. `multiedit` applies, in order, the edits that match and skips the others.
- Native memory: none; its context files (`AGENTS.md`, `CRUSH.md`, ...) load whole, with no
  cap, so a store's index is held to the standard caps.
"""

from engramory.hosts import EDIT, WRITE, claude_entries

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.hosts import claudelike
    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "crush"
TITLE = "Crush"
VERIFIED = ""
UNVERIFIED_WHY = ("its npm package only downloads the binary from GitHub releases, which cannot be fetched "
                  "here; built from its source at 37f36e9 and docs, so the pinned 0.96.1 is unread")
INSTALLER = "engramory.hosts.crush.install"
TOOLS = {"write": WRITE, "edit": EDIT, "multiedit": EDIT}
PATH_KEYS = ("file_path",)
EDIT_MATCHER = "^(write|edit|multiedit)$"  # a Go regexp; an invalid one stops Crush from starting


def window() -> "Window":
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(note="Crush loads no MEMORY.md and its context files whole (read from its source): "
                            "the standard caps, in bytes")


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    return []


def predict(kind: str, before: "bytes | None", tool_input: "dict[str, Any]") -> "bytes | claudelike.Unknown | None":
    # lazy: edits loads only for a call that reaches prediction, never on the ignored path
    from engramory.edits import encode

    if kind == WRITE:
        content = tool_input.get("content")
        return encode(content) if isinstance(content, str) else None
    items = tool_input.get("edits")
    multi = isinstance(items, list)
    edits = []
    for item in items if isinstance(items, list) else [tool_input]:
        old = item.get("old_string") if isinstance(item, dict) else None
        new = item.get("new_string") if isinstance(item, dict) else None
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        edits.append((old, new, item.get("replace_all") is True))
    from engramory.hosts.crush import model  # lazy: the ignored path must not load the edit model

    return model.apply_edits(before, edits, multi) if edits else None


def dialect() -> "claudelike.Dialect":
    """Crush's dialect: the shared one (engramory.hosts.claudelike) with its own tools,
    edit model, indexes and window; built only for a call the quiet check does not answer."""
    from engramory.hosts import claudelike  # lazy: a quiet call never loads the shared dialect

    return claudelike.Dialect(NAME, TOOLS, PATH_KEYS, predict, index_paths, window, deny="exit")


# The entry point engramory.hosts.run calls (hooks/engramory_hook.py crush PreToolUse).
respond = claude_entries(dialect, TOOLS, PATH_KEYS)[0]
ENTRIES = {"PreToolUse": "respond"}


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import crush as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self

"""Qwen Code (`@qwen-code/qwen-code`): Claude Code's hook schema in `~/.qwen/settings.json` or
`<project>/.qwen/settings.json`, so the dialect is the shared one (engramory.hosts.claudelike);
what is Qwen's own is here.

- Tools: `write_file {file_path, content}` and `edit {file_path, old_string, new_string,
  replace_all?}`; shell is `run_shell_command`. A deny (`hookSpecificOutput` deny) reaches the
  model as the tool result, verbatim. Exit 1 and a timeout allow; we always exit 0.
- Edit model, ported from Qwen Code 0.24.4's `packages/core/src/tools/edit.ts` and
  `utils/editHelper.ts`: the file's CRLF become LF before matching; `old_string` is found
  literally, else after folding Unicode dashes, curly quotes and odd spaces to ASCII, else
  line by line (as is, trailing whitespace trimmed, then both), and the matched slice of the
  FILE is what gets replaced (every occurrence: uniqueness was checked first); deleting text
  takes its newline; a file that held any CRLF is written back all CRLF (a mixed file too);
  a BOM is kept. `write_file` also takes the old file's BOM and, when it held any CRLF,
  writes the content all CRLF.
- Native memory: the auto-memory index `<base>/projects/<git root or cwd, sanitised>/memory/
  MEMORY.md` (base: $QWEN_CODE_MEMORY_BASE_DIR, else $QWEN_RUNTIME_DIR, else $QWEN_HOME, else
  ~/.qwen; QWEN_CODE_MEMORY_LOCAL=1 puts it in `<project>/.qwen/memory/`) and the user tier
  `<base>/memories/MEMORY.md`. Both load 200 lines / 25,000 UTF-16 units of the text.
"""

from engramory.hosts import EDIT, WRITE, claude_entries

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from engramory.hosts import claudelike
    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "qwen"
TITLE = "Qwen Code"
VERIFIED = "0.24.4"
INSTALLER = "engramory.hosts.qwen.install"
SHELL_TOOL = "run_shell_command"
EDIT_MATCHER = "^(write_file|edit)$"
TOOLS = {"write_file": WRITE, "edit": EDIT}
PATH_KEYS = ("file_path",)


def window() -> "Window":
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(
        unit=size.UTF16, lines=200, size=25_000, trim=True,
        note="measured on Qwen Code 0.24.4 (auto-memory MEMORY.md: 200 lines, 25,000 JS string units)",
    )


# --- where its indexes live ------------------------------------------------------------------


def _home(env: "Mapping[str, str]") -> str:
    import os.path

    return env.get("HOME") or os.path.expanduser("~")


def _resolve(path: str, env: "Mapping[str, str]") -> str:
    import os.path

    if path == "~" or path.startswith(("~/", "~\\")):
        path = _home(env) + path[1:]
    return os.path.abspath(path)


def memory_base(env: "Mapping[str, str]") -> str:
    import os.path

    for key in ("QWEN_CODE_MEMORY_BASE_DIR", "QWEN_RUNTIME_DIR", "QWEN_HOME"):
        value = env.get(key, "")
        if value:
            return _resolve(value, env)
    return os.path.join(_home(env), ".qwen")


def sanitize(path: str) -> str:
    """Qwen's `sanitizeCwd` on POSIX: every character but ASCII letters and digits -> '-'."""
    return "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in path)


def _git_root(start: str) -> "str | None":
    import os.path

    current = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    import os.path

    if not cwd:
        return []
    base = memory_base(env)
    if env.get("QWEN_CODE_MEMORY_LOCAL") == "1":
        project = os.path.join(os.path.abspath(cwd), ".qwen", "memory", "MEMORY.md")
    else:
        scope_ws = env.get("QWEN_CODE_MEMORY_PROJECT_SCOPE", "").strip().lower() == "workspace"
        key = os.path.abspath(cwd) if scope_ws else (_git_root(cwd) or os.path.abspath(cwd))
        project = os.path.join(base, "projects", sanitize(key), "memory", "MEMORY.md")
    return [project, os.path.join(base, "memories", "MEMORY.md")]


# --- the edit model ---------------------------------------------------------------------------

BOM = b"\xef\xbb\xbf"
# JavaScript's String.prototype.trimEnd() strips these (Python's rstrip() differs slightly).
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_FOLD = str.maketrans({
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"',
    "\u00a0": " ", "\u2002": " ", "\u2003": " ", "\u2004": " ", "\u2005": " ", "\u2006": " ", "\u2007": " ",
    "\u2008": " ", "\u2009": " ", "\u200a": " ", "\u202f": " ", "\u205f": " ", "\u3000": " ",
})


def fold(text: str) -> str:
    """Qwen's normalizeBasicCharacters: one character for one, so indexes line up."""
    return text.translate(_FOLD)


def _trim_end(s: str) -> str:
    return s.rstrip(_JS_SPACE)


def _passes() -> "list[Any]":
    return [lambda v: v, _trim_end, lambda v: _trim_end(fold(v))]


def _seek(lines: "list[str]", pattern: "list[str]", transform: "Any") -> "int | None":
    if len(pattern) > len(lines):
        return None
    want = [transform(p) for p in pattern]
    for i in range(len(lines) - len(pattern) + 1):
        if all(transform(lines[i + k]) == want[k] for k in range(len(pattern))):
            return i
    return None


def _slice(text: str, lines: "list[str]", offsets: "list[int]", start: int, count: int, with_newline: bool) -> str:
    if count == 0:
        return "\n" if with_newline else ""
    last = start + count - 1
    end = offsets[start + count] if with_newline else offsets[last] + len(lines[last])
    return text[offsets[start] : end]


def _line_match(text: str, needle: str) -> "tuple[str, bool] | None":
    lines = text.split("\n")
    offsets = []
    cursor = 0
    for i, line in enumerate(lines):
        offsets.append(cursor)
        cursor += len(line) + (1 if i < len(lines) - 1 else 0)
    offsets.append(len(text))
    pattern = needle.split("\n")
    ends_nl = needle.endswith("\n")

    def attempt(cand: "list[str]") -> "int | None":
        for transform in _passes():
            idx = _seek(lines, cand, transform)
            if idx is not None:
                return idx
        return None

    idx = attempt(pattern)
    if idx is not None:
        return _slice(text, lines, offsets, idx, len(pattern), ends_nl), False
    if pattern[-1] == "":
        trimmed = pattern[:-1]
        if not trimmed:
            return None
        idx = attempt(trimmed)
        if idx is not None:
            return _slice(text, lines, offsets, idx, len(trimmed), False), True
    return None


def matched_slice(text: str, needle: str) -> "tuple[str, bool] | None":
    """(the text of the file that `needle` stands for, whether a final empty line was
    dropped from it), or None: Qwen's findMatchedSlice."""
    if needle == "":
        return None
    if needle in text:
        return needle, False
    idx = fold(text).find(fold(needle))
    if idx >= 0:
        return text[idx : idx + len(needle)], False
    return _line_match(text, needle)


def _strip_one_newline(text: str) -> str:
    if text.endswith("\r\n"):
        return text[:-2]
    if text.endswith(("\n", "\r")):
        return text[:-1]
    return text


def _count(text: str, sub: str) -> int:
    return 0 if sub == "" else text.count(sub)


def _decode(raw: bytes) -> "tuple[str, bool]":
    bom = raw.startswith(BOM)
    return raw[3 if bom else 0 :].decode("utf-8", "replace"), bom


def _encode(text: str, bom: bool, crlf: bool) -> bytes:
    from engramory.edits import encode  # lazy: only a call that may change an index needs this

    if crlf:
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    if bom and text.startswith("\ufeff"):
        text = text[1:]
    return (BOM if bom else b"") + encode(text)


def apply_edit(before: "bytes | None", old: str, new: str, replace_all: bool) -> "bytes | None":
    """The bytes `edit` writes, or None when Qwen refuses the call."""
    if before is None:
        return _encode(new, False, False) if old == "" else None
    raw_text, bom = _decode(before)
    crlf = "\r\n" in raw_text
    text = raw_text.replace("\r\n", "\n")
    if old == "":
        return None  # "Attempted to create a file that already exists"
    found = matched_slice(text, old)
    if found is not None:
        old = found[0]
        if found[1]:
            new = _strip_one_newline(new)
    if new == "" and not old.endswith("\n") and old != "" and (old + "\n") in text:
        old += "\n"
    n = _count(text, old)
    if n == 0 or (n > 1 and not replace_all) or old == new:
        return None
    after = text.replace(old, new)
    if after == text:
        return None
    return _encode(after, bom, crlf)


def apply_write(before: "bytes | None", content: str) -> bytes:
    if before is None:
        return _encode(content, False, False)
    text, bom = _decode(before)
    return _encode(content, bom, "\r\n" in text)


def predict(kind: str, before: "bytes | None", tool_input: "dict[str, Any]") -> "bytes | None":
    if kind == WRITE:
        content = tool_input.get("content")
        return apply_write(before, content) if isinstance(content, str) else None
    old, new = tool_input.get("old_string"), tool_input.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    return apply_edit(before, old, new, tool_input.get("replace_all") is True)


def dialect() -> "claudelike.Dialect":
    """Qwen Code's dialect: the shared one (engramory.hosts.claudelike) with its own tools,
    edit model, indexes and window; built only for a call the quiet check does not answer."""
    from engramory.hosts import claudelike  # lazy: a quiet call never loads the shared dialect

    return claudelike.Dialect(NAME, TOOLS, PATH_KEYS, predict, index_paths, window)


# The entry points engramory.hosts.run calls (hooks/engramory_hook.py qwen <event>).
respond, post, start = claude_entries(dialect, TOOLS, PATH_KEYS)
ENTRIES = {"PreToolUse": "respond", "PostToolUse": "post", "SessionStart": "start"}


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import qwen as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self

"""What a file will contain after a Write / Edit / MultiEdit, predicted the way the host
applies it.

Claude Code 2.1.332 was measured (shared reference "How the host applies Write and Edit"):
- Edit reads the file as UTF-8 (a BOM is kept) or as UTF-16LE behind its BOM, turns CRLF
  into LF before matching, and writes the result back in the same encoding with the line
  endings it found (CRLF when most line breaks were CRLF); it refuses other files (not
  valid UTF-8, NUL bytes in the first 8 KB, UTF-16BE), which are still sized here from a
  lenient reading (see decode);
- when `old_string` does not match exactly, straight and curly quotes match each other, and
  if the file's text was curly the straight quotes of `new_string` are written curly;
- an `old_string` that is not found is tried once more with its non-ASCII characters as
  \\uXXXX escapes; if that matches, `new_string` is written escaped the same way;
- `old_string` must match once (unless `replace_all`), must differ from `new_string`, and an
  empty one only creates a missing file or fills one holding nothing but whitespace;
  anything else is refused and never written;
- deleting text (empty `new_string`) also takes the newline that ends it;
- Write writes `content` as given, but keeps the encoding of the old file (its UTF-8 BOM,
  or UTF-16LE) and refuses the same files Edit refuses.

A guard that predicts by plain byte replacement would let a CRLF or curly-quoted index grow
past its cap, because the host applies edits that a naive guard thinks cannot match.
"""

from engramory.scope import encode as encode  # the one UTF-8 writer, in scope; part of this interface
from engramory.scope import raw_path, resolve_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

BOM = b"\xef\xbb\xbf"

WRITE = "write"
EDIT = "edit"
DELETE = "delete"
PATCH = "patch"

# Tool names per kind, across the dialects the guard may be handed (Claude Code, Cursor
# native or through its Claude-hook loading, Hermes, Codex, Gemini, Kiro, Copilot).
WRITE_TOOLS = frozenset(["Write", "write", "write_file", "create", "fs_write", "write_to_file"])
EDIT_TOOLS = frozenset(
    ["Edit", "MultiEdit", "StrReplace", "edit", "replace", "str_replace", "search_replace"]
)
DELETE_TOOLS = frozenset(["Delete", "delete", "delete_file"])
PATCH_TOOLS = frozenset(["ApplyPatch", "apply_patch", "patch"])
CONTENT_KEYS = ("content", "contents", "file_text", "text")


class Request:
    """One file change, host-neutral: which file, and what the tool will do to it."""

    __slots__ = ("tool", "path", "kind", "content", "edits", "patch", "after")

    def __init__(self, tool: str, path: str, kind: str) -> None:
        self.tool = tool
        self.path = path
        self.kind = kind
        self.content: str | None = None
        self.edits: list[tuple[str, str, bool]] = []
        self.patch: str | None = None
        # The exact bytes the file will hold, when the adapter predicted them itself (its
        # host's edit model); guard.judge then decides on them as they are.
        self.after: bytes | None = None

    def __repr__(self) -> str:
        return "Request(%r, %r, %r)" % (self.tool, self.path, self.kind)


def _str(value: "Any") -> "str | None":
    return value if isinstance(value, str) else None


def _edit(item: "Any") -> "tuple[str, str, bool] | None":
    if not isinstance(item, dict):
        return None
    old = _str(item.get("old_string", item.get("oldText", item.get("old_str", item.get("oldStr")))))
    new = _str(item.get("new_string", item.get("newText", item.get("new_str", item.get("newStr")))))
    if old is None or new is None:
        return None
    return old, new, item.get("replace_all") is True


def _content(tool_input: "dict[str, Any]") -> "str | None":
    content = None
    for key in CONTENT_KEYS:
        content = _str(tool_input.get(key))
        if content is not None:
            break
    return content


def _edits(tool_input: "dict[str, Any]") -> "list[tuple[str, str, bool]] | None":
    """The (old, new, replace_all) edits of a call; None for a MultiEdit not readable in full."""
    items = tool_input.get("edits")
    if not isinstance(items, list):
        e = _edit(tool_input)
        return [] if e is None else [e]
    edits: list[tuple[str, str, bool]] = []
    for item in items:
        e = _edit(item)
        if e is None:
            return None
        edits.append(e)
    return edits


def _kind(tool: str, content: "str | None", edits: "list[tuple[str, str, bool]]", patch: "str | None") -> "str | None":
    """What the call does to its file, by the tool's name and the keys it carries."""
    if tool in WRITE_TOOLS and content is not None and not edits:
        return WRITE
    if tool in DELETE_TOOLS:
        return DELETE
    if edits and (tool in EDIT_TOOLS or tool in WRITE_TOOLS or tool in PATCH_TOOLS or not tool):
        return EDIT
    if tool in PATCH_TOOLS and patch:
        return PATCH
    if tool in EDIT_TOOLS and content is not None and not edits:
        return WRITE  # Cursor sends some whole-file writes under an edit name ("Edit" -> Write)
    if not tool and content is not None:
        return WRITE  # a payload without tool_name (seen from Cursor): infer from the keys
    return None


def normalise(
    tool_name: "Any",
    tool_input: "Any",
    cwd: "Any" = None,
    roots: "Sequence[str]" = (),
) -> "Request | None":
    """A Request from a host's tool name and input, or None when it is not a file change
    this guard understands (which the caller treats as: nothing to say)."""
    if not isinstance(tool_input, dict):
        return None
    path = raw_path(tool_input)
    if path is None:
        return None
    tool = tool_name if isinstance(tool_name, str) else ""
    content = _content(tool_input)
    edits = _edits(tool_input)
    if edits is None:
        return None  # a MultiEdit we cannot read in full cannot be predicted
    patch = _str(tool_input.get("patch")) or _str(tool_input.get("input"))
    kind = _kind(tool, content, edits, patch)
    if kind is None:
        return None
    req = Request(tool, resolve_path(path, _str(cwd), roots), kind)
    req.content = content
    req.edits = edits
    req.patch = patch
    return req


# --- applying edits the way the host does -------------------------------------------------

_SINGLE = "\u2018\u2019"
_DOUBLE = "\u201c\u201d"
_STRAIGHTEN = {0x2018: "'", 0x2019: "'", 0x201C: '"', 0x201D: '"'}
UTF16LE_BOM = b"\xff\xfe"
UTF16BE_BOM = b"\xfe\xff"
NUL_SCAN = 8192  # the host calls a file binary when a NUL byte is in its first 8 KB
# What JavaScript's String.prototype.trim() strips (Python's str.strip() differs slightly).
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
# How the host reads a file: the text, and how it writes the text back.
UTF8 = "utf-8"
UTF8_BOM = "utf-8-bom"
UTF16LE = "utf-16-le"
UNREADABLE = "unreadable"  # Claude Code refuses it; read leniently, written back as UTF-8


def _opening(chars: str, i: int) -> bool:
    if i == 0:
        return True
    return chars[i - 1] in " \t\n\r([{\u2014\u2013"


def _curly_double(text: str) -> str:
    return "".join(
        (_DOUBLE[0] if _opening(text, i) else _DOUBLE[1]) if ch == '"' else ch
        for i, ch in enumerate(text)
    )


def _curly_single(text: str) -> str:
    out = []
    for i, ch in enumerate(text):
        if ch != "'":
            out.append(ch)
            continue
        prev_letter = i > 0 and text[i - 1].isalpha()
        next_letter = i + 1 < len(text) and text[i + 1].isalpha()
        if prev_letter and next_letter:
            out.append(_SINGLE[1])  # an apostrophe inside a word
        else:
            out.append(_SINGLE[0] if _opening(text, i) else _SINGLE[1])
    return "".join(out)


def find_actual(text: str, old: str) -> "str | None":
    """The text in the file that `old` matches, as Claude Code 2.1.332 finds it (read from
    its bundle, function `Ydt`): `old` itself; else the same with quotes straightened on both
    sides; else, when `old` holds `\\uXXXX` escape text, `old` with the escapes read as
    characters (`decode_escapes`); else, when `old` holds non-ASCII characters, their escaped
    form in the file, hex digits in any case (`find_escaped`)."""
    if old in text:
        return old
    straight_old = old.translate(_STRAIGHTEN)
    idx = text.translate(_STRAIGHTEN).find(straight_old)
    if idx >= 0:
        return text[idx : idx + len(old)]
    if _has_escape(old):
        decoded = decode_escapes(old)
        if decoded != old and decoded in text:
            return decoded
    if not old.isascii():
        if _escaped_length(old) > _js_length(text) or "\\u" not in text:
            return None
        return find_escaped(old, text)
    return None


_HEX = frozenset("0123456789abcdefABCDEF")


def _has_escape(s: str) -> bool:
    """JavaScript's /\\u[0-9a-fA-F]{4}/.test(s)."""
    i = s.find("\\u")
    while i >= 0:
        if len(s) >= i + 6 and all(c in _HEX for c in s[i + 2 : i + 6]):
            return True
        i = s.find("\\u", i + 1)
    return False


def _units(s: str) -> "list[int]":
    """`s` as UTF-16 code units (what JavaScript indexes)."""
    out: list[int] = []
    for ch in s:
        o = ord(ch)
        if o > 0xFFFF:
            o -= 0x10000
            out.append(0xD800 + (o >> 10))
            out.append(0xDC00 + (o & 0x3FF))
        else:
            out.append(o)
    return out


def _from_units(units: "list[int]") -> str:
    """The string of UTF-16 code units `units`, surrogate pairs joined as JavaScript does."""
    out = []
    i, n = 0, len(units)
    while i < n:
        u = units[i]
        if 0xD800 <= u < 0xDC00 and i + 1 < n and 0xDC00 <= units[i + 1] < 0xE000:
            out.append(chr(0x10000 + ((u - 0xD800) << 10) + (units[i + 1] - 0xDC00)))
            i += 2
            continue
        out.append(chr(u))
        i += 1
    return "".join(out)


def _js_length(s: str) -> int:
    """JavaScript's s.length: code points, plus one per character past U+FFFF."""
    if s.isascii():
        return len(s)
    utf8 = s.encode("utf-8", "surrogatepass")
    return len(s) + len(utf8) - len(utf8.translate(None, b"\xf0\xf1\xf2\xf3\xf4"))


def _escaped_length(s: str) -> int:
    """The host's `Q`: the length `s` would have with every non-ASCII unit as \\uXXXX."""
    units = _units(s)
    return len(units) + 5 * sum(1 for u in units if u >= 0x80)


def decode_escapes(s: str) -> str:
    """`s` with each \\uXXXX escape (any hex case) read as its UTF-16 unit, an escaped
    backslash pair left as it is: the host's `k`."""
    units: list[int] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == "\\" and i + 1 < n:
            if s[i + 1] == "\\":
                units += (0x5C, 0x5C)
                i += 2
                continue
            if s[i + 1] == "u" and i + 6 <= n and all(h in _HEX for h in s[i + 2 : i + 6]):
                units.append(int(s[i + 2 : i + 6], 16))
                i += 6
                continue
        units += _units(c)
        i += 1
    return _from_units(units)


def _backslashes_before(s: str, i: int) -> int:
    n = 0
    while i - 1 - n >= 0 and s[i - 1 - n] == "\\":
        n += 1
    return n


def find_escaped(old: str, text: str) -> "str | None":
    """The host's `Y`: the first place `text` holds `old` with every non-ASCII unit written
    as a \\uXXXX escape (hex digits in any case) whose backslashes are not themselves
    escaped; None when there is none, or when the same text occurs earlier in `text`."""
    if _backslashes_before(old, len(old)) % 2 == 1:
        return None
    pattern, starts, hex_at = _escape_plan(old)
    length = len(pattern)
    first = pattern.find("\\u")
    if first < 0:
        return None
    limit = len(text) - length
    search = first
    while True:
        k = text.find("\\u", search)
        if k < 0:
            return None
        search = k + 1
        c = k - first
        if c < 0:
            continue
        if c > limit:
            return None
        window = text[c : c + length]
        if _escaped_match(text, c, window, pattern, hex_at, starts):
            return window if text.find(window) == c else None


def _escape_plan(old: str) -> "tuple[str, list[int], set[int]]":
    """(old with its non-ASCII units escaped, in lower-case hex; the offsets where a backslash
    must not itself be escaped; the offsets of hex digits, compared case-insensitively)."""
    pattern = escape_non_ascii(old)
    starts = [0] if old.startswith("\\") else []
    hex_at: set[int] = set()
    pos = 0
    for u in _units(old):
        if u >= 0x80:
            starts.append(pos)
            hex_at.update(range(pos + 2, pos + 6))
            pos += 6
        else:
            pos += 1
    return pattern, starts, hex_at


def _escaped_match(text: str, c: int, window: str, pattern: str, hex_at: "set[int]", starts: "list[int]") -> bool:
    if not all((window[i].lower() == pattern[i]) if i in hex_at else (window[i] == pattern[i]) for i in range(len(pattern))):
        return False
    return all(_backslashes_before(text, c + f) % 2 == 0 for f in starts)


def keep_quote_style(old: str, actual: str, new: str) -> str:
    if old == actual:
        return new
    has_double = any(q in actual for q in _DOUBLE)
    has_single = any(q in actual for q in _SINGLE)
    if has_double:
        new = _curly_double(new)
    if has_single:
        new = _curly_single(new)
    return new


def keep_escape_style(old: str, actual: str, new: str) -> str:
    """`new` written the way the match was found (the host's `fe`): when the file held
    `old`'s non-ASCII characters as escapes, `new`'s are escaped too, with the same hex for
    the same character and otherwise in the case most of the file's escapes used; when
    `old`'s escape text matched the characters themselves, `new`'s escapes are read too."""
    if old == actual:
        return new
    if not old.isascii() and _escaped_length(old) == len(actual) and find_escaped(old, actual) is not None:
        seen: dict[int, str] = {}
        upper = lower = 0
        c = 0
        for u in _units(old):
            if u >= 0x80:
                digits = actual[c + 2 : c + 6]
                seen[u] = digits
                upper += sum(1 for d in digits if "A" <= d <= "F")
                lower += sum(1 for d in digits if "a" <= d <= "f")
                c += 6
            else:
                c += 1
        out = []
        for u in _units(new):
            if u < 0x80:
                out.append(chr(u))
            else:
                digits = seen.get(u) or ("%04X" % u if upper > lower else "%04x" % u)
                out.append("\\u" + digits)
        return "".join(out)
    if _has_escape(old) and decode_escapes(old) == actual:
        return decode_escapes(new)
    return new


def escape_non_ascii(text: str, upper: bool = False) -> str:
    """Every non-ASCII character as a JSON-style \\uXXXX escape (astral ones as a surrogate
    pair), the form some files keep text in."""
    fmt = "\\u%04X" if upper else "\\u%04x"
    out = []
    for ch in text:
        code = ord(ch)
        if code < 0x80:
            out.append(ch)
        elif code > 0xFFFF:
            code -= 0x10000
            out.append(fmt % (0xD800 + (code >> 10)) + fmt % (0xDC00 + (code & 0x3FF)))
        else:
            out.append(fmt % code)
    return "".join(out)


def apply_edit(text: str, old: str, new: str, replace_all: bool) -> "str | None":
    """`text` after one edit, or None when the host would refuse it (no match, or several
    without replace_all). The matched text and the new text are those of Claude Code 2.1.332
    (find_actual, keep_quote_style, keep_escape_style)."""
    if old == "" or old == new:
        return None
    actual = find_actual(text, old)
    if actual is None:
        return None
    if not replace_all and text.count(actual) > 1:
        return None
    new = keep_escape_style(old, actual, keep_quote_style(old, actual, new))
    if new == "" and not actual.endswith("\n") and (actual + "\n") in text:
        actual += "\n"  # deleting a line takes its line break with it
    return text.replace(actual, new) if replace_all else text.replace(actual, new, 1)


def decode(raw: bytes) -> "tuple[str, str]":
    """(text, encoding) as the host reads an existing file. Measured: UTF-8 (a BOM is dropped
    from the text and kept on disk) and UTF-16LE behind its BOM are edited; Claude Code
    refuses to touch UTF-16BE, a NUL byte in the first 8 KB, or bytes that are not valid
    UTF-8 anywhere in the file. Those come back as UNREADABLE with a lenient reading (bad
    bytes as U+FFFD): predicting "refused" there would silence the guard on hosts that do
    write such files, while sizing them is harmless where the host refuses anyway."""
    if raw.startswith(UTF16LE_BOM):
        body = raw[2 : len(raw) - (len(raw) % 2)]
        return body.decode("utf-16-le", "surrogatepass"), UTF16LE
    if not raw.startswith(UTF16BE_BOM) and b"\x00" not in raw[:NUL_SCAN]:
        bom = raw.startswith(BOM)
        try:
            return raw[len(BOM) if bom else 0 :].decode("utf-8"), UTF8_BOM if bom else UTF8
        except UnicodeDecodeError:
            pass
    return raw.decode("utf-8", "replace"), UNREADABLE


def encode_as(text: str, enc: str) -> bytes:
    """`text` written back the way the host writes a file it read as `enc`."""
    if enc == UTF16LE:
        return UTF16LE_BOM + text.encode("utf-16-le", "surrogatepass")
    return (BOM if enc == UTF8_BOM else b"") + encode(text)


def _crlf_text(text: str) -> bool:
    crlf = text.count("\r\n")
    return crlf > text.count("\n") - crlf


def _predict_write(content: str, before: "bytes | None") -> bytes:
    if before is None or content == "":
        return encode(content)  # measured: an empty Write leaves no BOM behind either
    enc = decode(before)[1]
    if enc == UNREADABLE:
        enc = UTF8_BOM if before.startswith(BOM) else UTF8
    if enc != UTF8 and content.startswith("\ufeff"):
        content = content[1:]  # the file's own BOM is written once, not twice
    return encode_as(content, enc)


def _edit_start(edits: "list[tuple[str, str, bool]]", before: "bytes | None") -> "tuple[str, str, bool, list[tuple[str, str, bool]]] | None":
    """(LF text the edits start from, the file's encoding, whether it is CRLF text, the edits
    left to apply); None for an Edit of a missing file ("File does not exist")."""
    old, new, _ = edits[0]
    if before is None:
        return None if old != "" else (new, UTF8, False, edits[1:])
    text, enc = decode(before)
    crlf = _crlf_text(text)
    text = text.replace("\r\n", "\n")
    if old == "" and text.strip(_JS_SPACE) == "":
        # An empty old_string "creates" a file that exists but holds only whitespace:
        # new_string replaces it all (then takes the file's line endings).
        return new, enc, crlf, edits[1:]
    return text, enc, crlf, edits


def predict(req: "Request", before: "bytes | None") -> "bytes | None":
    """The bytes the file will hold after `req`, or None when the host refuses the change.
    `before` is the file on disk now (None: it does not exist)."""
    if req.kind == WRITE:
        assert req.content is not None
        return _predict_write(req.content, before)
    if req.kind == DELETE:
        return b"" if before is not None else None
    if req.kind != EDIT or not req.edits:
        return None
    start = _edit_start(req.edits, before)
    if start is None:
        return None
    text, enc, crlf, edits = start
    for old, new, replace_all in edits:
        result = apply_edit(text, old, new, replace_all)
        if result is None:
            return None
        text = result
    if crlf:
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    return encode_as(text, enc)

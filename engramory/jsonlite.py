"""JSON in and out without importing anything.

`import json` pulls in `re`, `enum` and friends (about 6 ms, half the cost of starting the
interpreter), and even its C accelerator `_json` is a shared library to load (0.4 ms). The
hook runs on every Edit/Write, so it reads its payload with this small parser (str.find does
the scanning, so long strings cost little) and writes its few flat objects by hand.
Everything off the hot path uses `json` directly. Tests hold both halves to `json` itself.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_WS = " \t\n\r"
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = frozenset("0123456789abcdefABCDEF")
_CLOSE = {"{": "}", "[": "]"}


def _error(what: str, pos: int) -> ValueError:
    return ValueError("%s at character %d" % (what, pos))


def _skip(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _WS:
        i += 1
    return i


def _hex4(s: str, i: int) -> int:
    h = s[i : i + 4]
    if len(h) != 4 or not all(c in _HEX for c in h):
        raise _error("bad \\u escape", i)
    return int(h, 16)


def _string(s: str, i: int) -> "tuple[str, int]":
    """The string whose opening quote is at s[i - 1]; returns (value, index after it)."""
    chunks = []
    while True:
        end = s.find('"', i)
        if end < 0:
            raise _error("unterminated string", i)
        esc = s.find("\\", i, end)
        if esc < 0:
            chunks.append(s[i:end])
            return "".join(chunks), end + 1
        chunks.append(s[i:esc])
        c = s[esc + 1 : esc + 2]
        if c == "u":
            code = _hex4(s, esc + 2)
            i = esc + 6
            if 0xD800 <= code < 0xDC00 and s[i : i + 2] == "\\u":
                low = _hex4(s, i + 2)
                if 0xDC00 <= low < 0xE000:
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
            chunks.append(chr(code))
        else:
            rep = _ESCAPES.get(c)
            if rep is None:
                raise _error("bad escape", esc)
            chunks.append(rep)
            i = esc + 2


def _key(s: str, i: int) -> "tuple[str, int]":
    """An object's key and its ':' at s[i]; returns (key, index after the ':')."""
    if s[i : i + 1] != '"':
        raise _error("expected a string key", i)
    key, i = _string(s, i + 1)
    i = _skip(s, i)
    if s[i : i + 1] != ":":
        raise _error("expected ':'", i)
    return key, i + 1


def _scalar(s: str, i: int) -> "tuple[Any, int]":
    for word, val in (("true", True), ("false", False), ("null", None)):
        if s.startswith(word, i):
            return val, i + len(word)
    return _number(s, i)


def _value(s: str, i: int, depth: int) -> "tuple[Any, int]":
    # Objects and arrays share one loop here, so one level of nesting costs one frame (the
    # depth check, not the interpreter's recursion limit, is what a deep document meets).
    i = _skip(s, i)
    c = s[i : i + 1]
    if c == '"':
        return _string(s, i + 1)
    if c not in ("{", "["):
        return _scalar(s, i)
    if depth > 500:
        raise _error("nested too deeply", i)
    close = _CLOSE[c]
    box: Any = {} if c == "{" else []
    i = _skip(s, i + 1)
    if s[i : i + 1] == close:
        return box, i + 1
    while True:
        if c == "{":
            key, i = _key(s, i)
            box[key], i = _value(s, i, depth + 1)
        else:
            item, i = _value(s, i, depth + 1)
            box.append(item)
        i = _skip(s, i)
        sep = s[i : i + 1]
        if sep == close:
            return box, i + 1
        if sep != ",":
            raise _error("expected ',' or '%s'" % close, i)
        i = _skip(s, i + 1)


def _digits(s: str, j: int) -> int:
    n = len(s)
    while j < n and "0" <= s[j] <= "9":
        j += 1
    return j


def _number(s: str, i: int) -> "tuple[Any, int]":
    """-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? exactly, as JSON has it."""
    j = i + 1 if s.startswith("-", i) else i
    c = s[j : j + 1]
    if c == "0":
        j += 1
    elif "1" <= c <= "9":
        j = _digits(s, j + 1)
    else:
        raise _error("expected a value", i)
    is_float = False
    if s.startswith(".", j):
        k = _digits(s, j + 1)
        if k == j + 1:
            raise _error("bad number", i)
        j, is_float = k, True
    if s[j : j + 1] in ("e", "E"):
        j += 1
        if s[j : j + 1] in ("+", "-"):
            j += 1
        k = _digits(s, j)
        if k == j:
            raise _error("bad number", i)
        j, is_float = k, True
    token = s[i:j]
    try:
        return (float(token) if is_float else int(token)), j
    except ValueError:  # an integer too long for int()
        raise _error("bad number", i) from None


def loads(text: str) -> "Any":
    """Parse one JSON document. Raises ValueError on anything that is not exactly one."""
    try:
        value, end = _value(text, 0, 0)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    end = _skip(text, end)
    if end != len(text):
        raise _error("extra data after JSON", end)
    return value


_CONTROLS = {i: "\\u%04x" % i for i in [*range(0x20), 0x7F]}
_CONTROLS.update({0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x08: "\\b", 0x0C: "\\f"})


def _quote(s: str) -> str:
    """A JSON string literal in ASCII, as json.dumps(s) writes it."""
    # str.replace runs at C speed; a translate through a dict goes character by character
    # (0.1 ms for a deny message), so it only runs when a control character is there.
    if "\\" in s:
        s = s.replace("\\", "\\\\")
    if '"' in s:
        s = s.replace('"', '\\"')
    if not s.isprintable():  # a control character (or another unprintable one: harmless)
        s = s.translate(_CONTROLS)
    if not s.isascii():
        # One translate over the distinct non-ASCII characters (C speed), not a loop per
        # character: a deny message quoting entries with em dashes is kilobytes long.
        table = {}
        for ch in set(s):
            o = ord(ch)
            if o < 0x80:
                continue
            if o < 0x10000:
                table[o] = "\\u%04x" % o
            else:
                v = o - 0x10000
                table[o] = "\\u%04x\\u%04x" % (0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF))
        s = s.translate(table)
    return '"' + s + '"'


def dumps(value: "Any") -> str:
    """ASCII-only JSON for dicts, lists, strings, ints, bools and None."""
    if isinstance(value, str):
        return _quote(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, dict):
        return "{" + ",".join("%s:%s" % (_quote(str(k)), dumps(v)) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    raise TypeError("cannot encode %r" % type(value).__name__)


def decode_payload(raw: bytes) -> str:
    """Host payload bytes to text: UTF-8, a leading BOM dropped, invalid bytes replaced
    (never an exception: a guard must not crash on what the host sends)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw.decode("utf-8", "replace")

"""JSON in and out without importing `json`.

`import json` pulls in `re`, `enum` and friends: about 6 ms, half the cost of starting the
interpreter. The hook runs on every Edit/Write, so it parses with the C scanner that `json`
itself uses and writes its few flat objects by hand. Anything else uses `json` directly.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

_make_scanner: "Any"
_quote: "Any"
try:
    from _json import encode_basestring_ascii as _quote
    from _json import make_scanner as _make_scanner
except ImportError:  # pragma: no cover - interpreters without the C accelerator
    _make_scanner = None
    _quote = None


class _Context:
    """The attributes the C scanner reads from a JSONDecoder."""

    strict = False
    object_hook = None
    object_pairs_hook = None
    memo: "dict[str, str]"

    def __init__(self) -> None:
        self.memo = {}
        self.parse_float: Callable[[str], Any] = float
        self.parse_int: Callable[[str], Any] = int
        self.parse_constant: Callable[[str], Any] = _constant


def _constant(name: str) -> float:
    return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


_WS = " \t\n\r"


def loads(text: str) -> "Any":
    """Parse one JSON document. Raises ValueError on anything that is not exactly one."""
    if _make_scanner is None:  # pragma: no cover
        import json

        return json.loads(text)
    scan = _make_scanner(_Context())
    n = len(text)
    start = 0
    while start < n and text[start] in _WS:
        start += 1
    try:
        value, end = scan(text, start)
    except StopIteration as exc:
        raise ValueError("not JSON at character %d" % exc.value) from None
    except (RecursionError, MemoryError):
        raise ValueError("JSON nested too deeply") from None
    except Exception:  # noqa: BLE001 - see the comment below
        # Without json.decoder loaded, the C scanner reports some syntax errors as a
        # SystemError (it looks the exception class up in sys.modules only).
        raise ValueError("malformed JSON") from None
    while end < n and text[end] in _WS:
        end += 1
    if end != n:
        raise ValueError("extra data after JSON at character %d" % end)
    return value


def dumps(value: "Any") -> str:
    """ASCII-only JSON for dicts, lists, strings, ints, bools and None."""
    if _quote is None:  # pragma: no cover
        import json

        return json.dumps(value, ensure_ascii=True)
    if isinstance(value, str):
        return str(_quote(value))
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

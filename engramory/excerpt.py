"""Quote text taken from a memory file before it goes into a message or report, and print
what a command reports: with every secret value masked, the one way.

A note is untrusted text: echoing it whole would let a hostile note flood a report or
steer the agent that reads the hook's message. So every echo is cut short, stripped of
control, invisible and bidirectional characters, and put in quotes. A note may also hold a
credential someone pasted in: every echo masks it (`engramory.secretscan.redact`) before it
is cut, so a cut never leaves most of a token standing.

    clean(text)          hidden characters out, controls as spaces, secrets masked
    quote(text, limit)   clean, then cut to `limit` characters and put in double quotes
    redact_json(obj)     a JSON value with every string (keys too) masked
    emit(text)           write to stdout (or `stream`) masked: every line a command prints
    emit_json(obj)       write one JSON document masked, string by string (still valid JSON)

The hooks quote with `engramory.layout` directly: the masker's patterns are not imported on
their hot path.
"""

from __future__ import annotations

import json
import sys

from engramory import layout
from engramory.layout import HIDDEN
from engramory.secretscan import redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

__all__ = ["HIDDEN", "clean", "emit", "emit_json", "quote", "redact", "redact_json"]


def clean(text: str) -> str:
    """`text` with control characters shown as spaces, hidden characters removed and every
    secret value masked. Cleaned first: a zero-width space inside a token, or a newline
    between `password` and its value, must not hide it from the masker."""
    return redact(layout.clean(text))


def quote(text: str | bytes, limit: int = 60) -> str:
    """A short, safe, double-quoted excerpt of at most `limit` characters, secrets masked
    before the cut."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return layout.quote(clean(text), limit)


def redact_json(obj: Any) -> Any:
    """`obj` (what json.loads gives) with every string, keys included, masked: the same object
    when nothing in it is a secret, else a copy. String by string, never on the dumped text: a
    mask must not cross a quote of the JSON. A repeated string (a code, a message) is masked
    once, and strings are handled inline: a doctor report of 100,000 findings holds a million."""
    plain: set[str] = set()
    masked: dict[str, str] = {}

    def text(v: str) -> str:
        if v in plain:
            return v
        got = masked.get(v)
        if got is None:
            got = redact(v)
            if got == v:
                plain.add(v)
                return v
            masked[v] = got
        return got

    def walk(node: Any) -> Any:
        if type(node) is str:
            return text(node)
        if isinstance(node, dict):
            out = {}
            same = True
            for k, v in node.items():
                nk = text(k) if type(k) is str else k
                nv = text(v) if type(v) is str else walk(v) if isinstance(v, (dict, list, tuple)) else v
                same = same and nk is k and nv is v
                out[nk] = nv
            return node if same else out
        if isinstance(node, (list, tuple)):
            items = [walk(v) for v in node]
            return node if all(n is v for n, v in zip(items, node)) else items
        return node

    return walk(obj)


def emit(text: str, stream: IO[str] | None = None) -> None:
    """Write `text` as a command's output, every secret value in it masked (a private key
    block across lines included: the text is masked whole, not line by line)."""
    (stream or sys.stdout).write(redact(text))


def emit_json(obj: Any, *, stream: IO[str] | None = None, **dumps: Any) -> None:
    """Write `obj` as one JSON document and a newline, every string in it masked."""
    (stream or sys.stdout).write(json.dumps(redact_json(obj), **dumps) + "\n")

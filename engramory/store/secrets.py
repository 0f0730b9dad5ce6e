"""What looks like a credential, found once for everything engramory reads, writes or prints.

The doctor's `secret` finding, the curation commands' refusal to write a secret, the journal's
record of a command's arguments, and every line a command prints (receipts, search hits,
doctor messages, log) use these patterns and this one masker, so a value that is masked in one
place is never shown whole in another.

    find(text)     -> [Secret(start, end, kind)]   the spans of the secret values, in text order
    has_secret(t)  -> bool
    redact(text)   -> text with every secret value replaced by mask(value)
    mask(value)    -> "ghp_\u2026 (40 chars, masked)"

And every echo of text taken from a memory file, and every line a command prints, goes
through it here (what was engramory.excerpt). A note is untrusted text: echoing it whole
would let a hostile note flood a report or steer the agent that reads the hook's message. So
every echo is cut short, stripped of control, invisible and bidirectional characters, and put
in quotes, with its secrets masked before the cut (a cut never leaves most of a token
standing):

    clean(text)          hidden characters out, controls as spaces, secrets masked
    quote(text, limit)   clean, then cut to `limit` characters and put in double quotes
    redact_json(obj)     a JSON value with every string (keys too) masked
    emit(text)           write to stdout (or `stream`) masked: every line a command prints
    emit_json(obj)       write one JSON document masked, string by string (still valid JSON)

The hooks quote with `engramory.layout` directly: these patterns are not imported on their
hot path.

Precision over recall, as the doctor always had it: provider token formats match as they are;
`password = value`-style assignments only when the value looks random.

Standard library only; Python 3.9+.
"""

from __future__ import annotations

import math
import re
import sys

from engramory import layout

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import IO, Any


def starts_word(text: str, pos: int) -> bool:
    return pos == 0 or not text[pos - 1].isalnum()


def literal(pattern: str) -> str:
    """The literal text every match of `pattern` starts with (used to skip the regex)."""
    m = re.match(r"[A-Za-z_ -]+", pattern)
    return (m.group() if m else "").rstrip(" ")


PRIVATE_KEY = "a private key block"

# Provider token formats: (kind, literal start, pattern), matched case-sensitively.
TOKEN_PATTERNS = tuple((kind, literal(p) if p[0] != "-" else "-----BEGIN", re.compile(p)) for kind, p in (
    (PRIVATE_KEY, r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"),
    ("an AWS access key", r"AKIA[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ("an AWS access key", r"ASIA[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ("a GitHub token", r"gh[pousr]_[A-Za-z0-9]{36,}"),
    ("a GitHub token", r"github_pat_[A-Za-z0-9_]{40,}"),
    ("a Slack token", r"xox[abposre]-[A-Za-z0-9-]{10,}"),
    ("a Stripe live key", r"sk_live_[A-Za-z0-9]{16,}"),
    ("a Stripe live key", r"rk_live_[A-Za-z0-9]{16,}"),
    ("an OpenAI/Anthropic-style API key", r"sk-(?:ant-[a-z0-9]+-|proj-)?[A-Za-z0-9_-]{32,}"),
    ("a Google API key", r"AIza[0-9A-Za-z_-]{35}"),
    ("a JSON Web Token", r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
))
# `password = value`-style assignments, matched on lowercased text; the value (group 1) must
# look random.
ASSIGN_TAIL = r"[\"']?[ \t]*[:=][ \t]*[\"']?([^\s\"'`,;]{12,})"
ASSIGN_KEYS = (r"pass(?:word|wd|phrase)", r"pwd", r"token", r"secret", r"key")
ASSIGN_PATTERNS = tuple((k[:3], re.compile(k + ASSIGN_TAIL)) for k in ASSIGN_KEYS)
# The same, on text as it is (any case), for find(): a lowercased copy of non-ASCII text may
# not line up with it character for character. Each runs only when its key's first letters
# occur in the casefolded text (casefold maps every character IGNORECASE matches to a key
# letter, the Kelvin sign and the long s included): a short path or message is then masked
# with a few substring tests, not five regex scans (doctor --json masks every string).
_ASSIGN_ANYCASE = tuple((k[:3], re.compile(k + ASSIGN_TAIL, re.IGNORECASE)) for k in ASSIGN_KEYS)
_PEM_END = re.compile(r"-----END[A-Z0-9 ]{0,40}-----")


def mask(value: str) -> str:
    """Enough to find the value, never the value: a 4-character prefix and the length."""
    return "%s\u2026 (%d chars, masked)" % (value[:4], len(value))


def entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(value: str) -> bool:
    """Precision over recall: a value counts only if it mixes letters and digits with high
    entropy, and is not a placeholder or a pointer to where the secret lives."""
    if not value or value[0] in "<$%{[(*" or value.lower().startswith(("env", "os.", "process.", "vault", "http")):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha and entropy(value) >= 3.3


def token_counts(kind: str, value: str) -> bool:
    """Whether a provider-format match is reported: the loose `sk-` shape needs a random tail."""
    return not kind.startswith("an OpenAI") or looks_random(value[3:])


class Secret:
    """One secret value in a text: its span and what it looks like."""

    __slots__ = ("start", "end", "kind")

    def __init__(self, start: int, end: int, kind: str) -> None:
        self.start, self.end, self.kind = start, end, kind

    def __repr__(self) -> str:
        return "Secret(%d, %d, %r)" % (self.start, self.end, self.kind)


def find(text: str) -> list[Secret]:
    """The spans of every secret value in `text`, in text order, never overlapping. A private
    key block spans from its BEGIN line to its END line (or the end of the text)."""
    if not text:
        return []
    found = _tokens(text)
    found.extend(_assignments(text))
    return _disjoint(found)


def _tokens(text: str) -> list[Secret]:
    """Keys of a known shape; a private key block runs to its END line."""
    found: list[Secret] = []
    for kind, lit, rx in TOKEN_PATTERNS:
        if lit and lit not in text:
            continue
        for m in rx.finditer(text):
            if not starts_word(text, m.start()) or not token_counts(kind, m.group()):
                continue
            end = m.end()
            if kind == PRIVATE_KEY:
                close = _PEM_END.search(text, end)
                end = close.end() if close else len(text)
            found.append(Secret(m.start(), end, kind))
    return found


def _assignments(text: str) -> list[Secret]:
    """The random-looking values of `password = ...`-shaped assignments, in any case."""
    found: list[Secret] = []
    folded = text.casefold()
    for key, rx in _ASSIGN_ANYCASE:
        if key not in folded:
            continue
        for m in rx.finditer(text):
            if looks_random(m.group(1)):
                found.append(Secret(m.start(1), m.end(1), "an assignment"))
    return found


def _disjoint(found: Iterable[Secret]) -> list[Secret]:
    out: list[Secret] = []
    for s in sorted(found, key=lambda s: (s.start, -s.end)):
        if out and s.start < out[-1].end:
            if s.end > out[-1].end:
                out[-1].end = s.end
            continue
        out.append(s)
    return out


def has_secret(text: str) -> bool:
    return bool(find(text))


def redact(text: str) -> str:
    """`text` with every secret value replaced by its mask; text without one is returned as is."""
    spans = find(text)
    if not spans:
        return text
    parts = []
    pos = 0
    for s in spans:
        parts.append(text[pos:s.start])
        parts.append(mask(text[s.start:s.end]))
        pos = s.end
    parts.append(text[pos:])
    return "".join(parts)


# -- what a command shows of a store: quoted, cleaned and masked ----------------------------


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
    import json  # only for --json output: json pulls in its decoder's regexes, ms of every command's start

    (stream or sys.stdout).write(json.dumps(redact_json(obj), **dumps) + "\n")

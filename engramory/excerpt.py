"""Quote text taken from a memory file before it goes into a message or report.

A note is untrusted text: echoing it whole would let a hostile note flood a report or
steer the agent that reads the hook's message. So every echo is cut short, stripped of
control, invisible and bidirectional characters, and put in quotes.
"""

TYPE_CHECKING = False  # no `from __future__ import annotations`: one import less on a deny
# Zero-width, word-joiner, bidi embedding/override/isolate marks, soft hyphen, BOM, and the
# Unicode "tag" block: none is visible, all can hide or reorder text.
HIDDEN = frozenset(
    [0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x3164, 0xFEFF, 0xFFA0]
    + list(range(0x200B, 0x2010))
    + list(range(0x202A, 0x202F))
    + list(range(0x2060, 0x2070))
    + list(range(0xFE00, 0xFE10))
    + list(range(0xE0000, 0xE0080))
)


def clean(text: str) -> str:
    """`text` with control characters shown as spaces and hidden characters removed."""
    out = []
    for ch in text:
        o = ord(ch)
        if o < 0x20 or 0x7F <= o < 0xA0:
            out.append(" ")
        elif o in HIDDEN or 0xD800 <= o < 0xE000:
            continue
        else:
            out.append(ch)
    return "".join(out)


def quote(text: "str | bytes", limit: int = 60) -> str:
    """A short, safe, double-quoted excerpt: at most `limit` characters of content."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    text = " ".join(clean(text).split())
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "\u2026"
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

"""The one table of characters that can hide or reorder text, and the rules for the two kinds
that are only hidden in some places. Every part that cleans, refuses or reports hidden text
(quoting in engramory.layout, index-line fields in curate.indexline, the doctor's
hidden-unicode finding and what it matches injections against) reads it from here, so they
cannot disagree about a code point.

- ALWAYS: zero-width spaces and marks, bidi embeddings, overrides and isolates, the soft
  hyphen, fillers, the BOM (reported past the start of a file only), invisible operators
  and the Unicode tag block: never visible, always hidden text.
- U+200D ZERO WIDTH JOINER joins two emoji (a family, a flag); anywhere else it hides text.
- Variation selectors (U+FE00-FE0F, U+E0100-E01EF) pick a glyph for the character before
  them (U+FE0F after a heart); one after a visible character is ordinary, a run of two or
  more, or one with nothing to vary, carries hidden data (the "emoji smuggling" trick).
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

ZWJ = 0x200D
_ALWAYS_RANGES = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180E, 0x180E), (0x200B, 0x200C), (0x200E, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F),
    (0x3164, 0x3164), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xE0000, 0xE007F),
)
_SELECTOR_RANGES = ((0xFE00, 0xFE0F), (0xE0100, 0xE01EF))


def _codes(ranges: "tuple[tuple[int, int], ...]") -> "frozenset[int]":
    return frozenset(o for lo, hi in ranges for o in range(lo, hi + 1))


def _class(ranges: "tuple[tuple[int, int], ...]") -> str:
    return "".join(chr(lo) if lo == hi else "%s-%s" % (chr(lo), chr(hi)) for lo, hi in ranges)


ALWAYS = _codes(_ALWAYS_RANGES)
SELECTORS = _codes(_SELECTOR_RANGES)
# Everything that is hidden somewhere: what an excerpt drops before it is printed.
ANY = ALWAYS | SELECTORS | {ZWJ}

_PATTERNS: "dict[str, re.Pattern[str]]" = {}


def _pattern(kind: str) -> "re.Pattern[str]":
    """A compiled pattern, made on first use: the guard's deny path reads the table through
    engramory.layout and must not pay for importing `re`."""
    rx = _PATTERNS.get(kind)
    if rx is None:
        import re

        source = {"always": "[%s]" % _class(_ALWAYS_RANGES),
                  "any": "[%s%s\u200d]" % (_class(_ALWAYS_RANGES), _class(_SELECTOR_RANGES)),
                  "contextual": "\u200d|[%s]+" % _class(_SELECTOR_RANGES)}[kind]
        rx = _PATTERNS[kind] = re.compile(source)
    return rx


def always_re() -> "re.Pattern[str]":
    """Matches one character that is hidden wherever it stands (ALWAYS)."""
    return _pattern("always")


def any_re() -> "re.Pattern[str]":
    """Matches one character that is hidden somewhere (ANY): what a reader never sees."""
    return _pattern("any")


def _visible(ch: str) -> bool:
    o = ord(ch)
    return not (ch.isspace() or o < 0x20 or 0x7F <= o < 0xA0 or o in ANY)


def contextual(text: str) -> "list[tuple[int, int, int]]":
    """(start, end, code point) of each zero-width joiner, and each run of variation selectors,
    in `text` that hides text by the rules above: a joiner not between two emoji, a run
    longer than one or with no visible character before it. The code point is the joiner's
    or the run's last selector's."""
    out = []
    for m in _pattern("contextual").finditer(text):
        i, end = m.start(), m.end()
        before = text[i - 1] if i else " "
        if m.group() == "\u200d":
            after = text[end] if end < len(text) else " "
            if ord(before) < 0x2000 or ord(after) < 0x2000:
                out.append((i, end, ZWJ))
        elif end - i > 1 or not _visible(before):
            out.append((i, end, ord(text[end - 1])))
    return out


def hidden_at(text: str, i: int) -> bool:
    """Whether the character at `text[i]` is hidden text where it stands (`contextual`'s
    rules, for one position of a short text such as an index-line field)."""
    o = ord(text[i])
    if o in ALWAYS:
        return True
    if o != ZWJ and o not in SELECTORS:
        return False
    return any(start <= i < end for start, end, _ in contextual(text))

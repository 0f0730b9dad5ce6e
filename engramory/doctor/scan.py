"""The doctor's content scan: secrets (masked), prompt injection and hidden characters, in a
few linear C-speed passes over batches of notes."""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata

from engramory import hiddenchars
from engramory.doctor.codes import MAX_PER_NOTE, Context, Finding
from engramory.store import secrets
from engramory.store.reader import Note, Store
from engramory.store.secrets import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence


# -- pattern helpers (the note checks use them too) --------------------------------------------

_starts_word = secrets.starts_word
_literal = secrets.literal


class _Lazy:
    """A pattern compiled the first time a text holds its literal start. Compiling the
    injection and relative-date patterns cost the doctor some 15 % of its start-up, and a
    store whose notes never say "ignore", "reveal" or "send" needs none of them."""

    __slots__ = ("source", "rx")

    def __init__(self, source: str) -> None:
        self.source = source
        self.rx: re.Pattern[str] | None = None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        rx = self.rx
        if rx is None:
            rx = self.rx = re.compile(self.source)
        return rx.finditer(text)


def _compiled(patterns: Iterable[str]) -> tuple[tuple[str, _Lazy], ...]:
    return tuple((_literal(p), _Lazy(p)) for p in patterns)


def _find_all(patterns: Sequence[tuple[str, _Lazy]], text: str) -> list[re.Match[str]]:
    """Every match of any pattern that starts a word, in text order. Short texts (one
    note's) are first checked for the pattern's literal start, which is cheaper than a
    search; a long text (a batch) holds most literals somewhere, so once its pattern is
    compiled it is searched directly (before that, the literal decides whether to compile:
    a substring search costs no more than the pattern's own pass)."""
    hits = []
    check = len(text) < 4096
    for literal, rx in patterns:
        if (check or rx.rx is None) and literal not in text:
            continue
        for m in rx.finditer(text):
            if _starts_word(text, m.start()):
                hits.append(m)
    hits.sort(key=lambda m: m.start())
    return hits


# Why:/How to apply: as line-start labels: **Why:**, **Why**:, Why:, ## Why:, - Why:, > Why:,
# and a full-width colon. A short "How:" or a heading with no colon does not count.
# -- content: secrets, injection, hidden text ---------------------------------------------------

# The table is engramory.hiddenchars' (the same one quoting and index lines use).
HIDDEN_RE = hiddenchars.always_re()

# The credential patterns and the masker are secretscan's (one set for everything engramory
# prints or writes); the batch scan below runs them over many notes at once.
TOKEN_PATTERNS = secrets.TOKEN_PATTERNS
ASSIGN_PATTERNS = secrets.ASSIGN_PATTERNS
_INJ_OBJECTS = (
    r"(?:instructions?|rules|guidelines|prompts?|directions|directives|messages|context|constraints)"
)
_INJ_QUALIFIED = (
    r"\s+(?:(?:(?:all|any|the|your|my|of|these)\s+)*"
    r"(?:previous|prior|above|earlier|preceding|system|original|safety|developer|existing)\s+%s"
    r"|(?:all|any|your)\s+(?:instructions|rules|guidelines))" % _INJ_OBJECTS
)
_REVEAL_TAIL = (
    r"\s+(?:(?:the|your|all|any|my)\s+)?(?:system\s+prompt|hidden\s+instructions|secrets|api\s+keys?"
    r"|credentials|passwords|private\s+keys?|env(?:ironment)?\s+variables|\.env\b)"
)
_SEND_TAIL = (
    r"\b[^\n]{0,80}?\b(?:secrets?|keys?|tokens?|credentials?|passwords?|env(?:ironment)?|ssh|cookies?"
    r"|conversation|history|memor(?:y|ies))\b[^\n]{0,80}?(?:https?://|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
)
# Instructions aimed at the agent reading the note, matched on lowercased text.
# (gate, patterns): a family runs only when one of its gate words occurs; a gate is a word
# every match of the family must contain ("send" needs an address). Over the whole batch a
# gate is one cheap pass that can save seven.
INJECTION_FAMILIES = (
    ((), _compiled([v + _INJ_QUALIFIED for v in ("ignore", "disregard", "forget", "override", "bypass")]
                   + [r"you\s+are\s+now\b", r"new\s+system\s+prompt\b",
                      r"do\s+not\s+(?:tell|inform|alert|notify)\s+the\s+user"])),
    ((),
     _compiled([v + _REVEAL_TAIL for v in ("reveal", "print", "show", "output", "leak", "dump", "disclose",
                                           "expose")])),
    (("http", "@"),
     _compiled([v + _SEND_TAIL for v in ("send", "upload", "forward", "exfiltrate", "transmit", "email", "mail")])),
)


mask = secrets.mask
entropy = secrets.entropy
looks_random = secrets.looks_random


_SEP = "\n\x00\n"  # between notes in a batch: no pattern can match across it


class _Batch:
    """Many notes joined into one string, so each pattern is searched once for the whole
    store rather than once per note: the scan then costs C-speed passes over the text
    instead of tens of Python calls per note. `starts` maps an offset back to its note."""

    __slots__ = ("text", "starts", "_last")

    def __init__(self, parts: list[str]) -> None:
        self.text = _SEP.join(parts)
        self._last = (-1, 0, 1)
        self.starts = list(itertools.accumulate([len(part) + len(_SEP) for part in parts[:-1]], initial=0))

    def lowered(self) -> _Batch:
        """The same batch lowercased, for ASCII parts only: their lowercase copy has the same
        length, so one lower() of the joined text and the same starts serve."""
        low = _Batch([])
        low.text = self.text.lower()
        low.starts = self.starts
        return low

    def locate(self, offset: int) -> tuple[int, int]:
        """(note index, 1-based line within that note) of an offset. Counting goes on from
        the last offset asked for when it is in the same note and not before it, so a scan
        that asks in text order costs one pass over the text, however many matches it has."""
        i = bisect.bisect_right(self.starts, offset) - 1
        last_i, last_off, last_line = self._last
        if last_i == i and last_off <= offset:
            line = last_line + self.text.count("\n", last_off, offset)
        else:
            line = self.text.count("\n", self.starts[i], offset) + 1
        self._last = (i, offset, line)
        return i, line


def scan_notes(notes: Sequence[Note]) -> list[Finding]:
    """Secrets (masked), instructions aimed at the agent, and hidden characters, for many
    notes at once (`scan_texts` of their paths and texts)."""
    return scan_texts([n.rel for n in notes], [n.text or "" for n in notes])


def scan_texts(rels: Sequence[str], texts: Sequence[str]) -> list[Finding]:
    """`scan_notes` of the notes at `rels` whose texts are `texts`. Non-ASCII notes are
    searched in their NFKC form with hidden characters removed, so look-alike and split-up
    words are caught too. ASCII notes are batched apart from the rest: one non-ASCII
    character would make Python store the whole joined text at two or four bytes per
    character, and every search over it slower."""
    ascii_ = [t.isascii() for t in texts]
    plain = [i for i, a in enumerate(ascii_) if a]
    other = [i for i, a in enumerate(ascii_) if not a]
    per_note: dict[int, list[tuple[str, int, str]]] = {}
    for group, is_ascii in ((plain, True), (other, False)):
        if group:
            for k, items in _scan_group([texts[i] for i in group], is_ascii).items():
                per_note[group[k]] = items
    out: list[Finding] = []
    for i in sorted(per_note):
        rel, items = rels[i], per_note[i]
        counts: dict[str, int] = {}
        for code, line, message in items:
            counts[code] = counts.get(code, 0) + 1
            if counts[code] <= MAX_PER_NOTE:
                out.append(Finding(code, rel, line, message))
    return out


def _scan_tokens(raw: _Batch, found: dict[int, list[tuple[str, int, str]]]) -> dict[int, list[tuple[int, int]]]:
    """Secret tokens (keys of known shapes) into `found`; returns the reported spans per note."""
    big = raw.text
    tokens: dict[int, list[tuple[int, int]]] = {}  # reported spans, per note
    for kind, _literal, rx in TOKEN_PATTERNS:  # one pass each: a literal check first would be two
        for m in rx.finditer(big):
            if not _starts_word(big, m.start()):
                continue
            i, line = raw.locate(m.start())
            tokens.setdefault(i, []).append((m.start() - raw.starts[i], m.end() - raw.starts[i]))
            value = m.group()
            if not secrets.token_counts(kind, value):
                continue
            shown = "the header %s" % quote(value, 50) if kind == secrets.PRIVATE_KEY else mask(value)
            found.setdefault(i, []).append(("secret", line, "%s (%s): remove it from memory, rotate it, and record only "
                                              "where it lives" % (kind, shown)))
    for spans in tokens.values():
        spans.sort()
    return tokens


def _in_token(spans: list[tuple[int, int]], start: int) -> bool:
    """Whether `start` falls inside one of the (sorted) token spans already reported."""
    k = bisect.bisect_right(spans, (start, 1 << 62)) - 1
    return k >= 0 and spans[k][0] <= start < spans[k][1]


def _scan_assignments(texts: list[str], is_ascii: bool, low: _Batch, tokens: dict[int, list[tuple[int, int]]],
                      found: dict[int, list[tuple[str, int, str]]]) -> None:
    """`password = ...`-shaped assignments of a random-looking value, outside reported tokens."""
    big_low = low.text
    for _literal, rx in ASSIGN_PATTERNS:
        for m in rx.finditer(big_low):
            i, line = low.locate(m.start())
            if is_ascii:
                # an ASCII note's lowercase copy lines up with it character for character
                start, end = m.start(1) - low.starts[i], m.end(1) - low.starts[i]
                value = texts[i][start:end]
                if _in_token(tokens.get(i, []), start):
                    continue
            else:
                value = m.group(1)
            if not looks_random(value):
                continue
            key = big_low[m.start():m.start(1)].strip(" \t:='\"")
            found.setdefault(i, []).append(("secret", line, "a %s assignment = %s: remove the value and record only where "
                                             "it lives (password manager, env var name)" % (quote(key, 30), mask(value))))


def _scan_injections(texts: list[str], is_ascii: bool, low: _Batch,
                     found: dict[int, list[tuple[str, int, str]]]) -> None:
    """Text that reads as an instruction to the agent, in note order then text order."""
    big_low = low.text
    hits: dict[int, list[re.Match[str]]] = {}
    for gate, family in INJECTION_FAMILIES:
        if not gate or any(word in big_low for word in gate):
            for m in _find_all(family, big_low):
                hits.setdefault(low.locate(m.start())[0], []).append(m)
    for i in sorted(hits):
        note_hits = hits[i]
        note_hits.sort(key=lambda m: m.start())
        for m in note_hits:
            disguised = not is_ascii and m.group() not in texts[i].lower()
            found.setdefault(i, []).append(("injection", low.locate(m.start())[1],
                             "reads as an instruction to the agent%s: %s; a human should read this note and "
                             "delete it if nobody meant it" % (
                                 " (disguised with hidden or look-alike characters)" if disguised else "",
                                 quote(m.group(), 60))))


def _scan_group(texts: list[str], is_ascii: bool) -> dict[int, list[tuple[str, int, str]]]:
    """Per text with something to report (all of them ASCII, or none of them; by index),
    every content match as (code, line, message), before the per-note cap. Only the few
    texts with a match get a list: most notes of a batch cost nothing past the C passes."""
    raw = _Batch(texts)
    low = raw.lowered() if is_ascii else _Batch([_seen(t) for t in texts])
    found: dict[int, list[tuple[str, int, str]]] = {}  # per note: (code, line, message)
    tokens = _scan_tokens(raw, found)
    _scan_assignments(texts, is_ascii, low, tokens, found)
    _scan_injections(texts, is_ascii, low, found)
    if not is_ascii:  # an ASCII text has no hidden character
        for i, text in enumerate(texts):
            hidden = _hidden(text)
            if hidden:
                found.setdefault(i, []).extend(hidden)
    return found


def _seen(text: str) -> str:
    """What a reader sees, lowercased: hidden characters dropped, look-alikes folded (NFKC)."""
    if hiddenchars.any_re().search(text):
        text = hiddenchars.any_re().sub("", text)
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    return text.lower()


def _hidden(text: str) -> list[tuple[str, int, str]]:
    """Hidden characters, at most MAX_PER_NOTE + 1 of each kind (the rest would be capped
    anyway), with line numbers counted on from the previous hit: one pass over the text."""
    out = []
    pos_line = [0, 1]

    def line_of(offset: int) -> int:
        if offset < pos_line[0]:
            pos_line[0], pos_line[1] = 0, 1
        pos_line[1] += text.count("\n", pos_line[0], offset)
        pos_line[0] = offset
        return pos_line[1]

    found = 0
    for m in HIDDEN_RE.finditer(text):
        if m.start() == 0 and m.group() == "\ufeff":
            continue
        out.append(("hidden-unicode", line_of(m.start()),
                    "invisible/bidirectional character U+%04X can hide or reorder text: read the raw "
                    "file and remove it" % ord(m.group())))
        found += 1
        if found > MAX_PER_NOTE:
            break
    pos_line[0], pos_line[1] = 0, 1
    for at, _, code in hiddenchars.contextual(text)[:MAX_PER_NOTE + 1]:
        if code == hiddenchars.ZWJ:
            why = "zero-width joiner U+200D outside an emoji sequence can hide text: remove it"
        else:
            why = ("variation selector U+%04X with no character to vary, or in a run, can carry hidden "
                   "data: read the raw file and remove it" % code)
        out.append(("hidden-unicode", line_of(at), why))
    return out


def scan_note(n: Note) -> list[Finding]:
    """The content findings for one note."""
    return scan_notes([n])


QUICK_INDEX_CHARS = 1 << 16  # the quick audit scans this much of an index for secrets


def check_content(st: Store, ctx: Context) -> Iterator[Finding]:
    notes = [n for n in st.notes if n.text is not None]
    if st.index_text is not None and not (ctx.quick and len(st.index_text) > QUICK_INDEX_CHARS):
        # the index is loaded into every session: the worst place for a secret or an injection
        index = Note(st.index_path, st.index_name, False)
        index.text = st.index_text
        notes.append(index)
    yield from scan_notes(notes)

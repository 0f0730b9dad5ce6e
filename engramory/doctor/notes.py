"""The doctor's checks of one note at a time (files, frontmatter, labels, relative dates), near
duplicates, and recall readiness: what the host's memory selector reads."""

from __future__ import annotations

import datetime
import functools
import operator
import re

from engramory.doctor.codes import (
    ERROR,
    FUTURE_SLACK_DAYS,
    MAX_PER_NOTE,
    WARNING,
    Context,
    Finding,
    shown,
)
from engramory.doctor.index import _Groups, host_window
from engramory.doctor.scan import _compiled, _find_all, _starts_word
from engramory.size import n as _n
from engramory.store import descriptions, frontmatter
from engramory.store import reader as store_mod
from engramory.store.reader import PROTOCOL, TYPES, Note, Store
from engramory.store.secrets import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

# -- one note at a time ------------------------------------------------------------------------

def check_files(st: Store, ctx: Context) -> Iterator[Finding]:
    cap = st.config.note_max_bytes
    for n in st.notes:
        if n.error is not None:
            code, reason = n.error
            if code == "file-unreadable":
                yield Finding(code, n.rel, 0, "cannot read it (%s): fix its permissions or remove it" % reason)
            elif code == "file-not-utf8":
                yield Finding(code, n.rel, 0, "%s: save it as UTF-8" % reason)
            elif not n.archived:
                yield Finding(code, n.rel, 0, "%s bytes, over the %s-byte cap per note (%s); split it "
                              "into one fact per note" % (_n(n.size), _n(cap), reason))
            continue
        if n.size > cap and not n.archived:
            yield Finding("note-too-large", n.rel, 0,
                          "%s bytes, over the %s-byte cap per note (noteMaxBytes): one note holds one fact; "
                          "split it or trim it" % (_n(n.size), _n(cap)))


_ABSENT = object()
PROTOCOL_FIELDS = ("name", "description", "type", "created", "updated")
CLAUDE_FIELDS = ("name", "description")


@functools.lru_cache(maxsize=4)
def _future_limit(today: datetime.date) -> str:
    """The last date that is not yet in the future, as ISO text (compared as text)."""
    return (today + datetime.timedelta(days=FUTURE_SLACK_DAYS)).isoformat()


def frontmatter_findings(n: Note, today: datetime.date) -> list[Finding]:
    """Everything wrong with one note's frontmatter, judged by the note's form; at most
    MAX_PER_NOTE of one code per note, then one line with the count of the rest (a hostile
    note of 100,000 malformed lines is one problem, not 100,000 findings)."""
    if plainly_clean(n, today):
        return []
    found = _frontmatter_findings(n, today)
    if len(found) <= MAX_PER_NOTE:
        return found
    per: dict[str, int] = {}
    out = []
    for f in found:
        k = per[f.code] = per.get(f.code, 0) + 1
        if k <= MAX_PER_NOTE:
            out.append(f)
    for code, k in per.items():
        if k > MAX_PER_NOTE:
            out.append(Finding(code, n.rel, 0, "and %s more %s problems in this note's frontmatter"
                               % (_n(k - MAX_PER_NOTE), code)))
    return out


_TYPE_SET = frozenset(TYPES)


def plainly_clean(n: Note, today: datetime.date) -> bool:
    """Whether `_frontmatter_findings` would find nothing, told by a few tests that hold for
    the common note (a protocol note, read without a problem, its five fields plain text, the
    name its file name, two ordered dates not in the future, no metadata block, no second
    block): most notes of a store then cost these tests, not the full walk. False says only
    "look closer"; tests/unit/doctor/test_fast_paths.py holds the two to the same findings."""
    fm = n.fm
    if fm is None or n.form != PROTOCOL or fm.problems or not fm.closed:
        return False
    f = fm.fields
    name = f.get("name")
    t = f.get("type")
    desc = f.get("description")
    created = f.get("created")
    updated = f.get("updated")
    if (not isinstance(name, str) or name != n.slug or not name.strip()
            or not isinstance(t, str) or t not in _TYPE_SET or "metadata" in f
            or not isinstance(desc, str) or not desc.strip()
            or not isinstance(created, str) or not isinstance(updated, str)
            or updated < created or updated > _future_limit(today)
            or not frontmatter.is_valid_date(created) or not frontmatter.is_valid_date(updated)):
        return False
    return n.body.find("---", 0, 400) < 0  # "---" not in body[:400], without the copy


def _problem_findings(n: Note, fm: frontmatter.Frontmatter) -> list[Finding]:
    """The reader's own problems with the block, in words for the note's author."""
    out: list[Finding] = []
    for p in fm.problems:
        message = p.message
        if p.code == "fm-missing":
            first = (n.text or "").lstrip("\ufeff").lstrip()
            if first.startswith("```") or first.startswith("~~~"):
                out.append(Finding("fm-second-block", n.rel, 1, "the frontmatter is wrapped in a code fence, so "
                                   "no reader sees it: remove the fence"))
                continue
            message = "no frontmatter: start the note with ---, name, description, type, created, updated, ---"
        out.append(Finding(p.code, n.rel, p.line, message))
    return out


def _field_finding(n: Note, fm: frontmatter.Frontmatter, key: str, protocol: bool,
                   dates: dict[str, str]) -> Finding | None:
    """What is wrong with one required field, if anything; a valid date lands in `dates`."""
    f, line_of, rel = fm.fields, fm.line_of, n.rel
    if key not in f:
        if key in line_of:  # there but unreadable: that is already reported
            return None
        return Finding("fm-missing-field", rel, 1, "missing %s%s: add it" % (key, (
            " (this note has dates or a top-level type, so it follows the full protocol)"
            if protocol else "")))
    value = f[key]
    line = line_of.get(key, 1)
    if isinstance(value, dict):
        return Finding("fm-not-text", rel, line, "%s must be one line of text, not a nested block" % key)
    if value is None or not value.strip():
        return Finding("fm-empty-field", rel, line, "%s is empty: fill it in" % key)
    if key != "created" and key != "updated":
        return None
    if frontmatter.is_valid_date(value):
        dates[key] = value
        return None
    if any(p.code == "fm-bad-date" and p.line == line for p in fm.problems):
        return None
    return Finding("fm-bad-date", rel, line, "%s %s is not a real YYYY-MM-DD date" % (key, quote(value, 30)))


def _protocol_type(n: Note, fm: frontmatter.Frontmatter, out: list[Finding]) -> tuple[object, int, str]:
    """The protocol's top-level type, its line and label; a conflicting metadata.type is a finding."""
    t = fm.fields.get("type")
    meta_t = fm.nested("metadata", "type")
    if isinstance(t, str) and isinstance(meta_t, str) and meta_t.strip() and meta_t != t:
        out.append(Finding("fm-type-conflict", n.rel, fm.line_of.get("metadata.type", 1),
                           "metadata.type %s disagrees with type %s: keep one" % (quote(meta_t, 20), quote(t, 20))))
    return t, fm.line_of.get("type", 1), "type"


def _metadata_type(n: Note, fm: frontmatter.Frontmatter, out: list[Finding]) -> tuple[object, int, str]:
    """The Claude form's metadata.type, its line and label; a missing or empty one is a finding."""
    line_of, rel = fm.line_of, n.rel
    meta = fm.fields.get("metadata", _ABSENT)
    tline, label = line_of.get("metadata.type", line_of.get("metadata", 1)), "metadata.type"
    if meta is _ABSENT:
        if "metadata" not in line_of:
            out.append(Finding("fm-missing-field", rel, 1,
                               "missing the type: add `metadata:` with `  type: user|feedback|project|reference`, "
                               "or the protocol's top-level type plus created/updated"))
    elif meta is None:
        out.append(Finding("fm-empty-field", rel, tline, "metadata is empty: add `  type: ...` under it"))
    elif not isinstance(meta, dict):
        out.append(Finding("fm-not-text", rel, tline, "metadata must be a nested block holding type"))
    elif "type" not in meta:
        if "metadata.type" not in line_of:
            out.append(Finding("fm-missing-field", rel, tline, "metadata has no type: add `  type: ...` under it"))
    else:
        t = meta["type"]
        if t is not None and t.strip():
            return t, tline, label
        out.append(Finding("fm-empty-field", rel, tline, "metadata.type is empty: use user, feedback, "
                           "project or reference"))
    return None, tline, label


def _date_findings(n: Note, fm: frontmatter.Frontmatter, dates: dict[str, str],
                   today: datetime.date) -> Iterator[Finding]:
    """Dates out of order, or in the future."""
    line_of = fm.line_of
    created, updated = dates.get("created"), dates.get("updated")
    if created and updated and updated < created:
        yield Finding("fm-date-order", n.rel, line_of.get("updated", 1),
                      "updated %s is before created %s: fix whichever is wrong" % (updated, created))
    limit = _future_limit(today)
    for key, d in dates.items():
        if d > limit:
            yield Finding("fm-future-date", n.rel, line_of.get(key, 1),
                          "%s %s is in the future (today is %s): use the date the fact was written"
                          % (key, d, today.isoformat()))


def _second_block(n: Note, fm: frontmatter.Frontmatter) -> Finding | None:
    """A second block right after the first: readers that stop at the first miss its fields."""
    if not (fm.closed and "---" in n.body[:400]):
        return None
    rest = n.body.lstrip("\r\n \t")
    if not rest.startswith("---"):
        return None
    nl = rest.find("\n")
    after = rest[nl + 1:nl + 200] if nl >= 0 else ""
    if not (frontmatter.KEY_RE.match(after) and ":" in after.split("\n", 1)[0]):
        return None
    line = fm.body_line + n.body[:len(n.body) - len(rest)].count("\n")
    return Finding("fm-second-block", n.rel, line,
                   "a second frontmatter block: merge its fields into the first and delete it")


def _frontmatter_findings(n: Note, today: datetime.date) -> list[Finding]:
    fm = n.fm
    assert fm is not None
    out = _problem_findings(n, fm)
    if not fm.present:
        return out
    protocol = n.form == PROTOCOL
    dates: dict[str, str] = {}  # valid ISO dates compare correctly as text
    for key in PROTOCOL_FIELDS if protocol else CLAUDE_FIELDS:
        found = _field_finding(n, fm, key, protocol, dates)
        if found is not None:
            out.append(found)
    # the type, in whichever place the form keeps it
    t, tline, label = (_protocol_type if protocol else _metadata_type)(n, fm, out)
    if isinstance(t, str) and t.strip() and t not in TYPES:
        out.append(Finding("fm-unknown-type", n.rel, tline,
                           "%s %s is not one of user, feedback, project, reference" % (label, quote(t, 30))))
    name = fm.fields.get("name")
    if protocol and isinstance(name, str) and name.strip() and name != n.slug:
        out.append(Finding("fm-name-mismatch", n.rel, fm.line_of.get("name", 1),
                           "name %s differs from the file name %s: [[links]] use the name, so rename one to "
                           "match" % (quote(name, 60), quote(n.slug, 60))))
    out.extend(_date_findings(n, fm, dates, today))
    second = _second_block(n, fm)
    if second is not None:
        out.append(second)
    return out


def check_frontmatter(st: Store, ctx: Context) -> Iterator[Finding]:
    for n in st.notes:
        if n.fm is not None:
            yield from frontmatter_findings(n, ctx.today)


# Every pattern below starts with a literal word, so the regex engine can jump straight to
# candidate positions instead of trying a long alternation at every character: that is what
# keeps the doctor linear and fast on 10,000 notes. Word boundaries at the start are checked
# by hand (`_starts_word`), because a leading \b would hide the literal prefix.

_LABEL_BEFORE = re.compile(r"[ \t]*(?:>[ \t]*)?(?:#{1,6}[ \t]+)?(?:[-*+][ \t]+)?(?:\*\*|__|\*|_)?\Z")
_LABEL_AFTER = re.compile(r"(?:\*\*|__|\*|_)?[ \t]*[:\uff1a]")
_HOW_TO_APPLY = re.compile(r"how[ \t]+to[ \t]+apply")


# the usual spellings, each at the text's start and after a newline
_PLAIN_LABELS = {label: tuple((plain, "\n" + plain) for plain in ("**%s:**" % label, "%s:" % label))
                 for label in ("why", "how to apply")}


def has_label(low: str, label: str) -> bool:
    """Whether the lowercased body has `label` ("why" or "how to apply") as a line-start label.
    Only the first hit on a line can be a label (a label has nothing but markup before it),
    so after a miss the search moves on to the next line: each line is looked at once."""
    for plain, after_newline in _PLAIN_LABELS.get(label, ()):
        # the usual spellings at the start of a line are labels: one substring search each
        if low.startswith(plain) or after_newline in low:
            return True
    finder = _HOW_TO_APPLY if label != "why" else None
    pos = 0
    while True:
        if finder is None:
            start = low.find("why", pos)
            end = start + 3
        else:
            m = finder.search(low, pos)
            start, end = (m.start(), m.end()) if m else (-1, -1)
        if start < 0:
            return False
        nl = low.rfind("\n", pos, start)  # pos is always a line start
        line_start = nl + 1 if nl >= 0 else pos
        if _LABEL_BEFORE.match(low, line_start, start) and _LABEL_AFTER.match(low, end):
            return True
        nl = low.find("\n", start)
        if nl < 0:
            return False
        pos = nl + 1


_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_PERIODS = "night|week|weekend|month|quarter|year|sprint|" + _WEEKDAYS
_NUM = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|a\s+couple\s+of|couple\s+of|several|\d+)"
_UNITS = r"(?:days?|weeks?|months?|years?)"
RELATIVE_PATTERNS = _compiled((
    r"yesterday\b", r"today\b", r"tomorrow\b", r"tonight\b",
    r"this\s+(?:morning|afternoon|evening|coming\s+(?:%s)|past\s+(?:%s)|%s)\b" % (_PERIODS, _PERIODS, _PERIODS),
    r"last\s+(?:%s)\b" % _PERIODS,
    r"next\s+(?:%s)\b" % _PERIODS,
    r"in\s+%s\s+%s\b" % (_NUM, _UNITS),
    r"the\s+(?:other\s+day|day\s+(?:before|after))\b",
))
# "<n> <units> ago" / "from now" are found from their last word, then checked backwards
_AGO = re.compile(r"(?:ago|from\s+now)\b")
_AGO_BEFORE = re.compile(r"(?<![A-Za-z0-9])%s\s+%s\s+\Z" % (_NUM, _UNITS))


def relative_dates(low: str) -> list[tuple[int, int]]:
    """(start, end) of each relative date expression in lowercased text."""
    spans = [(m.start(), m.end()) for m in _find_all(RELATIVE_PATTERNS, low)]
    for m in (_AGO.finditer(low) if "ago" in low or "from now" in low else ()):
        if not _starts_word(low, m.start()):
            continue
        window = max(0, m.start() - 40)
        b = _AGO_BEFORE.search(low, window, m.start())
        if b:
            spans.append((b.start(), m.end()))
    spans.sort()
    return spans


def labels_and_dates(n: Note) -> list[Finding]:
    """Why/How labels and relative dates of one live note whose text is at hand."""
    t = n.type
    if n.fm is None or t not in ("feedback", "project"):
        return []
    out = []
    low = n.body.lower()
    missing = [label for word, label in (("why", "Why:"), ("how to apply", "How to apply:"))
               if not has_label(low, word)]
    if missing:
        out.append(Finding("labels-missing", n.rel, n.fm.body_line,
                           "a %s note needs %s as line-start label%s (e.g. **Why:** ... / **How to apply:** ...): "
                           "say why the rule exists and what to do next time"
                           % (t, " and ".join(missing), "s" if len(missing) > 1 else ""),
                           severity=ERROR if n.form == PROTOCOL else WARNING))
    if t == "project" and len(low) == len(n.body):
        for start, end in relative_dates(low)[:MAX_PER_NOTE]:
            out.append(Finding("relative-date", n.rel, n.line_at(start),
                               "relative date %s will rot: write the absolute date (YYYY-MM-DD)"
                               % quote(n.body[start:end], 40)))
    return out


def check_labels_and_dates(st: Store, ctx: Context) -> Iterator[Finding]:
    for n in st.live:
        yield from labels_and_dates(n)




# -- near duplicates ---------------------------------------------------------------------------

STOPWORDS = frozenset(
    "a an and are as at be by for from has have in into is it its of on or that the this to was were "
    "will with we our you your i my me".split()
)


def check_duplicates_and_descriptions(st: Store, ctx: Context) -> Iterator[Finding]:
    """near-duplicate, description-weak and description-collision, in one pass over the live
    notes: each description's words are made once for both judgements (made twice, once per
    check, they were the largest cost of the two)."""
    by_desc = _Groups()
    by_body = _Groups()
    by_text = _Groups()
    stop = STOPWORDS
    for n in st.live:
        desc, error, t = n.description, n.error, n.type
        ws = descriptions.words(desc) if desc else None
        if t in _TYPE_SET and error is None:
            if ws:
                key_words = set(ws)
                key_words.difference_update(stop)
                if len(key_words) >= 3:
                    by_desc.add(t + ":" + " ".join(sorted(key_words)), n)
            if n.body_key is not None:
                by_body.add((t, n.body_key), n)
        if error is not None or desc is None or not desc.strip():
            continue  # a missing or empty description is fm-missing-field / fm-empty-field
        assert ws is not None
        why = descriptions.weakness(desc, n.slug, ws)
        if why:
            yield Finding("description-weak", n.rel, n.fm.line_of.get("description", 1) if n.fm else 0,
                          "%s; %s" % (why, descriptions.ADVICE))
        key = " ".join(ws)
        if key:
            by_text.add(key, n)
    yield from _near_duplicates(by_desc, by_body)
    yield from _collisions(by_text)


def _near_duplicates(by_desc: _Groups, by_body: _Groups) -> Iterator[Finding]:
    """Same type and either the same description words (any order, case and punctuation,
    stopwords aside) or the same body text once case and spacing are normalised. Each note
    gets two text keys and lands in a bucket: linear in the number of notes, never pairwise."""
    reported: set[str] = set()
    pairs: tuple[tuple[str, Iterable[list[Note]]], ...] = (
        ("the same description words", by_desc.groups()), ("the same body text", by_body.groups()))
    for why, buckets in pairs:
        for group in buckets:
            first = group[0]
            for n in group[1:]:
                if n.rel in reported:
                    continue
                reported.add(n.rel)
                yield Finding("near-duplicate", n.rel, 0,
                              "%s note with %s as %s: if they hold one fact, merge them by hand (the doctor "
                              "never merges)" % (n.type, why, shown(first.rel)))


# -- recall: what the host's memory selector reads --------------------------------------------
# Measured on Claude Code 2.1.332 (tests/hosts/claude/test_recall_scan.py): besides the index, a side
# call offers its model the 200 newest notes (by modification time) as one line each,
# `- [type] path (mtime): description`, read from the first 30 lines / 65,536 bytes of each
# note; `name:` is not sent. So the description is all the selector judges relevance from.

def _desc_words(desc: str) -> list[str]:
    return descriptions.words(desc)


def _collisions(by_text: _Groups) -> Iterator[Finding]:
    """Notes whose descriptions have the same words in the same order."""
    for group in by_text.groups():
        if len(group) < 2:
            continue
        first = group[0]
        same_type = len({n.type for n in group}) == 1
        if same_type and len({w for w in _desc_words(first.description or "") if w not in STOPWORDS}) >= 3:
            continue  # near-duplicate already reports these
        for n in group[1:]:
            yield Finding("description-collision", n.rel, 0,
                          "the same description as %s: the host's selector cannot tell the two apart; "
                          "describe what each one is about" % shown(first.rel))


def _window_lines(st: Store) -> int:
    """How many lines of the index the host loads (pointers past them are never read)."""
    raw = st.index_raw or b""
    assert st.caps is not None
    end = host_window(st.caps).loaded_length(raw)
    return raw.count(b"\n", 0, end) + (1 if end and not raw[:end].endswith(b"\n") else 0)


_MTIME = operator.attrgetter("mtime")


def check_recall(st: Store, ctx: Context) -> Iterator[Finding]:
    for n in st.live:
        if n.error is None and not n.host_reads:
            yield Finding("recall-fm-unread", n.rel, 1,
                          "the frontmatter ends past line %d or byte %s, where the host's recall scan stops "
                          "reading: it sees no description or type for this note; move name, description "
                          "and type to the top and keep the block short"
                          % (store_mod.HOST_SCAN_LINES, _n(store_mod.HOST_SCAN_BYTES)))
    if not st.index_read or st.streamed and st.stopped:
        return
    window = _window_lines(st)
    in_window = {p.rel for p in st.pointers if p.exists and not p.escapes and p.line <= window}
    anywhere = {p.rel for p in st.pointers if p.exists and not p.escapes}
    # newest first; reverse keeps notes of one mtime in name order, as a key of -mtime did
    newest = sorted(st.notes, key=_MTIME, reverse=True)[:store_mod.HOST_CANDIDATES]
    candidates = {n.rel for n in newest}
    for n in st.live:
        if n.rel in in_window or n.rel in candidates or n.rel not in anywhere:
            continue  # notes in no index line at all are note-orphan / note-link-only
        yield Finding("recall-unreachable", n.rel, 0,
                      "indexed only past the %s lines the host loads, and not among the %d newest notes its "
                      "selector is offered: no session can recall it; compact the index"
                      % (_n(window), store_mod.HOST_CANDIDATES))

"""Ranked lexical search over the notes of a store, live and archived, for when nothing in the
index fits (`engramory search`: engramory.commands.search).

Ranking is BM25F over three fields: the description (weight 3: it is the recall key), the
name (weight 2) and the body (weight 1), plus a bonus when the whole query occurs verbatim
(error strings, file names). Text is lowercased; words are runs of letters and digits, a
dotted/slashed/colon-joined run (`foo.test.ts:42`, `ECONNREFUSED`) also counts as one token,
words past four letters lose a plural or -ing/-ed ending, and CJK text (which has no spaces)
is cut into overlapping character bigrams. This module is the scan (every note read on each
run) and the one ranking; engramory.curate.searchindex keeps an index that feeds the same
ranking the same numbers. Standard library only.
"""

from __future__ import annotations

import heapq
import math
import os
import re
from collections import Counter

from engramory import scope
from engramory.store import frontmatter
from engramory.store.secrets import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Callable, Dict, List, Optional, Tuple

    # One candidate: (key, rel, archived, field lengths, per query term its field counts or
    # None). The key is the caller's (a Doc for the scan, a row id for the index).
    Candidate = Tuple[object, str, bool, Tuple[int, int, int], List[Optional[Tuple[int, int, int]]]]
    # key -> (description, body) of the keys asked for: the text the phrase bonus is tested in
    Texts = Callable[[List[object]], Dict[object, Tuple[str, str]]]
    # keys -> their rels, in order: for candidates whose rel is left "" until they are scored
    Rels = Callable[[List[object]], List[str]]


WEIGHTS = {"description": 3.0, "name": 2.0, "body": 1.0}
B = {"description": 0.5, "name": 0.3, "body": 0.75}
K1 = 1.2
PHRASE_BONUS = 2.0
ARCHIVE_FACTOR = 0.9  # a live note wins a tie with an archived one
SNIPPET_MAX = 160
LIMIT = 10
READ_MAX = 1 << 20  # a note past this is searched by its first megabyte only
INDEX = "MEMORY.md"
ARCHIVE = "archive"

_CJK = "\u3040-\u30ff\u3100-\u312f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f"
TOKEN_PATTERN = r"([%s]+)|((?:(?![%s])[^\W_])+(?:[._:/-](?:(?![%s])[^\W_])+)*)" % (_CJK, _CJK, _CJK)
_TOKEN_RE: list[re.Pattern[str]] = []  # compiled on first non-ASCII text: it costs a process start milliseconds
WORD_SPLIT_RE = re.compile(r"[._:/-]")


def _stem(word: str) -> str:
    if len(word) <= 4 or not word.isalpha():
        return word
    for suffix in ("ing", "ies", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "ies":
                return word[:-3] + "y"
            if suffix == "es" and not word.endswith(("ses", "xes", "zes", "ches", "shes")):
                return word[:-1]
            if suffix == "s" and word[-2] in "siu":  # class, redis, status: no plural to drop
                return word
            return word[: -len(suffix)]
    return word


ASCII_RE = re.compile(r"[a-z0-9]+(?:[._:/-][a-z0-9]+)*")
_EXPANDED: dict[str, tuple[str, ...]] = {}


def _expand(word: str) -> tuple[str, ...]:
    """The terms one lowercase word gives: itself stemmed; a joined run (`foo.test.ts`) also
    gives each part, and a hyphenated one (`cut-off`) its parts written together (`cutoff`)."""
    got = _EXPANDED.get(word)
    if got is None:
        if WORD_SPLIT_RE.search(word):
            parts = [w for w in WORD_SPLIT_RE.split(word) if w]
            out = [word] + [_stem(w) for w in parts]
            if "-" in word:
                out.append(_stem("".join(parts)))
            got = tuple(out)
        else:
            got = (_stem(word),)
        if len(_EXPANDED) < 200_000:
            _EXPANDED[word] = got
    return got


def _words(low: str) -> list[str]:
    """Words and CJK runs of lowercased text, each CJK run cut into character bigrams."""
    if low.isascii():
        return ASCII_RE.findall(low)
    odd = [c for c in set(low) if c > "\x7f"]
    if not any(c.isalnum() or c >= "\u3040" for c in odd):
        # every non-ASCII character here (a dash, a quote, an arrow) is one no token holds, as a
        # space is: the same words as TOKEN_PATTERN's, without compiling it (ms of a search's start)
        return ASCII_RE.findall(low.translate({ord(c): " " for c in odd}))
    return pattern_words(low)


def pattern_words(low: str) -> list[str]:
    """`_words` by TOKEN_PATTERN itself, whatever the text (the tests hold the shortcuts to it)."""
    out: list[str] = []
    if not _TOKEN_RE:
        _TOKEN_RE.append(re.compile(TOKEN_PATTERN))
    for cjk, word in _TOKEN_RE[0].findall(low):
        if cjk:
            if len(cjk) == 1:
                out.append(cjk)
            else:
                out.extend(cjk[i: i + 2] for i in range(len(cjk) - 1))
        else:
            out.append(word)
    return out


def counts(text: str) -> dict[str, int]:
    """Term frequencies of `text`: the words counted once each in C, then expanded per
    distinct word (a note has a few dozen)."""
    out: dict[str, int] = {}
    for word, c in Counter(_words(text.lower())).items():
        if len(word) >= 2 and "\u3040" <= word[0]:
            out[word] = out.get(word, 0) + c  # a CJK bigram: no stemming
            continue
        for tok in _expand(word):
            out[tok] = out.get(tok, 0) + c
    return out


def tokens(text: str) -> list[str]:
    """The search terms of `text` (see the module docstring), in order."""
    out: list[str] = []
    for word in _words(text.lower()):
        if "\u3040" <= word[0]:
            out.append(word)
        else:
            out.extend(_expand(word))
    return out


class Doc:
    """One note, read. Its fields are tokenized only when a query term occurs in its text
    (`counts`), so a search costs a substring test per note plus the work on real candidates."""

    __slots__ = ("rel", "archived", "name", "type", "description", "body", "body_line", "desc_line",
                 "low", "lengths", "_counts")

    def __init__(self, rel: str, archived: bool, text: str) -> None:
        self.rel = rel
        self.archived = archived
        fm = frontmatter.parse(text)
        f = fm.fields
        t = f.get("type")
        if t is None:
            t = fm.nested("metadata", "type")
        self.type = t if isinstance(t, str) else None
        desc = f.get("description")
        self.description = desc if isinstance(desc, str) else ""
        stem = rel.rsplit("/", 1)[-1][:-3]
        name = f.get("name")
        self.name = name if isinstance(name, str) and name.strip() else stem
        self.body = text[fm.body_start:] if fm.closed else text
        self.body_line = fm.body_line if fm.closed else 1
        self.desc_line = fm.line_of.get("description", 0)
        self._finish()

    @classmethod
    def stored(cls, rel: str, archived: bool, type_: str | None, name: str, description: str, body: str,
               body_line: int, desc_line: int) -> Doc:
        """The Doc that `Doc(rel, archived, text)` made from the note's text, from the fields
        it kept (the search index stores them), without parsing the text again."""
        d = cls.__new__(cls)
        d.rel, d.archived, d.type, d.name, d.description, d.body = rel, archived, type_, name, description, body
        d.body_line, d.desc_line = body_line, desc_line
        d._finish()
        return d

    def _finish(self) -> None:
        stem = self.rel.rsplit("/", 1)[-1][:-3]
        names = (self.name if self.name == stem else self.name + " " + stem).replace("-", " ")
        self.low = (self.description + "\n" + names + "\n" + self.body).lower()
        # field lengths in characters: BM25 only needs each length relative to the average
        self.lengths = {"description": len(self.description), "name": len(names), "body": len(self.body)}
        self._counts: dict[str, dict[str, int]] | None = None

    def counts(self) -> dict[str, dict[str, int]]:
        if self._counts is None:
            names = (self.name + " " + self.rel.rsplit("/", 1)[-1][:-3]).replace("-", " ")
            out: dict[str, dict[str, int]] = {}
            for field, value in (("description", self.description), ("name", names), ("body", self.body)):
                out[field] = counts(value)
            self._counts = out
        return self._counts


def _read(path: str, cut: list[tuple[str, int]] | None = None) -> str | None:
    """The note's text, at most READ_MAX bytes of it, through the one bounded reader (a FIFO
    or a device is refused unread). A note cut short is added to `cut` with its size."""
    try:
        data, st = scope.read_bounded(path, READ_MAX)
    except OSError:
        return None
    if len(data) > READ_MAX:
        if cut is not None:
            cut.append((path, max(st.st_size, len(data))))
        data = data[:READ_MAX]
    return data.decode("utf-8", "replace")


def note_entries(folder: str, top: bool) -> list[os.DirEntry[str]]:
    """The notes of one folder, in directory order: `*.md` but dot files, symlinks, anything
    not a regular file and (in the store's `top` folder) the index. One listing, no stat."""
    try:
        with os.scandir(folder) as it:
            found = list(it)
    except OSError:
        return []
    out = []
    for entry in found:
        name = entry.name
        if name[0] == "." or (name[-3:] != ".md" and not name.lower().endswith(".md")) or (top and name == INDEX):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):  # False for a symlink too
                continue
        except OSError:
            continue
        out.append(entry)
    return out


def folders(root: str, include_archive: bool = True) -> list[tuple[str, str, bool]]:
    """(path, rel prefix, archived) of the folders a search reads: the store, then archive/."""
    out = [(root, "", False)]
    if include_archive:
        out.append((os.path.join(root, ARCHIVE), ARCHIVE + "/", True))
    return out


def load(root: str, include_archive: bool = True, cut: list[tuple[str, int]] | None = None) -> list[Doc]:
    """Every live note (`ROOT/*.md` but the index) and, with `include_archive`, every note
    under `ROOT/archive/`. Dot files and symlinks are skipped; a note past READ_MAX is
    searched by its first READ_MAX bytes and listed in `cut` (path, size)."""
    docs: list[Doc] = []
    for folder, prefix, archived in folders(root, include_archive):
        for entry in sorted(note_entries(folder, not archived), key=lambda e: e.name):
            text = _read(entry.path, cut)
            if text is None:
                continue
            docs.append(Doc(prefix + entry.name, archived, text))
    return docs


class Hit:
    __slots__ = ("doc", "score", "line", "snippet")

    def __init__(self, doc: Doc, score: float, line: int, snippet: str) -> None:
        self.doc = doc
        self.score = score
        self.line = line
        self.snippet = snippet

    def as_dict(self, rank: int) -> dict[str, object]:
        d = self.doc
        return {
            "rank": rank, "path": d.rel, "name": d.name, "type": d.type, "archived": d.archived,
            "score": round(self.score, 4), "description": clean(d.description)[:SNIPPET_MAX],
            "line": self.line, "snippet": self.snippet,
        }


STOPWORDS = frozenset(
    "a an and are as at be by can do does for from has have how i in into is it its me my of on or "
    "our should that the their this to was we were what when where which who why will with you your".split()
)


def probe(term: str) -> str:
    """A substring every text that tokenizes to `term` contains (stems drop endings; -ies
    became -y)."""
    return term[:-1] if term.endswith("y") and len(term) > 3 else term


_probe = probe


FIELDS = tuple(WEIGHTS)  # description, name, body: the order of every per-field triple below
_FIELD_CONSTS = tuple((WEIGHTS[f], B[f]) for f in FIELDS)


class Query:
    """A query as the ranking sees it: its distinct terms (stopwords dropped unless nothing
    else is left), the substring each term's text must contain, and the verbatim phrase."""

    __slots__ = ("terms", "probes", "phrase", "use_phrase", "inner")

    def __init__(self, query: str) -> None:
        all_terms = list(dict.fromkeys(tokens(query)))
        self.terms = [t for t in all_terms if t not in STOPWORDS] or all_terms
        self.probes = [probe(t) for t in self.terms]
        self.phrase = " ".join(query.lower().split())
        self.use_phrase = len(self.phrase) >= 4 and len(all_terms) > 1
        self.inner = self._inner()

    def _inner(self) -> list[int]:
        """The places in `terms` of the terms a text holding the phrase must have: those of its
        inner words (all but its first and last), which it holds between two spaces, and the
        inner parts of a first or last word that is one joined run (`tests/conftest.py`): the
        text's run around it may be longer at its open end, but it is split at the same joiners.
        A field lacking one of these terms cannot hold the phrase (see `could_phrase`)."""
        place = {t: i for i, t in enumerate(self.terms)}
        out: set[int] = set()
        words = self.phrase.split(" ")
        for k, word in enumerate(words):
            if word.lower() != word:  # tokens() lowercases again: only a word that stays as it is
                continue
            if 0 < k < len(words) - 1:
                out.update(place[t] for t in tokens(word) if t in place)
            elif ASCII_RE.fullmatch(word):
                parts = WORD_SPLIT_RE.split(word)
                inner = parts[1 if k == 0 else 0: -1 if k == len(words) - 1 else len(parts)]
                out.update(place[t] for t in map(_stem, inner) if t in place)
        return sorted(out)

    def could_phrase(self, tfs: Sequence[tuple[int, int, int] | None]) -> bool:
        """Whether a note with these per-term (description, name, body) counts can hold the
        phrase in its description or its body: False only when each lacks an inner term."""
        got = [tfs[i] for i in self.inner]
        return all(c is not None and c[0] for c in got) or all(c is not None and c[2] for c in got)


def score(q: Query, count: int, sums: Sequence[int], cands: Sequence[Candidate], texts: Texts,
          limit: int, rels: Rels | None = None) -> list[tuple[float, object]]:
    """(score, key) of the best `limit` candidates, best first (ties by path). `count` and
    `sums` (total length per field) are over the whole pool searched, not the candidates;
    the candidates are the pool's notes that hold a query term's probe and some query term.
    BM25F as the module docstring says. The phrase bonus needs a note's text, so it is asked
    for (`texts`) only for notes that could still reach the top `limit` with it. `rels`, when
    given, names the candidates whose rel is left "" (the index's), for those scored only.

    The candidates are taken by the query terms they hold: a note's score is below the sum of
    the idf of its terms (each term adds idf * tf / (K1 + tf)), plus the bonus when it can hold
    the phrase, so a group whose bound stays below the limit-th score already found is never
    scored; a query whose common term every note holds scores the few notes holding the rest."""
    if limit <= 0:
        return []
    avg = [(sums[i] / count) or 1.0 for i in range(len(FIELDS))]
    idf, groups = _idf_groups(len(q.terms), count, cands)
    inner = sum(1 << i for i in q.inner)
    bounds = []
    for mask in groups:
        ub = sum(w for i, w in enumerate(idf) if w is not None and mask >> i & 1) * (1 + 1e-9)
        phrase = q.use_phrase and mask & inner == inner  # a note lacking an inner term cannot hold it
        if phrase:
            ub += PHRASE_BONUS * 1.5
        bounds.append((-ub, mask, phrase))
    bounds.sort()
    best: list[tuple[float, str, object]] = []
    for ub, mask, phrase in bounds:
        if len(best) >= limit and -ub < best[limit - 1][0]:
            break  # this group, and every one after it, stays below the limit-th score
        best.extend(_scored(q, groups[mask], (idf, avg), texts, limit, rels, phrase))
        best.sort(key=lambda x: (-x[0], x[1]))
        del best[limit:]
    return [(s, key) for s, _, key in best]


def _scored(q: Query, cands: Sequence[Candidate], weights: tuple[Sequence[float | None], Sequence[float]],
            texts: Texts, limit: int, rels: Rels | None, phrase: bool) -> list[tuple[float, str, object]]:
    """(score, rel, key) of the best `limit` of `cands`, best first (ties by path); `phrase`:
    whether they may hold the phrase. The rels are asked for only for the notes that may reach
    the top: those scoring at least the limit-th score (or able to with the bonus)."""
    idf, avg = weights
    base = []
    for cand in cands:
        s = _bm25(cand[4], cand[3], idf, avg)
        if s > 0:
            base.append((s, cand))
    if len(base) > limit:
        # the bonus only adds: `limit` notes score at least the limit-th best score without it,
        # so a note whose score with the most bonus stays below that cannot enter the top
        floor = heapq.nlargest(limit, [_final(s, c[2]) for s, c in base])[-1]
        base = [x for x in base if _bound(x[0], x[1][2], phrase) >= floor]
    named = [c[1] for _, c in base] if rels is None else rels([c[0] for _, c in base])
    if not phrase:
        done = [(_final(s, c[2]), rel, c[0]) for (s, c), rel in zip(base, named)]
        done.sort(key=lambda x: (-x[0], x[1]))
        return done[:limit]
    test = bool(q.inner)  # no inner term: every note could hold the phrase
    return _with_phrase(q.phrase, [(s, rel, c[2], c[0], q.could_phrase(c[4]) if test else True)
                                   for (s, c), rel in zip(base, named)], texts, limit)


def _idf_groups(n: int, count: int, cands: Sequence[Candidate]) -> tuple[list[float | None], dict[int, list[Candidate]]]:
    """Per query term its idf over the pool (None for a term no candidate holds), and the
    candidates by the terms they hold (bit i: term i)."""
    df = [0] * n
    groups: dict[int, list[Candidate]] = {}
    for cand in cands:
        mask = 0
        for i, present in enumerate(cand[4]):
            if present is not None:
                df[i] += 1
                mask |= 1 << i
        got = groups.get(mask)
        if got is None:
            groups[mask] = [cand]
        else:
            got.append(cand)
    return [math.log(1 + (count - df[i] + 0.5) / (df[i] + 0.5)) if df[i] else None for i in range(n)], groups


def _bm25(tfs: Sequence[tuple[int, int, int] | None], lengths: tuple[int, int, int], idf: Sequence[float | None],
          avg: Sequence[float]) -> float:
    s = 0.0
    for i, per_field in enumerate(tfs):
        w_idf = idf[i]
        if per_field is None or w_idf is None:
            continue
        tf = 0.0
        for j, (w, b) in enumerate(_FIELD_CONSTS):
            c = per_field[j]
            if c:
                tf += w * c / (1 - b + b * lengths[j] / avg[j])
        if tf:
            s += w_idf * tf / (K1 + tf)
    return s


def _final(s: float, archived: bool) -> float:
    return s * ARCHIVE_FACTOR if archived else s


def _bound(s: float, archived: bool, could: bool = True) -> float:
    """The most a base score can become with the phrase bonus (at most PHRASE_BONUS * 1.5);
    the score itself for a note that cannot hold the phrase (Query.could_phrase)."""
    return _final(s + PHRASE_BONUS * 1.5 if could else s, archived)


def _with_phrase(phrase: str, base: list[tuple[float, str, bool, object, bool]], texts: Texts,
                 limit: int) -> list[tuple[float, str, object]]:
    """The top `limit` with the phrase bonus: a note whose score with the most bonus stays
    below the limit-th exact score cannot enter the top, so its text is never asked for; nor
    is the text of a note that cannot hold the phrase (its score is exact already)."""
    order = sorted(base, key=lambda x: (-_bound(x[0], x[2], x[4]), x[1]))
    best: list[tuple[float, str, object]] = []
    i = 0
    while i < len(order):
        if len(best) >= limit and _bound(order[i][0], order[i][2], order[i][4]) < best[limit - 1][0]:
            break
        chunk = order[i:i + 64]
        i += len(chunk)
        want = [x[3] for x in chunk if x[4]]
        text = texts(want) if want else {}
        for s, rel, archived, key, could in chunk:
            best.append((_bonus(phrase, text[key], s, archived) if could else _final(s, archived), rel, key))
        best.sort(key=lambda x: (-x[0], x[1]))
        del best[limit:]
    return best


def _bonus(phrase: str, text: tuple[str, str], s: float, archived: bool) -> float:
    description, body = text
    if phrase in description.lower():
        s += PHRASE_BONUS * 1.5
    elif phrase in body.lower():
        s += PHRASE_BONUS
    return _final(s, archived)


def term_counts(d: Doc, terms: Sequence[str]) -> list[tuple[int, int, int] | None]:
    """Per query term, its (description, name, body) counts in `d`, or None when absent."""
    fd, fn, fb = (d.counts()[f] for f in FIELDS)
    out: list[tuple[int, int, int] | None] = []
    for t in terms:
        got = (fd.get(t, 0), fn.get(t, 0), fb.get(t, 0))
        out.append(got if any(got) else None)
    return out


def rank(docs: Sequence[Doc], query: str, type_: str | None = None, limit: int = LIMIT) -> list[Hit]:
    q = Query(query)
    if not q.terms:
        return []
    pool = [d for d in docs if type_ is None or d.type == type_]
    if not pool:
        return []
    sums = [sum(d.lengths[f] for d in pool) for f in FIELDS]
    probes = q.probes
    cands: list[Candidate] = []
    for d in pool:
        if any(p in d.low for p in probes):
            tfs = term_counts(d, q.terms)
            if any(tfs):
                L = d.lengths
                cands.append((d, d.rel, d.archived, (L["description"], L["name"], L["body"]), tfs))

    def texts(keys: list[object]) -> dict[object, tuple[str, str]]:
        return {k: (k.description, k.body) for k in keys if isinstance(k, Doc)}

    return hits([(s, k) for s, k in score(q, len(pool), sums, cands, texts, limit) if isinstance(k, Doc)], q)


def hits(best: Sequence[tuple[float, Doc]], q: Query) -> list[Hit]:
    """The ranked notes as hits, each with its snippet line."""
    out = []
    for s, d in best:
        line, snippet = _snippet(d, q.terms)
        out.append(Hit(d, s, line, snippet))
    return out


def _snippet(d: Doc, terms: Sequence[str]) -> tuple[int, str]:
    """The body line with the most query terms (else the description line), cut short."""
    best, best_i, best_line = 0, -1, ""
    wanted = set(terms)
    for i, line in enumerate(d.body.split("\n")):
        if not line.strip():
            continue
        got = len(wanted.intersection(tokens(line)))
        if got > best:
            best, best_i, best_line = got, i, line
    if best_i < 0:
        return d.desc_line, _cut(d.description)
    return d.body_line + best_i, _cut(best_line)


def _cut(text: str) -> str:
    text = " ".join(clean(text).split())
    return text if len(text) <= SNIPPET_MAX else text[: SNIPPET_MAX - 1].rstrip() + "\u2026"


def search(root: str, query: str, type_: str | None = None, limit: int = LIMIT,
           include_archive: bool = True, cut: list[tuple[str, int]] | None = None) -> list[Hit]:
    return rank(load(root, include_archive, cut), query, type_, limit)


def cut_note(root: str, cut: list[tuple[str, int]]) -> str:
    """The stderr line for notes searched only in part, with their sizes and the limit."""
    shown = ", ".join("%s (%s bytes)" % (os.path.relpath(p, root), "{:,}".format(n)) for p, n in cut[:5])
    more = " and %d more" % (len(cut) - 5) if len(cut) > 5 else ""
    return ("engramory search: note: only the first %s bytes of %s%s were searched; a note holds one fact: "
            "split %s (`engramory doctor` lists every note over its size cap)\n"
            % ("{:,}".format(READ_MAX), shown, more, "it" if len(cut) == 1 else "them"))


def render(hits: Iterable[Hit], root: str) -> str:
    out = []
    for i, h in enumerate(hits, 1):
        d = h.doc
        mark = " [archived]" if d.archived else ""
        out.append("%d. %s (%s)%s  score %.2f\n   %s\n   %s:%d: %s" % (
            i, d.rel, d.type or "untyped", mark, h.score, _cut(d.description) or "(no description)",
            d.rel, h.line, h.snippet))
    return "\n".join(out) + ("\n" if out else "")



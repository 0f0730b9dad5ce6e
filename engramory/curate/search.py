"""Ranked lexical search over the notes of a store, live and archived, for when nothing in the
index fits (`engramory search`: engramory.commands.search).

Ranking is BM25F over three fields: the description (weight 3: it is the recall key), the
name (weight 2) and the body (weight 1), plus a bonus when the whole query occurs verbatim
(error strings, file names). Text is lowercased; words are runs of letters and digits, a
dotted/slashed/colon-joined run (`foo.test.ts:42`, `ECONNREFUSED`) also counts as one token,
words past four letters lose a plural or -ing/-ed ending, and CJK text (which has no spaces)
is cut into overlapping character bigrams. This module is the scan (every note read on each
run) and the terms; the one ranking is engramory.curate.ranking, which
engramory.curate.searchindex's index feeds the same numbers. Standard library only.
"""

from __future__ import annotations

import os
import re
from collections import Counter

from engramory import scope
from engramory.curate.ranking import FIELDS, score
from engramory.store import frontmatter
from engramory.store.secrets import clean

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from engramory.curate.ranking import Candidate

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


def _cjk_bigrams(word: str) -> list[str]:
    """The bigrams of every CJK run of two or more characters in `word`: a text holding `word`
    holds each such run inside one of its own (TOKEN_PATTERN's runs are maximal), so it holds
    these bigrams wherever `word` stands in the phrase, an open end included."""
    if not _CJK_RUN_RE:
        _CJK_RUN_RE.append(re.compile("[%s]{2,}" % _CJK))
    return [run[i: i + 2] for run in _CJK_RUN_RE[0].findall(word) for i in range(len(run) - 1)]


_CJK_RUN_RE: list[re.Pattern[str]] = []


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
        text's run around it may be longer at its open end, but it is split at the same joiners;
        and the bigrams of every CJK run in any of its words (`_cjk_bigrams`). A field lacking one
        of these terms cannot hold the phrase (see `could_phrase`)."""
        place = {t: i for i, t in enumerate(self.terms)}
        out: set[int] = set()
        words = self.phrase.split(" ")
        for k, word in enumerate(words):
            if word.lower() != word:  # tokens() lowercases again: only a word that stays as it is
                continue
            if not word.isascii():  # a CJK run of the phrase lies whole in a run of the text's: its bigrams are there
                out.update(place[b] for b in _cjk_bigrams(word) if b in place)
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



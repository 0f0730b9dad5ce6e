"""Answering a query from the search index (engramory.curate.searchindex), its files just
checked: the postings of the query's term hashes give the candidates and their counts; every
text the ranking needs (a candidate the index cannot vouch for, the phrase bonus, the snippets,
the notes the secret scan flags) is read from the note's file and checked against the hash the
index holds for it. A file whose bytes differ raises Stale: every note is read again
(searchindex), never answered by what the index held for it."""

from __future__ import annotations

import array
import heapq

from engramory.curate import ranking
from engramory.curate import search as S
from engramory.curate.searchrecords import Stale, State, Unreadable, decode_post, marks, note_hashes
from engramory.curate.searchrefresh import read_note

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from sqlite3 import Connection
    from typing import Dict, List, Optional, Tuple

    from engramory.curate.searchrefresh import Listing

    Found = Dict[int, List[Optional[Tuple[int, int, int]]]]


class Files:
    """The notes of the index read from their files, each checked against its stored hash."""

    def __init__(self, conn: Connection, st: State, now: Listing) -> None:
        self.conn, self.st, self.now = conn, st, now
        self.pos = st.positions(len(now))
        self.docs: dict[int, S.Doc] = {}

    def get(self, ids: Iterable[int]) -> dict[int, S.Doc]:
        want = [did for did in ids if did not in self.docs]
        if want:
            hashes = note_hashes(self.conn, want)
            for did in want:
                self.docs[did] = self._read(did, hashes.get(did))
        return self.docs

    def _read(self, did: int, digest: bytes | None) -> S.Doc:
        k, rel, text = self._text(did, digest)
        return S.Doc(rel, bool(k), text)

    def _text(self, did: int, digest: bytes | None) -> tuple[int, str, str]:
        """(folder, path in the store, text) of a note, its bytes checked against `digest`."""
        where = self.pos.get(did)
        if where is None or digest is None:
            raise Unreadable("a note's record is missing")
        k, j = where
        names, _, paths = self.now[k]
        got = read_note(paths[j])
        if got is None or self.st.keyed.data(got[0]) != digest:
            raise Stale(paths[j])
        return k, ("archive/" if k else "") + names[j], got[0].decode("utf-8", "replace")

    def phrase_fields(self, ids: list[int], phrase: str) -> dict[int, tuple[str, str]]:
        """(description, body) of each note, for the phrase bonus; ("", "") for one whose whole
        text lacks the phrase, told without parsing its frontmatter. That is sound for a phrase
        of ASCII without a quote, in a text without a backslash: the body is a slice of the text,
        the description its frontmatter's value, which without escapes is slices of the text
        joined by a quote (a single-quoted '' ); lowercasing maps character by character (only
        a capital sigma looks at its neighbours, and it never becomes ASCII), so a phrase in
        either field, lowercased, is in the text, lowercased (tests/unit/curate/test_search_fast.py)."""
        want = [did for did in ids if did not in self.docs]
        hashes = note_hashes(self.conn, want) if want else {}
        plain = phrase.isascii() and "'" not in phrase
        out: dict[int, tuple[str, str]] = {}
        for did in ids:
            d = self.docs.get(did)
            if d is None:
                k, rel, text = self._text(did, hashes.get(did))
                if plain and "\\" not in text and phrase not in text.lower():
                    out[did] = ("", "")
                    continue
                d = self.docs[did] = S.Doc(rel, bool(k), text)
            out[did] = (d.description, d.body)
        return out

    def rels(self, ids: Iterable[int]) -> list[str]:
        """The path of each note, relative to the store, from the folder listing."""
        pos, now = self.pos, self.now
        out = []
        for did in ids:
            where = pos.get(did)
            if where is None:
                raise Unreadable("a note's record is missing")
            k, j = where
            out.append(("archive/" if k else "") + now[k][0][j])
        return out


def _pool(st: State, code: int | None, include_archive: bool) -> tuple[int, list[int]]:
    count, sums = 0, [0, 0, 0]
    for group, (n, *totals) in st.agg.items():
        k, c = group.split(":")
        if (include_archive or k == "1") and (code is None or int(c) == code):
            count += n
            for f in range(3):
                sums[f] += totals[f]
    return count, sums


WIDE_MIN = 4096  # postings; a term this common keeps its notes holding no other term out of the candidates


class Solo:
    """ranking.Solo: the notes of the pool holding the query's widest term and no other, as
    row ids and their (description, name, body) counts, never made candidates but the few
    that can reach the top of their group."""

    def __init__(self, st: State, term: int, n: int) -> None:
        self.st, self.term, self.n, self.size = st, term, n, 0
        self.ids = array.array("i")
        self.counts = array.array("i")

    def pick(self, w_idf: float, avg: Sequence[float], limit: int) -> list[ranking.Candidate]:
        """The notes whose score is at least the limit-th best of them (ties kept: the order
        among equal scores is by path, which the ranking decides); every other one has `limit`
        notes of its own group above it, so it cannot reach the top."""
        lens, kind, one, factor = self.st.lens, self.st.kind, ranking.one_term, ranking.ARCHIVE_FACTOR
        c = self.counts
        scored = []
        for did, cd, cn, cb in zip(self.ids, c[0::3], c[1::3], c[2::3]):
            s = one(w_idf, cd, cn, cb, lens[3 * did], lens[3 * did + 1], lens[3 * did + 2], avg)
            if s > 0:
                scored.append((s * factor if kind[did] == 2 else s, did, cd, cn, cb))
        if len(scored) > limit:
            floor = heapq.nlargest(limit, [x[0] for x in scored])[-1]
            scored = [x for x in scored if x[0] >= floor]
        out: list[ranking.Candidate] = []
        for _, did, cd, cn, cb in scored:
            tfs: list[tuple[int, int, int] | None] = [None] * self.n
            tfs[self.term] = (cd, cn, cb)
            out.append((did, "", kind[did] == 2, (lens[3 * did], lens[3 * did + 1], lens[3 * did + 2]), tfs))
        return out


class Ask:
    """One query against the index: which notes are in its pool, and their counts."""

    def __init__(self, st: State, q: S.Query, code: int | None, include_archive: bool) -> None:
        self.st, self.q, self.code = st, q, code
        self.top_kind = 2 if include_archive else 1
        self.found: Found = {}
        self.probed: set[int] = set()  # notes whose text holds a query term's probe, as the index knows
        self.solo: Solo | None = None

    def in_pool(self, did: int) -> bool:
        kd = self.st.kind[did]
        return bool(kd) and kd <= self.top_kind and (self.code is None or self.st.tcode[did] == self.code)

    def postings(self, conn: Connection) -> None:
        place = {self.st.keyed.term(t): i for i, t in enumerate(self.q.terms)}
        rows = conn.execute("SELECT term, crc, data FROM post WHERE term IN (%s)" % marks(len(place)),
                            list(place)).fetchall()
        terms = [(place[term], *decode_post(crc, data, len(self.st.kind))) for term, crc, data in rows]
        # the widest term last, its notes holding no other term kept apart (Solo) when they cannot hold the phrase
        terms.sort(key=lambda t: len(t[1]))
        wide = terms[-1][0] if terms and len(terms[-1][1]) >= WIDE_MIN else None
        if wide is not None and self.q.use_phrase and set(self.q.inner) <= {wide}:
            wide = None
        for i, ids, vals in terms:
            if i == wide:
                self.solo = Solo(self.st, i, len(self.q.terms))
                self._wide(i, ids, vals, self.solo)
            else:
                self._term(i, ids, vals)

    def _wide(self, i: int, ids: array.array[int], vals: array.array[int], solo: Solo) -> None:
        """`_term` for the widest term, after every other: a note already found gets its counts,
        a note holding this term alone joins `solo` (or `found`, to be tested, when the index
        does not know that its text holds the term's probe)."""
        n = len(self.q.terms)
        kind, tcode, top, code = self.st.kind, self.st.tcode, self.top_kind, self.code
        found, probed = self.found, self.probed
        alone, counts = solo.ids, solo.counts
        for did, cd, cn, cb, flag in zip(ids, vals[0::4], vals[1::4], vals[2::4], vals[3::4]):
            kd = kind[did]
            if not kd or kd > top or (code is not None and tcode[did] != code):
                continue
            tfs = found.get(did)
            if tfs is None and flag:
                alone.append(did)
                counts.extend((cd, cn, cb))
                continue
            if tfs is None:
                tfs = found[did] = [None] * n
            tfs[i] = (cd, cn, cb)
            if flag:
                probed.add(did)
        solo.size = len(alone)

    def _term(self, i: int, ids: array.array[int], vals: array.array[int]) -> None:
        n = len(self.q.terms)
        kind, tcode, top, code = self.st.kind, self.st.tcode, self.top_kind, self.code
        found, probed = self.found, self.probed
        for did, cd, cn, cb, flag in zip(ids, vals[0::4], vals[1::4], vals[2::4], vals[3::4]):
            kd = kind[did]  # in_pool, inline: this loop runs once per posting of every query term
            if not kd or kd > top or (code is not None and tcode[did] != code):
                continue
            tfs = found.get(did)
            if tfs is None:
                tfs = found[did] = [None] * n
            tfs[i] = (cd, cn, cb)
            if flag:
                probed.add(did)

    def flagged(self, files: Files) -> None:
        """The notes the secret scan flags, which have no postings: counted from their files."""
        secret = [did for did in self.st.secret if self.in_pool(did)]
        docs = files.get(secret)
        for did in secret:
            d = docs[did]
            if any(p in d.low for p in self.q.probes):
                tfs = S.term_counts(d, self.q.terms)
                if any(tfs):
                    self.found[did] = tfs
                    self.probed.add(did)

    def unsure(self, files: Files) -> None:
        """Every term a note holds lacks its own probe (`cut-off` gives `cutoff`): test the others."""
        unsure = [did for did in self.found if did not in self.probed]
        docs = files.get(unsure)
        for did in unsure:
            if not any(p in docs[did].low for p in self.q.probes):
                del self.found[did]


def answer(conn: Connection, st: State, now: Listing, q: S.Query, type_: str | None, limit: int,
           include_archive: bool) -> list[S.Hit]:
    """The scan's hits for `q`, from the index (its files just checked)."""
    code = None
    if type_ is not None:
        tname = st.keyed.type(type_)
        if tname not in st.types:
            return []
        code = st.types.index(tname)
    count, sums = _pool(st, code, include_archive)
    if not count or not q.terms:
        return []
    ask = Ask(st, q, code, include_archive)
    files = Files(conn, st, now)
    ask.postings(conn)
    ask.flagged(files)
    ask.unsure(files)
    lens, kind = st.lens, st.kind
    # the rels ("" here) only for the candidates scored (ranking.score): most of a common term's are not
    cands: list[ranking.Candidate] = [(did, "", kind[did] == 2, (lens[3 * did], lens[3 * did + 1], lens[3 * did + 2]), tfs)
                                for did, tfs in ask.found.items()]

    def fetch(keys: list[object]) -> dict[object, tuple[str, str]]:
        got = files.phrase_fields([k for k in keys if isinstance(k, int)], q.phrase)
        return {k: v for k, v in got.items()}

    def rels(keys: list[object]) -> list[str]:
        return files.rels(k for k in keys if isinstance(k, int))  # every key here is a row id

    best = ranking.score(q, count, sums, cands, fetch, limit, rels, ask.solo)
    docs = files.get(k for _, k in best if isinstance(k, int))
    return S.hits([(s, docs[k]) for s, k in best if isinstance(k, int)], q)


def cut_list(st: State, now: Listing, include_archive: bool) -> list[tuple[str, int]]:
    """The scan's `cut` list: notes searched by their first READ_MAX bytes, in its order."""
    if not st.cut:
        return []
    pos = st.positions(len(now))
    out = []
    for did, size in st.cut.items():
        if (st.kind[did] == 1 or (include_archive and st.kind[did] == 2)) and did in pos:
            k, j = pos[did]
            out.append((k, now[k][0][j], now[k][2][j], size))
    return [(where, size) for _, _, where, size in sorted(out)]

"""The one ranking of `engramory search` (engramory.curate.search): BM25F over a note's
description, name and body with the verbatim-phrase bonus, over candidates the scan
(search.rank) or the index (engramory.curate.searchanswer) made; each gives it the same numbers,
so each gets the same hits. It scores only the candidates that can still reach the top: by the
query terms they hold (a group's bound), and within a group by their score without the bonus.
Standard library only; it never reads a file (the texts the bonus needs are asked for).
"""

from __future__ import annotations

import heapq
import math

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Callable, Dict, List, Optional, Protocol, Tuple

    from engramory.curate.search import Query

    # One candidate: (key, rel, archived, field lengths, per query term its field counts or
    # None). The key is the caller's (a Doc for the scan, a row id for the index).
    Candidate = Tuple[object, str, bool, Tuple[int, int, int], List[Optional[Tuple[int, int, int]]]]
    # key -> (description, body) of the keys asked for: the text the phrase bonus is tested in
    Texts = Callable[[List[object]], Dict[object, Tuple[str, str]]]
    # keys -> their rels, in order: for candidates whose rel is left "" until they are scored
    Rels = Callable[[List[object]], List[str]]

    class Solo(Protocol):
        """The notes holding one query term (`term`) and no other, `size` of them, not made
        candidates (engramory.curate.searchanswer.Solo): `pick` gives the few of them that can
        reach the top `limit` of their group, as candidates, scored by `one_term` (which is
        `_bm25` for a note holding one term, to the bit)."""

        term: int
        size: int

        def pick(self, w_idf: float, avg: Sequence[float], limit: int) -> List[Candidate]: ...



WEIGHTS = {"description": 3.0, "name": 2.0, "body": 1.0}
B = {"description": 0.5, "name": 0.3, "body": 0.75}
K1 = 1.2
PHRASE_BONUS = 2.0
ARCHIVE_FACTOR = 0.9  # a live note wins a tie with an archived one
FIELDS = tuple(WEIGHTS)  # description, name, body: the order of every per-field triple below
_FIELD_CONSTS = tuple((WEIGHTS[f], B[f]) for f in FIELDS)


def score(q: Query, count: int, sums: Sequence[int], cands: Sequence[Candidate], texts: Texts,
          limit: int, rels: Rels | None = None, solo: Solo | None = None) -> list[tuple[float, object]]:
    """(score, key) of the best `limit` candidates, best first (ties by path). `count` and
    `sums` (total length per field) are over the whole pool searched, not the candidates;
    the candidates are the pool's notes that hold a query term's probe and some query term.
    BM25F as the module docstring says. The phrase bonus needs a note's text, so it is asked
    for (`texts`) only for notes that could still reach the top `limit` with it. `rels`, when
    given, names the candidates whose rel is left "" (the index's), for those scored only.

    The candidates are taken by the query terms they hold: a note's score is below the sum of
    the idf of its terms (each term adds idf * tf / (K1 + tf)), plus the bonus when it can hold
    the phrase, so a group whose bound stays below the limit-th score already found is never
    scored; a query whose common term every note holds scores the few notes holding the rest.

    `solo`, when given, holds more candidates: notes holding its one term and no other, kept out
    of `cands` so that the tens of thousands a common term has are never made candidates; they
    count in that term's idf, and only the ones that can reach the top `limit` of their group
    (Solo.pick) join it, when it is scored. It is never a group that can hold the phrase."""
    if limit <= 0:
        return []
    avg = [(sums[i] / count) or 1.0 for i in range(len(FIELDS))]
    idf, groups = _idf_groups(len(q.terms), count, cands, solo)
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
        group = groups[mask]
        if solo is not None and mask == 1 << solo.term:
            group = group + solo.pick(idf[solo.term] or 0.0, avg, limit)
        best.extend(_scored(q, group, (idf, avg), texts, limit, rels, phrase))
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


def _idf_groups(n: int, count: int, cands: Sequence[Candidate],
                solo: Solo | None = None) -> tuple[list[float | None], dict[int, list[Candidate]]]:
    """Per query term its idf over the pool (None for a term no candidate holds), and the
    candidates by the terms they hold (bit i: term i); `solo`'s notes counted in its term's."""
    df = [0] * n
    groups: dict[int, list[Candidate]] = {}
    if solo is not None and solo.size:
        df[solo.term] += solo.size
        groups[1 << solo.term] = []
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


def one_term(w_idf: float, cd: int, cn: int, cb: int, l0: int, l1: int, l2: int, avg: Sequence[float]) -> float:
    """`_bm25` of a note holding one query term with these counts, in the same operations in
    the same order, so the same float (tests/unit/curate/test_search_fast.py holds them equal)."""
    (w0, b0), (w1, b1), (w2, b2) = _FIELD_CONSTS
    tf = 0.0
    if cd:
        tf += w0 * cd / (1 - b0 + b0 * l0 / avg[0])
    if cn:
        tf += w1 * cn / (1 - b1 + b1 * l1 / avg[1])
    if cb:
        tf += w2 * cb / (1 - b2 + b2 * l2 / avg[2])
    return w_idf * tf / (K1 + tf) if tf else 0.0


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

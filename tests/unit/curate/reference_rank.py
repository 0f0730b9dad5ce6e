"""The ranking of `engramory search` as it was before the index (issue 21), kept verbatim as
the reference the scan and the index are both held to: same hits, same order, same scores,
same snippets. Do not "fix" it: change it only together with a deliberate ranking change."""

from __future__ import annotations

import math
from typing import Optional, Sequence

from engramory.curate.ranking import ARCHIVE_FACTOR, K1, PHRASE_BONUS, WEIGHTS, B
from engramory.curate.search import (
    LIMIT,
    STOPWORDS,
    Doc,
    Hit,
    _probe,
    _snippet,
    tokens,
)


def rank(docs: Sequence[Doc], query: str, type_: Optional[str] = None, limit: int = LIMIT) -> list[Hit]:
    all_terms = list(dict.fromkeys(tokens(query)))
    terms = [t for t in all_terms if t not in STOPWORDS] or all_terms
    if not terms:
        return []
    pool = [d for d in docs if type_ is None or d.type == type_]
    if not pool:
        return []
    count = len(pool)
    avg = {f: (sum(d.lengths[f] for d in pool) / count) or 1.0 for f in WEIGHTS}
    probes = [_probe(t) for t in terms]
    candidates = [d for d in pool if any(p in d.low for p in probes)]
    df: dict[str, int] = dict.fromkeys(terms, 0)
    for d in candidates:
        fields = d.counts()
        for t in terms:
            if t in fields["description"] or t in fields["body"] or t in fields["name"]:
                df[t] += 1
    idf = {t: math.log(1 + (count - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    phrase = " ".join(query.lower().split())
    use_phrase = len(phrase) >= 4 and len(all_terms) > 1
    scored: list[tuple[float, str, Doc]] = []
    for d in candidates:
        score = 0.0
        fields = d.counts()
        for t in terms:
            if not df[t]:
                continue
            tf = 0.0
            for f, w in WEIGHTS.items():
                c = fields[f].get(t)
                if c:
                    tf += w * c / (1 - B[f] + B[f] * d.lengths[f] / avg[f])
            if tf:
                score += idf[t] * tf / (K1 + tf)
        if score <= 0:
            continue
        if use_phrase:
            if phrase in d.description.lower():
                score += PHRASE_BONUS * 1.5
            elif phrase in d.body.lower():
                score += PHRASE_BONUS
        if d.archived:
            score *= ARCHIVE_FACTOR
        scored.append((score, d.rel, d))
    scored.sort(key=lambda s: (-s[0], s[1]))
    hits = []
    for score, _, d in scored[: max(limit, 0)]:
        line, snippet = _snippet(d, terms)
        hits.append(Hit(d, score, line, snippet))
    return hits



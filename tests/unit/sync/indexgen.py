"""Random three-way index merges for the fuzz: a model of an index (sections of entries and
prose), random edits on each side, the bytes of each version, and what three-way semantics
expects of each note. Seeded `random.Random`: the same seed gives the same cases everywhere."""

from __future__ import annotations

import random
from typing import Dict, List, Optional, Tuple

Value = Tuple[str, str]  # (heading, line) of one note
HEADINGS = ["## user", "## feedback", "## project", "## reference"]
CONFLICT = ("conflict", "")


class Model:
    """An index: an optional title, then sections (heading or "" for the top) of lines; a line
    is ("e", key, text) or ("t", text)."""

    def __init__(self, title: Optional[str], sections: List[Tuple[str, List[Tuple[str, ...]]]]) -> None:
        self.title = title
        self.sections = sections

    def copy(self) -> Model:
        return Model(self.title, [(h, list(lines)) for h, lines in self.sections])

    def render(self, crlf: bool = False) -> bytes:
        out: List[str] = []
        for heading, lines in self.sections:
            if heading == "":
                if self.title is not None:
                    out.append(self.title)
            else:
                out.append(heading)
            out.extend(line[-1] for line in lines)
        nl = "\r\n" if crlf else "\n"
        return (nl.join(out) + nl).encode("utf-8")

    def entries(self) -> Dict[str, Value]:
        return {line[1]: (heading or (self.title or ""), line[2]) for heading, lines in self.sections
                for line in lines if line[0] == "e"}


def entry(key: str, version: str) -> Tuple[str, str, str]:
    return ("e", key, "- [Note %s %s](%s) \u2014 about %s" % (key[:-3], version, key, key[:-3]))


def base_model(rng: random.Random, lines: int = 150) -> Model:
    flat = rng.random() < 0.3
    title = "# Memory Index" if not flat or rng.random() < 0.5 else None
    heads = [""] if flat else [""] + HEADINGS[: rng.randint(2, 4)]
    sections: List[Tuple[str, List[Tuple[str, ...]]]] = [(h, []) for h in heads]
    if not flat:
        sections[0][1].append(("t", ""))
    used = sum(1 for h in heads if h) + (1 if title else 0) + len(sections[0][1])
    n = 0
    while used < lines:
        sec = sections[0] if flat else sections[rng.randrange(1, len(sections))]
        if rng.random() < 0.05:
            sec[1].append(("t", "Prose line %d about the store." % rng.randrange(10**6)))
        else:
            sec[1].append(entry("n%d.md" % n, "v0"))
            n += 1
        used += 1
    if not flat:
        for _, body in sections[1:-1]:
            body.append(("t", ""))
    return Model(title, sections)


def mutate(rng: random.Random, model: Model, side: str, pool: List[str]) -> Model:
    m = model.copy()
    live = [(si, li) for si, (_, lines) in enumerate(m.sections) for li, line in enumerate(lines) if line[0] == "e"]
    k_del, k_chg, k_mov = rng.randint(0, 6), rng.randint(0, 6), rng.randint(0, 3)
    picked = rng.sample(live, min(len(live), k_del + k_chg + k_mov))
    dels, chgs, movs = picked[:k_del], picked[k_del:k_del + k_chg], picked[k_del + k_chg:]
    for si, li in chgs:
        line = m.sections[si][1][li]
        m.sections[si][1][li] = entry(line[1], "v-" + side + str(rng.randrange(3)))
    moved = []
    for si, li in movs:
        moved.append(m.sections[si][1][li])
        m.sections[si][1][li] = ("x",)
    for si, li in dels:
        m.sections[si][1][li] = ("x",)
    for si, (h, lines) in enumerate(m.sections):
        m.sections[si] = (h, [line for line in lines if line[0] != "x"])
    if len(m.sections) > 1 and rng.random() < 0.2 and len(m.sections) < 5:
        new_head = HEADINGS[len(m.sections) - 1]
        m.sections.append((new_head, []))
    targets = list(range(1, len(m.sections))) or [0]
    for line in moved:
        m.sections[rng.choice(targets)][1].append(line)
    present = {line[1] for _, lines in m.sections for line in lines if line[0] == "e"}
    for _ in range(rng.randint(0, 5)):
        key = rng.choice(pool)
        if key in present:
            continue
        present.add(key)
        si = rng.choice(targets)
        lines = m.sections[si][1]
        pos = rng.randint(0, len(lines))
        lines.insert(pos, entry(key, "new" if rng.random() < 0.7 else "new-" + side))
    if rng.random() < 0.1:
        si = rng.choice(targets)
        m.sections[si][1].append(("t", "Prose added on %s %d." % (side, rng.randrange(100))))
    return m


def expected(o: Model, a: Model, b: Model) -> Tuple[Dict[str, Value], List[str]]:
    """(note -> the (heading, line) three-way semantics keeps, notes that must conflict)."""
    eo, ea, eb = o.entries(), a.entries(), b.entries()
    keep: Dict[str, Value] = {}
    conflicts = []
    for key in sorted(set(eo) | set(ea) | set(eb)):
        vo, va, vb = eo.get(key), ea.get(key), eb.get(key)
        if va == vb or vb == vo:
            v = va
        elif va == vo:
            v = vb
        elif vo is None or va is None or vb is None:
            conflicts.append(key)
            continue
        else:
            parts = []
            for i in (0, 1):
                po, pa, pb = vo[i], va[i], vb[i]
                parts.append(pa if pa == pb or pb == po else pb if pa == po else None)
            if None in parts:
                conflicts.append(key)
                continue
            v = (parts[0] or "", parts[1] or "")
        if v is not None:
            keep[key] = v
    return keep, conflicts


BASE_EVERY = 10  # cases per generated base: each base gets ten different pairs of sides
POOL = ["new%d.md" % i for i in range(8)]  # notes either side may add: sometimes both do
_bases: Dict[int, Model] = {}


def case(seed: int) -> Tuple[Model, Model, Model]:
    number = seed // BASE_EVERY
    o = _bases.get(number)
    if o is None:
        _bases.clear()
        o = _bases[number] = base_model(random.Random(number * 7919 + 1))
    rng = random.Random(seed)
    return o, mutate(rng, o, "a", POOL), mutate(rng, o, "b", POOL)


def body_entries(data: bytes) -> Tuple[List[Tuple[str, str, str]], List[str]]:
    """(heading, key, line) of every entry outside the conflict block, and the block's lines:
    read with a plain line scan, independent of the merge's own parser."""
    import re

    heading = ""
    out = []
    block: List[str] = []
    in_block = False
    for line in data.decode("utf-8").replace("\r\n", "\n").split("\n"):
        if line.startswith("<<<<<<<"):
            in_block = True
        if in_block:
            block.append(line)
            if line.startswith(">>>>>>>"):
                in_block = False
            continue
        if line.startswith("#"):
            heading = line
            continue
        m = re.match(r"- \[[^\]]*\]\(([^)]+)\)", line)
        if m:
            out.append((heading, m.group(1), line))
    return out, block


def check(seed: int, merged: Optional[object] = None) -> List[str]:
    """What is wrong with the merge of case `seed` (both orders), one line each. `merged`: the
    result of merge(O, A, B) when the caller has it already."""
    from engramory.sync import indexmerge

    o, a, b = case(seed)
    ob, ab, bb = o.render(), a.render(), b.render()
    keep, conflicts = expected(o, a, b)
    problems = []
    seen = []
    first = merged if merged is not None else indexmerge.merge(ob, ab, bb)
    for label, result in (("O,A,B", first), ("O,B,A", indexmerge.merge(ob, bb, ab))):
        assert isinstance(result, indexmerge.Result)
        body, block = body_entries(result.data)
        got: Dict[str, Value] = {}
        for heading, key, line in body:
            if key in got:
                problems.append("%s: %s twice in the body" % (label, key))
            got[key] = (heading, line)
        if got != keep:
            wrong = sorted(k for k in set(got) | set(keep) if got.get(k) != keep.get(k))
            problems.append("%s: entries differ from three-way semantics at %s" % (label, wrong[:5]))
        named = sorted(c.key[0] for c in result.entry_conflicts)
        if named != conflicts:
            problems.append("%s: conflicts %s, expected %s" % (label, named, conflicts))
        text = "\n".join(block)
        for c in result.entry_conflicts:
            for value in (c.ours, c.theirs):
                if value is not None and value[1] not in text:
                    problems.append("%s: %s's version %r missing from the block" % (label, c.key[0], value[1]))
        if result.prose_conflicts:
            problems.append("%s: prose conflicts where none were made" % label)
        out = result.data.decode("utf-8")
        for m in (a, b):
            for _, lines in m.sections:
                for line in lines:
                    if line[0] == "t" and line[1] and line[1] not in out:
                        problems.append("%s: prose line %r dropped" % (label, line[1]))
        seen.append((got, named))
    if seen[0] != seen[1]:
        problems.append("merge(O,A,B) and merge(O,B,A) hold different entries")
    return ["case %d: %s" % (seed, p) for p in problems]


def main(argv: List[str]) -> None:
    """`indexgen CASES PART PARTS`: merge every case, print the sha256 of all outputs and the
    problems `check` finds in this part's cases (seed % PARTS == PART), as JSON."""
    import hashlib
    import json

    from engramory.sync import indexmerge

    cases, part, parts = (int(x) for x in argv)
    digest = hashlib.sha256()
    problems: List[str] = []
    checked = 0
    for seed in range(cases):
        o, a, b = case(seed)
        result = indexmerge.merge(o.render(), a.render(), b.render())
        digest.update(result.data)
        digest.update(b"\0")
        if seed % parts == part:
            problems.extend(check(seed, result))
            checked += 1
    print(json.dumps({"digest": digest.hexdigest(), "checked": checked, "problems": problems[:20]}))

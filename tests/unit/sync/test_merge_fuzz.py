"""The fuzz of issue 24: 10,000 generated three-way merges of a 150-line base (random
additions, deletions, changes and moves on each side; flat and sectioned indexes). Every note
three-way semantics keeps is in the result exactly once, under its heading, with its text; no
target twice; every same-key conflict reported with both versions in the block, none silent;
no prose line dropped; merge(O,A,B) and merge(O,B,A) hold the same entries; and the bytes of
all 10,000 results are identical under five PYTHONHASHSEED values.

Five processes, one per hash seed, each merge all 10,000 cases (the digest) and check a fifth of
them in both orders, two at a time on the machine's cores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict

from tests.conftest import ROOT
from tests.unit.sync import indexgen

CASES = 10_000
SEEDS = ["0", "1", "42", "31337", "4294967295"]
WORKER = "import sys; sys.path.insert(0, sys.argv[1]); from tests.unit.sync import indexgen; indexgen.main(sys.argv[2:])"


def _run(part: int) -> Dict[str, Any]:
    env = dict(os.environ, PYTHONHASHSEED=SEEDS[part])
    done = subprocess.run([sys.executable, "-c", WORKER, str(ROOT), str(CASES), str(part), str(len(SEEDS))],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out: Dict[str, Any] = json.loads(done.stdout)
    return out


def test_ten_thousand_merges_keep_three_way_semantics_under_five_hash_seeds() -> None:
    with ThreadPoolExecutor(max_workers=max(1, min(len(SEEDS), os.cpu_count() or 1))) as pool:
        results = list(pool.map(_run, range(len(SEEDS))))
    problems = [p for r in results for p in r["problems"]]
    assert problems == [], "\n".join(problems)
    assert sum(r["checked"] for r in results) == CASES
    assert len({r["digest"] for r in results}) == 1, [r["digest"] for r in results]


def test_the_generator_makes_every_kind_of_case() -> None:
    """The fuzz is only as good as its cases: flat and sectioned bases, conflicts, moves,
    notes added on both sides."""
    flat = sectioned = conflicting = both_added = moved = 0
    for seed in range(300):
        o, a, b = indexgen.case(seed)
        flat += len(o.sections) == 1
        sectioned += len(o.sections) > 1
        keep, conflicts = indexgen.expected(o, a, b)
        conflicting += bool(conflicts)
        eo, ea, eb = o.entries(), a.entries(), b.entries()
        both_added += any(k in eb and k not in eo for k in ea)
        moved += any(k in eo and ea[k][0] != eo[k][0] for k in ea)
    assert min(flat, sectioned, conflicting, both_added, moved) >= 30, (flat, sectioned, conflicting, both_added, moved)


def test_check_finds_a_wrong_merge(monkeypatch: Any) -> None:
    """The oracle can fail: a merge that drops theirs' additions is caught."""
    from engramory.sync import indexmerge

    real = indexmerge.merge
    monkeypatch.setattr(indexmerge, "merge", lambda o, a, b, marker=7: real(o, a, a, marker))
    assert any(indexgen.check(seed) for seed in range(20))

#!/usr/bin/env python3
"""Time `engramory search` on the labelled fixture (tests/search_fixture.py) grown to 300 and
1,000 notes, over every labelled query.

Each timed search does what one CLI run does after the interpreter starts: read every note
(no index file, no cache), tokenize, rank, cut snippets. The baseline, in the same run, is the
least any search of this store can cost: read every note's bytes and test the query as a
substring (what `grep -ril` does). Prints p50 / p95 / max per query, the ratio to the
baseline, and recall@5 of the labelled queries. A last row times whole CLI processes
(`python3 -I -S tools/engramory.py search`), interpreter start included.
Target: p95 under 100 ms at 1,000 notes. Run: `python3 bench/bench_search.py`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
sys.path.insert(0, HERE)

from engramory.curate import search  # noqa: E402
from tests import search_fixture as fx  # noqa: E402


def baseline(root: str, query: str) -> int:
    q = query.lower().encode()
    found = 0
    for sub in ("", "archive"):
        folder = os.path.join(root, sub)
        for name in os.listdir(folder):
            if name.endswith(".md"):
                with open(os.path.join(folder, name), "rb") as f:
                    if q in f.read().lower():
                        found += 1
    return found


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def run(size: int) -> tuple[list[float], list[float], float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "mem"
        targets = len(fx.TARGETS)
        count = fx.write(root, distractors=size - targets)
        archived = fx.archived_targets()
        times, base = [], []
        hits = 0
        queries = fx.queries()
        for q, expected in queries:
            alt = "archive/" + expected
            want = alt if alt in archived else expected
            t0 = time.perf_counter()
            found = search.search(str(root), q, limit=5)
            times.append(time.perf_counter() - t0)
            hits += want in [h.doc.rel for h in found]
            t0 = time.perf_counter()
            baseline(str(root), q)
            base.append(time.perf_counter() - t0)
        assert count == size, (count, size)
        return times, base, hits / len(queries)


def cli_times(size: int, runs: int = 15) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "mem"
        fx.write(root, distractors=size - len(fx.TARGETS))
        out = []
        for q, _ in fx.queries()[:runs]:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-I", "-S", os.path.join(HERE, "tools", "engramory.py"), "search", q,
                            str(root), "--limit", "5"], capture_output=True, check=False)
            out.append(time.perf_counter() - t0)
        return out


def main() -> int:
    print("| notes | queries | p50 ms | p95 ms | max ms | baseline p95 ms | p95 / baseline | recall@5 |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst = 0.0
    for size in (300, 1000):
        times, base, recall = run(size)
        p95 = pct(times, 95) * 1000
        if size == 1000:
            worst = p95
        print("| %d | %d | %.1f | %.1f | %.1f | %.1f | %.1fx | %.1f%% |" % (
            size, len(times), pct(times, 50) * 1000, p95, max(times) * 1000, pct(base, 95) * 1000,
            pct(times, 95) / pct(base, 95), recall * 100))
    cli = cli_times(1000)
    print("| 1000 (whole CLI process) | %d | %.1f | %.1f | %.1f | | | |" % (
        len(cli), pct(cli, 50) * 1000, pct(cli, 95) * 1000, max(cli) * 1000))
    print("\ntarget: p95 under 100 ms at 1,000 notes: %s (%.1f ms)" % ("met" if worst < 100 else "MISSED", worst))
    return 0 if worst < 100 else 1


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Time `engramory search` as an agent runs it, one whole CLI process per query
(`python3 -I -S tools/engramory.py search QUERY ROOT --limit 5`, interpreter start included),
on the labelled fixture (tests/search_fixture.py) grown to 1,000 / 10,000 / 50,000 notes.

Per size, in the same run:
- scan: `--no-index`, every note read (what every search did before issue 21): the baseline;
- cold: no index yet (removed before each query): the search scans and starts the build
  (in a detached process past searchindex.INLINE_MAX notes); the bench then waits for the
  build, whose time is shown as "index ready";
- warm: the index there and up to date, over every labelled query;
- floor: `search --help`, the same process start and imports with no search at all;
- recall@5 of the labelled queries (from the warm runs), and whether every warm run printed
  exactly what the scan printed for that query (checked on the scan's sample).
Targets (issue 21): warm p95 <= 60 / 100 / 250 ms at 1,000 / 10,000 / 50,000 notes; cold p95
at most 1.5x the scan's. Exit 1 when one is missed. Run: `python3 bench/bench_search.py`
(`--sizes 1000,10000` for fewer; `--sample N` queries for scan and cold, default 12).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
sys.path.insert(0, HERE)

from engramory.store import metadir  # noqa: E402
from tests import search_fixture as fx  # noqa: E402

WARM_TARGET_MS = {1000: 60.0, 10000: 100.0, 50000: 250.0}
COLD_RATIO = 1.5
CLI = [sys.executable, "-I", "-S", os.path.join(HERE, "tools", "engramory.py"), "search"]


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def once(root: Path, query: str, *extra: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    got = subprocess.run([*CLI, query, str(root), "--limit", "5", *extra], capture_output=True, text=True,
                         check=False)
    took = time.perf_counter() - t0
    if got.stderr:
        raise SystemExit("unexpected stderr for %r: %s" % (query, got.stderr))
    return took, got.stdout


def wait_build(root: Path) -> None:
    while metadir.held(str(root), metadir.SEARCH_LOCK):
        time.sleep(0.02)


def drop_index(root: Path) -> None:
    for name in (metadir.SEARCH_INDEX, metadir.SEARCH_JOURNAL):
        try:
            os.unlink(metadir.path(str(root), name))
        except FileNotFoundError:
            pass


def run(size: int, sample: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "mem"
        assert fx.write(root, distractors=size - len(fx.TARGETS)) == size
        queries = fx.queries()
        step = max(1, len(queries) // sample)
        picked = queries[::step][:sample]
        scan, scan_out = [], {}
        for q, _ in picked:
            took, out = once(root, q, "--no-index")
            scan.append(took)
            scan_out[q] = out
        cold, ready = [], []
        for q, _ in picked:
            wait_build(root)
            drop_index(root)
            took, out = once(root, q)
            assert out == scan_out[q], q
            cold.append(took)
            t0 = time.perf_counter()
            wait_build(root)
            ready.append(took + time.perf_counter() - t0)
        wait_build(root)
        once(root, picked[0][0])  # the first search after the build reads again the notes changed just before it
        warm, hits, same = [], 0, 0
        archived = fx.archived_targets()
        for q, expected in queries:
            took, out = once(root, q)
            warm.append(took)
            want = "archive/" + expected if "archive/" + expected in archived else expected
            hits += ("1. %s " % want) in out or any(("%d. %s " % (i, want)) in out for i in range(2, 6))
            if q in scan_out:
                same += out == scan_out[q]
        floor = []
        for _ in picked:  # the same process doing no search: interpreter start, imports, argparse
            t0 = time.perf_counter()
            subprocess.run([*CLI, "--help"], capture_output=True, check=True)
            floor.append(time.perf_counter() - t0)
        return {"scan": scan, "cold": cold, "ready": ready, "warm": warm, "floor": floor,
                "recall": hits / len(queries), "same": (same, len(scan_out))}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1000,10000,50000")
    p.add_argument("--sample", type=int, default=12)
    args = p.parse_args(argv)
    print("| notes | mode | queries | p50 ms | p95 ms | max ms | p95 / scan p95 | target | |")
    print("|---:|---|---:|---:|---:|---:|---:|---|---|")
    missed = []
    notes = []
    for size in (int(s) for s in args.sizes.split(",")):
        r = run(size, args.sample)
        base = pct(r["scan"], 95)  # type: ignore[arg-type]
        for mode in ("scan", "cold", "warm", "floor"):
            v: list[float] = r[mode]  # type: ignore[assignment]
            ratio = pct(v, 95) / base
            if mode == "warm":
                target = WARM_TARGET_MS.get(size)
                ok = target is None or pct(v, 95) * 1000 <= target
                label = "<= %.0f ms" % target if target else ""
            elif mode == "cold":
                ok = ratio <= COLD_RATIO
                label = "<= %.1fx scan" % COLD_RATIO
            elif mode == "floor":
                ok, label = True, "`search --help`: start + imports, no search"
            else:
                ok, label = True, "baseline"
            if not ok:
                missed.append("%s at %d" % (mode, size))
            print("| %d | %s | %d | %.1f | %.1f | %.1f | %.2fx | %s | %s |" % (
                size, mode, len(v), pct(v, 50) * 1000, pct(v, 95) * 1000, max(v) * 1000, ratio, label,
                "" if mode in ("scan", "floor") else ("met" if ok else "MISSED")))
        ready: list[float] = r["ready"]  # type: ignore[assignment]
        same, of = r["same"]  # type: ignore[misc]
        notes.append("%d notes: index ready %.1f s after a cold search (p50); recall@5 %.1f%%; warm output "
                     "identical to the scan's on %d of %d sampled queries" % (
                         size, pct(ready, 50), r["recall"] * 100, same, of))  # type: ignore[operator]
        if same != of:
            missed.append("identical output at %d" % size)
    print()
    for line in notes:
        print(line)
    print("\ntargets: %s" % ("all met" if not missed else "MISSED: " + ", ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())

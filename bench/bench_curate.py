#!/usr/bin/env python3
"""Time one `engramory new` and one `engramory undo` on stores of 300 and 1,000 notes, and one
`engramory update` (4 KB body) on a store whose journal already holds 2,000 updates.

Each `new` reads the whole store under the lock (for the name and near-duplicate checks),
writes the note and the index through temp file + fsync + rename, stores the index's prior
bytes as a blob and appends one journal entry. The baseline, in the same run, is the bare
minimum of the same writes: the note and the index written with write + fsync + rename and
nothing checked. Prints p50 / p95 per command and the ratio to the baseline. For the aged
store the baseline is the same `update` on a fresh store of the same notes, in the same run:
a write must not cost more because the journal is long (it reads only the journal's end).
Run: `python3 bench/bench_curate.py`.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
sys.path.insert(0, HERE)

from engramory import cli  # noqa: E402
from tests import search_fixture as fx  # noqa: E402

RUNS = 20


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def bare_write(path: Path, data: bytes) -> None:
    tmp = path.with_name("." + path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def run(size: int) -> tuple[list[float], list[float], list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "mem"
        fx.write(root, distractors=size - len(fx.TARGETS))
        news, undos, base = [], [], []
        sink = io.StringIO()
        for i in range(RUNS):
            argv = ["new", str(root), "--type", "reference", "--name", "bench-%d" % i, "--description",
                    "Bench note %d about quux%d and frob%d" % (i, i, i), "--body", "Body %d." % i]
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(sink):
                assert cli.main(argv) == 0
            news.append(time.perf_counter() - t0)
            index = (root / "MEMORY.md").read_bytes()
            t0 = time.perf_counter()
            bare_write(root / ("bare-%d.md" % i), b"x" * 200)
            bare_write(root / "MEMORY.md", index)
            base.append(time.perf_counter() - t0)
            (root / ("bare-%d.md" % i)).unlink()
        for _ in range(RUNS):
            t0 = time.perf_counter()
            with contextlib.redirect_stdout(sink):
                assert cli.main(["undo", str(root)]) == 0
            undos.append(time.perf_counter() - t0)
        return news, undos, base


AGED = 2_000  # updates journaled before the aged store is timed


def _update(root: Path, i: int) -> list[str]:
    body = ("Body %d. " % i) + "x" * 4096
    return ["update", "bench-aged", str(root), "--body", body]


def aged() -> tuple[list[float], list[float]]:
    """p50 of `update` on a fresh store, then on the same store after AGED more updates (made
    with fsync off, to build the journal quickly; the timed runs fsync as usual)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "mem"
        fx.write(root, distractors=300 - len(fx.TARGETS))
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink):
            assert cli.main(["new", str(root), "--type", "reference", "--name", "bench-aged", "--description",
                             "Bench note aged about quux and frob", "--body", "Body."]) == 0

        def timed(start: int) -> list[float]:
            out = []
            for i in range(start, start + RUNS):
                t0 = time.perf_counter()
                with contextlib.redirect_stdout(sink):
                    assert cli.main(_update(root, i)) == 0
                out.append(time.perf_counter() - t0)
            return out

        fresh = timed(0)
        real_fsync = os.fsync
        os.fsync = lambda fd: None
        try:
            for i in range(AGED):
                with contextlib.redirect_stdout(sink):
                    assert cli.main(_update(root, RUNS + i)) == 0
        finally:
            os.fsync = real_fsync
        return fresh, timed(RUNS + AGED)


def main() -> int:
    print("| notes | command | runs | p50 ms | p95 ms | baseline p95 ms | p95 / baseline |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for size in (300, 1000):
        news, undos, base = run(size)
        b95 = pct(base, 95) * 1000
        for name, times in (("new", news), ("undo", undos)):
            p95 = pct(times, 95) * 1000
            print("| %d | %s | %d | %.1f | %.1f | %.1f | %.1fx |" % (
                size, name, len(times), pct(times, 50) * 1000, p95, b95, p95 / b95))
    fresh, old = aged()
    f95 = pct(fresh, 95) * 1000
    print("| 300 | update after %s updates (baseline: a fresh store) | %d | %.1f | %.1f | %.1f | %.1fx |" % (
        "{:,}".format(AGED), len(old), pct(old, 50) * 1000, pct(old, 95) * 1000, f95, pct(old, 95) * 1000 / f95))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Time `engramory compact` planning on generated over-cap stores.

Each store has N notes of every type, all indexed (so the index is far over its caps), with
long index lines, duplicate and dead pointers, identical notes and [[links]]: every operation
has work to do. The plan is timed whole (store read, operations, invariants, the text with
its diff, and the JSON), best of several runs, beside a same-run baseline: reading the store
alone (`engramory.store.reader.load`), which every command pays. Target: 1,000 notes plan in under
1 s. A second table times `review.reconcile`: the first (baseline) run, a run where nothing
moved (what every shell call pays: one stat per note, no read), and a run after one deletion
(journaled with its prior bytes), beside reading the store whole.
Run: `python3 bench/bench_compact.py`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from engramory.compact import apply as compact
from engramory.store import reader as store_mod  # noqa: E402
from engramory.store import review  # noqa: E402

TYPES = ("user", "feedback", "project", "reference")
TOPICS = ("deploy", "database", "review", "testing", "release", "logging", "billing", "search")
RUNS = 5


def make_store(root: str, count: int) -> None:
    lines = ["# Memory Index", ""]
    for i in range(count):
        t = TYPES[i % 4]
        topic = TOPICS[i % len(TOPICS)]
        slug = "%s-%s-%05d" % (t, topic, i)
        body = "The %s setup for component %d uses option %d.\n\nRelated: [[%s-%s-%05d]].\n" % (
            topic, i, i * 7 % 101, TYPES[(i + 1) % 4], TOPICS[(i + 1) % len(TOPICS)], (i + 1) % count)
        if i % 40 == 39:  # an identical copy of the note before
            body = "The %s setup for component %d uses option %d.\n\nRelated: [[%s-%s-%05d]].\n" % (
                TOPICS[(i - 1) % len(TOPICS)], i - 1, (i - 1) * 7 % 101, TYPES[i % 4], TOPICS[i % len(TOPICS)], i)
        if t in ("feedback", "project"):
            body += "\n**Why:** it broke before.\n\n**How to apply:** check the %s config first.\n" % topic
        with open(os.path.join(root, slug + ".md"), "w", encoding="utf-8") as f:
            f.write("---\nname: %s\ndescription: %s note %d about %s\ntype: %s\ncreated: 2025-01-01\n"
                    "updated: 2026-%02d-%02d\n---\n\n%s" % (slug, t, i, topic, t, i % 12 + 1, i % 28 + 1, body))
        hook = "%s hook" % topic
        if i % 10 == 0:
            hook = ("the %s story told at length, with every detail of component %d " % (topic, i)) * 3
        lines.append("- [%s %d](%s.md) \u2014 %s" % (topic, i, slug, hook))
        if i % 25 == 0:
            lines.append("- [%s %d again](%s.md) \u2014 %s" % (topic, i, slug, topic))
        if i % 30 == 0:
            lines.append("- [gone %d](gone-%05d.md) \u2014 deleted long ago" % (i, i))
    with open(os.path.join(root, "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def best(fn: object, runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    rows = []
    for count in (250, 1000, 4000):
        with tempfile.TemporaryDirectory() as tmp:
            make_store(tmp, count)
            def plan(root: str = tmp) -> None:
                p = compact.plan_for(root, None, None)
                compact.render_text(p, root, compact.host_unit()[1])
                compact.dumps(compact.plan_dict(p, root))

            load = best(lambda root=tmp: store_mod.load(root))
            t = best(plan)
            p = compact.plan_for(tmp, None, None)
            rows.append((count, p.before.lines if p.before else 0, len(p.operations), len(p.changes), load, t))
    print("%7s  %11s  %10s  %8s  %12s  %12s  %9s" % ("notes", "index lines", "operations", "changes",
                                                      "read store s", "plan s", "plan/read"))
    for count, lines, ops, changes, load, t in rows:
        print("%7d  %11d  %10d  %8d  %12.3f  %12.3f  %8.1fx" % (count, lines, ops, changes, load, t, t / load))
    print()
    print("review.reconcile (run after every shell/MCP tool call and at session start):")
    print("%7s  %14s  %16s  %18s  %9s" % ("notes", "baseline s", "nothing moved s", "one note deleted s", "read/none"))
    for count in (250, 1000, 4000):
        with tempfile.TemporaryDirectory() as tmp:
            make_store(tmp, count)
            t0 = time.perf_counter()
            review.reconcile(tmp)
            base = time.perf_counter() - t0
            quiet = best(lambda root=tmp: review.reconcile(root))
            victim = os.path.join(tmp, sorted(n for n in os.listdir(tmp) if n.endswith(".md"))[1])
            os.unlink(victim)
            t0 = time.perf_counter()
            review.reconcile(tmp)
            deleted = time.perf_counter() - t0
            load = best(lambda root=tmp: store_mod.load(root))
            print("%7d  %14.3f  %16.4f  %18.3f  %8.1fx" % (count, base, quiet, deleted, load / quiet))
    thousand = [r for r in rows if r[0] == 1000][0]
    verdict = "OK" if thousand[5] < 1.0 else "SLOW"
    print("1,000 notes plan in %.3f s (target < 1 s): %s" % (thousand[5], verdict))
    return 0 if verdict == "OK" else 1


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Time `engramory doctor` on generated stores of 1,000 and 10,000 notes.

Prints a table: notes, best wall time of several runs (load + checks, no rendering), the CPU
time of that run (this process and the child that scans note content on large stores: more
than the wall time when both cores were used), time per note, findings, and
the ratio between the two sizes (10x the notes should cost close to 10x the time).
Target: 10,000 notes in under 0.4 s. Run: `python3 bench/bench_doctor.py`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from engramory import doctor  # noqa: E402

TYPES = ("user", "feedback", "project", "reference")
TOPICS = ("deploy", "database", "review", "testing", "release", "logging", "billing", "search",
          "cache", "auth", "editor", "docs", "ci", "metrics", "backup", "queue")


def make_store(root: str, count: int) -> None:
    """A realistic store: protocol notes of every type, each indexed under its heading, some
    [[linked]], some archived, bodies of a few hundred bytes."""
    os.makedirs(os.path.join(root, "archive"), exist_ok=True)
    index = {t: [] for t in TYPES}
    for i in range(count):
        t = TYPES[i % 4]
        topic = TOPICS[i % len(TOPICS)]
        slug = "%s-%s-%05d" % (t, topic, i)
        archived = i % 50 == 49
        body = [
            "The %s setup for component %d uses option %d; keep it that way." % (topic, i, i * 7 % 101),
            "",
            "Related: [[%s-%s-%05d]]." % (TYPES[(i + 1) % 4], TOPICS[(i + 1) % len(TOPICS)], (i + 1) % count),
        ]
        if t in ("feedback", "project"):
            body += ["", "**Why:** it broke %d times before in %s." % (i % 9 + 1, topic),
                     "**How to apply:** check the %s config first (ticket %d)." % (topic, i)]
        text = (
            "---\nname: %s\ndescription: %s note %d about %s and component %d\ntype: %s\n"
            "created: 2025-%02d-%02d\nupdated: 2026-01-%02d\n---\n\n%s\n"
            % (slug, t, i, topic, i, t, i % 12 + 1, i % 28 + 1, i % 28 + 1, "\n".join(body))
        )
        rel = os.path.join("archive", slug + ".md") if archived else slug + ".md"
        with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
            f.write(text)
        if not archived:
            index[t].append("- [%s %d](%s.md) \u2014 %s hook" % (topic, i, slug, topic))
    lines = ["# Memory Index", ""]
    for t in TYPES:
        lines += ["## %s" % t] + index[t] + [""]
    with open(os.path.join(root, "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def _cpu() -> float:
    """CPU seconds of this process and of its finished children (the doctor scans note
    content in a forked child on large stores, beside the other checks)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def time_doctor(root: str, runs: int) -> tuple[float, float, int]:
    best = cpu = float("inf")
    found = 0
    ctx = doctor.Context(git=False)
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), _cpu()
        _, findings = doctor.audit(root, ctx)
        wall, used = time.perf_counter() - start, _cpu() - start_cpu
        if wall < best:
            best, cpu = wall, used
        found = len(findings)
    return best, cpu, found


def main() -> int:
    sizes = (1_000, 10_000)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for count in sizes:
            root = os.path.join(tmp, "store-%d" % count)
            make_store(root, count)
            rows.append((count,) + time_doctor(root, runs=max(5, 20_000 // count)))  # small runs are noisier
    print("%8s  %9s  %8s  %13s  %9s" % ("notes", "wall (s)", "cpu (s)", "per note (us)", "findings"))
    for count, secs, cpu, found in rows:
        print("%8s  %9.3f  %8.3f  %13.1f  %9d" % ("{:,}".format(count), secs, cpu, secs / count * 1e6, found))
    (n1, t1, c1, _), (n2, t2, c2, _) = rows
    print("ratio %s/%s notes: wall x%.2f, cpu x%.2f for x%.0f the notes (linear = x%.0f)"
          % ("{:,}".format(n2), "{:,}".format(n1), t2 / t1, c2 / c1, n2 / n1, n2 / n1))
    print("target: %s notes in under 0.4 s: %s (%.3f s wall)"
          % ("{:,}".format(n2), "met" if t2 < 0.4 else "NOT met", t2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

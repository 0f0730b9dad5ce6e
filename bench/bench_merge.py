#!/usr/bin/env python3
"""Time `engramory merge-index` as git runs it, on two 200-line indexes that each changed a
200-line base (notes added, deleted and reworded on both sides, in the same sections), against
`git merge-file` on the same three files in the same run. Interpreter start included: the
driver is one process per merged file, exactly as git starts it (`python3 -I -S
tools/engramory.py merge-index %O %A %B %L %P`). Target: under 150 ms wall per merge.
Run: `python3 bench/bench_merge.py`.
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
TOOL = os.path.join(HERE, "tools", "engramory.py")
RUNS = 30
TARGET_MS = 150.0


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def indexes() -> tuple[bytes, bytes, bytes]:
    """(base, ours, theirs), 200 lines each: four sections of pointer lines."""
    rng = random.Random(150)
    sections = {"user": [], "feedback": [], "project": [], "reference": []}
    n = 0
    while 1 + sum(len(v) + 2 for v in sections.values()) < 200:
        sections[rng.choice(list(sections))].append("- [Fact %d about the build and the deploy queue](n%d.md)" % (n, n))
        n += 1

    def render(secs: dict[str, list[str]]) -> bytes:
        out = ["# Memory Index", ""]
        for name, lines in secs.items():
            out += ["## " + name] + lines + [""]
        return ("\n".join(out[:-1]) + "\n").encode()

    def side(tag: str) -> dict[str, list[str]]:
        secs = {k: list(v) for k, v in sections.items()}
        for _ in range(4):
            lines = secs[rng.choice(list(secs))]
            del lines[rng.randrange(len(lines))]
        for _ in range(3):
            lines = secs[rng.choice(list(secs))]
            j = rng.randrange(len(lines))
            lines[j] = lines[j].replace("about the build", "about the %s build" % tag)
        for i in range(4):  # where `engramory new` puts them: the end of one section, on both sides
            secs["feedback"].append("- [New %s fact %d](%s-%d.md)" % (tag, i, tag, i))
        return secs

    return render(sections), render(side("laptop")), render(side("desktop"))


def timed(cmd: list[str], cwd: str, reset: tuple[str, bytes] | None = None) -> tuple[list[float], list[float], int]:
    """(wall seconds, CPU seconds of the child, last exit code) over RUNS runs. The CPU time is
    what the wall time would be on an idle machine: on a busy one, the wall time also counts
    the waits for a core."""
    walls, cpus = [], []
    code = 0
    for _ in range(RUNS):
        if reset is not None:
            with open(reset[0], "wb") as f:
                f.write(reset[1])
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        done = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        code = done.returncode
    return walls, cpus, code


def main() -> int:
    if shutil.which("git") is None:
        print("git is not on PATH: the baseline needs it")
        return 1
    base, ours, theirs = indexes()
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, data in (("base", base), ("ours", ours), ("theirs", theirs)):
            paths[name] = os.path.join(tmp, name)
            with open(paths[name], "wb") as f:
                f.write(data)
        driver = [sys.executable, "-I", "-S", TOOL, "merge-index", paths["base"], paths["ours"], paths["theirs"],
                  "7", "MEMORY.md"]
        ours_times, ours_cpu, ours_code = timed(driver, tmp, (paths["ours"], ours))
        with open(paths["ours"], "rb") as f:
            merged = f.read()
        with open(paths["ours"], "wb") as f:
            f.write(ours)
        git = ["git", "merge-file", "-p", paths["ours"], paths["base"], paths["theirs"]]
        git_times, git_cpu, git_code = timed(git, tmp)
        bare = [sys.executable, "-I", "-S", "-c", "pass"]
        bare_times, bare_cpu, _ = timed(bare, tmp)
    lines = [d.count(b"\n") for d in (base, ours, theirs, merged)]
    print("inputs: base %d lines, ours %d, theirs %d; merged by the driver: %d lines, exit %d; "
          "git merge-file exit %d (%s)" % (lines[0], lines[1], lines[2], lines[3], ours_code, git_code,
                                          "conflicts" if git_code else "clean"))
    print()
    print("| command | runs | wall p50 ms | wall p95 ms | CPU p50 ms | wall p50 / git merge-file | target |")
    print("|---|---:|---:|---:|---:|---:|---|")
    g50 = pct(git_times, 50) * 1000
    met = pct(ours_times, 50) * 1000 < TARGET_MS
    for name, times, cpu in (("engramory merge-index (driver, as git runs it)", ours_times, ours_cpu),
                             ("git merge-file -p (the line merge)", git_times, git_cpu),
                             ("python3 -I -S -c pass (interpreter start)", bare_times, bare_cpu)):
        p50, p95 = pct(times, 50) * 1000, pct(times, 95) * 1000
        target = ("wall < %.0f ms: %s" % (TARGET_MS, "met" if met else "MISSED")) if "driver" in name else ""
        print("| %s | %d | %.1f | %.1f | %.1f | %.2fx | %s |" % (
            name, len(times), p50, p95, pct(cpu, 50) * 1000, p50 / g50, target))
    print()
    print("load average at the end: %s (2 or more on a 2-core machine inflates the wall times)"
          % " ".join("%.2f" % x for x in os.getloadavg()))
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())

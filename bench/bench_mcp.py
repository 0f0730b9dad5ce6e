#!/usr/bin/env python3
"""Time the MCP server as a client starts it (`python3 -I -S tools/engramory.py mcp --root
DIR`, one process per session) on a store of 150 notes, against a bare interpreter start in the
same run:

- start-up: process start to the answer of `initialize` (target: under 300 ms);
- a view round trip: `memory_view /memories/MEMORY.md` (the index as the host loads it);
- an edit round trip: `memory_edit str_replace` on a note (locked, checked, journaled);
- a search round trip, for scale.

Round trips are timed inside one running server, request written to answer read. Wall and
(for the start-up) the child's CPU time, which is what the wall time would be on an idle
machine. Run: `python3 bench/bench_mcp.py`.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
TOOL = os.path.join(HERE, "tools", "engramory.py")
RUNS = 20
TARGET_MS = 300.0
NOTES = 150


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def store(root: str) -> None:
    lines = ["# Memory Index", "", "## reference"]
    for i in range(NOTES):
        name = "ref-%03d" % i
        with open(os.path.join(root, name + ".md"), "w", encoding="utf-8") as f:
            f.write("---\nname: %s\ndescription: Where the %s dashboard of service %d lives\ntype: reference\n"
                    "created: 2026-11-01\nupdated: 2026-11-02\n---\nThe dashboard %d is at https://example.com/%d.\n"
                    % (name, ["billing", "search", "deploy"][i % 3], i, i, i))
        lines.append("- [Dashboard %d](%s.md) \u2014 service %d" % (i, name, i))
    with open(os.path.join(root, "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def message(mid: int, method: str, params: dict[str, object]) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": mid, "method": method, "params": params}) + "\n").encode()


INIT = message(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "bench", "version": "0"}})


def startup(root: str) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for _ in range(RUNS):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.Popen([sys.executable, "-I", "-S", TOOL, "mcp", "--root", root], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write(INIT)
        p.stdin.flush()
        json.loads(p.stdout.readline())
        walls.append(time.perf_counter() - t0)
        p.stdin.close()
        p.wait()
        p.stdout.close()
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return walls, cpus


def bare() -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for _ in range(RUNS):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"])
        walls.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return walls, cpus


def round_trips(root: str) -> dict[str, list[float]]:
    p = subprocess.Popen([sys.executable, "-I", "-S", TOOL, "mcp", "--root", root], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert p.stdin is not None and p.stdout is not None
    p.stdin.write(INIT + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    p.stdin.flush()
    p.stdout.readline()
    calls = {
        "view MEMORY.md": lambda i: {"name": "memory_view", "arguments": {"path": "/memories/MEMORY.md"}},
        "edit (str_replace)": lambda i: {"name": "memory_edit", "arguments": {
            "command": "str_replace", "path": "/memories/ref-%03d.md" % (i % NOTES),
            "old_str": "https://example.com/", "new_str": "https://example.com/v%d/" % i}},
        "search": lambda i: {"name": "memory_search", "arguments": {"query": "billing dashboard"}},
        "ping": lambda i: None,
    }
    out: dict[str, list[float]] = {}
    mid = 1
    for label, make in calls.items():
        times = []
        for i in range(RUNS):
            params = make(i)
            line = message(mid, "ping", {}) if params is None else message(mid, "tools/call", params)
            t0 = time.perf_counter()
            p.stdin.write(line)
            p.stdin.flush()
            answer = json.loads(p.stdout.readline())
            times.append(time.perf_counter() - t0)
            assert answer["id"] == mid and not (answer.get("result") or {}).get("isError"), answer
            mid += 1
        out[label] = times
    p.stdin.close()
    p.wait()
    p.stdout.close()
    return out


def main() -> int:
    tmp = tempfile.mkdtemp(prefix="bench-mcp-")
    try:
        store(tmp)
        base_w, base_c = bare()
        start_w, start_c = startup(tmp)
        trips = round_trips(tmp)
    finally:
        shutil.rmtree(tmp)
    ms = 1000.0
    print("engramory mcp, store of %d notes, %d runs each (%s)" % (NOTES, RUNS, sys.version.split()[0]))
    print("%-28s %10s %10s %10s %12s" % ("", "p50 ms", "p95 ms", "CPU p50", "x bare start"))
    b50 = pct(base_w, 50)
    print("%-28s %10.1f %10.1f %10.1f %12s" % ("bare python3 -I -S start", b50 * ms, pct(base_w, 95) * ms,
                                               pct(base_c, 50) * ms, "1.00"))
    print("%-28s %10.1f %10.1f %10.1f %12.2f" % ("start-up to initialize", pct(start_w, 50) * ms, pct(start_w, 95) * ms,
                                                 pct(start_c, 50) * ms, pct(start_w, 50) / b50))
    for label, times in trips.items():
        print("%-28s %10.1f %10.1f %10s %12.2f" % (label + " round trip", pct(times, 50) * ms, pct(times, 95) * ms, "",
                                                   pct(times, 50) / b50))
    ok = pct(start_c, 50) * ms < TARGET_MS
    print("start-up target: under %d ms (CPU p50 %.1f ms): %s" % (TARGET_MS, pct(start_c, 50) * ms,
                                                                  "met" if ok else "NOT met"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

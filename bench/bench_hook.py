#!/usr/bin/env python3
"""Time the index guard as a whole process, the way the host runs it, against the bare
interpreter start (`python3 -I -S -c pass`) measured in the same run.

    python3 bench/bench_hook.py [--runs N]

Prints a table of medians and their ratio to the baseline. Target: both ratios <= 1.3.
The three commands are interleaved so machine noise hits them alike.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOOK = os.path.join(ROOT, "hooks", "engramory_index_guard.py")
TARGET = 1.3


def timed(cmd: list[str], stdin: bytes) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=60, help="runs per case (default 60)")
    args = parser.parse_args(argv)

    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        index = os.path.join(tmp, "MEMORY.md")
        with open(index, "w", encoding="utf-8") as f:
            f.writelines("- [note %d](note-%d.md) \u2014 one-line hook %d\n" % (i, i, i) for i in range(180))
        ignored = json.dumps({
            "hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": tmp,
            "tool_input": {"file_path": os.path.join(tmp, "src", "app.py"), "content": "print('hi')\n" * 50},
        }).encode()
        edit = json.dumps({
            "hook_event_name": "PreToolUse", "tool_name": "Edit", "cwd": tmp,
            "tool_input": {"file_path": index, "old_string": "- [note 90](note-90.md) \u2014 one-line hook 90\n",
                           "new_string": "- [note 90](note-90.md) \u2014 one-line hook 90\n- [new](new.md) \u2014 added\n"},
        }).encode()
        cases = [
            ("baseline: python3 -I -S -c pass", [py, "-I", "-S", "-c", "pass"], b""),
            ("hook, path it ignores", [py, "-I", "-S", HOOK], ignored),
            ("hook, edit of a 180-line index", [py, "-I", "-S", HOOK], edit),
        ]
        for _, cmd, stdin in cases:  # warm the page cache and __pycache__
            for _ in range(3):
                timed(cmd, stdin)
        samples: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        for _ in range(args.runs):
            for name, cmd, stdin in cases:
                samples[name].append(timed(cmd, stdin))

    base = statistics.median(samples[cases[0][0]])
    print("%-34s %10s %8s" % ("case", "median ms", "ratio"))
    worst = 0.0
    for name, _, _ in cases:
        med = statistics.median(samples[name])
        ratio = med / base
        if name != cases[0][0]:
            worst = max(worst, ratio)
        print("%-34s %10.2f %8.2f" % (name, med * 1000, ratio))
    print("target: every hook ratio <= %.1f -> %s" % (TARGET, "met" if worst <= TARGET else "NOT MET"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

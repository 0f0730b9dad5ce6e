#!/usr/bin/env python3
"""Time the Gemini CLI hook as installed: the command `engramory install --host gemini` writes,
run the way Gemini runs it (`bash -c <command>`, payload on stdin), against the same shell
wrapper around a bare `python3 -I -S -c pass`, measured in the same run.

    python3 bench/bench_gemini_hook.py [--runs N]

Prints medians and 10th percentiles and their ratios to the baseline (the percentile is the
steadier figure on a busy machine). Target: every BeforeTool case <= 1.3x. The cases are
interleaved so machine noise hits them alike.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from engramory.hosts.gemini.install import command  # noqa: E402

HOOK = os.path.join(ROOT, "hooks", "engramory_gemini_hook.py")
TARGET = 1.3


def timed(cmd: str, stdin: bytes, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(["bash", "-c", cmd], input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True, env=env)
    return time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="runs per case (default 40)")
    args = parser.parse_args(argv)
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "GEMINI_"))}
        env.update(GEMINI_CLI_HOME=os.path.join(tmp, "home"), TMPDIR=tmp)
        index = os.path.join(tmp, "MEMORY.md")
        line = "- [note %d](note-%d.md) \u2014 one-line hook %d\n"
        with open(index, "w", encoding="utf-8") as f:
            f.writelines(line % (i, i, i) for i in range(180))
        full = os.path.join(tmp, "full", "MEMORY.md")
        os.makedirs(os.path.dirname(full))
        with open(full, "w", encoding="utf-8") as f:
            f.writelines(line % (i, i, i) for i in range(200))

        def before(tool: str, **tool_input: object) -> bytes:
            return json.dumps({"session_id": "bench", "cwd": tmp, "hook_event_name": "BeforeTool",
                               "tool_name": tool, "tool_input": tool_input}).encode()

        grow = line % (90, 90, 90)
        cases = [
            ("baseline: bash -c '<python> -I -S -c pass'", "%s -I -S -c pass" % shlex.quote(py), b""),
            ("BeforeTool, write_file elsewhere", command(py, HOOK),
             before("write_file", file_path=os.path.join(tmp, "src", "app.py"), content="print('hi')\n" * 50)),
            ("BeforeTool, shell command", command(py, HOOK), before("run_shell_command", command="ls -la")),
            ("BeforeTool, replace on a 180-line index", command(py, HOOK),
             before("replace", file_path=index, instruction="add", old_string=grow, new_string=grow + "- [n](n.md) new\n")),
            ("BeforeTool, deny on a full index", command(py, HOOK),
             before("replace", file_path=full, instruction="add", old_string=grow, new_string=grow + "- [n](n.md) new\n")),
            ("AfterTool, shell command, nothing changed", command(py, HOOK),
             json.dumps({"session_id": "bench", "cwd": tmp, "hook_event_name": "AfterTool",
                         "tool_name": "run_shell_command", "tool_input": {"command": "ls"},
                         "tool_response": {"llmContent": "x" * 100_000}}).encode()),
        ]
        for _, cmd, stdin in cases:  # warm the page cache and __pycache__
            for _ in range(3):
                timed(cmd, stdin, env)
        times: list[list[float]] = [[] for _ in cases]
        for _ in range(args.runs):
            for i, (_, cmd, stdin) in enumerate(cases):
                times[i].append(timed(cmd, stdin, env))
    def p10(ts: list[float]) -> float:
        return sorted(ts)[len(ts) // 10]

    base, base10 = statistics.median(times[0]), p10(times[0])
    print("%-48s %10s %7s %8s %7s" % ("case (%d runs each)" % args.runs, "median ms", "ratio", "p10 ms", "ratio"))
    worst = 0.0
    for (name, _, _), ts in zip(cases, times):
        med, low = statistics.median(ts), p10(ts)
        if name.startswith("BeforeTool"):
            worst = max(worst, low / base10)
        print("%-48s %10.1f %6.2fx %8.1f %6.2fx" % (name, med * 1000, med / base, low * 1000, low / base10))
    print("worst BeforeTool ratio (p10) %.2fx (target <= %.1fx)" % (worst, TARGET))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Time the Codex guard as a whole process, the way Codex runs it, against the bare
interpreter start (`python3 -I -S -c pass`) measured in the same run.

    python3 bench/bench_codex.py [--runs N]

Cases: a shell command with no patch (every `exec_command` reaches this hook, so it must be
cheap), an apply_patch to a file no store cares about, an apply_patch Update of a 180-line
index, and the same patch as a heredoc through the shell. Prints medians and their ratio to
the baseline. Target: ratios <= 1.3 for the calls it ignores, <= 2.0 for a judged patch.
The commands are interleaved so machine noise hits them alike.
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
HOOK = os.path.join(ROOT, "hooks", "engramory_codex_guard.py")
TARGET_IGNORED = 1.3
TARGET_JUDGED = 2.0


def timed(cmd: list[str], stdin: bytes, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - start


def payload(tool: str, command: str, cwd: str) -> bytes:
    return json.dumps({
        "session_id": "bench", "hook_event_name": "PreToolUse", "cwd": cwd, "tool_name": tool,
        "tool_input": {"command": command}, "tool_use_id": "call_1",
    }).encode()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=60, help="runs per case (default 60)")
    args = parser.parse_args(argv)

    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
        env["CODEX_HOME"] = os.path.join(tmp, "codex")
        with open(os.path.join(tmp, "MEMORY.md"), "w", encoding="utf-8") as f:
            f.writelines("- [note %d](note-%d.md) \u2014 one-line hook %d\n" % (i, i, i) for i in range(180))
        patch = ("*** Begin Patch\n*** Update File: MEMORY.md\n@@\n - [note 90](note-90.md) \u2014 one-line hook 90\n"
                 "+- [new](new.md) \u2014 added\n*** End Patch\n")
        other = "*** Begin Patch\n*** Add File: src/app.py\n" + "+print('hi')\n" * 50 + "*** End Patch\n"
        hook = [py, "-I", "-S", HOOK]
        cases = [
            ("baseline: python3 -I -S -c pass", [py, "-I", "-S", "-c", "pass"], b"", None),
            ("Bash, no patch", hook, payload("Bash", "ls -la && git status", tmp), TARGET_IGNORED),
            ("apply_patch, file it ignores", hook, payload("apply_patch", other, tmp), TARGET_IGNORED),
            ("apply_patch, 180-line index", hook, payload("apply_patch", patch, tmp), TARGET_JUDGED),
            ("Bash heredoc, 180-line index", hook,
             payload("Bash", "apply_patch <<'EOF'\n%sEOF\n" % patch, tmp), TARGET_JUDGED),
        ]
        for _, cmd, stdin, _ in cases:  # warm the page cache and __pycache__
            for _ in range(3):
                timed(cmd, stdin, env)
        samples: dict[str, list[float]] = {name: [] for name, _, _, _ in cases}
        for _ in range(args.runs):
            for name, cmd, stdin, _ in cases:
                samples[name].append(timed(cmd, stdin, env))

    base = statistics.median(samples[cases[0][0]])
    print("%-34s %10s %8s %8s" % ("case", "median ms", "ratio", "target"))
    met = True
    for name, _, _, target in cases:
        med = statistics.median(samples[name])
        ratio = med / base
        if target is not None and ratio > target:
            met = False
        print("%-34s %10.2f %8.2f %8s" % (name, med * 1000, ratio, "" if target is None else "<= %.1f" % target))
    print("targets %s" % ("met" if met else "NOT MET"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

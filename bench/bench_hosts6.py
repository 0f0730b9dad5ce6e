#!/usr/bin/env python3
"""Time the entry scripts of the six hosts of issue 15 (and Kilo's, as installed) as whole processes, the way their hosts
(or plugins) run them, against the bare interpreter start (`python3 -I -S -c pass`) and the
Claude Code guard, measured in the same run and interleaved so machine noise hits them alike.

    python3 bench/bench_hosts6.py [--runs N]

Two payloads per host: a tool call the guard leaves at once (not an edit of an index: what
Copilot sends for every tool call, having no matcher) and a growing edit of an index (a deny).
Prints medians in milliseconds and their ratio to the baseline. Target: the leave-at-once
ratio <= 1.5 (every Copilot tool call pays it); a deny has no target beyond the hosts'
budgets (Cline's plugin gives up at 2 s).
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
TARGET = 1.5


def timed(cmd: list[str], stdin: bytes) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def cases(tmp: str) -> list[tuple[str, list[str], bytes, bytes]]:
    index = os.path.join(tmp, "MEMORY.md")
    with open(index, "w", encoding="utf-8") as f:
        f.write("".join("- [n%d](n%d.md) - hook\n" % (i, i) for i in range(199)))
    grow = "".join("- [g%d](g%d.md) - more\n" % (i, i) for i in range(5))
    other = os.path.join(tmp, "src.py")

    def script(name: str) -> str:
        return os.path.join(ROOT, "hooks", name)

    def claude(tool: str, args: dict[str, object]) -> bytes:
        return json.dumps({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": args, "cwd": tmp}).encode()

    def plugin(tool: str, key: str, args: dict[str, object]) -> bytes:
        return json.dumps({"event": "before", "tool": tool, key: args, "directory": tmp, "cwd": tmp}).encode()

    old = "- [n5](n5.md) - hook\n"
    kilo_hook = installed_kilo_hook(tmp)
    return [
        ("qwen", [script("engramory_qwen_hook.py"), "PreToolUse"],
         claude("read_file", {"file_path": other}),
         claude("edit", {"file_path": index, "old_string": old, "new_string": old + grow})),
        ("droid", [script("engramory_droid_hook.py"), "PreToolUse"],
         claude("Read", {"file_path": other}),
         claude("Edit", {"file_path": index, "old_str": old, "new_str": old + grow})),
        ("copilot", [script("engramory_copilot_hook.py"), "preToolUse"],
         json.dumps({"cwd": tmp, "toolName": "bash", "toolArgs": {"command": "ls"}}).encode(),
         json.dumps({"cwd": tmp, "toolName": "edit", "toolArgs": {"path": index, "old_str": old, "new_str": old + grow}}).encode()),
        ("opencode", [script("engramory_opencode_hook.py")],
         plugin("read", "args", {"filePath": other}),
         plugin("edit", "args", {"filePath": index, "oldString": old, "newString": old + grow})),
        ("cline", [script("engramory_cline_hook.py")],
         plugin("read_files", "input", {"paths": [other]}),
         plugin("editor", "input", {"path": index, "old_text": old, "new_text": old + grow})),
        ("openclaw", [script("engramory_openclaw_hook.py")],
         json.dumps({"event": "before", "tool": "read", "params": {"path": other}}).encode(),
         json.dumps({"event": "before", "tool": "edit", "params": {"path": index, "edits": [{"oldText": old, "newText": old + grow}]}}).encode()),
        # Kilo (issue 22): opencode's plugin protocol, run from the bundle `install --host kilo` copied
        ("kilo", [kilo_hook],
         plugin("read", "args", {"filePath": other}),
         plugin("edit", "args", {"filePath": index, "oldString": old, "newString": old + grow})),
    ]


def installed_kilo_hook(tmp: str) -> str:
    """`engramory install --host kilo` into a throw-away HOME under `tmp`: the hook script the
    installed plugin runs."""
    home = os.path.join(tmp, "home")
    env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"), PYTHONPATH=ROOT)
    subprocess.run([sys.executable, "-m", "engramory", "install", "--host", "kilo"], cwd=tmp, env=env,
                   stdout=subprocess.DEVNULL, check=True)
    return os.path.join(home, ".config", "kilo", "engramory", "hooks", "engramory_kilo_hook.py")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=30, help="runs per case (default 30)")
    args = parser.parse_args(argv)
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        table = cases(tmp)
        runs: dict[str, list[float]] = {"baseline": []}
        for name, _, _, _ in table:
            runs[name + " leave"] = []
            runs[name + " deny"] = []
        for _ in range(args.runs):
            runs["baseline"].append(timed([py, "-I", "-S", "-c", "pass"], b""))
            for name, cmd, quick, deny in table:
                runs[name + " leave"].append(timed([py, "-I", "-S", *cmd], quick))
                runs[name + " deny"].append(timed([py, "-I", "-S", *cmd], deny))
    base = statistics.median(runs["baseline"])
    print("| case | median ms | ratio to `python3 -I -S -c pass` |")
    print("|---|---:|---:|")
    worst = 0.0
    for key, values in runs.items():
        med = statistics.median(values)
        ratio = med / base
        if key.endswith(" leave"):
            worst = max(worst, ratio)
        print("| %s | %.1f | %.2f |" % (key, med * 1000, ratio))
    print("\nworst leave-at-once ratio %.2f (target <= %.1f): %s" % (worst, TARGET, "met" if worst <= TARGET else "NOT met"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

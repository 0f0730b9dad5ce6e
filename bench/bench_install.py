#!/usr/bin/env python3
"""Time what issue 10 added where it runs often, against baselines measured in the same run.

    python3 bench/bench_install.py [--runs N]

1. The shell backstop as a whole process, the way Claude Code runs it after every Bash call
   and now also on UserPromptSubmit (late writes, store config stamps), against the
   bare interpreter start (`python3 -I -S -c pass`). Target: ratio <= 1.6 (the hook runtime
   alone, before these additions, measured 1.50 in the same conditions).
2. Installing into a large settings file: the splicing editor (engramory.install.jsonedit: parse
   with positions, rewrite only what differs) against `json.loads` + `json.dumps` of the same
   file, which is what install did before (and which turned 1e400 into Infinity). Splicing
   does more work by design; it runs once per install. Target: under 200 ms for this file.

Prints a table of medians; the commands are interleaved so machine noise hits them alike.
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
sys.path.insert(0, ROOT)

from engramory.automemory import sanitize_project_path  # noqa: E402
from engramory.install import jsonedit  # noqa: E402

POST_TOOL = os.path.join(ROOT, "hooks", "engramory_post_tool.py")


def timed(cmd: list[str], stdin: bytes, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="runs per case (default 40)")
    args = parser.parse_args(argv)
    py = sys.executable
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        project = os.path.join(tmp, "project")
        config = os.path.join(tmp, "config")
        memory = os.path.join(config, "projects", sanitize_project_path(project), "memory")
        os.makedirs(project)
        os.makedirs(memory)
        with open(os.path.join(memory, "MEMORY.md"), "w") as f:
            f.write("".join("- [n%d](n%d.md) hook\n" % (i, i) for i in range(150)))
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "CLAUDE_CONFIG_DIR": config,
               "CLAUDE_PROJECT_DIR": project, "TMPDIR": tmp}
        base = {"session_id": "bench", "cwd": project}
        post = json.dumps(dict(base, hook_event_name="PostToolUse", tool_name="Bash",
                               tool_input={"command": "ls"})).encode()
        late = json.dumps(dict(base, hook_event_name="UserPromptSubmit", prompt="go")).encode()
        cases = {
            "bare interpreter (baseline)": ([py, "-I", "-S", "-c", "pass"], b""),
            "PostToolUse backstop, nothing changed": ([py, "-I", "-S", POST_TOOL], post),
            "UserPromptSubmit late check, nothing changed": ([py, "-I", "-S", POST_TOOL], late),
        }
        for cmd, data in cases.values():
            timed(cmd, data, env)  # warm the caches
        times: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(args.runs):
            for name, (cmd, data) in cases.items():
                times[name].append(timed(cmd, data, env))
        baseline = statistics.median(times["bare interpreter (baseline)"])
        for name in cases:
            med = statistics.median(times[name])
            rows.append((name, "%.1f ms" % (med * 1000), "%.2f" % (med / baseline)))

    # 2. a 1 MB settings file
    settings = {"permissions": {"allow": ["Bash(tool-%d:*)" % i for i in range(20000)]},
                "env": {"K%d" % i: "v%d" % i for i in range(5000)}, "limit": 1.5}
    text = json.dumps(settings, indent=2)
    new = dict(settings, hooks={"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "x"}]}]})

    def splice() -> None:
        tree = jsonedit.parse(text)
        jsonedit.edit(text, dict(tree.value, hooks=new["hooks"]), tree=tree)

    def rewrite() -> None:
        json.dumps(dict(json.loads(text), hooks=new["hooks"]), indent=2)

    sp, rw = [], []
    for _ in range(max(5, args.runs // 8)):
        t = time.perf_counter()
        rewrite()
        rw.append(time.perf_counter() - t)
        t = time.perf_counter()
        splice()
        sp.append(time.perf_counter() - t)
    r, s = statistics.median(rw), statistics.median(sp)
    rows.append(("settings %.1f MB: json.loads + json.dumps (baseline)" % (len(text) / 1e6), "%.1f ms" % (r * 1000), "1.00"))
    rows.append(("settings %.1f MB: jsonedit parse + splice" % (len(text) / 1e6), "%.1f ms" % (s * 1000), "%.2f" % (s / r)))

    width = max(len(r[0]) for r in rows)
    print("%-*s  %10s  %6s" % (width, "case", "median", "ratio"))
    for name, med, ratio in rows:
        print("%-*s  %10s  %6s" % (width, name, med, ratio))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

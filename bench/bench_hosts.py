#!/usr/bin/env python3
"""Time the hooks of the hosts built from their own contracts (Crush, Windsurf, Kiro, Trae,
Auggie) AS INSTALLED: `engramory install --host <host> --scope user` into a throw-away HOME,
then the command it wrote run as the host runs it (`sh -c COMMAND`, payload on stdin in the
host's own shape), interleaved with a bare interpreter start (`sh -c "python3 -I -S -c pass"`)
so machine noise hits every case alike. Judged on CPU time (bench_hook.timed).

    python3 bench/bench_hosts.py [--runs N] [--hosts crush,kiro]

Targets (issue 22): a write to a path the guard ignores <= 1.05x the bare start; a deny of a
write that grows a 200-line index <= 1.3x.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_hook import timed  # noqa: E402

HOSTS = ("crush", "windsurf", "kiro", "trae", "auggie")
IGNORED, DENY = 1.05, 1.3


def installed(host: str, home: str, env: dict[str, str]) -> tuple[str, object]:
    """(the hook command install wrote, the host installer's Spec)."""
    import importlib
    import json

    from engramory.install import settingshooks as core

    done = subprocess.run([sys.executable, "-m", "engramory", "install", "--host", host, "--scope", "user"],
                          cwd=home, env=dict(env, PYTHONPATH=ROOT), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit("engramory install --host %s failed:\n%s%s" % (host, done.stdout, done.stderr))
    spec = importlib.import_module("engramory.hosts.%s.install" % host).SPEC
    target = core.Target(spec, "user", env=env)
    with open(target.settings, encoding="utf-8") as f:
        data = json.load(f)
    commands = [core.command_of(spec, h) for _, _, h in core.present(spec, data) if core.is_ours_for(spec)(h)]
    return str(commands[0]), spec


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="runs per case (default 40)")
    parser.add_argument("--hosts", default=",".join(HOSTS), help="comma-separated hosts (default: all five)")
    args = parser.parse_args(argv)
    import json
    import shlex

    from engramory.install import settingshooks as core

    tmp = tempfile.mkdtemp(prefix="engramory-bench-")
    try:
        home = os.path.join(tmp, "home")
        project = os.path.realpath(os.path.join(tmp, "project"))
        os.makedirs(home)
        os.makedirs(project)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ENGRAMORY_", "PYTHON", "XDG_", "CRUSH"))}
        env.update(HOME=home, TMPDIR=tmp)
        index, content = core.smoke_index(project)  # 200 lines, and content that grows it to 260
        ignored = os.path.join(project, "app.py")
        with open(ignored, "w", encoding="utf-8") as f:
            f.write("x = 1\n")
        cases: list[tuple[str, str, bytes]] = []
        py = ""
        for host in args.hosts.split(","):
            cmd, spec = installed(host, home, env)
            py = py or shlex.split(cmd)[0]
            cases.append(("%s, path it ignores" % host, cmd,
                          json.dumps(spec.smoke_deny(project, ignored, "x\n" * 50)).encode()))  # type: ignore[attr-defined]
            cases.append(("%s, deny (200-line index)" % host, cmd,
                          json.dumps(spec.smoke_deny(project, index, content)).encode()))  # type: ignore[attr-defined]
        base_name = "baseline: sh -c 'python3 -I -S -c pass'"
        cases.insert(0, (base_name, "%s -I -S -c pass" % shlex.quote(py), b""))
        for _, cmd, stdin in cases:  # warm the page cache and __pycache__
            for _ in range(3):
                timed(cmd, stdin, env)
        cpu: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        wall: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        for _ in range(args.runs):
            for name, cmd, stdin in cases:
                w, c = timed(cmd, stdin, env)
                wall[name].append(w)
                cpu[name].append(c)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cbase = statistics.median(cpu[base_name])
    wbase = statistics.median(wall[base_name])
    print("%-36s %9s %6s %9s %6s  %s" % ("case (as installed, through sh -c)", "wall ms", "ratio", "CPU ms", "ratio",
                                         "target (on CPU)"))
    ok = True
    for name, _, _ in cases:
        c, w = statistics.median(cpu[name]), statistics.median(wall[name])
        target = ""
        if name != base_name:
            limit = IGNORED if "ignores" in name else DENY
            met = c / cbase <= limit
            ok = ok and met
            target = "<= %.2f %s" % (limit, "met" if met else "NOT MET")
        else:
            target = "baseline"
        print("%-36s %9.2f %6.2f %9.2f %6.2f  %s" % (name, w * 1000, w / wbase, c * 1000, c / cbase, target))
    print("all targets %s" % ("met" if ok else "NOT MET"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

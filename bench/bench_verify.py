#!/usr/bin/env python3
"""Time `engramory verify` on 200 notes against a repository of 50,000 files: cold (no cache)
and warm (the cache from the run before), as whole CLI processes (`python3 -I -S
tools/engramory.py verify`), interpreter start included; and SessionStart's part, the hook as
installed, with the verify summary in place.

The repository is the labelled fixture of tests/verify_fixture.py (its history of renames,
deletions, moved functions, lockfile bumps) grown to 50,000 files in 2,500 folders; the 200
notes are the fixture's, so the run meets every kind of anchor. Baselines in the same run:
a bare interpreter start, and `git ls-files` alone (the least any check of the tree costs).
Targets: cold < 1 s, warm < 200 ms; one ls-files and at most 50 git grep calls cold, no
ls-files and no grep warm. Run: `python3 bench/bench_verify.py [--files N] [--runs N]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
sys.path.insert(0, HERE)

from engramory import notices as backstop  # noqa: E402
from engramory.automemory import sanitize_project_path  # noqa: E402
from engramory.verify import notice  # noqa: E402
from engramory.verify import run as verify_run  # noqa: E402
from tests import verify_fixture as fx  # noqa: E402

TOOL = os.path.join(HERE, "tools", "engramory.py")
HOOK = os.path.join(HERE, "hooks", "engramory_session_start.py")


def grow(repo: Path, files: int) -> None:
    """Fill the repository up to `files` tracked files, 20 to a folder, in one commit."""
    have = int(subprocess.run(["git", "-C", str(repo), "ls-files"], capture_output=True, text=True,
                              check=True).stdout.count("\n"))
    for i in range(max(0, files - have)):
        folder = repo / "vendor" / ("pkg%02d" % (i % 50)) / ("mod%03d" % ((i // 50) % 50))
        if i < 2500:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / ("file_%05d.py" % i)).write_text("def filler_%05d(x):\n    return x + %d\n" % (i, i), encoding="utf-8")
    fx.git(repo, "add", "-A")
    fx.git(repo, "commit", "-qm", "grown to %d files" % files)


def timed(cmd: list[str], runs: int, env: dict[str, str], before: object = None, data: bytes | None = None) -> list[float]:
    out = []
    for _ in range(runs):
        if callable(before):
            before()
        start = time.perf_counter()
        subprocess.run(cmd, input=data, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
        out.append(time.perf_counter() - start)
    return out


def in_process(fn: object, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        out.append(time.perf_counter() - start)
    return out


def big_store(folder: Path, notes: int) -> None:
    """A store of `notes` small notes (what SessionStart meets at issue 21's size)."""
    folder.mkdir(parents=True)
    for i in range(notes):
        (folder / ("n%05d.md" % i)).write_text(fx.NOTE_HEAD % ("n%05d" % i, "note %d" % i) + "Run `make deploy`.\n",
                                               encoding="utf-8")
    (folder / "MEMORY.md").write_text("# Memory Index\n", encoding="utf-8")


def row(name: str, times: list[float], base: float, target: str) -> str:
    med = statistics.median(times)
    return "%-44s %9.1f %9.1f %8.2fx  %s" % (name, med * 1000, max(times) * 1000, med / base, target)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--files", type=int, default=50_000)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "PYTHON"))}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        fixture = fx.build(Path(tmp), notes=200)
        grow(fixture.repo, args.files)
        store, repo = str(fixture.store), str(fixture.repo)
        files = subprocess.run(["git", "-C", repo, "ls-files"], capture_output=True, text=True, check=True).stdout.count("\n")
        print("fixture: %d notes, %d tracked files, built in %.0f s" % (200, files, time.perf_counter() - t0))
        cache = fixture.store / ".engramory"

        def cold() -> None:
            shutil.rmtree(cache, ignore_errors=True)

        verify = [sys.executable, "-I", "-S", TOOL, "verify", store, "--repo", repo]
        base = statistics.median(timed([sys.executable, "-I", "-S", "-c", "pass"], args.runs * 2, env))
        ls = timed(["git", "-C", repo, "ls-files", "-z"], args.runs, env)
        cold_times = timed(verify, args.runs, env, cold)
        warm_times = timed(verify, args.runs, env)
        cold()
        first = verify_run.verify(store, repo)
        second = verify_run.verify(store, repo)
        # SessionStart as installed: the store as the project's auto memory, the summary in place
        home = Path(tmp) / "home"
        memory = home / ".claude" / "projects" / sanitize_project_path(os.path.realpath(repo)) / "memory"
        shutil.copytree(fixture.store, memory)
        hook_env = dict(env, HOME=str(home), TMPDIR=tmp)
        payload = json.dumps({"cwd": repo, "session_id": "bench", "hook_event_name": "SessionStart"}).encode()
        subprocess.run([sys.executable, "-I", "-S", HOOK], input=payload, env=hook_env, capture_output=True, check=False)
        start = timed([sys.executable, "-I", "-S", HOOK], args.runs, hook_env, data=payload)
        part = in_process(lambda: backstop.verify_lines([str(memory)], {"cwd": repo}, hook_env), args.runs * 4)
        # issue 21's size: 50,000 notes; a fresh summary, then one that a commit outdated (detached refresh)
        large = Path(tmp) / "large"
        big_store(large, 50_000)
        verify_run.verify(str(large), repo)
        fresh_large = in_process(lambda: backstop.verify_lines([str(large)], {"cwd": repo}, hook_env), args.runs * 4)
        # the detached run itself would verify 50,000 notes five times over: time its start only
        # (the middle process is one interpreter start), not the work the hook never waits for
        start_only = [sys.executable, "-I", "-S", "-c", "pass"]
        notice.in_background = lambda root, cwd, env: subprocess.run(start_only, check=False)  # type: ignore[assignment]

        def outdated() -> None:
            (large / ".engramory" / "verify-notice.json").write_text('{"format": 1}', encoding="utf-8")
            backstop.verify_lines([str(large)], {"cwd": repo}, hook_env)

        stale_large = in_process(outdated, args.runs)
        print("%-44s %9s %9s %9s  %s" % ("", "median ms", "max ms", "vs start", "target"))
        print(row("python3 -I -S -c pass (baseline)", [base], base, ""))
        print(row("git ls-files -z", ls, base, ""))
        print(row("verify, cold (no cache)", cold_times, base, "< 1000 ms"))
        print(row("verify, warm (cache of the run before)", warm_times, base, "< 200 ms"))
        print(row("SessionStart hook, summary in place", start, base, "verify's part: no git"))
        print(row("  its verify part, in process", part, base, "< 150 ms budget"))
        print(row("  verify part, 50,000 notes, summary fresh", fresh_large, base, "no git, a few stats"))
        print(row("  verify part, 50,000 notes, summary outdated", stale_large, base, "detached refresh"))
        print("git calls, cold: %s" % json.dumps(first.calls, sort_keys=True))
        print("git calls, warm: %s (notes from the cache: %d of %d)" % (
            json.dumps(second.calls, sort_keys=True), second.reused, len(second.notes)))
        summary = first.summary()
        print("anchors: %d (%s)" % (sum(summary.values()), ", ".join("%s %d" % kv for kv in summary.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

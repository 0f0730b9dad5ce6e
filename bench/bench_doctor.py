#!/usr/bin/env python3
"""Time `engramory doctor` as a user runs it: a fresh process per run, on upstream-shaped
stores of 1,000, 10,000 and 50,000 notes, plus the SessionStart hook and hostile notes.

For each size: wall time, CPU time and peak RSS of the whole process tree (the doctor and
anything it starts: read from wait4's rusage of the child, RUSAGE_CHILDREN-style, so a
forked helper counts), then the same for a baseline measured in the same run, and the
ratios. The baseline is `--baseline CMD` (e.g. upstream Engramory 0.10's
`python3 tools/engramory_doctor.py`, which takes ROOT last) when given, else this doctor
at the commit before issue 11 (`--baseline-rev`, read with `git show` into a temporary
folder) when git has it, else a trivial `python3 -c pass` process (start-up cost only).

Upstream-shaped: protocol notes of every type with name, description, type, created,
updated, Why/How labels on feedback and project notes, [[links]] between neighbours, one
short index line per live note under a heading per type while the index stays under 1 MB
(upstream's parse limit), 2 % archived.

Targets (issue 11): peak RSS at 50,000 notes <= 80 MB; wall and CPU growing linearly
(50,000 / 10,000 close to x5); SessionStart hook under 0.25 s at 50,000 notes (issue 21: the median of 5, after the
first, which leaves the detached reconcile and doctor summary to make); each 1 MiB
adversarial note audited in under 1 s. With `--empty N` (e.g. 200000): N empty notes, the
text output against `--json` (which keeps every finding; the text run keeps a page of them).

Run: `python3 bench/bench_doctor.py [--sizes 1000,10000,50000] [--baseline CMD]`.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.realpath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import adversarial  # noqa: E402

TYPES = ("user", "feedback", "project", "reference")
TOPICS = ("deploy", "database", "review", "testing", "release", "logging", "billing", "search",
          "cache", "auth", "editor", "docs", "ci", "metrics", "backup", "queue")
BASELINE_REV = "1965ce9"  # main before issue 11


def make_store(root: str, count: int) -> None:
    os.makedirs(os.path.join(root, "archive"), exist_ok=True)
    index: dict[str, list[str]] = {t: [] for t in TYPES}
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
            index[t].append("- [%d](%s.md)" % (i, slug))
    # One short pointer per live note, as long as the index stays under 1,000,000 bytes:
    # upstream 0.10 refuses to parse an index past 1 MiB (it stops at the size verdict),
    # so a larger one would compare a full audit with an early exit. Past that the notes
    # are unindexed (orphans) for both doctors to report.
    lines = ["# Memory Index", ""]
    total = 0
    for t in TYPES:
        lines.append("## %s" % t)
        for line in index[t]:
            total += len(line) + 1
            if total > 1_000_000:
                break
            lines.append(line)
        lines.append("")
    with open(os.path.join(root, "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def run_tree(argv: list[str], stdin: bytes = b"", env: dict[str, str] | None = None) -> tuple[float, float, int, int]:
    """(wall s, CPU s, peak RSS KB, exit) of a process and every process it waited for:
    wait4's rusage covers the child and its reaped descendants; ru_maxrss is the largest
    of them (a forked helper that outgrew its parent would show)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env)
    assert proc.stdin is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, proc.returncode


def best(argv: list[str], runs: int, **kw: object) -> tuple[float, float, int]:
    rows = [run_tree(argv, **kw) for _ in range(runs)]  # type: ignore[arg-type]
    wall = min(r[0] for r in rows)
    cpu = min(r[1] for r in rows)
    rss = max(r[2] for r in rows)
    return wall, cpu, rss


def idle(root: str, limit: float = 600.0) -> None:
    """Wait until no detached child of a SessionStart (reconcile and doctor summary, verify)
    works on `root`: each holds a flock in .engramory/ for as long as it runs."""
    sys.path.insert(0, REPO)
    from engramory.store import metadir

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and (metadir.held(root, metadir.BACKGROUND_LOCK)
                                           or metadir.held(root, "verify.lock")):
        time.sleep(0.1)


def hook_runs(hook: list[str], root: str, env: dict[str, str], runs: int = 5) -> tuple[float, tuple[float, float, int]]:
    """(the first SessionStart's wall time, (median wall, median CPU, peak RSS) of the next
    `runs`): the first one on a store finds no manifest and no doctor summary and leaves a
    detached child to make them; the later ones are what every session start costs. Between
    runs the child is let finish, as between two sessions."""
    import statistics

    first = run_tree(hook, stdin=session_start_payload(root), env=env)[0]
    rows = []
    for _ in range(runs):
        idle(root)
        rows.append(run_tree(hook, stdin=session_start_payload(root), env=env))
    idle(root)
    return first, (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows),
                   max(r[2] for r in rows))


def baseline_cmd(args: argparse.Namespace, tmp: str) -> tuple[list[str], str]:
    if args.baseline:
        return shlex.split(args.baseline), "given: %s" % args.baseline
    old = os.path.join(tmp, "baseline")
    try:
        data = subprocess.run(["git", "-C", REPO, "archive", args.baseline_rev, "engramory", "tools"],
                              capture_output=True, timeout=60, check=True).stdout
        os.makedirs(old)
        subprocess.run(["tar", "-x", "-C", old], input=data, check=True, timeout=60)
        return ([sys.executable, "-I", "-S", os.path.join(old, "tools", "engramory_doctor.py")],
                "this doctor before issue 11 (git %s)" % args.baseline_rev)
    except (OSError, subprocess.SubprocessError):
        return [sys.executable, "-c", "pass"], "a trivial python3 process"


def _mb(kb: int) -> str:
    return "%.1f" % (kb / 1024)


def settle(root: str, limit: float = 600.0) -> None:
    """Wait for the review SessionStart started in the background on a large store (it writes
    the store's manifest under the store lock) before the store is removed."""
    sys.path.insert(0, REPO)
    from engramory.store import journal, review

    deadline = time.monotonic() + limit
    while review.load_manifest(root) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    quiet = 0
    while quiet < 3 and time.monotonic() < deadline:  # the lock free, the manifest settled, thrice
        with journal.lock(root, timeout=limit):
            m = review.load_manifest(root)
        quiet = quiet + 1 if m is not None and not m.get("pending") else 0
        time.sleep(0.3)


def remove(root: str) -> None:
    """rmtree, retried: a background review may still be finishing a write under it."""
    for _ in range(50):
        try:
            shutil.rmtree(root)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.2)
    shutil.rmtree(root, ignore_errors=True)


def session_start_payload(root: str) -> bytes:
    return json.dumps({"session_id": "bench", "hook_event_name": "SessionStart", "cwd": root,
                       "source": "startup"}).encode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", help="baseline doctor command; ROOT is appended")
    parser.add_argument("--baseline-rev", default=BASELINE_REV)
    parser.add_argument("--no-adversarial", action="store_true")
    parser.add_argument("--empty", type=int, default=0, metavar="N",
                        help="also time N empty notes: the text output against --json")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    doctor = [sys.executable, "-I", "-S", os.path.join(REPO, "tools", "engramory_doctor.py")]
    hook = [sys.executable, "-I", "-S", os.path.join(REPO, "hooks", "engramory_session_start.py")]
    with tempfile.TemporaryDirectory() as tmp:
        base, base_name = baseline_cmd(args, tmp)
        print("baseline: %s" % base_name)
        print("%8s  %-9s  %9s  %8s  %9s   %-30s" % ("notes", "what", "wall (s)", "cpu (s)", "peak MB",
                                                  "ratio to baseline (wall/cpu/RSS)"))
        rows = []
        for count in sizes:
            root = os.path.join(tmp, "store-%d" % count)
            make_store(root, count)
            extra = ["--skip", "store-in-git"]
            ours = best(doctor + [root] + extra, args.runs)
            theirs = best(base + [root] + (extra if "before issue 11" in base_name else []), args.runs)
            env = dict(os.environ, CLAUDE_CODE_PROJECT_DIR_NAME="bench", HOME=os.path.join(tmp, "home"),
                       CLAUDE_CONFIG_DIR=os.path.join(tmp, "cfg"))
            mem = os.path.join(tmp, "cfg", "projects", "bench")
            os.makedirs(mem, exist_ok=True)
            link = os.path.join(mem, "memory")
            if os.path.lexists(link):
                os.remove(link)
            os.symlink(root, link)
            first, hook_row = hook_runs(hook, root, env)
            rows.append((count, ours, theirs, hook_row))
            print("%8s  %-9s  %9.3f" % ("{:,}".format(count), "hook 1st", first))
            for what, r in (("doctor", ours), ("baseline", theirs), ("hook med5", hook_row)):
                ratio = ""
                if what == "doctor":
                    ratio = "x%.2f / x%.2f / x%.2f" % (r[0] / theirs[0], r[1] / max(theirs[1], 1e-9),
                                                       r[2] / max(theirs[2], 1))
                print("%8s  %-9s  %9.3f  %8.3f  %9s   %s" % ("{:,}".format(count), what, r[0], r[1], _mb(r[2]), ratio))
            settle(root)
            remove(root)
        if len(rows) >= 2:
            (n1, a, _, _), (n2, b, _, _) = rows[-2], rows[-1]
            print("growth %s -> %s notes (x%.0f): wall x%.2f, cpu x%.2f"
                  % ("{:,}".format(n1), "{:,}".format(n2), n2 / n1, b[0] / a[0], b[1] / a[1]))
        last = rows[-1]
        print("target peak RSS <= 80 MB at %s notes: %s (%s MB)" % (
            "{:,}".format(last[0]), "met" if last[1][2] <= 80 * 1024 else "NOT met", _mb(last[1][2])))
        print("target SessionStart hook < 0.25 s (median of 5) at %s notes: %s (%.3f s)" % (
            "{:,}".format(last[0]), "met" if last[3][0] < 0.25 else "NOT met", last[3][0]))
        if args.empty:
            empty_root = os.path.join(tmp, "empty")
            os.makedirs(empty_root)
            with open(os.path.join(empty_root, "MEMORY.md"), "w") as f:
                f.write("- [n](user-000000.md) - the first empty note\n")
            for i in range(args.empty):
                open(os.path.join(empty_root, "user-%06d.md" % i), "w").close()
            print("%-22s  %9s  %8s  %9s   %s" % ("%s empty notes" % "{:,}".format(args.empty), "wall (s)",
                                               "cpu (s)", "peak MB", "ratio to baseline (wall/cpu/RSS)"))
            for label, extra in (("doctor (text)", []), ("doctor --json", ["--json"])):
                r = best(doctor + [empty_root, "--skip", "store-in-git"] + extra, 1)
                b = best(base + [empty_root] + (["--skip", "store-in-git"] if "before issue 11" in base_name
                                                else []) + extra, 1)
                print("%-22s  %9.3f  %8.3f  %9s   x%.2f / x%.2f / x%.2f" % (
                    label, r[0], r[1], _mb(r[2]), r[0] / b[0], r[1] / max(b[1], 1e-9), r[2] / max(b[2], 1)))
                print("%-22s  %9.3f  %8.3f  %9s" % ("  baseline", b[0], b[1], _mb(b[2])))
            shutil.rmtree(empty_root)
        if not args.no_adversarial:
            adv_root = os.path.join(tmp, "adversarial")
            worst = 0.0
            print("%-22s  %9s  %8s  %9s" % ("1 MiB hostile note", "wall (s)", "cpu (s)", "peak MB"))
            for name, text in sorted(adversarial.cases().items()):
                os.makedirs(adv_root, exist_ok=True)
                with open(os.path.join(adv_root, "MEMORY.md"), "w") as f:
                    f.write("- [n](project-n.md) - the hostile note\n")
                with open(os.path.join(adv_root, "project-n.md"), "w", encoding="utf-8") as f:
                    f.write(text)
                r = best(doctor + [adv_root, "--skip", "store-in-git"], 1)
                worst = max(worst, r[0])
                print("%-22s  %9.3f  %8.3f  %9s" % (name, r[0], r[1], _mb(r[2])))
            print("target each 1 MiB hostile note < 1 s: %s (worst %.3f s)" % ("met" if worst < 1 else "NOT met", worst))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

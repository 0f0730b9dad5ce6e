#!/usr/bin/env python3
"""Time `engramory doctor` as a user runs it: a fresh process per run, on plain and
upstream-shaped stores of 1,000, 10,000 and 50,000 notes, beside a baseline doctor in the same
run, plus the SessionStart hook and hostile notes.

For each shape and size: wall time, CPU time and peak RSS of the whole process tree (the doctor
and anything it starts: read from wait4's rusage of the child, RUSAGE_CHILDREN-style, so a
forked helper counts), then the same for the baseline, measured alternately with this doctor
(a burst of load on a shared machine then hits both), and the ratios. The baseline is
`--upstream DIR` (a checkout of tinqiao-oss/engramory: its `tools/engramory_doctor.py`, which
takes ROOT), else `--baseline CMD` (ROOT is appended), else this doctor at the commit before
issue 11 (`--baseline-rev`, read with `git show` into a temporary folder) when git has it, else
a trivial `python3 -c pass` process (start-up cost only).

Plain (`make_plain_store`): the notes `engramory new` writes, the five fields and a one-line
body, Why/How labels on feedback and project notes, no [[links]], nothing archived.
Upstream-shaped (`make_store`): protocol notes of every type with name, description, type,
created, updated, Why/How labels on feedback and project notes, [[links]] between neighbours,
2 % archived. Both: one short index line per live note under a heading per type while the
index stays under 1 MB (upstream's parse limit).

Targets (issue 11, issue 21): at 10,000 notes at most x0.5 of upstream's wall and CPU time on
every shape (`--target`); wall and CPU growing linearly (the time per note from 10,000 to
50,000 within 25 %); peak RSS at 50,000 notes <= 80 MB; SessionStart hook under 0.25 s at
50,000 notes (the median of 5, after the first, which leaves the detached reconcile and doctor
summary to make; run on the upstream shape, `--no-hook` leaves it out); each 1 MiB adversarial
note audited in under 1 s. With `--empty N` (e.g. 200000): N empty notes, the text output
against `--json` (which keeps every finding; the text run keeps a page of them).

Run: `python3 bench/bench_doctor.py [--upstream DIR] [--shapes plain,upstream]
[--sizes 1000,10000,50000] [--runs 3]`.
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


def make_plain_store(root: str, count: int) -> None:
    """A plain store, as `engramory new` writes one: the five fields, a one-line body (Why and
    How on feedback and project notes), no [[links]], nothing archived, one pointer line per
    note under a heading per type while the index stays under 1,000,000 bytes."""
    os.makedirs(root, exist_ok=True)
    index: dict[str, list[str]] = {t: [] for t in TYPES}
    for i in range(count):
        t = TYPES[i % 4]
        topic = TOPICS[i % len(TOPICS)]
        slug = "%s-%s-%05d" % (t, topic, i)
        body = "Component %d keeps %s option %d." % (i, topic, i * 7 % 101)
        if t in ("feedback", "project"):
            body += "\n\n**Why:** it broke in %s.\n**How to apply:** check it first." % topic
        text = ("---\nname: %s\ndescription: %s setup of component %d keeps option %d\ntype: %s\n"
                "created: 2025-01-01\nupdated: 2026-01-01\n---\n%s\n" % (slug, topic, i, i * 7 % 101, t, body))
        with open(os.path.join(root, slug + ".md"), "w", encoding="utf-8") as f:
            f.write(text)
        index[t].append("- [%s %d](%s.md)" % (topic, i, slug))
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


SHAPES = {"plain": make_plain_store, "upstream": make_store}


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
    # lazy: the bench times the bundle as a user runs it and loads engramory itself only here, after the path is set
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
    if args.upstream:
        script = os.path.join(args.upstream, "tools", "engramory_doctor.py")
        if not os.path.isfile(script):
            raise SystemExit("bench_doctor: %s has no tools/engramory_doctor.py: pass a checkout of "
                             "tinqiao-oss/engramory" % args.upstream)
        return [sys.executable, "-I", "-S", script], "upstream Engramory (%s)" % upstream_version(args.upstream)
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


def upstream_version(folder: str) -> str:
    """The checkout's newest CHANGELOG.md release and, when it is a git work tree, its commit."""
    version = "version unknown"
    try:
        with open(os.path.join(folder, "CHANGELOG.md"), encoding="utf-8") as f:
            for line in f:
                if line.startswith("## ") and line[3:4].isdigit():
                    version = "version %s" % line[3:].split()[0]
                    break
    except (OSError, UnicodeDecodeError):
        pass
    try:
        top, head = (subprocess.run(["git", "-C", folder, "rev-parse", "--show-toplevel", "--short", "HEAD"],
                                    capture_output=True, text=True, timeout=10).stdout.split() + ["", ""])[:2]
    except (OSError, subprocess.SubprocessError):
        top = head = ""
    if not top or os.path.realpath(top) != os.path.realpath(folder):
        head = ""  # a folder with no git of its own (an archive), or one inside another repository
    return version + (", git %s" % head if head else "")


def side_by_side(ours: list[str], theirs: list[str], runs: int) -> tuple[tuple[float, float, int], tuple[float, float, int]]:
    """Both doctors `runs` times, alternating (ours, theirs, ours, ...), each the best of its
    runs: on a shared machine a burst of load then hits both, not one."""
    a, b = [], []
    for _ in range(runs):
        a.append(run_tree(ours))
        b.append(run_tree(theirs))

    def best_of(rows: list[tuple[float, float, int, int]]) -> tuple[float, float, int]:
        return min(r[0] for r in rows), min(r[1] for r in rows), max(r[2] for r in rows)

    return best_of(a), best_of(b)


def _mb(kb: int) -> str:
    return "%.1f" % (kb / 1024)


def settle(root: str, limit: float = 600.0) -> None:
    """Wait for the review SessionStart started in the background on a large store (it writes
    the store's manifest under the store lock) before the store is removed."""
    sys.path.insert(0, REPO)
    # lazy: as in idle(), engramory is importable only once REPO is on the path
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


def hook_env(tmp: str, root: str) -> dict[str, str]:
    """An environment whose Claude Code project memory folder is `root` (a symlink to it)."""
    env = dict(os.environ, CLAUDE_CODE_PROJECT_DIR_NAME="bench", HOME=os.path.join(tmp, "home"),
               CLAUDE_CONFIG_DIR=os.path.join(tmp, "cfg"))
    mem = os.path.join(tmp, "cfg", "projects", "bench")
    os.makedirs(mem, exist_ok=True)
    link = os.path.join(mem, "memory")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(root, link)
    return env


def summarize(rows: dict[str, list[tuple[int, tuple[float, float, int], tuple[float, float, int]]]],
              hooks: list[tuple[int, tuple[float, float, int]]], target: float) -> None:
    """The targets: per shape the same-run ratios at 10,000 notes, growth between the last two
    sizes (linear: the time per note stays within 25 %), peak RSS at the largest size."""
    for shape, shape_rows in rows.items():
        for count, ours, theirs in shape_rows:
            if count == 10000:
                w, c = ours[0] / theirs[0], ours[1] / max(theirs[1], 1e-9)
                print("target %s store, 10,000 notes, at most x%.2f of the baseline: wall x%.2f, cpu x%.2f: %s"
                      % (shape, target, w, c, "met" if w <= target and c <= target else "NOT met"))
        if len(shape_rows) >= 2:
            (n1, a, _), (n2, b, _) = shape_rows[-2], shape_rows[-1]
            per_wall, per_cpu = (b[0] / n2) / (a[0] / n1), (b[1] / n2) / (a[1] / n1)
            print("growth %s store %s -> %s notes (x%.0f): wall x%.2f, cpu x%.2f (per note x%.2f / x%.2f): %s"
                  % (shape, "{:,}".format(n1), "{:,}".format(n2), n2 / n1, b[0] / a[0], b[1] / a[1],
                     per_wall, per_cpu, "linear" if per_wall <= 1.25 and per_cpu <= 1.25 else "NOT linear"))
        count, ours, _ = shape_rows[-1]
        print("target peak RSS <= 80 MB at %s notes (%s store): %s (%s MB)" % (
            "{:,}".format(count), shape, "met" if ours[2] <= 80 * 1024 else "NOT met", _mb(ours[2])))
    if hooks:
        count, (med, _, _) = hooks[-1]
        print("target SessionStart hook < 0.25 s (median of 5) at %s notes: %s (%.3f s)" % (
            "{:,}".format(count), "met" if med < 0.25 else "NOT met", med))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", help="baseline doctor command; ROOT is appended")
    parser.add_argument("--baseline-rev", default=BASELINE_REV)
    parser.add_argument("--no-adversarial", action="store_true")
    parser.add_argument("--empty", type=int, default=0, metavar="N",
                        help="also time N empty notes: the text output against --json")
    parser.add_argument("--upstream", metavar="DIR",
                        help="a checkout of tinqiao-oss/engramory: its tools/engramory_doctor.py is the baseline")
    parser.add_argument("--shapes", default="plain,upstream",
                        help="store shapes, comma-separated: %s" % ", ".join(SHAPES))
    parser.add_argument("--no-hook", action="store_true", help="leave out the SessionStart hook runs")
    parser.add_argument("--target", type=float, default=0.5,
                        help="the most this doctor may take of the baseline's wall and CPU time at 10,000 notes")
    args = parser.parse_args()
    args.size_list = [int(s) for s in args.sizes.split(",")]
    args.shape_list = [s for s in args.shapes.split(",") if s]
    unknown = [s for s in args.shape_list if s not in SHAPES]
    if unknown:
        parser.error("unknown shape %s (known: %s)" % (", ".join(unknown), ", ".join(SHAPES)))
    return args


def time_shape(args: argparse.Namespace, tmp: str, base: list[str], base_name: str, shape: str, count: int,
               hooks: list[tuple[int, tuple[float, float, int]]]) -> tuple[int, tuple[float, float, int], tuple[float, float, int]]:
    """One shape at one size: this doctor and the baseline side by side (and the hook), printed."""
    root = os.path.join(tmp, "%s-%d" % (shape, count))
    SHAPES[shape](root, count)
    extra = ["--skip", "store-in-git"]
    ours, theirs = side_by_side(DOCTOR + [root] + extra,
                                base + [root] + (extra if "before issue 11" in base_name else []),
                                args.runs)
    shown = [("doctor", ours), ("baseline", theirs)]
    if shape == "upstream" and not args.no_hook:
        first, hook_row = hook_runs(HOOK, root, hook_env(tmp, root))
        hooks.append((count, hook_row))
        print("%-9s %8s  %-9s  %9.3f" % (shape, "{:,}".format(count), "hook 1st", first))
        shown.append(("hook med5", hook_row))
    for what, r in shown:
        ratio = ""
        if what == "doctor":
            ratio = "x%.2f / x%.2f / x%.2f" % (r[0] / theirs[0], r[1] / max(theirs[1], 1e-9),
                                               r[2] / max(theirs[2], 1))
        print("%-9s %8s  %-9s  %9.3f  %8.3f  %9s   %s" % (shape, "{:,}".format(count), what, r[0], r[1],
                                                         _mb(r[2]), ratio))
    if shape == "upstream" and not args.no_hook:
        settle(root)  # the review the hook started in the background
    remove(root)
    return count, ours, theirs


def time_empty(count: int, tmp: str, base: list[str], base_name: str) -> None:
    """`count` empty notes: the text output against --json, beside the baseline."""
    empty_root = os.path.join(tmp, "empty")
    os.makedirs(empty_root)
    with open(os.path.join(empty_root, "MEMORY.md"), "w") as f:
        f.write("- [n](user-000000.md) - the first empty note\n")
    for i in range(count):
        open(os.path.join(empty_root, "user-%06d.md" % i), "w").close()
    print("%-22s  %9s  %8s  %9s   %s" % ("%s empty notes" % "{:,}".format(count), "wall (s)",
                                       "cpu (s)", "peak MB", "ratio to baseline (wall/cpu/RSS)"))
    for label, extra in (("doctor (text)", []), ("doctor --json", ["--json"])):
        r = best(DOCTOR + [empty_root, "--skip", "store-in-git"] + extra, 1)
        b = best(base + [empty_root] + (["--skip", "store-in-git"] if "before issue 11" in base_name
                                        else []) + extra, 1)
        print("%-22s  %9.3f  %8.3f  %9s   x%.2f / x%.2f / x%.2f" % (
            label, r[0], r[1], _mb(r[2]), r[0] / b[0], r[1] / max(b[1], 1e-9), r[2] / max(b[2], 1)))
        print("%-22s  %9.3f  %8.3f  %9s" % ("  baseline", b[0], b[1], _mb(b[2])))
    shutil.rmtree(empty_root)


def time_adversarial(tmp: str) -> None:
    """Each 1 MiB hostile note alone in a store, against the 1 s target."""
    adv_root = os.path.join(tmp, "adversarial")
    worst = 0.0
    print("%-22s  %9s  %8s  %9s" % ("1 MiB hostile note", "wall (s)", "cpu (s)", "peak MB"))
    for name, text in sorted(adversarial.cases().items()):
        os.makedirs(adv_root, exist_ok=True)
        with open(os.path.join(adv_root, "MEMORY.md"), "w") as f:
            f.write("- [n](project-n.md) - the hostile note\n")
        with open(os.path.join(adv_root, "project-n.md"), "w", encoding="utf-8") as f:
            f.write(text)
        r = best(DOCTOR + [adv_root, "--skip", "store-in-git"], 1)
        worst = max(worst, r[0])
        print("%-22s  %9.3f  %8.3f  %9s" % (name, r[0], r[1], _mb(r[2])))
    print("target each 1 MiB hostile note < 1 s: %s (worst %.3f s)" % ("met" if worst < 1 else "NOT met", worst))


DOCTOR = [sys.executable, "-I", "-S", os.path.join(REPO, "tools", "engramory_doctor.py")]
HOOK = [sys.executable, "-I", "-S", os.path.join(REPO, "hooks", "engramory_session_start.py")]


def main() -> int:
    args = parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base, base_name = baseline_cmd(args, tmp)
        print("baseline: %s; each figure the best of %d runs, the two doctors alternating" % (base_name, args.runs))
        print("%-9s %8s  %-9s  %9s  %8s  %9s   %-30s" % ("shape", "notes", "what", "wall (s)", "cpu (s)", "peak MB",
                                                       "ratio to baseline (wall/cpu/RSS)"))
        rows: dict[str, list[tuple[int, tuple[float, float, int], tuple[float, float, int]]]] = {}
        hooks: list[tuple[int, tuple[float, float, int]]] = []
        for shape in args.shape_list:
            for count in args.size_list:
                rows.setdefault(shape, []).append(time_shape(args, tmp, base, base_name, shape, count, hooks))
        summarize(rows, hooks, args.target)
        if args.empty:
            time_empty(args.empty, tmp, base, base_name)
        if not args.no_adversarial:
            time_adversarial(tmp)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

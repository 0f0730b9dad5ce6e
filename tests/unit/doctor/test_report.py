"""Text output without holding every finding: `doctor` (no --json) keeps per code only the
findings it prints and the counts, and prints exactly what rendering every finding would."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

from engramory.doctor import report
from engramory.doctor import run as doctor

ROOT = str(Path(__file__).resolve().parents[3])
SCRIPT = os.path.join(ROOT, "tools", "engramory_doctor.py")


def naive_lines(findings: list[doctor.Finding], cap: int) -> list[str]:
    """The text output's finding lines as the doctor printed them when it held every finding."""
    out, seen = [], {}  # type: ignore[var-annotated]
    for f in sorted(findings, key=doctor.Finding.sort_key):
        n = seen[f.code] = seen.get(f.code, 0) + 1
        if n <= cap:
            out.append("%s%s: %s %s: %s" % (f.path, ":%d" % f.line if f.line else "", f.severity, f.code, f.message))
    for code, n in seen.items():
        if n > cap:
            out.append("... and {:,} more {} finding{} ({:,} in all; `--json` lists every one)".format(
                n - cap, code, "" if n - cap == 1 else "s", n))
    return out


def broken_store(root: Path, count: int) -> None:
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("".join("- [n](gone-%d.md) - x\n" % i for i in range(30))
                                    + "- [a](user-0.md) - y\n- [a](user-0.md) - y\n", encoding="utf-8")
    for i in range(count):
        (root / ("user-%d.md" % i)).write_text("" if i % 3 else "no frontmatter here\n", encoding="utf-8")


def test_capped_keeps_what_the_full_list_would_print_in_any_order() -> None:
    rng = random.Random(11)
    codes = ["note-orphan", "fm-missing", "pointer-broken", "secret"]
    for cap in (1, 3, 20):
        findings = [doctor.Finding(rng.choice(codes), "n%03d.md" % rng.randrange(300), rng.randrange(5),
                                   "m%d" % rng.randrange(4)) for _ in range(rng.randrange(1, 900))]
        kept = doctor.Capped.of(findings, cap)
        assert sum(len(v) for v in kept.kept.values()) <= len(codes) * (8 * cap + 8)
        st = doctor.Store(".", "MEMORY.md")
        lines = report.render_text(kept, ".", st, cap).splitlines()[:-1]
        assert lines == naive_lines(findings, cap)
        assert report.counts_of(kept) == report.counts_of(findings)
        assert report.exit_code(kept, True) == report.exit_code(findings, True)


def test_text_output_holds_a_page_of_findings_and_prints_what_json_lists(tmp_path: Path) -> None:
    root = tmp_path / "store"
    broken_store(root, 3000)
    st, every = doctor.audit(str(root), doctor.Context())
    st2, kept = doctor.audit_capped(str(root), doctor.Context())
    assert len(every) > 3000
    held = sum(len(v) for v in kept.kept.values())
    assert held <= len(kept.per_code) * (8 * doctor.OUTPUT_CAP + 8) < len(every) / 3
    text = report.render_text(kept, str(root), st2)
    assert text == report.render_text(every, str(root), st)
    res = subprocess.run([sys.executable, "-I", "-S", SCRIPT, str(root)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 1 and res.stdout == text


def test_content_batch_holds_at_most_a_bounded_number_of_notes() -> None:
    out: list[doctor.Finding] = []
    batch = doctor._ContentBatch(out)
    most = 0
    for i in range(10_000):
        n = doctor.Note("/x/user-%d.md" % i, "user-%d.md" % i, False)
        n.text = "" if i % 2 else "a"
        batch.add(n)
        most = max(most, len(batch.texts))
        assert len(batch.rels) == len(batch.texts)
    assert most <= doctor._ContentBatch.BATCH_NOTES
    assert all(batch.texts)  # empty notes are never held: nothing to scan

"""The doctor's renderers: the findings of one store as text (`path:line: severity code:
message`, `path: ...` for a finding on a whole file, at most a page of each code, then a
summary) or as one JSON report (`schemas/doctor-report.schema.json`), the exit status they
give, and the table of every check (`--list-checks`)."""

from __future__ import annotations

import os

from engramory.doctor.codes import (
    CODES,
    ERROR,
    INFO,
    OUTPUT_CAP,
    REPORT_VERSION,
    SEVERITIES,
    WARNING,
    Finding,
    shown,
)
from engramory.doctor.run import Capped
from engramory.exitcodes import EX_OK, EX_REFUSED
from engramory.size import n as _n
from engramory.store.reader import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


def counts_of(findings: Sequence[Finding] | Capped) -> dict[str, int]:
    if isinstance(findings, Capped):
        return dict(findings.counts)
    counts = {s: 0 for s in SEVERITIES}
    for f in findings:
        counts[f.severity] += 1
    return counts


def exit_code(findings: Sequence[Finding] | Capped, strict: bool = False) -> int:
    counts = counts_of(findings)
    return EX_REFUSED if counts[ERROR] or (strict and counts[WARNING]) else EX_OK


def display_path(root: str, rel: str) -> str:
    if rel == ".":
        return shown(root)
    if root in (".", "./", ""):
        return shown(rel)
    return shown(os.path.join(root, rel))


def render_text(findings: Sequence[Finding] | Capped, root: str, st: Store, cap: int = OUTPUT_CAP) -> str:
    """One line per finding, at most `cap` per code (then one "and N more" line, after the
    rest): a store of 200,000 broken notes still prints a page, not 68 MB."""
    kept = findings if isinstance(findings, Capped) else Capped.of(findings, cap)
    shown_now = kept.shown()
    # path:line: for a finding on a line; path: alone for one on the whole file (line 0).
    out = ["%s%s: %s %s: %s" % (display_path(root, f.path), ":%d" % f.line if f.line else "", f.severity, f.code, f.message)
           for f in shown_now]
    for code in dict.fromkeys(f.code for f in shown_now):
        n = kept.per_code[code]
        if n > kept.cap:
            out.append("... and %s more %s finding%s (%s in all; `--json` lists every one)"
                       % (_n(n - kept.cap), code, "" if n - kept.cap == 1 else "s", _n(n)))
    c = counts_of(findings)
    live = len(st.live)
    out.append("%d error%s, %d warning%s, %d info; checked %d live note%s, %d archived, %d index pointer%s in %s" % (
        c[ERROR], "" if c[ERROR] == 1 else "s", c[WARNING], "" if c[WARNING] == 1 else "s", c[INFO],
        live, "" if live == 1 else "s", len(st.notes) - live, len(st.pointers),
        "" if len(st.pointers) == 1 else "s", shown(root)))
    return "\n".join(out) + "\n"


def report(findings: Sequence[Finding], st: Store, chosen: str, strict: bool) -> dict[str, Any]:
    live = len(st.live)
    return {
        "version": REPORT_VERSION,
        "root": os.path.abspath(st.root),
        "index": st.index_name,
        "chosen_by": chosen,
        "strict": strict,
        "exit": exit_code(findings, strict),
        "counts": counts_of(findings),
        "notes": {"live": live, "archived": len(st.notes) - live, "pointers": len(st.pointers)},
        "findings": [f.as_dict() for f in findings],
    }


def list_checks() -> str:
    width = max(len(c) for c in CODES)
    rows = ["%s  %-7s  %s  %s" % ("code".ljust(width), "level", "archive", "what it finds")]
    for code, (sev, archive, what) in CODES.items():
        rows.append("%s  %-7s  %-7s  %s" % (code.ljust(width), sev, "yes" if archive else "no", what))
    return "\n".join(rows) + "\n"

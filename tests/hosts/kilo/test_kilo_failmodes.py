"""The fail modes and the differential prediction check on the real Kilo Code CLI, with the
scenarios every host shares (hostkit/scenarios.py, hostkit/differential.py): a broken guard
fails open, never closed, and `install --check` names it; Kilo has no hook timeout, so the
plugin's own 5 s bound is what keeps a hung guard from hanging the session; and the bytes
Kilo writes for generated edits and patches are the bytes the ported replacers predict (one
dialect with opencode: the same prediction code)."""

from __future__ import annotations

import common
import differential
import edit_cases
import scenarios
from kilo_driver import PATCH_MODEL, Kilo


def test_a_deleted_bundle_lets_edits_through_and_check_reports_it(kilo: Kilo) -> None:
    scenarios.deleted_bundle(kilo, common.index_text(300))


def test_a_hung_guard_does_not_hang_the_session_and_check_reports_it(kilo: Kilo) -> None:
    scenarios.slow_guard(kilo, answer_within=5.0, finish_within=100, timeout=150, sleep=600)


def test_a_crashing_guard_allows_and_check_reports_it(kilo: Kilo) -> None:
    scenarios.crashing_guard(kilo, common.index_text(300))


def test_predictions_match_the_bytes_kilo_writes(kilo: Kilo) -> None:
    """40 generated edits and writes in one session, then 12 patches for a `gpt-` model id
    (apply_patch replaces edit there): each file's bytes equal the prediction, and a predicted
    failure leaves the file as it was."""
    kilo.install()
    edits = differential.case_edits(kilo, kilo.project / "cases", edit_cases.cases(40))
    changed = differential.run(kilo, edits, timeout=300).changed
    assert changed >= 20, "only %d of the generated edits changed their file" % changed
    edits = differential.patch_edits(kilo.project / "patches", kilo.patch_call, strip_context=True)
    assert differential.run(kilo, edits, timeout=300, model=PATCH_MODEL).changed >= 8

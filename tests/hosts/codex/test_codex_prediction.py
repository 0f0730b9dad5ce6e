"""Differential check of the Codex edit model against the real Codex CLI 0.171.0: for every
generated edit, the bytes Codex wrote equal the bytes engramory.hosts.codex predicted (and a
patch it predicts Codex refuses leaves every file as it was). The edits are batched: one
model response carries every call, so one Codex session applies them all."""

from __future__ import annotations

from pathlib import Path

import codex_cases
import codex_driver
import pytest
from codex_model import patch_call, shell_call

from engramory import patches
from engramory.hosts import codex

pytestmark = pytest.mark.e2e


def _read(p: Path) -> bytes | None:
    return p.read_bytes() if p.exists() else None


def _predictions(work: Path, cases: list[codex_cases.Case], through_shell: bool) -> dict[str, dict[str, bytes | None] | None]:
    out: dict[str, dict[str, bytes | None] | None] = {}
    for c in cases:
        try:
            if through_shell:
                found = codex.shell_patches(_shell(c), str(work))
                assert len(found) == 1
                text, folder = found[0]
            else:
                text, folder = c.patch, str(work)
            writes = codex.predict(codex.parse_patch(text), folder)
            out[c.name] = {w.path: w.after for w in writes}
        except patches.PatchError:
            out[c.name] = None
    return out


def _shell(c: codex_cases.Case) -> str:
    # Codex strips the heredoc's own line breaks; a patch that ends in CRLF keeps its \r lines.
    return "cd sub && apply_patch <<'EOF'\n%sEOF\n" % c.patch


def _setup(work: Path, cases: list[codex_cases.Case]) -> None:
    work.mkdir(parents=True, exist_ok=True)
    for c in cases:
        if c.before is not None:
            (work / c.name).write_bytes(c.before)
        for name, data in c.extra.items():
            (work / name).write_bytes(data)


def _compare(work: Path, cases: list[codex_cases.Case], predicted: dict[str, dict[str, bytes | None] | None]) -> tuple[int, int, list[str]]:
    applied = refused = 0
    problems: list[str] = []
    for c in cases:
        pred = predicted[c.name]
        if pred is None:
            refused += 1
            unchanged = _read(work / c.name) == c.before and all(_read(work / n) == b for n, b in c.extra.items())
            if not unchanged:
                problems.append("%r: predicted a refusal, but Codex wrote %r" % (c, _read(work / c.name)))
            continue
        applied += 1
        for path, want in pred.items():
            got = _read(Path(path))
            if got != want:
                problems.append("%r\n  patch %r\n  before %r\n  predicted %r\n  written   %r" % (c, c.patch, c.before, want, got))
    return applied, refused, problems


def test_apply_patch_bytes_match_prediction(home: codex_driver.Home) -> None:
    cases = codex_cases.generate(216, seed=14) + codex_cases.fixed()
    _setup(home.work, cases)
    predicted = _predictions(home.work, cases, through_shell=False)
    result = codex_driver.run(home, [[patch_call(c.patch) for c in cases]])
    assert result.returncode == 0, result.stderr[-2000:]
    applied, refused, problems = _compare(home.work, cases, predicted)
    assert not problems, "\n".join(problems[:10])
    assert applied >= 150 and refused >= 5, (applied, refused)
    # Codex reported a failure for exactly the patches predicted to be refused.
    failures = [o for o in result.tool_outputs() if "verification failed" in o or "Failed to" in o]
    assert len(failures) == refused


def test_shell_heredoc_bytes_match_prediction(home: codex_driver.Home) -> None:
    cases = codex_cases.generate(54, seed=1414)
    work = home.work / "sub"
    _setup(work, cases)
    predicted = _predictions(home.work, cases, through_shell=True)
    result = codex_driver.run(home, [[shell_call(_shell(c)) for c in cases]])
    assert result.returncode == 0, result.stderr[-2000:]
    applied, refused, problems = _compare(work, cases, predicted)
    assert not problems, "\n".join(problems[:10])
    assert applied >= 30, (applied, refused)


def test_multi_file_patch_is_all_or_nothing(home: codex_driver.Home) -> None:
    (home.work / "a.md").write_bytes(b"one\ntwo\n")
    (home.work / "b.md").write_bytes(b"three\n")
    good = "*** Update File: a.md\n@@\n-one\n+ONE\n"
    bad = "*** Update File: b.md\n@@\n-missing\n+x\n"
    both = "*** Begin Patch\n%s%s*** End Patch\n" % (good, bad)
    same_file = "*** Begin Patch\n%s*** Update File: a.md\n@@\n-two\n+TWO\n*** End Patch\n" % good
    for text in (both, same_file):
        with pytest.raises(patches.PatchError):
            codex.predict(codex.parse_patch(text), str(home.work))
    fine = "*** Begin Patch\n%s*** Add File: c.md\n+new\n*** End Patch\n" % good
    writes = codex.predict(codex.parse_patch(fine), str(home.work))
    result = codex_driver.run(home, [[patch_call(both)], [patch_call(same_file)], [patch_call(fine)]])
    assert result.returncode == 0, result.stderr[-2000:]
    assert (home.work / "b.md").read_bytes() == b"three\n"
    for w in writes:
        assert _read(Path(w.path)) == w.after


def test_line_endings_bom_and_loose_matching_match_prediction(home: codex_driver.Home) -> None:
    """CRLF, lone CR, mixed endings, BOM, missing final newline, loose context and several
    hunks (codex_cases.endings()): each file's bytes are the prediction, or it is unchanged
    where the prediction is a refusal."""
    cases = codex_cases.endings()
    _setup(home.work, cases)
    predicted = _predictions(home.work, cases, through_shell=False)
    result = codex_driver.run(home, [[patch_call(c.patch) for c in cases]])
    assert result.returncode == 0, result.stderr[-2000:]
    applied, refused, problems = _compare(home.work, cases, predicted)
    assert not problems, "\n".join(problems)
    assert applied >= 30 and refused >= 5, (applied, refused)
    failures = [o for o in result.tool_outputs() if "verification failed" in o or "Failed to" in o]
    assert len(failures) == refused

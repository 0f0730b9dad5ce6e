"""`engramory new` and `engramory doctor` agree about a note's description (issue 21): a note
`new` names from a specific description of five or more words passes the doctor with no
warning, and when the doctor would warn, `new`'s receipt says so — both through one function,
store.descriptions.weakness."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engramory import cli
from engramory.curate.notes import STOPWORDS
from engramory.doctor import codes
from engramory.doctor import run as doctor
from engramory.store import descriptions

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = (ROOT / "templates" / "MEMORY.md").read_bytes()

# Specific words: neither generic (descriptions.GENERIC_DESCRIPTIONS) nor stopwords, some of
# them digits-with-letters and hyphenated, as people write them.
WORDS = [w for w in (
    "prefers tabs spaces go files staging dashboard grafana kibana payments backend lead deploy "
    "script ansible postgres replica lag alerts threshold retry flag login flaky runner pool "
    "eu-west self-hosted k8s namespace helm chart terraform module vault secret rotation cron "
    "nightly build cache redis sentinel failover latency budget p95 oncall rota pager duty "
    "python3 ruff mypy strict lint rules monorepo bazel target").split()
    if w not in descriptions.GENERIC_DESCRIPTIONS and w not in STOPWORDS]


def _store(tmp: Path) -> Path:
    root = tmp / "mem"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_bytes(TEMPLATE)
    return root


def _new(root: Path, desc: str, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    code = cli.main(["new", str(root), "--type", "user", "--description", desc, "--body",
                     "the body of the note, " + desc, "--json", *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    receipt: dict[str, object] = json.loads(out)
    return receipt


def _warnings(root: Path, rel: str) -> list[doctor.Finding]:
    _, found = doctor.audit(str(root), doctor.Context(git=False))
    return [f for f in found if f.path == rel and f.severity != codes.INFO]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(WORDS), min_size=5, max_size=12, unique=True), st.booleans())
def test_a_note_new_names_from_five_specific_words_passes_the_doctor(
        tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], words: list[str],
        capital: bool) -> None:
    desc = " ".join(words)
    if capital:
        desc = desc[0].upper() + desc[1:]
    root = _store(tmp_path_factory.mktemp("agree"))
    receipt = _new(root, desc, capsys)
    rel = str(receipt["path"])
    assert _warnings(root, rel) == [], (desc, rel)
    assert not any("description-weak" in str(w) for w in receipt["warnings"]), receipt["warnings"]  # type: ignore[attr-defined]


def test_the_reported_case_no_longer_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _store(tmp_path)
    receipt = _new(root, "Prefers tabs over spaces in Go files", capsys)
    assert receipt["path"] != "prefers-tabs-over-spaces-in-go-files.md"
    assert _warnings(root, str(receipt["path"])) == []


def test_new_says_in_its_receipt_what_the_doctor_would_warn(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    root = _store(tmp_path)
    receipt = _new(root, "Deploy notes", capsys)
    found = _warnings(root, str(receipt["path"]))
    assert [f.code for f in found] == ["description-weak"]
    warned = [w for w in receipt["warnings"] if "description-weak" in w]  # type: ignore[attr-defined]
    assert len(warned) == 1 and found[0].message.split(";")[0] in warned[0]
    # and in the text receipt
    code = cli.main(["new", str(root), "--type", "user", "--name", "rota", "--description", "rota",
                     "--body", "the oncall rota lives in the team wiki"])
    out, err = capsys.readouterr()
    assert code == 0 and "description-weak" in out + err and "says nothing the file name does not" in out + err


def test_update_with_a_new_description_warns_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _store(tmp_path)
    receipt = _new(root, "Grafana dashboard for staging payments errors", capsys)
    slug = str(receipt["path"])[:-3]
    code = cli.main(["update", slug, str(root), "--description", slug.replace("-", " "), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert any("description-weak" in w for w in json.loads(out)["warnings"])
    assert [f.code for f in _warnings(root, slug + ".md")] == ["description-weak"]


def test_doctor_and_new_share_one_judgement(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Change the one function and both the doctor and `new` change with it."""
    monkeypatch.setattr(descriptions, "weakness", lambda desc, slug, ws=None: "judged by the shared function")
    root = _store(tmp_path)
    receipt = _new(root, "Postgres replica lag alert threshold is thirty seconds", capsys)
    assert any("judged by the shared function" in w for w in receipt["warnings"])  # type: ignore[attr-defined]
    found = _warnings(root, str(receipt["path"]))
    assert [f.code for f in found] == ["description-weak"]
    assert found[0].message.startswith("judged by the shared function")

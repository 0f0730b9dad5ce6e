"""`engramory doctor --verify`: ref-stale, ref-moved and verified-old from the same verify run;
the plain doctor neither reports them nor loads the verify code (no git); verifyMaxAgeDays is
validated like every store config key."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import verify_fixture as fx

from engramory import config
from engramory.automemory import sanitize_project_path
from tests.conftest import ROOT

REPORT_SCHEMA = json.loads((ROOT / "schemas" / "doctor-report.schema.json").read_text(encoding="utf-8"))


@pytest.fixture
def case(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A project repository and its Claude Code auto-memory folder (outside the repository)."""
    repo, store, _ = fx.tiny(tmp_path)
    fx.note(store, "deploy", "The deploy script is `scripts/deploy.sh`.\nIt calls `render_invoice()`.")
    fx.note(store, "fresh", "Run `make deploy`.")
    fx.note(store, "words", "Nothing that names code.")
    home = tmp_path / "home"
    memory = home / ".claude" / "projects" / sanitize_project_path(str(repo.resolve())) / "memory"
    shutil.copytree(store, memory)
    return repo, memory, {"HOME": str(home)}


def doctor(cwd: Path, env: dict[str, str], *args: str, code: str = "") -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "CLAUDE", "PYTHON"))}
    full.update(env, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "engramory", "doctor", *args]
    return subprocess.run(cmd, cwd=str(cwd), env=full, capture_output=True, text=True, timeout=120)


def test_verify_adds_ref_stale_ref_moved_and_verified_old(case: tuple[Path, Path, dict[str, str]]) -> None:
    repo, memory, env = case
    done = doctor(repo, env, "--verify", str(memory))
    lines = done.stdout.splitlines()
    assert "%s:8: info ref-moved: path scripts/deploy.sh: now ops/deploy.py (renamed in" % (memory / "deploy.md") in done.stdout
    assert any(line.startswith("%s:9: warning ref-stale: symbol render_invoice(): not in the work tree" % (memory / "deploy.md"))
               for line in lines)
    old = [line for line in lines if "verified-old" in line]
    assert sorted(line.split(":", 1)[0] for line in old) == [str(memory / "deploy.md"), str(memory / "fresh.md")]
    assert "was never verified (updated 2026-01-01)" in old[0] and "engramory verify --mark deploy" in old[0]
    assert not (memory / ".engramory" / "verify-cache.json").exists()  # the doctor writes nothing


def test_a_mark_and_the_configured_age_decide_verified_old(case: tuple[Path, Path, dict[str, str]]) -> None:
    repo, memory, env = case
    full = dict(os.environ, PYTHONPATH=str(ROOT), **env)
    subprocess.run([sys.executable, "-m", "engramory", "verify", str(memory), "--mark", "fresh"], cwd=str(repo),
                   env=full, check=True, capture_output=True)
    codes = json.loads(doctor(repo, env, "--verify", "--json", str(memory)).stdout)
    jsonschema.validate(codes, REPORT_SCHEMA)
    assert {f["path"] for f in codes["findings"] if f["code"] == "verified-old"} == {"deploy.md"}
    (memory / ".engramory.json").write_text('{"version": 1, "verifyMaxAgeDays": 100000}', encoding="utf-8")
    codes = json.loads(doctor(repo, env, "--verify", "--json", str(memory)).stdout)
    assert not [f for f in codes["findings"] if f["code"] == "verified-old"]


def test_the_plain_doctor_reports_none_of_it_and_loads_no_verify_code(case: tuple[Path, Path, dict[str, str]]) -> None:
    repo, memory, env = case
    probe = ("import sys; from engramory.commands import doctor; rc = doctor.main(sys.argv[1:]); "
             "print(sorted(m for m in sys.modules if m.startswith('engramory.verify')))")
    done = doctor(repo, env, str(memory), code=probe)
    assert done.stdout.splitlines()[-1] == "[]"
    assert "ref-" not in done.stdout and "verified-old" not in done.stdout


def test_skip_and_a_store_without_a_repository(case: tuple[Path, Path, dict[str, str]], tmp_path: Path) -> None:
    repo, memory, env = case
    done = doctor(repo, env, "--verify", "--skip", "verified-old", "--skip", "ref-moved", str(memory))
    assert "verified-old" not in done.stdout and "ref-moved" not in done.stdout and "ref-stale" in done.stdout
    alone = doctor(tmp_path, env, "--verify", str(memory))
    assert "ref-" not in alone.stdout
    assert alone.stderr.startswith("engramory doctor: --verify: no git repository holds")


def test_verify_with_all_is_a_usage_error(case: tuple[Path, Path, dict[str, str]]) -> None:
    repo, _, env = case
    done = doctor(repo, env, "--verify", "--all")
    assert done.returncode == 2 and "--verify" in done.stderr


@pytest.mark.parametrize("value", [0, -3, "90", True, 1.5])
def test_verify_max_age_days_must_be_a_positive_integer(value: object) -> None:
    assert config.validate({"version": 1, "verifyMaxAgeDays": value})
    assert config.validate({"version": 1, "verifyMaxAgeDays": 30}) == []

"""`engramory verify` as a user runs it: `python3 -m engramory verify` and the copied skill
folder's `tools/engramory.py verify` (under `python3 -I -S`), its lines, summary, --json
(against schemas/verify.schema.json), exit codes, and bad input without a traceback."""

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

from tests.conftest import ROOT

SCHEMA = json.loads((ROOT / "schemas" / "verify.schema.json").read_text(encoding="utf-8"))


def engramory(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
              tool: Path | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "CLAUDE", "PYTHON"))}
    base.update(env or {})
    if tool is None:
        base["PYTHONPATH"] = str(ROOT)
        cmd = [sys.executable, "-m", "engramory", *args]
    else:
        cmd = [sys.executable, "-I", "-S", str(tool), *args]
    return subprocess.run(cmd, cwd=str(cwd or ROOT), env=base, capture_output=True, text=True, timeout=120)


@pytest.fixture
def case(tmp_path: Path) -> tuple[Path, Path, str]:
    repo, store, commit = fx.tiny(tmp_path)
    fx.note(store, "deploy", "The deploy script is `scripts/deploy.sh`.\nIt calls `render_invoice()`.\n"
            "The app starts at src/app.py:12; run `make deploy`.")
    return repo, store, commit


def test_stale_and_moved_anchors_are_one_line_each_then_a_summary(case: tuple[Path, Path, str]) -> None:
    repo, store, commit = case
    done = engramory("verify", str(store), "--repo", str(repo))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "deploy.md:8: moved path scripts/deploy.sh: ops/deploy.py (renamed in %s)" % commit
    assert lines[1] == "deploy.md:9: stale symbol render_invoice(): not in the work tree"
    assert lines[2].startswith("verify: 4 anchors in 1 live note: 1 stale, 1 moved, 2 fresh, 0 unverifiable; "
                               "repository %s at %s (--repo)" % (repo.resolve(), commit))
    assert "engramory archive" in lines[3] and "engramory update" in lines[3] and "--mark" in lines[3]
    assert done.stderr == ""


def test_the_copied_skill_folder_runs_it_isolated(case: tuple[Path, Path, str], tmp_path: Path) -> None:
    repo, store, commit = case
    bundle = tmp_path / "skill"
    shutil.copytree(ROOT / "engramory", bundle / "engramory", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tools", bundle / "tools")
    done = engramory("verify", str(store), "--repo", str(repo), tool=bundle / "tools" / "engramory.py", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0].endswith("ops/deploy.py (renamed in %s)" % commit)


def test_json_is_one_document_that_follows_the_schema(case: tuple[Path, Path, str]) -> None:
    repo, store, _ = case
    done = engramory("verify", str(store), "--repo", str(repo), "--json")
    doc = json.loads(done.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["root"] == str(store) and doc["repo"] == str(repo.resolve())
    assert doc["summary"] == {"fresh": 2, "stale": 1, "moved": 1, "unverifiable": 0}
    assert [a["kind"] for a in doc["anchors"]] == ["path", "symbol", "line", "command"]
    assert doc["anchors"][0]["candidate"] == "ops/deploy.py" and doc["anchors"][2]["candidate"] is None


def test_nothing_stale_is_exit_0(case: tuple[Path, Path, str]) -> None:
    repo, store, _ = case
    fx.note(store, "deploy", "The deploy script is `ops/deploy.py`; run `make deploy`.")
    done = engramory("verify", str(store), "--repo", str(repo))
    assert done.returncode == 0 and done.stdout.startswith("verify: 2 anchors in 1 live note: 0 stale")


def test_a_store_outside_any_repository_is_all_unverifiable_said_once(case: tuple[Path, Path, str]) -> None:
    _, store, _ = case
    done = engramory("verify", str(store), cwd=store)
    assert done.returncode == 0
    (said,) = done.stderr.splitlines()
    assert said.startswith("engramory verify: no git repository holds %s" % store) and "--repo" in said
    assert said.endswith("every anchor is unverifiable")
    assert done.stdout.startswith("verify: 4 anchors in 1 live note: 0 stale, 0 moved, 0 fresh, 4 unverifiable; no repository")
    doc = json.loads(engramory("verify", str(store), "--json", cwd=store).stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["repo"] is None and {a["verdict"] for a in doc["anchors"]} == {"unverifiable"}


def test_the_project_whose_auto_memory_it_is_is_the_repository(case: tuple[Path, Path, str], tmp_path: Path) -> None:
    repo, store, commit = case
    from engramory.automemory import sanitize_project_path

    config = tmp_path / "claude"
    memory = config / "projects" / sanitize_project_path(str(repo.resolve())) / "memory"
    shutil.copytree(store, memory)
    done = engramory("verify", cwd=repo, env={"CLAUDE_CONFIG_DIR": str(config), "HOME": str(tmp_path)})
    assert done.returncode == 1, done.stderr
    assert done.stderr == "engramory verify: no ROOT given; verifying this project's auto memory: %s\n" % memory
    assert "(the project whose auto memory this is)" in done.stdout


@pytest.mark.parametrize(("args", "code"), [
    (["--no-such-flag"], 64),
    (["--mark"], 64),
    (["--mark", "no-such-note"], 64),
])
def test_usage_errors_are_64_and_write_nothing(case: tuple[Path, Path, str], args: list[str], code: int) -> None:
    repo, store, _ = case
    before = {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()}
    done = engramory("verify", str(store), "--repo", str(repo), *args)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.strip()
    assert {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()} == before
    assert not (store / ".engramory" / "journal.jsonl").exists()


def test_an_unreadable_root_is_66(tmp_path: Path) -> None:
    done = engramory("verify", str(tmp_path / "nowhere"))
    assert done.returncode == 66 and "is not a folder" in done.stderr
    done = engramory("verify", str(tmp_path), "--repo", str(tmp_path / "nowhere"), "--json")
    assert done.returncode == 66 and json.loads(done.stdout)["ok"] is False


def test_bad_input_is_said_never_a_traceback(case: tuple[Path, Path, str]) -> None:
    repo, store, _ = case
    os.mkfifo(repo / "pipe.fifo.txt")
    (repo / "big.txt").write_bytes(b"x\n" * (9 << 20))
    (repo / "package.json").write_text("{not json", encoding="utf-8")
    (repo / "package-lock.json").write_bytes(b"\xff\xfe{")
    (store / "binary.md").write_bytes(b"---\nname: b\n---\n\xff\xfe scripts/deploy.sh\n")
    fx.note(store, "odd", "The pipe is `pipe.fifo.txt:3`; the dump is `big.txt:5`; run `npm run build`; "
            "we pin left-pad@1.3.0.")
    done = engramory("verify", str(store), "--repo", str(repo), "--json")
    assert "Traceback" not in done.stderr
    by_text = {a["text"]: a for a in json.loads(done.stdout)["anchors"] if a["note"] == "odd.md"}
    assert by_text["pipe.fifo.txt:3"]["verdict"] == "unverifiable" and "not a regular file" in by_text["pipe.fifo.txt:3"]["reason"]
    assert by_text["big.txt:5"]["verdict"] == "unverifiable" and "larger than" in by_text["big.txt:5"]["reason"]
    assert by_text["npm run build"]["verdict"] == "unverifiable" and "JSON" in by_text["npm run build"]["reason"]
    assert by_text["left-pad@1.3.0"]["verdict"] == "unverifiable"
    assert not any(a["note"] == "binary.md" for a in json.loads(done.stdout)["anchors"])


def test_a_credential_in_an_anchor_is_masked(case: tuple[Path, Path, str]) -> None:
    repo, store, _ = case
    token = "ghp_" + "a1B2c3D4e5" * 4
    fx.note(store, "leak", "The key sat in `config/%s.json`." % token)
    done = engramory("verify", str(store), "--repo", str(repo), "--json")
    assert token not in done.stdout and token not in done.stderr
    assert token not in (store / ".engramory" / "verify-cache.json").read_text(encoding="utf-8")
    assert "masked" in done.stdout


def test_help_names_the_output_and_the_exit_codes() -> None:
    done = engramory("verify", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    for words in ("--repo DIR", "--json", "--mark NOTE", "schemas/verify.schema.json", "64 usage", "66 ROOT"):
        assert words in text


def test_the_exit_codes_the_skill_states_are_the_commands(case: tuple[Path, Path, str], tmp_path: Path) -> None:
    import re

    text = " ".join((ROOT / "SKILL.md").read_text(encoding="utf-8").split())
    m = re.search(r"Exit codes of verify: ([^.]+)\.", text)
    assert m is not None
    stated = {int(part.split(" ", 1)[0]): part.split(" ", 1)[1] for part in m.group(1).split(", ")}
    assert stated == {0: "nothing stale", 1: "stale or moved", 64: "usage error", 66: "cannot read"}
    repo, store, _ = case
    assert engramory("verify", str(store), "--repo", str(repo)).returncode == 1
    fx.note(store, "deploy", "The deploy script is `ops/deploy.py`.")
    assert engramory("verify", str(store), "--repo", str(repo)).returncode == 0
    assert engramory("verify", str(store), "--bogus").returncode == 64
    assert engramory("verify", str(tmp_path / "gone")).returncode == 66

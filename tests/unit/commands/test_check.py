from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engramory.commands import check as check_cmd
from tests.conftest import CHECK, index_text


def run_script(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-I", "-S", str(CHECK), *args], capture_output=True, text=True, env=full, timeout=60)


@pytest.mark.parametrize(("lines", "status", "code"), [(10, "OK", 0), (151, "WARN", 1), (200, "WARN", 1), (201, "OVER", 2)])
def test_statuses(tmp_path: Path, capsys: pytest.CaptureFixture[str], lines: int, status: str, code: int) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text(index_text(lines))
    assert check_cmd.main([str(index)]) == code
    out = capsys.readouterr().out
    assert out.startswith(status + ":")
    assert "%d lines" % lines in out and "hard 200 / 25,000" in out
    proc = run_script(str(index))
    assert proc.returncode == code and proc.stdout.startswith(status + ":")


def test_over_names_first_entry_outside(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text(index_text(205))
    assert check_cmd.main([str(index)]) == 2
    assert 'first entry outside: line 201 "- [note 200]' in capsys.readouterr().out


def test_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_bytes(b"x" * 25_001)
    assert check_cmd.main(["--json", str(index)]) == 2
    obj = json.loads(capsys.readouterr().out)
    assert obj["status"] == "OVER" and obj["exit"] == 2
    assert obj["files"][0]["bytes"] == 25_001 and obj["files"][0]["lines"] == 1
    assert obj["files"][0]["caps"] == {"warn_lines": 150, "warn_bytes": 20000, "hard_lines": 200, "hard_bytes": 25000}


def test_usage_and_unreadable(tmp_path: Path) -> None:
    assert run_script("--bogus").returncode == 64  # with no INDEX it checks the auto-memory index (below)
    assert run_script("--bogus", "x").returncode == 64
    proc = run_script(str(tmp_path / "missing.md"))
    assert proc.returncode == 66 and "cannot read" in proc.stderr and "Traceback" not in proc.stderr
    assert run_script(str(tmp_path)).returncode == 66  # a directory
    os.mkfifo(tmp_path / "fifo")
    assert run_script(str(tmp_path / "fifo")).returncode == 66  # not opened, so no hang


def test_huge_file_is_answered_from_its_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = tmp_path / "MEMORY.md"
    with open(index, "wb") as f:
        f.truncate(3 << 30)  # 3 GiB, sparse: reading it would take seconds and 3 GiB of memory
    assert check_cmd.main([str(index)]) == 2
    out = capsys.readouterr().out
    assert out.startswith("OVER:") and "lines not counted" in out and "3,221,225,472 bytes" in out


def test_store_config_and_env_give_the_same_caps_as_the_hook(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text(index_text(60))
    (tmp_path / ".engramory.json").write_text(json.dumps({"version": 1, "hardLines": 50, "warnLines": 40}))
    assert check_cmd.main([str(index)]) == 2
    proc = run_script(str(index), env={"ENGRAMORY_HARD": "500"})
    assert proc.returncode == 2 and "hard 50 /" in proc.stdout


def test_crlf_and_multibyte_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_bytes("\u8a18\r\n".encode() * 3)
    assert check_cmd.main(["--json", str(index)]) == 0
    f = json.loads(capsys.readouterr().out)["files"][0]
    assert (f["lines"], f["bytes"]) == (3, 15)


def test_module_and_console_entry(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text("- a\n")
    root = Path(__file__).resolve().parents[3]
    proc = subprocess.run([sys.executable, "-m", "engramory", "check", str(index)], capture_output=True, text=True, cwd=root)
    assert proc.returncode == 0 and proc.stdout.startswith("OK:")


def test_an_index_that_is_not_utf8_is_a_warning_with_the_byte(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_bytes(b"# Memory\n- [a](a.md) caf\xe9\n- [b](b.md)\n")  # Latin-1: the host reads U+FFFD
    assert check_cmd.main([str(index)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("WARN:") and "byte 24 (line 2) is not UTF-8" in out and "compaction" not in out
    assert check_cmd.main(["--json", str(index)]) == 1
    got = json.loads(capsys.readouterr().out)
    assert got["status"] == "WARN" and got["files"][0]["not_utf8"] == {"byte": 24, "line": 2}
    index.write_bytes(index_text(201).encode() + b"\xff\n")  # over the cap: still OVER, and says both
    assert check_cmd.main([str(index)]) == 2
    out = capsys.readouterr().out
    assert out.startswith("OVER:") and "line 202) is not UTF-8" in out
    index.write_text("- [a](a.md) caf\u00e9\n", encoding="utf-8")
    assert check_cmd.main([str(index)]) == 0 and capsys.readouterr().out.startswith("OK:")


def test_a_character_cut_where_a_large_read_stops_is_not_called_broken() -> None:
    from engramory.describe import first_bad_utf8

    cut = "\u00e9".encode()[:1]
    assert first_bad_utf8(b"ab" + cut, truncated=True) is None
    assert first_bad_utf8(b"ab" + cut) == (2, 1)
    assert first_bad_utf8(b"a\n\xffb", truncated=True) == (2, 2)


def test_a_folder_stands_for_its_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "MEMORY.md").write_text(index_text(151))
    assert check_cmd.main([str(tmp_path)]) == 1
    assert capsys.readouterr().out.startswith("WARN: %s" % (tmp_path / "MEMORY.md"))


def test_no_index_given_checks_the_projects_auto_memory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = tmp_path / "proj"
    project.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}
    proc = subprocess.run([sys.executable, "-I", "-S", str(CHECK)], capture_output=True, text=True, env=env,
                          cwd=str(project), timeout=60)
    assert proc.returncode == 66 and "usage" not in proc.stderr, proc.stderr
    said = proc.stderr.splitlines()[0]
    assert said.startswith("engramory check: no INDEX given; checking this project's Claude Code auto-memory index: ")
    index = Path(said.rsplit(": ", 1)[1])
    index.parent.mkdir(parents=True)
    index.write_text(index_text(3))
    proc = subprocess.run([sys.executable, "-I", "-S", str(CHECK)], capture_output=True, text=True, env=env,
                          cwd=str(project), timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("OK: %s" % index), proc.stderr

"""The bundle import check of `--check` (engramory.install.smoke.import_problems): one lost or
broken module is named once, as the cause, not once for every module that imports it."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from engramory.install.smoke import import_problems, modules_of
from tests.conftest import ROOT


def _bundle(tmp_path: Path) -> tuple[Path, list[str]]:
    dest = tmp_path / "bundle"
    shutil.copytree(ROOT / "engramory", dest / "engramory", ignore=shutil.ignore_patterns("__pycache__"))
    files = sorted(str(p.relative_to(dest)) for p in (dest / "engramory").rglob("*.py"))
    return dest, files


def test_a_whole_bundle_imports(tmp_path: Path) -> None:
    dest, files = _bundle(tmp_path)
    assert import_problems(sys.executable, str(dest), modules_of(files)) == []


def test_a_missing_module_is_one_line_naming_it(tmp_path: Path) -> None:
    dest, files = _bundle(tmp_path)
    (dest / "engramory" / "guard.py").unlink()
    files.remove("engramory/guard.py")
    lines = import_problems(sys.executable, str(dest), modules_of(files))
    assert len(lines) == 1, lines
    assert "No module named 'engramory.guard'" in lines[0] and "modules fail to import" in lines[0]


def test_a_broken_module_is_named_where_it_raised(tmp_path: Path) -> None:
    dest, files = _bundle(tmp_path)
    (dest / "engramory" / "edits.py").write_text("raise ImportError('x')\n")
    lines = import_problems(sys.executable, str(dest), modules_of(files))
    assert len(lines) == 1, lines
    assert "raised in engramory.edits" in lines[0]


def test_two_causes_are_two_lines(tmp_path: Path) -> None:
    dest, files = _bundle(tmp_path)
    (dest / "engramory" / "edits.py").write_text("raise ImportError('x')\n")
    (dest / "engramory" / "commands" / "new.py").write_text("raise ValueError('y')\n")
    lines = import_problems(sys.executable, str(dest), modules_of(files))
    assert any(line.startswith("engramory.commands.new: ValueError('y')") for line in lines), lines
    assert sum("raised in engramory.edits" in line for line in lines) == 1, lines

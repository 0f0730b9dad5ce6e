"""Installs that must work away from the checkout, on the real Claude Code CLI:

- `--scope project` writes settings a team commits: the hook commands name the bundle
  through $CLAUDE_PROJECT_DIR and run `python3` from PATH, so a clone at another path is
  guarded (the original folder gone);
- a wheel built from this checkout, installed into a fresh venv with pip, then
  `engramory install` into a temp HOME: the hooks it wires run, and the real CLI denies an
  over-cap Write.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest
from harness import Text, ToolUse, run_claude

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]


def index_lines(count: int) -> str:
    return "".join(f"- [note {i}](note-{i}.md) \u2014 hook {i}\n" for i in range(count))


def clean_env(home: Path, **extra: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ENGRAMORY_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), **extra)
    return env


def refused_over_cap_write(claude_cli: Path, home: Path, project: Path) -> bool:
    index = project / "notes" / "MEMORY.md"
    index.parent.mkdir(exist_ok=True)
    index.write_text(index_lines(100), encoding="utf-8")
    result = run_claude([ToolUse("Write", {"file_path": str(index), "content": index_lines(300)}), Text("done")],
                        home=home, cwd=project, cli=claude_cli)
    (written,) = result.tool_results()
    refused = written.is_error and "engramory blocked this Write" in written.text
    assert refused == (index.read_text(encoding="utf-8") == index_lines(100)), written.text
    return refused


def test_project_scope_works_in_a_clone_at_another_path(claude_cli: Path, e2e_home: Path, tmp_path: Path) -> None:
    original = tmp_path / "team" / "repo"
    original.mkdir(parents=True)
    done = subprocess.run([sys.executable, "-m", "engramory", "install", "--scope", "project"], cwd=str(original),
                          env=clean_env(e2e_home, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    committed = (original / ".claude" / "settings.json").read_text(encoding="utf-8")
    assert str(tmp_path) not in committed and sys.executable not in committed
    assert '"${CLAUDE_PROJECT_DIR}/.claude/skills/engramory/hooks/engramory_hook.py\\" claude PreToolUse' in committed

    clone = tmp_path / "elsewhere" / "my clone"
    clone.parent.mkdir()
    shutil.copytree(original, clone, symlinks=True)
    shutil.rmtree(tmp_path / "team")  # the folder the install ran in is gone
    assert refused_over_cap_write(claude_cli, e2e_home, clone)
    check = subprocess.run([sys.executable, "-m", "engramory", "install", "--check"], cwd=str(clone),
                           env=clean_env(e2e_home, PYTHONPATH=str(ROOT)), capture_output=True, text=True, timeout=180)
    assert check.returncode == 0, check.stdout + check.stderr


def test_wheel_in_a_fresh_venv_wires_hooks_that_run(claude_cli: Path, e2e_home: Path, tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    src = tmp_path / "src"
    # Build from a copy: the build must not leave build/ or *.egg-info in the checkout.
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv*", "node_modules", "__pycache__", "build", "*.egg-info"))
    # An isolated build (pip fetches setuptools, as for any user's `pip install .`).
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = dist.glob("engramory-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-index", "--no-deps", str(wheel)],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    # every package of the tree is installed (setup.py derives them; a host left out of the
    # wheel would be a host a pip install does not have)
    (site,) = venv.glob("lib/python*/site-packages")
    packages = sorted(p.parent.relative_to(ROOT) for p in (ROOT / "engramory").rglob("__init__.py"))
    assert [p for p in packages if not (site / p / "__init__.py").is_file()] == []
    shutil.rmtree(src)  # nothing may come from the checkout
    project = tmp_path / "project"
    project.mkdir()
    done = subprocess.run([str(venv / "bin" / "engramory"), "install"], cwd=str(project), env=clean_env(e2e_home),
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    skill = e2e_home / ".claude" / "skills" / "engramory"
    for rel in ("SKILL.md", "hooks/engramory_hook.py", "hooks/engramory_index_guard.py", "hooks/engramory_post_tool.py",
                "hooks/engramory_session_start.py", "schemas/store-config.schema.json", "templates/MEMORY.md"):
        assert (skill / rel).is_file(), rel
    assert refused_over_cap_write(claude_cli, e2e_home, project)
    check = subprocess.run([str(venv / "bin" / "engramory"), "install", "--check"], cwd=str(project),
                           env=clean_env(e2e_home), capture_output=True, text=True, timeout=180)
    assert check.returncode == 0, check.stdout + check.stderr


def test_install_refuses_a_bundle_whose_hooks_cannot_run(e2e_home: Path, tmp_path: Path) -> None:
    """A bundle missing a hook script (the old wheel): install exits 1 and wires nothing."""
    src = tmp_path / "bundle"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv*", "node_modules", "__pycache__", "tests"))
    (src / "hooks" / "engramory_hook.py").unlink()
    done = subprocess.run([sys.executable, "-m", "engramory", "install"], cwd=str(tmp_path),
                          env=clean_env(e2e_home, PYTHONPATH=str(src)), capture_output=True, text=True, timeout=180)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "hooks/engramory_hook.py is missing" in done.stderr
    assert not (e2e_home / ".claude" / "settings.json").exists()

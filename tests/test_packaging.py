"""The wheel carries every package of the runtime. setup.py derives the packages from the tree
(there is no hand-kept list to forget a host in: engramory.hosts.kilo was once missing from
pyproject's list, so a pip install had no Kilo host); this test builds a wheel from the
checkout and holds it to the tree: every package folder, every module and py.typed under
engramory/, and the bundle's hook scripts; the build script itself stays out."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COPY = ("setup.py", "pyproject.toml", "LICENSE", "README.md", "PORTING.md", "SKILL.md", "rules-snippet.md",
        "engramory", "hooks", "tools", "schemas", "templates", "hermes")


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    src.mkdir()
    # Build from a copy: the build must not leave build/ or *.egg-info in the checkout.
    for name in COPY:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
        else:
            shutil.copy2(path, src / name)
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(base / "dist"), str(src)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = (base / "dist").glob("engramory-*.whl")
    with zipfile.ZipFile(wheel) as z:
        return set(z.namelist())


def tree_files() -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "engramory").rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and (p.suffix == ".py" or p.name == "py.typed"))


def test_every_package_folder_is_in_the_wheel(wheel_names: set[str]) -> None:
    packages = sorted(p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "engramory").rglob("__init__.py"))
    assert "engramory/hosts/kilo" in packages
    assert [p for p in packages if p + "/__init__.py" not in wheel_names] == []


def test_every_module_of_the_package_is_in_the_wheel(wheel_names: set[str]) -> None:
    assert [f for f in tree_files() if f not in wheel_names] == []


def test_the_bundle_is_in_the_wheel_and_the_build_script_is_not(wheel_names: set[str]) -> None:
    for hook in sorted((ROOT / "hooks").glob("*.py")):
        assert "engramory/_bundle/hooks/" + hook.name in wheel_names
    assert "engramory/_bundle/SKILL.md" in wheel_names
    assert not [n for n in wheel_names if n.endswith("/setup.py")]

"""The wheel carries every package of the runtime: pyproject's explicit `packages` list is
held to the folders of engramory/ that are packages (a host folder added without its line
would install without that host: engramory.hosts.kilo was missing from it, so a pip install
had no Kilo host)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def declared() -> list[str]:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        pytest.skip("tomllib is Python 3.11+")
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(data["tool"]["setuptools"]["packages"])


def test_every_package_folder_is_declared() -> None:
    found = sorted(".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "engramory").rglob("__init__.py"))
    runtime = sorted(p for p in declared() if not p.startswith("engramory._bundle"))
    assert runtime == found

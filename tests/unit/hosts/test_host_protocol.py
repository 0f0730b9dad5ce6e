"""Every registry entry offers what `engramory.hosts.protocol.Host` requires: mypy --strict
checks it statically through engramory/hosts/conformance.py, and this test checks it at run
time (so a host folder missing a member fails here even where mypy is not run) and holds
conformance.py to the registry (a host added to REGISTRY without its line there would escape
mypy)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from types import ModuleType

import pytest

from engramory import hosts
from engramory.hosts import protocol

CONFORMANCE = Path(hosts.__file__).with_name("conformance.py")


def required() -> dict[str, str]:
    """Member -> "attr" or "call", read from the Protocol itself."""
    members = {name: "attr" for name in protocol.Host.__annotations__}
    for name, value in vars(protocol.Host).items():
        if not name.startswith("_") and inspect.isfunction(value):
            members[name] = "call"
    return members


def missing(module: ModuleType) -> list[str]:
    out = []
    for name, kind in required().items():
        if not hasattr(module, name):
            out.append(name)
        elif kind == "call" and not callable(getattr(module, name)):
            out.append(name + " (not callable)")
        elif kind == "attr" and not isinstance(getattr(module, name), str):
            out.append(name + " (not a str)")
    return out


def test_the_protocol_names_what_the_registry_uses() -> None:
    assert set(required()) == {"NAME", "TITLE", "VERIFIED", "INSTALLER", "window", "index_paths", "respond"}


@pytest.mark.parametrize("name", hosts.names())
def test_every_host_offers_every_required_member(name: str) -> None:
    module = hosts.load(name)
    assert missing(module) == []
    assert module.NAME == name
    if not module.VERIFIED:
        assert getattr(module, "UNVERIFIED_WHY", ""), "an unverified host says why"


def test_a_host_folder_lacking_a_member_is_caught() -> None:
    fake = ModuleType("engramory.hosts.fake")
    for name in required():
        setattr(fake, name, "x" if required()[name] == "attr" else (lambda *a: None))
    assert missing(fake) == []
    del fake.TITLE
    fake.respond = "not a function"  # type: ignore[attr-defined]
    assert missing(fake) == ["TITLE", "respond (not callable)"]


def test_conformance_checks_every_registry_entry() -> None:
    tree = ast.parse(CONFORMANCE.read_text(encoding="utf-8"))
    checked = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and ast.unparse(node.annotation) == "Host":
            assert node.value is not None
            checked[ast.unparse(node.value)] = ast.unparse(node.target)
    assert sorted(checked) == sorted(hosts.REGISTRY.values())


def test_no_hook_imports_the_protocol() -> None:
    golden = (Path(__file__).resolve().parents[2] / "fixtures" / "hook_modules.json").read_text(encoding="utf-8")
    assert "engramory.hosts.protocol" not in golden
    assert "engramory.hosts.conformance" not in golden


def test_adding_a_host_is_written_down_in_six_touch_points() -> None:
    doc = hosts.__doc__ or ""
    steps = doc.split("Adding a host", 1)[1].split("This file must stay cheap", 1)[0]
    numbered = [line.split(".", 1)[0] for line in steps.splitlines() if line[:1].isdigit() and ". " in line[:4]]
    assert numbered == ["1", "2", "3", "4", "5", "6"]


def test_pyproject_names_no_host() -> None:
    """The packaging line a host once needed (a 7th touch point) is gone: setup.py derives it."""
    text = (Path(__file__).resolve().parents[3] / "pyproject.toml").read_text(encoding="utf-8")
    assert [n for n in hosts.names() if "engramory.hosts." + n.replace("-", "_") in text] == []


def test_a_host_added_to_the_registry_is_scrubbed_by_the_host_suites() -> None:
    import common

    assert {"QWEN_", "COPILOT_", "OPENCODE_", "CLINE_", "OPENCLAW_"} <= set(common.SCRUB)
    registry = dict(hosts.REGISTRY, newhost="engramory.hosts.newhost")
    assert "NEWHOST_" in common.scrub_prefixes(list(registry))

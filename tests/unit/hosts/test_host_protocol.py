"""Every registry entry offers what `engramory.hosts.protocol.Host` requires: mypy --strict
checks it statically through the block each host module ends with (`if TYPE_CHECKING:`, a
self-import, `_host: Host = _self`), and this test checks it at run time (so a host folder
missing a member fails here even where mypy is not run) and that every registry module has that
block (a host without it would escape mypy)."""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path
from types import ModuleType

import pytest

from engramory import hosts
from engramory.hosts import protocol


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


def checks_itself(source: str, module: str) -> bool:
    """Whether `source` (the module `module`) holds, at top level, the block through which mypy
    checks it against Host: `if TYPE_CHECKING:` importing the module itself and Host from
    engramory.hosts.protocol, and assigning the one to a variable annotated with the other."""
    package, _, leaf = module.rpartition(".")
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
            continue
        selves, protocols = set(), set()
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.level == 0:
                for alias in stmt.names:
                    if stmt.module == package and alias.name == leaf:
                        selves.add(alias.asname or alias.name)
                    elif stmt.module == "engramory.hosts.protocol" and alias.name == "Host":
                        protocols.add(alias.asname or alias.name)
        for stmt in node.body:
            if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.annotation, ast.Name)
                    and stmt.annotation.id in protocols and isinstance(stmt.value, ast.Name)
                    and stmt.value.id in selves):
                return True
    return False


@pytest.mark.parametrize("name", hosts.names())
def test_every_registry_module_is_checked_against_the_protocol_by_mypy(name: str) -> None:
    module = hosts.REGISTRY[name]
    path = Path(hosts.load(name).__file__ or "")
    assert checks_itself(path.read_text(encoding="utf-8"), module), (
        "%s lacks the block that has mypy check it against protocol.Host (see CONTRIBUTING.md, "
        "'Adding a host')" % path)


def test_the_self_check_block_is_recognised_only_whole() -> None:
    good = ("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from engramory.hosts import kilo as _self\n"
            "    from engramory.hosts.protocol import Host\n\n    _host: Host = _self\n")
    assert checks_itself(good, "engramory.hosts.kilo")
    assert not checks_itself(good, "engramory.hosts.zed")  # another host's module checked instead
    assert not checks_itself(good.replace("_host: Host = _self", "_host = _self"), "engramory.hosts.kilo")
    assert not checks_itself(good.replace("if TYPE_CHECKING:", "if False:"), "engramory.hosts.kilo")
    assert not checks_itself(good.replace("engramory.hosts.protocol", "typing"), "engramory.hosts.kilo")


def test_the_self_check_costs_nothing_at_run_time() -> None:
    """The block is never run: loading a host module loads neither the Protocol nor typing."""
    import subprocess

    code = ("import sys; from engramory import hosts; [hosts.load(n) for n in hosts.names()]; "
            "print('engramory.hosts.protocol' in sys.modules)")
    root = str(Path(hosts.__file__).resolve().parents[2])
    out = subprocess.run([sys.executable, "-I", "-S", "-c", "import sys; sys.path.insert(0, %r); %s" % (root, code)],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_no_hook_imports_the_protocol() -> None:
    golden = (Path(__file__).resolve().parents[2] / "fixtures" / "hook_modules.json").read_text(encoding="utf-8")
    assert "engramory.hosts.protocol" not in golden


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

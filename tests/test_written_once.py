"""What issue 20 found written more than once stays written once: the count formatter lives in
engramory.size, and a host's payload limit is the hook runtime's default unless it differs."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "engramory"


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(PACKAGE.rglob("*.py"))]


def test_one_count_formatter() -> None:
    copies = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and isinstance(node.body[-1], ast.Return):
                value = node.body[-1].value
                if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                        and isinstance(value.func.value, ast.Constant) and value.func.value.value == "{:,}"):
                    copies.append("%s:%d %s" % (path.relative_to(PACKAGE), node.lineno, node.name))
    assert copies == ["size.py:%d n" % _line("size.py", "def n(")], copies


def test_no_host_repeats_the_runtimes_payload_limit() -> None:
    from engramory import hosts

    repeats = []
    for path, tree in _modules():
        if "hosts" not in path.relative_to(PACKAGE).parts or path == PACKAGE / "hosts" / "__init__.py":
            continue
        for node in tree.body:
            if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "STDIN_LIMIT"
                                                     for t in node.targets)):
                if eval(compile(ast.Expression(node.value), str(path), "eval")) == hosts.STDIN_LIMIT:
                    repeats.append(str(path.relative_to(PACKAGE)))
    assert repeats == []


def _line(rel: str, start: str) -> int:
    lines = (PACKAGE / rel).read_text(encoding="utf-8").split("\n")
    return next(i for i, line in enumerate(lines, 1) if line.startswith(start))

"""The runtime (engramory/, hooks/, tools/, hermes/) runs on Python 3.9: checked on the source,
whatever interpreter runs the suite. Python 3.9 rejects at import what a newer one accepts:
3.10+ syntax (`match`), and `X | Y` or `isinstance(x, A | B)`
where it is evaluated (annotations of a module without `from __future__ import annotations`,
module- and class-level annotations, isinstance/issubclass), and `zip(strict=...)`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

RUNTIME = sorted(
    p for folder in ("engramory", "hooks", "tools", "hermes") for p in (ROOT / folder).rglob("*.py")
    if "__pycache__" not in p.parts
)


def _future_annotations(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.ImportFrom) and node.module == "__future__" and any(a.name == "annotations" for a in node.names)
        for node in tree.body
    )


def _has_union(node: ast.AST | None) -> bool:
    return node is not None and any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr) for n in ast.walk(node))


def problems(source: str) -> list[str]:
    """What Python 3.9 would refuse in `source`, one line each."""
    try:
        tree = ast.parse(source, feature_version=(3, 9))
    except SyntaxError as exc:
        return ["line %s: syntax Python 3.9 does not have: %s" % (exc.lineno, exc.msg)]
    lazy = _future_annotations(tree)
    out = []
    for node in ast.walk(tree):
        evaluated: list[ast.AST | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not lazy:
            a = node.args
            evaluated += [arg.annotation for arg in a.posonlyargs + a.args + a.kwonlyargs]
            evaluated += [a.vararg.annotation if a.vararg else None, a.kwarg.annotation if a.kwarg else None, node.returns]
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else ""
            if name in ("isinstance", "issubclass") and len(node.args) == 2:
                evaluated.append(node.args[1])
            if name == "zip" and any(k.arg == "strict" for k in node.keywords):
                out.append("line %d: zip(strict=...) is Python 3.10" % node.lineno)
        for ann in evaluated:
            if _has_union(ann):
                out.append("line %d: `X | Y` evaluated at run time is Python 3.10" % getattr(ann, "lineno", node.lineno))
    for scope_node in [tree] + [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]:
        for stmt in scope_node.body:  # module- and class-level annotations are evaluated
            if isinstance(stmt, ast.AnnAssign) and not lazy and _has_union(stmt.annotation):
                out.append("line %d: `X | Y` evaluated at run time is Python 3.10" % stmt.lineno)
    return out


def test_the_runtime_is_found() -> None:
    assert len(RUNTIME) > 60 and any(p.name == "guard.py" for p in RUNTIME)


@pytest.mark.parametrize("path", RUNTIME, ids=lambda p: str(p.relative_to(ROOT)))
def test_runtime_file_runs_on_python_39(path: Path) -> None:
    assert problems(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "source",
    [
        "match x:\n    case 1:\n        pass\n",
        "def f(x: int | None) -> None:\n    pass\n",
        "x: int | None = None\n",
        "class C:\n    y: str | None = None\n",
        "isinstance(1, int | str)\n",
        "list(zip([1], [2], strict=True))\n",
    ],
)
def test_the_check_catches_what_39_refuses(source: str) -> None:
    assert problems(source)


def test_the_check_lets_what_39_accepts() -> None:
    lazy = "from __future__ import annotations\n\ndef f(x: int | None) -> list[str] | None:\n    y: int | None = None\n    return None\n"
    quoted = "def f(x: 'int | None') -> 'list[str]':\n    y: int | None = None\n    return []\n"
    assert problems(lazy) == [] and problems(quoted) == []

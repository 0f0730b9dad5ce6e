"""The package's layers, read from its source with `ast` (issue 20, "One house"): who may import
whom, that the import graph of module-level imports has no cycle, that every lazy import of our
own modules says why it is lazy, and the size rules (module and function length, ruff's C901
complexity) as ratchets.

A ratchet is a number this file holds the code to: the count may fall below it, never rise above
it. Each is today's figure on main with the issue's target beside it; whoever brings a count
down lowers its number in the same commit, so it cannot creep back up.

That the wheel holds every package folder (setup.py derives them from the tree) is tests/test_packaging.py.

    python3 -m tests.test_architecture     # prints every figure the ratchets hold
"""

from __future__ import annotations

import ast
import io
import json
import shutil
import subprocess
import sys
import tokenize
from functools import cache
from pathlib import Path
from typing import Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

import pytest

# -- ratchets: today's figures on main (issue 20's target in the comment) ----------------------

# functions ruff's C901 finds more complex than 10 (`ruff check --select C901 engramory`); target 35
MAX_C901 = 0
# modules of engramory/ over MODULE_LINES lines; target 0
MAX_LONG_MODULES = 0
# functions (a nested one counted on its own too) over FUNCTION_LINES lines; target 0
MAX_LONG_FUNCTIONS = 0
MODULE_LINES = 600
FUNCTION_LINES = 80

# Function-level imports of our own modules with no comment on their line or the line above,
# per file (path under engramory/); target: none. A file not named here may have none. Lower a
# count as its imports get their reason or move to the top of the module.
UNCOMMENTED_LAZY_IMPORTS: Dict[str, int] = {}  # 288 in 64 files before issue 20's pass; none now

# Function-level imports that close an import cycle (the importer is reachable from what it
# imports), by edge, with the reason the cycle stays; target: none. A new one needs a line here.
LAZY_CYCLES: Dict[Tuple[str, str], str] = {
    ("engramory.size", "engramory.layout"): "layout only when a file needs more than measure's fast path; layout imports size",
}

# A host's installer that imports another host's, with the reason; target: none (what two hosts
# share goes to engramory/install/).
# Empty: what the opencode family shares (Kilo's plugin is opencode's) is engramory.install.opencodeplugin.
HOST_INSTALLER_IMPORTS: Dict[Tuple[str, str], str] = {}

# -- the layers ---------------------------------------------------------------------------------

PACKAGE = Path(__file__).resolve().parents[1] / "engramory"
# The feature packages: the kernel (the top-level modules, which every hook imports) stands
# below all of them.
FEATURES = ("store", "doctor", "curate", "compact", "install", "commands", "sync", "verify", "mcp")
# Kernel modules that are entry points over the whole package rather than part of the kernel: the
# command-line dispatcher stands above the commands it dispatches to.
KERNEL_ENTRY_POINTS = ("engramory.cli", "engramory.__main__")


class Import(NamedTuple):
    importer: str  # dotted module name
    target: str  # dotted module name (a module or a package) in engramory
    line: int
    lazy: bool  # inside a function (or a lambda): runs only when called


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> Dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "_bundle" not in p.parts}


@cache
def _tree(name: str) -> ast.Module:
    return ast.parse(modules()[name].read_text(encoding="utf-8"), str(modules()[name]))


def _resolve(importer: str, node: ast.ImportFrom) -> Optional[str]:
    """The absolute module an ImportFrom names (before its imported names)."""
    if not node.level:
        return node.module
    is_package = modules()[importer].name == "__init__.py"
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(importer: str, node: ast.stmt) -> Iterator[str]:
    known = modules()
    if isinstance(node, ast.Import):
        for alias in node.names:
            name = alias.name
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name:
                yield name
    elif isinstance(node, ast.ImportFrom):
        base = _resolve(importer, node)
        if not base or not (base == "engramory" or base.startswith("engramory.")):
            return
        for alias in node.names:
            sub = "%s.%s" % (base, alias.name)
            yield sub if sub in known else base


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(importer: str, body: List[ast.stmt], lazy: bool) -> Iterator[Import]:
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for target in _targets(importer, node):
                if target != importer:
                    yield Import(importer, target, node.lineno, lazy)
            continue
        if isinstance(node, ast.If) and _is_type_checking(node):
            continue  # read by type checkers only, never run
        inner = lazy or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                yield from _walk(importer, [child], inner)
            elif isinstance(child, ast.Lambda):
                yield from _walk(importer, [ast.Expr(child.body)], True)
            elif isinstance(child, ast.excepthandler):
                yield from _walk(importer, child.body, inner)
            elif hasattr(ast, "match_case") and isinstance(child, ast.match_case):
                yield from _walk(importer, child.body, inner)


@cache
def imports() -> Tuple[Import, ...]:
    return tuple(i for name in modules() for i in _walk(name, _tree(name).body, False))


def _graph(lazy_too: bool) -> Dict[str, Set[str]]:
    graph: Dict[str, Set[str]] = {name: set() for name in modules()}
    for i in imports():
        if lazy_too or not i.lazy:
            graph[i.importer].add(i.target)
    return graph


def _reaches(graph: Dict[str, Set[str]], start: str, goal: str) -> bool:
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def _cycle(graph: Dict[str, Set[str]]) -> Optional[List[str]]:
    """One cycle of the graph as a path (its first module repeated at its end), or None."""
    state: Dict[str, int] = {}
    stack: List[str] = []

    def visit(node: str) -> Optional[List[str]]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def _feature(name: str) -> Optional[str]:
    parts = name.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in FEATURES or (len(parts) == 2 and parts[1] in FEATURES) else None


def _host(name: str) -> Optional[str]:
    """The host folder a module belongs to: engramory.hosts.<host>[.x] -> host, else None."""
    parts = name.split(".")
    if len(parts) >= 3 and parts[1] == "hosts" and modules()[".".join(parts[:3])].name == "__init__.py":
        return parts[2]
    return None


def _is_kernel(name: str) -> bool:
    return name.count(".") == 1 and modules()[name].name != "__init__.py" and name not in KERNEL_ENTRY_POINTS


# -- the figures --------------------------------------------------------------------------------


def _comment_lines(path: Path) -> Set[int]:
    lines: Set[int] = set()
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            lines.add(tok.start[0])
    return lines


def uncommented_lazy_imports() -> Dict[str, int]:
    counts: Dict[str, int] = {}
    comments = {name: _comment_lines(path) for name, path in modules().items()}
    seen: Set[Tuple[str, int]] = set()
    for i in imports():
        if not i.lazy or (i.importer, i.line) in seen:
            continue
        seen.add((i.importer, i.line))
        if not {i.line, i.line - 1} & comments[i.importer]:
            rel = modules()[i.importer].relative_to(PACKAGE).as_posix()
            counts[rel] = counts.get(rel, 0) + 1
    return counts


def lazy_cycles() -> Dict[Tuple[str, str], List[int]]:
    """Each function-level import whose target leads back to the importer, with its lines."""
    graph = _graph(lazy_too=True)
    found: Dict[Tuple[str, str], List[int]] = {}
    for i in imports():
        if i.lazy and _reaches(graph, i.target, i.importer):
            found.setdefault((i.importer, i.target), []).append(i.line)
    return {edge: sorted(set(lines)) for edge, lines in found.items()}


def _functions(tree: ast.AST) -> Iterator[ast.AST]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def long_functions() -> List[Tuple[str, str, int]]:
    out = []
    for name in modules():
        for fn in _functions(_tree(name)):
            length = getattr(fn, "end_lineno", fn.lineno) - fn.lineno + 1  # type: ignore[attr-defined]
            if length > FUNCTION_LINES:
                out.append((name, fn.name, length))  # type: ignore[attr-defined]
    return out


def long_modules() -> List[Tuple[str, int]]:
    out = []
    for name, path in modules().items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MODULE_LINES:
            out.append((name, lines))
    return out


def c901() -> List[str]:
    """The functions ruff's C901 reports, as 'path:line name (complexity)'."""
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists() and not shutil.which(ruff):
        pytest.fail("ruff is not installed: `pip install -e '.[lint]'` (the complexity ratchet needs it)")
    proc = subprocess.run(
        [ruff, "check", "--select", "C901", "--output-format", "json", "--no-cache", "--exit-zero", str(PACKAGE)],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return ["%s:%d %s" % (Path(d["filename"]).relative_to(PACKAGE).as_posix(), d["location"]["row"], d["message"])
            for d in json.loads(proc.stdout)]


# -- the rules ----------------------------------------------------------------------------------


def test_the_kernel_imports_no_feature_package_at_module_level() -> None:
    bad = ["%s:%d imports %s" % (i.importer, i.line, i.target) for i in imports()
           if not i.lazy and _is_kernel(i.importer) and _feature(i.target)]
    assert not bad, "the kernel (engramory/*.py) stands below the feature packages:\n" + "\n".join(bad)


def test_the_store_never_imports_the_doctor() -> None:
    bad = ["%s:%d imports %s" % (i.importer, i.line, i.target) for i in imports()
           if _feature(i.importer) == "store" and _feature(i.target) == "doctor"]
    assert not bad, "\n".join(bad)


def test_no_host_imports_another_hosts_installer() -> None:
    bad = []
    for i in imports():
        mine, theirs = _host(i.importer), _host(i.target)
        if mine and theirs and mine != theirs and i.target.endswith(".install") and \
                (i.importer, i.target) not in HOST_INSTALLER_IMPORTS:
            bad.append("%s:%d imports %s" % (i.importer, i.line, i.target))
    assert not bad, "what hosts share belongs in engramory/install/ or hosts/*.py:\n" + "\n".join(bad)


def test_module_level_imports_have_no_cycle() -> None:
    cycle = _cycle(_graph(lazy_too=False))
    assert cycle is None, "an import cycle at import time: " + " -> ".join(cycle or [])


def test_every_lazy_import_cycle_is_allow_listed_with_its_reason() -> None:
    found = lazy_cycles()
    new = ["%s -> %s (line %s)" % (a, b, ", ".join(map(str, lines))) for (a, b), lines in sorted(found.items())
           if (a, b) not in LAZY_CYCLES]
    assert not new, "function-level imports that close a cycle; break it, or name it in LAZY_CYCLES " \
                    "with its reason:\n" + "\n".join(new)
    assert all(reason.strip() for reason in LAZY_CYCLES.values())


def test_every_lazy_import_of_our_own_modules_says_why() -> None:
    counts = uncommented_lazy_imports()
    over = ["%s: %d (allowed %d)" % (f, n, UNCOMMENTED_LAZY_IMPORTS.get(f, 0)) for f, n in sorted(counts.items())
            if n > UNCOMMENTED_LAZY_IMPORTS.get(f, 0)]
    assert not over, "function-level imports of engramory modules need a comment on their line or the " \
                     "line above naming why they are lazy (or move them to the top):\n" + "\n".join(over)


def test_no_module_over_the_line_limit_past_the_ratchet() -> None:
    found = long_modules()
    assert len(found) <= MAX_LONG_MODULES, "modules over %d lines (ratchet %d):\n%s" % (
        MODULE_LINES, MAX_LONG_MODULES, "\n".join("%s %d" % m for m in sorted(found)))


def test_no_function_over_the_line_limit_past_the_ratchet() -> None:
    found = long_functions()
    assert len(found) <= MAX_LONG_FUNCTIONS, "functions over %d lines (ratchet %d):\n%s" % (
        FUNCTION_LINES, MAX_LONG_FUNCTIONS, "\n".join("%s.%s %d" % f for f in sorted(found)))


def test_complexity_past_the_ratchet() -> None:
    found = c901()
    assert len(found) <= MAX_C901, "ruff C901 finds %d functions over complexity 10 (ratchet %d):\n%s" % (
        len(found), MAX_C901, "\n".join(found))


# -- the rules see what they should: each on a made-up graph or source -------------------------


def test_the_cycle_finder_finds_a_cycle_and_only_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_import_walk_tells_module_level_from_lazy() -> None:
    body = ast.parse(
        "import engramory.guard\n"
        "if TYPE_CHECKING:\n    from engramory import size\n"
        "try:\n    from engramory import layout\nexcept ImportError:\n    pass\n"
        "def f():\n    from engramory import config\n"
        "class C:\n    from engramory import scope\n    def m(self):\n        from . import edits\n"
    ).body
    got = {(i.target, i.lazy) for i in _walk("engramory.patches", body, False)}
    assert got == {("engramory.guard", False), ("engramory.layout", False), ("engramory.config", True),
                   ("engramory.scope", False), ("engramory.edits", True)}


def main() -> int:
    print("C901 functions: %d (ratchet %d)" % (len(c901()), MAX_C901))
    print("modules over %d lines: %d (ratchet %d)" % (MODULE_LINES, len(long_modules()), MAX_LONG_MODULES))
    for m in sorted(long_modules()):
        print("    %s %d" % m)
    print("functions over %d lines: %d (ratchet %d)" % (FUNCTION_LINES, len(long_functions()), MAX_LONG_FUNCTIONS))
    for f in sorted(long_functions()):
        print("    %s.%s %d" % f)
    counts = uncommented_lazy_imports()
    print("uncommented function-level imports: %d in %d files" % (sum(counts.values()), len(counts)))
    for f, n in sorted(counts.items()):
        print("    %r: %d," % (f, n))
    print("lazy import cycles:")
    for (a, b), lines in sorted(lazy_cycles().items()):
        print("    (%r, %r): lines %s" % (a, b, lines))
    print("module-level cycle:", _cycle(_graph(lazy_too=False)))
    kernel = sorted({"%s -> %s" % (i.importer, i.target) for i in imports()
                     if not i.lazy and _is_kernel(i.importer) and _feature(i.target)})
    print("kernel -> feature at module level:", kernel)
    return 0


if __name__ == "__main__":
    sys.exit(main())


def test_test_file_names_are_unique() -> None:
    """pytest imports test modules by basename in folders without __init__.py: two
    test_protocol.py (unit/hosts and unit/mcp) made one of them a collection error."""
    tests = PACKAGE.parent / "tests"
    names: Dict[str, List[str]] = {}
    for path in tests.rglob("test_*.py"):
        if "node_modules" not in path.parts:
            names.setdefault(path.name, []).append(str(path.relative_to(tests)))
    assert {n: p for n, p in names.items() if len(p) > 1} == {}

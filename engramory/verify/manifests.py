"""What the repository's own files say it has: locked packages (package-lock.json, uv.lock,
poetry.lock, Cargo.lock, go.sum, requirements*.txt), npm scripts, make targets, just recipes.

Pure parsers over bytes, each bounded by its input and never raising on malformed input (a
file that cannot be read as its format gives nothing and says why). Names are compared the
way each ecosystem compares them: Python's by PEP 503 normalisation (case, runs of `-_.`),
Cargo's case-insensitively with `-` and `_` alike, npm's and Go's exactly.
"""

from __future__ import annotations

import json
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

NPM, PYTHON, CARGO, GO = "npm", "python", "cargo", "go"
LOCK_NAMES = {
    "package-lock.json": NPM, "npm-shrinkwrap.json": NPM, "uv.lock": PYTHON, "poetry.lock": PYTHON,
    "Cargo.lock": CARGO, "go.sum": GO,
}
REQUIREMENTS_RE = re.compile(r"(?:^|/)(?:requirements[\w.-]*\.txt|requirements/[\w.-]+\.txt)\Z")
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
JUSTFILES = ("justfile", "Justfile", ".justfile")


def lock_ecosystem(rel: str) -> str | None:
    """The ecosystem of a lockfile by its path, or None when it is not one."""
    base = rel.rsplit("/", 1)[-1]
    if base in LOCK_NAMES:
        return LOCK_NAMES[base]
    return PYTHON if REQUIREMENTS_RE.search(rel) else None


def normalise(ecosystem: str, name: str) -> str:
    if ecosystem == PYTHON:
        return re.sub(r"[-_.]+", "-", name).lower()
    if ecosystem == CARGO:
        return name.lower().replace("_", "-")
    return name


class Lock:
    """One lockfile: {normalised name: (name as locked, versions)}; `problem` when unreadable."""

    __slots__ = ("path", "ecosystem", "packages", "problem")

    def __init__(self, path: str, ecosystem: str) -> None:
        self.path = path
        self.ecosystem = ecosystem
        self.packages: dict[str, tuple[str, set[str]]] = {}
        self.problem = ""

    def add(self, name: str, version: str | None) -> None:
        key = normalise(self.ecosystem, name)
        entry = self.packages.get(key)
        if entry is None:
            entry = self.packages[key] = (name, set())
        if version:
            entry[1].add(version)

    def find(self, name: str, any_case: bool = False) -> tuple[str, set[str]] | None:
        """The locked entry of `name`; `any_case` for a name written in prose ("uses React
        18"), where a capital says nothing about the package's own spelling."""
        hit = self.packages.get(normalise(self.ecosystem, name))
        if hit is None and any_case:
            low = normalise(self.ecosystem, name).lower()
            hit = next((v for k, v in self.packages.items() if k.lower() == low), None)
        return hit


def read_lock(path: str, text: str) -> Lock:
    """The packages a lockfile at `path` (its name tells the format) records."""
    eco = lock_ecosystem(path) or PYTHON
    lock = Lock(path, eco)
    text = text[1:] if text.startswith("\ufeff") else text
    base = path.rsplit("/", 1)[-1]
    if eco == NPM:
        _npm_lock(lock, text)
    elif eco == GO:
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 2:
                lock.add(parts[0], parts[1].split("/", 1)[0])
    elif base.endswith(".txt"):
        _requirements(lock, text)
    else:
        _toml_packages(lock, text)
    return lock


def _npm_lock(lock: Lock, text: str) -> None:
    try:
        data = json.loads(text)
    except ValueError as exc:
        lock.problem = "not valid JSON (%s)" % str(exc)[:80]
        return
    if not isinstance(data, dict):
        lock.problem = "not a JSON object"
        return
    packages = data.get("packages")
    if isinstance(packages, dict):
        _npm_packages(lock, packages)
    else:
        _npm_dependencies(lock, data.get("dependencies"))


def _npm_packages(lock: Lock, packages: dict[str, Any]) -> None:
    """A lockfile v2/v3 "packages" map: keyed by folder (node_modules/NAME), the root by ""."""
    for key, info in packages.items():
        if not key or not isinstance(info, dict):
            continue
        name = info.get("name") if "node_modules/" not in key else key.rsplit("node_modules/", 1)[1]
        version = info.get("version")
        if isinstance(name, str) and name:
            lock.add(name, version if isinstance(version, str) else None)


def _npm_dependencies(lock: Lock, top: Any) -> None:
    """A lockfile v1 "dependencies" tree, walked without recursion (at most a million entries)."""
    stack = [top]
    seen = 0
    while stack and seen < 1_000_000:
        deps = stack.pop()
        if not isinstance(deps, dict):
            continue
        for name, info in deps.items():
            seen += 1
            if isinstance(info, dict):
                version = info.get("version")
                lock.add(name, version if isinstance(version, str) else None)
                stack.append(info.get("dependencies"))


_TOML_KEY = re.compile(r'(name|version)\s*=\s*"([^"\n]*)"')


def _toml_packages(lock: Lock, text: str) -> None:
    """`[[package]]` blocks of uv.lock, poetry.lock and Cargo.lock: their first `name = "..."`
    and `version = "..."` at the start of a line (sub-tables and inline tables are skipped)."""
    name = version = None
    inside = False
    for line in text.splitlines():
        if line.startswith("["):
            if inside and name:
                lock.add(name, version)
            inside = line.strip() == "[[package]]"
            name = version = None
            continue
        if not inside:
            continue
        m = _TOML_KEY.match(line)
        if m:
            if m.group(1) == "name" and name is None:
                name = m.group(2)
            elif m.group(1) == "version" and version is None:
                version = m.group(2)
    if inside and name:
        lock.add(name, version)


_REQ_RE = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(===?|~=|>=|<=|!=|>|<)?\s*([\w.*+!-]+)?")


def _requirements(lock: Lock, text: str) -> None:
    for raw in text.replace("\\\n", " ").splitlines():
        line = raw.split(" #", 1)[0].split(";", 1)[0].strip()
        if not line or line.startswith(("#", "-", "git+", "http:", "https:", "file:")):
            continue
        m = _REQ_RE.match(line)
        if m:
            op, version = m.group(2), m.group(3)
            lock.add(m.group(1), version if op in ("==", "===") else None)


def _numbers(version: str) -> list[str]:
    v = version.strip().lstrip("v=")
    v = v.split("+", 1)[0]
    return [p for p in re.split(r"[.]", v) if p]


def _num(part: str) -> tuple[int, str]:
    m = re.match(r"(\d+)(.*)", part)
    return (int(m.group(1)), m.group(2)) if m else (-1, part)


def version_matches(wanted: str, locked: str) -> bool:
    """`pkg@1.2` matches a locked 1.2, 1.2.0 or 1.2.9 (not 1.20); `^1.2` any 1.x at or past
    1.2; `~1.2` any 1.2.x."""
    op = wanted[:1] if wanted[:1] in "^~" else ""
    want = _numbers(wanted[len(op):])
    have = _numbers(locked)
    if not want or not have:
        return False
    if op == "^":
        return have[0] == want[0] and [_num(p) for p in have] >= [_num(p) for p in want]
    if op == "~":
        return have[:2] == want[:2] and [_num(p) for p in have] >= [_num(p) for p in want]
    return have[:len(want)] == want


# -- scripts, targets, recipes -------------------------------------------------------------------

def npm_scripts(text: str) -> set[str] | None:
    """The script names of a package.json, or None when it is not readable JSON."""
    try:
        obj = json.loads(text[1:] if text.startswith("\ufeff") else text)
    except ValueError:
        return None
    scripts = obj.get("scripts") if isinstance(obj, dict) else None
    return {k for k in scripts if isinstance(k, str)} if isinstance(scripts, dict) else set()


_MAKE_RULE = re.compile(r"([^\s:#=][^:=#]*?)\s*(::?)(?!=)(.*)")
_MAKE_ASSIGN = re.compile(r"[^\s:=#]+\s*(?:[:+?!]|::)?=")
_MAKE_DIRECTIVE = re.compile(r"(?:ifeq|ifneq|ifdef|ifndef|else|endif|define|endef|export|unexport|override|vpath)\b")
_INCLUDE = re.compile(r"-?include\s+(.+)|sinclude\s+(.+)")


class Targets:
    """Make targets or just recipes found in a file (and what it includes). `dynamic` when a
    target name is computed (`$(X):`) or a pattern rule could make any name: a target not
    found then proves nothing."""

    __slots__ = ("names", "patterns", "dynamic", "includes")

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.patterns: list[str] = []
        self.dynamic = False
        self.includes: list[str] = []

    def has(self, name: str) -> bool:
        if name in self.names:
            return True
        for pattern in self.patterns:
            head, _, tail = pattern.partition("%")
            if name.startswith(head) and name.endswith(tail) and len(name) >= len(head) + len(tail):
                return True
        return False


def make_targets(text: str, into: Targets | None = None) -> Targets:
    out = into or Targets()
    for line in text.replace("\\\n", " ").splitlines():
        if not line or line[0] in "\t #":
            continue
        m = _INCLUDE.match(line)
        if m:
            out.includes += (m.group(1) or m.group(2) or "").split()
            continue
        if _MAKE_DIRECTIVE.match(line) or _MAKE_ASSIGN.match(line):
            continue
        m = _MAKE_RULE.match(line)
        if not m:
            continue
        _rule_targets(out, m.group(1).split(), m.group(3))
    return out


def _rule_targets(out: Targets, targets: list[str], rest: str) -> None:
    """The targets of one rule line (`rest`: its prerequisites, and a recipe after ";")."""
    if ";" in rest:
        rest = rest.split(";", 1)[0]
    for t in targets:
        if "$" in t:
            out.dynamic = True
        elif "%" in t:
            out.patterns.append(t)
        elif t == ".PHONY":
            out.names.update(w for w in rest.split() if "$" not in w)
        else:
            out.names.add(t)


_JUST_RECIPE = re.compile(r"@?([A-Za-z_][\w-]*)(?:\s+[^:=]*?)?\s*:(?!=)")
_JUST_ALIAS = re.compile(r"alias\s+([A-Za-z_][\w-]*)\s*:=")


def just_recipes(text: str) -> Targets:
    out = Targets()
    for line in text.splitlines():
        if not line or line[0] in " \t#[":
            continue
        if line.startswith(("import ", "mod ", "import?", "mod?")):
            out.dynamic = True
            continue
        m = _JUST_ALIAS.match(line)
        if m:
            out.names.add(m.group(1))
            continue
        if line.startswith(("set ", "export ")) or re.match(r"[A-Za-z_][\w-]*\s*:=", line):
            continue
        m = _JUST_RECIPE.match(line)
        if m:
            out.names.add(m.group(1))
    return out


def defines_test(text: str, name: str) -> bool:
    """Whether a Python test file defines `name` (a function or a class), at any indent."""
    return re.search(r"(?m)^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+%s\b" % re.escape(name), text) is not None


def word_in(text: str, name: str) -> bool:
    """`name` as a whole word (what `git grep -w` matches)."""
    return re.search(r"(?<![\w$])%s(?![\w$])" % re.escape(name), text) is not None


def names_list(names: Iterable[str], limit: int = 5) -> str:
    shown = sorted(names)[:limit]
    more = len(set(names)) - len(shown)
    return ", ".join(shown) + (" and %d more" % more if more > 0 else "")

"""Verdicts for command anchors: `npm run X` against the scripts of the package.json files,
`make X` against the Makefile's targets (and what it includes), `just X` against the
justfile's recipes, `python -m M` against the modules of the work tree, `pytest path::test`
against the test definitions of that file; any other binary is on PATH, not checked.

A name that is missing where the repository has no such file at all (no package.json, no
Makefile) is stale: the command cannot work here. A module whose top package this
repository does not have is unverifiable (installed, or the standard library), unless git
shows the file deleted.
"""

from __future__ import annotations

import posixpath

from engramory.verify import manifests
from engramory.verify.paths import FRESH, MOVED, STALE, UNVERIFIABLE, PathFinder, Verdict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from engramory.verify.anchors import Anchor
    from engramory.verify.repo import Repo

INCLUDES_MAX = 10  # Makefiles read through `include`, per folder


def verdict(repo: Repo, paths: PathFinder, a: Anchor, words: Mapping[str, list[str]]) -> Verdict:
    if a.form == "npm":
        return _npm(repo, a.name)
    if a.form in ("make", "just"):
        return _targets(repo, a.form, a.name, a.where)
    if a.form == "pymod":
        return _module(repo, a.name)
    if a.form == "pytest":
        return _pytest(repo, paths, a, words)
    return Verdict(UNVERIFIABLE, "runs `%s` from PATH; not checked" % a.name)


def _npm(repo: Repo, name: str) -> Verdict:
    files = sorted((r for r in repo.named("package.json") if "node_modules/" not in r),
                   key=lambda r: (r.count("/"), r))[:100]
    if not files:
        return Verdict(STALE, "no package.json in the repository")
    unreadable = []
    for rel in files:
        text, _ = repo.file_text(rel)
        scripts = manifests.npm_scripts(text) if text is not None else None
        if scripts is None:
            unreadable.append(rel)
        elif name in scripts:
            return Verdict(FRESH, "a script of %s" % rel, place=rel)
    if unreadable:
        return Verdict(UNVERIFIABLE, "%s cannot be read as JSON" % manifests.names_list(unreadable, 2))
    root = repo.file_text(files[0])[0] or ""
    have = manifests.npm_scripts(root) or set()
    return Verdict(STALE, "no script %s in %s (%s)" % (
        name, "package.json" if len(files) == 1 else "any of %d package.json files" % len(files),
        "it has %s" % manifests.names_list(have, 5) if have and len(files) == 1 else "scripts removed?"))


def _targets(repo: Repo, tool: str, name: str, where: str) -> Verdict:
    folder = posixpath.normpath(where) if where else ""
    if folder.startswith(".."):
        return Verdict(UNVERIFIABLE, "a folder outside the repository")
    names = manifests.MAKEFILES if tool == "make" else manifests.JUSTFILES
    found = next((posixpath.join(folder, n) if folder else n for n in names
                  if repo.on_disk(posixpath.join(folder, n) if folder else n)), None)
    what = "Makefile" if tool == "make" else "justfile"
    if found is None:
        return Verdict(STALE, "no %s in %s" % (what, folder + "/" if folder else "the top folder"))
    targets = manifests.Targets()
    todo = [found]
    read = 0
    while todo and read < INCLUDES_MAX:
        rel = todo.pop(0)
        read += 1
        text, why = repo.file_text(rel)
        if text is None:
            return Verdict(UNVERIFIABLE, "%s cannot be read: %s" % (rel, why))
        if tool == "make":
            manifests.make_targets(text, targets)
            todo += [posixpath.normpath(posixpath.join(folder, inc)) for inc in targets.includes
                     if "$" not in inc and "*" not in inc and not inc.startswith("/")]
            targets.dynamic = targets.dynamic or any("$" in inc or "*" in inc for inc in targets.includes)
            targets.includes = []
        else:
            found_targets = manifests.just_recipes(text)
            targets.names |= found_targets.names
            targets.dynamic = targets.dynamic or found_targets.dynamic
    if targets.has(name):
        return Verdict(FRESH, "a %s of %s" % ("target" if tool == "make" else "recipe", found), place=found)
    if targets.dynamic:
        return Verdict(UNVERIFIABLE, "%s computes or imports some of its %s" % (found, "targets" if tool == "make" else "recipes"))
    return Verdict(STALE, "%s has no %s %s (it has %s)" % (
        found, "target" if tool == "make" else "recipe", name, manifests.names_list(targets.names, 5) or "none"))


def module_places(repo: Repo, module: str) -> list[str]:
    """Files of the work tree that are the Python module `module`: `a/b.py`, `a/b/__init__.py`,
    `a/b/__main__.py` or a folder `a/b/` of sources, at the top, under src/ or deeper."""
    path = module.replace(".", "/")
    by_base = repo.by_base()
    out = []
    base = path.rsplit("/", 1)[-1]
    for candidate, tail in ((base + ".py", path + ".py"), ("__init__.py", path + "/__init__.py"),
                            ("__main__.py", path + "/__main__.py")):
        out += [p for p in by_base.get(candidate, ()) if p == tail or p.endswith("/" + tail)]
    if not out:
        last = path.rsplit("/", 1)[-1]
        out += sorted(d + "/" for d in repo.dir_names().get(last, ()) if d == path or d.endswith("/" + path))
    return sorted(p for p in out if repo.on_disk(p.rstrip("/")))


def _module(repo: Repo, module: str) -> Verdict:
    places = module_places(repo, module)
    if places:
        return Verdict(FRESH, "the module %s" % places[0], place=places[0])
    _, deleted = repo.history()
    path = module.replace(".", "/")
    gone = next((c for p, c in sorted(deleted.items())
                 if p in (path + ".py", path + "/__init__.py", path + "/__main__.py")
                 or p.endswith(("/" + path + ".py", "/" + path + "/__main__.py"))), None)
    if gone is not None:
        return Verdict(STALE, "no module %s; deleted in %s" % (module, gone or "the index"))
    top = module.split(".", 1)[0]
    if "." in module and module_places(repo, top):
        return Verdict(STALE, "no module %s in %s" % (module, module_places(repo, top)[0]))
    return Verdict(UNVERIFIABLE, "%s is not a module of this repository (installed, or the standard library?)" % module)


def _pytest(repo: Repo, paths: PathFinder, a: Anchor, words: Mapping[str, list[str]]) -> Verdict:
    where = paths.verdict(a.path, "path" if "/" in a.path else "bare")
    if where.verdict in (STALE, UNVERIFIABLE) or not where.place:
        return where
    shown = "pytest %s%s" % (where.place, "::" + a.name if a.name else "")
    if not a.name or where.place.endswith("/"):
        return where if where.verdict == FRESH else Verdict(MOVED, where.reason, shown, where.place)
    text, why = repo.file_text(where.place)
    if text is None:
        return Verdict(UNVERIFIABLE, "%s cannot be read: %s" % (where.place, why))
    if manifests.defines_test(text, a.name):
        if where.verdict == MOVED:
            return Verdict(MOVED, where.reason, shown, where.place)
        return Verdict(FRESH, "defined in %s" % where.place, place=where.place)
    others = [p for p in words.get(a.name, []) if p != where.place and (repo.file_text(p)[0] or "")
              and manifests.defines_test(repo.file_text(p)[0] or "", a.name)]
    if len(others) == 1:
        return Verdict(MOVED, "%s defines no %s; %s does" % (where.place, a.name, others[0]),
                       "pytest %s::%s" % (others[0], a.name), others[0])
    return Verdict(STALE, "%s defines no test %s" % (where.place, a.name))

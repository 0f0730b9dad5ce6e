"""A verdict for every anchor: fresh, stale (with the reason), moved (with the candidate) or
unverifiable (a URL, a binary on PATH, an outside path, a shallow clone, no repository).

Paths and line spans: engramory.verify.paths. Symbols: in the named file when the anchor
names one (`path::name`), else anywhere in the work tree by one batched `git grep -w -F`; a
symbol of something this repository does not define (`json.dumps()`, a builtin) is
unverifiable, not stale. Packages: against the lockfiles present. Commands: package.json
scripts, Makefile targets, just recipes, Python modules, pytest test definitions. Commits:
`git cat-file`. Every anchor with the same key is resolved once.
"""

from __future__ import annotations

import builtins
import re

from engramory.verify import anchors as A
from engramory.verify import commands, manifests
from engramory.verify.grep import Grep
from engramory.verify.paths import (
    FRESH,
    MOVED,
    STALE,
    UNVERIFIABLE,
    PathFinder,
    Verdict,
    line_verdict,
    split_lines,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from engramory.verify.repo import Repo

# Names that belong to a language, not to a repository: not finding them proves nothing.
LANGUAGE_NAMES = frozenset(dir(builtins)) | frozenset("""
setTimeout setInterval clearTimeout clearInterval fetch require console parseInt parseFloat JSON Object
Array Promise Math Date String Number Boolean Symbol Map Set WeakMap alert encodeURIComponent
decodeURIComponent structuredClone queueMicrotask len cap make new append copy delete panic recover
println printf sizeof malloc free main
""".split())
LOCAL_HEADS = frozenset("self this cls crate super Self".split())
CODE_EXTS = (".py", ".js", ".ts", ".tsx", ".jsx", ".go", ".rb", ".rs", ".java", ".kt", ".php", ".ex", ".swift")
AT_ECOSYSTEMS = (manifests.NPM, manifests.GO, manifests.CARGO)


class Resolver:
    """Verdicts for the anchors of one run against `repo` (None: no repository, `why`)."""

    def __init__(self, repo: Repo | None, why: str = "", marks: Mapping[str, Mapping[str, tuple[str, str]]] | None = None) -> None:
        self.repo = repo
        self.why = why
        self.marks = marks or {}
        self.paths = PathFinder(repo) if repo is not None else None
        self.words: dict[str, list[str]] = {}
        self.objects: dict[str, str] = {}
        self.memo: dict[tuple[object, ...], tuple[Verdict, list[str]]] = {}
        # (note, line, text) -> the work-tree files its verdict read or rests on (for the cache)
        self.reads: dict[tuple[str, int, str], list[str]] = {}

    def resolve_all(self, found: Sequence[tuple[str, A.Anchor]]) -> list[Verdict]:
        """A verdict for each (note, anchor), in order."""
        if self.repo is None or self.paths is None:
            return [Verdict(UNVERIFIABLE, self.why) for _ in found]
        try:
            return self._resolve(found)
        finally:
            self.repo.history_end()  # started beside the grep; not read when no path was missing

    def _resolve(self, found: Sequence[tuple[str, A.Anchor]]) -> list[Verdict]:
        assert self.repo is not None
        self._prepare([a for _, a in found])
        out = []
        for note, a in found:
            key = a.key() + ((note,) if a.kind == A.LINE else ())
            done = self.memo.get(key)
            if done is None:
                self.repo.touched = []
                v = self._one(note, a)
                reads = self.repo.touched
                self.repo.touched = None
                if v.place and not v.place.endswith("/") and a.kind != A.PATH:
                    reads.append(v.place)
                done = self.memo[key] = (v, sorted(set(reads)))
            self.reads[(note, a.line, a.text)] = done[1]
            out.append(done[0])
        return out

    # -- the batched calls -----------------------------------------------------------------------

    def _prepare(self, found: list[A.Anchor]) -> None:
        """The batched questions: the grep starts first and is read last, so that it runs
        beside the listing, the history and cat-file."""

        assert self.repo is not None and self.paths is not None
        words = set()
        for a in found:
            if a.kind == A.COMMAND and a.form == "pytest" and a.name:
                words.add(a.name)
            elif a.kind == A.SYMBOL and _searchable(a.name) and (a.form == "scoped" or a.name not in LANGUAGE_NAMES):
                words.add(a.name)
                head = a.where.split(".", 1)[0] if a.where else ""
                if head[:1].isupper() and head not in LOCAL_HEADS:
                    words.add(head)
        search = Grep(self.repo, words)
        if any(a.kind in (A.PATH, A.LINE, A.COMMAND) or a.form == "scoped" for a in found):
            self.repo.history_begin()
        try:
            self.paths.prepare([(a.path, a.form) for a in found
                                if a.path and a.kind in (A.PATH, A.LINE, A.SYMBOL, A.COMMAND)])
            commits = [a.name for a in found if a.kind == A.COMMIT]
            self.objects = self.repo.objects(commits) if commits else {}
            self.words = search.finish()
        finally:
            search.close()

    def _file_has(self, rel: str, name: str) -> bool:
        assert self.repo is not None
        text, _ = self.repo.file_text(rel)
        return text is not None and manifests.word_in(text, name)

    # -- one anchor --------------------------------------------------------------------------------

    def _one(self, note: str, a: A.Anchor) -> Verdict:
        if a.kind == A.PATH:
            assert self.paths is not None
            return self.paths.verdict(a.path, a.form)
        if a.kind == A.LINE:
            return self._line(note, a)
        if a.kind == A.SYMBOL:
            return self._symbol(a)
        if a.kind == A.PACKAGE:
            return self._package(a)
        if a.kind == A.COMMAND:
            return self._command(a)
        return self._commit(a)

    def _line(self, note: str, a: A.Anchor) -> Verdict:
        assert self.paths is not None and self.repo is not None
        where = self.paths.verdict(a.path, a.form)
        if where.verdict in (STALE, UNVERIFIABLE) or not where.place or where.place.endswith("/"):
            return where
        text, why = self.repo.file_text(where.place)
        if text is None:
            return Verdict(UNVERIFIABLE, "%s cannot be read: %s" % (where.place, why))
        mark = self.marks.get(note, {}).get(a.text)
        v = line_verdict(split_lines(text), where.place, a.start, a.end, mark)
        if where.verdict == MOVED:
            span = "%d-%d" % (a.start, a.end) if a.end != a.start else "%d" % a.start
            if v.verdict == STALE:
                return Verdict(STALE, "%s; %s" % (where.reason, v.reason))
            return Verdict(MOVED, where.reason, v.candidate or "%s:%s" % (where.place, span), where.place)
        return v

    def _symbol(self, a: A.Anchor) -> Verdict:
        if not _searchable(a.name):
            return Verdict(UNVERIFIABLE, "not a name that can be searched for")
        if a.form == "scoped":
            return self._scoped(a)
        head = a.where.split(".", 1)[0] if a.where else ""
        if a.name in LANGUAGE_NAMES and not head:
            return Verdict(UNVERIFIABLE, "a builtin of the language")
        if head and head not in LOCAL_HEADS and not self._local(head):
            return Verdict(UNVERIFIABLE, "`%s` is not defined in this repository (a library?)" % head)
        hits = self.words.get(a.name)
        if hits is None:
            return Verdict(UNVERIFIABLE, "past the search bound of this run")
        if hits:
            return Verdict(FRESH, "in %s" % manifests.names_list(hits, 3), place=hits[0])
        return Verdict(STALE, "not in the work tree")

    def _local(self, head: str) -> bool:
        """Whether `head` (of `head.name()`) is something of this repository: a module (a file
        or folder of that name) or, capitalised, a class the work tree mentions."""
        assert self.repo is not None
        if head[:1].isupper():
            return bool(self.words.get(head))
        by_base = self.repo.by_base()
        if any(head + ext in by_base for ext in CODE_EXTS):
            return True
        return head in self.repo.dir_names()

    def _scoped(self, a: A.Anchor) -> Verdict:
        assert self.paths is not None and self.repo is not None
        where = self.paths.verdict(a.path, "path" if "/" in a.path else "bare")
        if where.verdict == UNVERIFIABLE:
            return where
        hits = self.words.get(a.name, [])
        if where.place and not where.place.endswith("/"):
            if self._file_has(where.place, a.name):
                if where.verdict == MOVED:
                    return Verdict(MOVED, where.reason, "%s::%s" % (where.place, a.name), where.place)
                return Verdict(FRESH, "in %s" % where.place, place=where.place)
            missing = "not in %s" % where.place
        else:
            missing = "%s is %s" % (a.path, where.reason)
        others = [h for h in hits if h != where.place]
        if len(others) == 1:
            return Verdict(MOVED, "%s; defined in %s" % (missing, others[0]), "%s::%s" % (others[0], a.name), others[0])
        if others:
            return Verdict(STALE, "%s; found in %s" % (missing, manifests.names_list(others, 3)))
        if a.name in self.words:  # searched for, and found nowhere
            return Verdict(STALE, missing + ", nor anywhere in the work tree")
        return Verdict(STALE, missing)

    def _package(self, a: A.Anchor) -> Verdict:
        assert self.repo is not None
        locks = [lock for lock in self.repo.locks() if not lock.problem]
        if self.repo.touched is not None:
            self.repo.touched += [lock.path for lock in self.repo.locks()]
        if a.form == "eq":
            locks = [lock for lock in locks if lock.ecosystem == manifests.PYTHON]
        hits = [(lock, hit) for lock in locks for hit in [lock.find(a.name, a.form == "prose")] if hit is not None]
        if not hits:
            named = sorted({lock.path for lock in locks})
            if a.form == "prose" or not named or (a.form == "at" and not any(
                    lock.ecosystem in AT_ECOSYSTEMS for lock in locks) and not a.name.startswith("@")):
                return Verdict(UNVERIFIABLE, "no lockfile here records %s" % a.name)
            return Verdict(STALE, "not in %s" % manifests.names_list(named, 3))
        for lock, (_, versions) in hits:
            good = [v for v in versions if manifests.version_matches(a.version, v)]
            if good:
                return Verdict(FRESH, "locked at %s in %s" % (sorted(good)[0], lock.path), place=lock.path)
        lock, (_, versions) = hits[0]
        if not versions:
            return Verdict(UNVERIFIABLE, "%s does not pin a version of %s" % (lock.path, a.name))
        return Verdict(STALE, "locked at %s in %s" % (manifests.names_list(versions, 3), lock.path))

    def _commit(self, a: A.Anchor) -> Verdict:
        assert self.repo is not None
        kind = self.objects.get(a.name)
        if kind is None:
            return Verdict(UNVERIFIABLE, "git cat-file did not answer")
        if kind in ("commit", "tag", "tree", "blob"):
            return Verdict(FRESH, "a %s of this repository" % kind)
        if kind == "ambiguous":
            return Verdict(UNVERIFIABLE, "the short id names more than one object")
        if self.repo.shallow:
            return Verdict(UNVERIFIABLE, "a shallow clone: older commits are not here")
        return Verdict(STALE, "no such commit in this repository")

    def _command(self, a: A.Anchor) -> Verdict:

        assert self.repo is not None and self.paths is not None
        return commands.verdict(self.repo, self.paths, a, self.words)


def _searchable(name: str) -> bool:
    return bool(re.match(r"[A-Za-z_$][\w$]*\Z", name)) and len(name) >= 2

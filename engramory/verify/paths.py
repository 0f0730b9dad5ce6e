"""Where a path a note names is now: fresh (it is there), moved (git says it was renamed, or
the one file of its name lives elsewhere) or stale (nowhere, with the places of its name).

A file is there when the file system has it, whatever git thinks of it (tracked, untracked,
ignored): an existing file is never reported stale. A bare file name (`deploy.sh`) names a
file anywhere in the work tree; a path with folders names that path, or one ending in it
(`billing/invoice.py` for `src/billing/invoice.py`). Not found by the listing, names are
looked for once more on disk (ignored folders too, bounded); when that search is cut short
and git knows nothing of the path, the verdict is unverifiable, not stale.
"""

from __future__ import annotations

import hashlib
import posixpath

from engramory.verify import manifests

TYPE_CHECKING = False
if TYPE_CHECKING:
    from engramory.verify.repo import Repo

FRESH, STALE, MOVED, UNVERIFIABLE = "fresh", "stale", "moved", "unverifiable"
VERDICTS = (FRESH, STALE, MOVED, UNVERIFIABLE)
CHAIN_MAX = 10  # renames followed from a path to where it is now


class Verdict:
    __slots__ = ("verdict", "reason", "candidate", "place")

    def __init__(self, verdict: str, reason: str, candidate: str | None = None, place: str = "") -> None:
        self.verdict = verdict
        self.reason = reason
        self.candidate = candidate  # where the anchor points now (moved only)
        self.place = place  # the work-tree path that proved it (fresh or moved), for the caller

    def __repr__(self) -> str:
        return "Verdict(%s, %r, %r)" % (self.verdict, self.reason, self.candidate)


def renamed_in(commit: str) -> str:
    return "renamed in %s" % commit if commit else "renamed in the index, not committed yet"


def plural(n: int, word: str) -> str:
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


class PathFinder:
    """Path verdicts against one repository. `prepare` takes every name the run will ask
    about, so that the disk walk for ignored files happens once."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.walk: dict[str, list[str]] | None = None
        self.walk_complete = True

    def prepare(self, paths: list[tuple[str, str]]) -> None:
        missing = set()
        for path, form in paths:
            rel = self.relative(path, form)
            if rel is not None and rel and self._listed(rel, form) is None:
                missing.add(rel.rstrip("/").rsplit("/", 1)[-1])
        if missing:
            self.walk, self.walk_complete = self.repo.walk_for(missing)

    def relative(self, path: str, form: str) -> str | None:
        """The path relative to the work tree's top, or None when it lies outside it."""
        if form == "abs":
            inside = self.repo.inside(path)
            return None if inside is None else inside + ("/" if path.endswith("/") and inside else "")
        if form == "home" or path.startswith("../"):
            return None
        norm = posixpath.normpath(path)
        return norm + ("/" if path.endswith("/") and norm != "." else "") if norm != "." else ""

    # -- found ---------------------------------------------------------------------------------

    def _listed(self, rel: str, form: str) -> str | None:
        """The path (relative to the top) that answers for `rel`, looked up in the listing
        and by one stat; None when neither has it."""
        repo = self.repo
        bare = rel.rstrip("/")
        if not bare:
            return ""
        if rel.endswith("/") or form == "dir":
            if bare in repo.dirs() or repo.is_dir(bare):
                return bare + "/"
            return self._dir_suffix(bare)
        if repo.on_disk(bare):
            return bare
        base = bare.rsplit("/", 1)[-1]
        places = sorted(p for p in repo.by_base().get(base, ()) if p == bare or p.endswith("/" + bare))
        if "/" not in bare and "." not in base:
            places += [p for p in self._stem_places(base) if p not in places]
        if "/" not in bare and bare in repo.dirs():
            return bare + "/"
        on_disk = [p for p in places if repo.on_disk(p)]
        return on_disk[0] if on_disk else None

    def _dir_suffix(self, bare: str) -> str | None:
        last = bare.rsplit("/", 1)[-1]
        hits = sorted(d for d in self.repo.dir_names().get(last, ()) if d == bare or d.endswith("/" + bare))
        return hits[0] + "/" if hits else None

    def _stem_places(self, stem: str) -> list[str]:
        """README for README.md, LICENSE for LICENSE.txt: a name given without its extension."""
        return sorted(self.repo.stems().get(stem, ()))

    def _walked(self, rel: str) -> str | None:
        if not self.walk:
            return None
        bare = rel.rstrip("/")
        base = bare.rsplit("/", 1)[-1]
        for p in self.walk.get(base, ()):
            if p == bare or p.endswith("/" + bare):
                return p + ("/" if rel.endswith("/") else "")
        return None

    # -- the verdict ---------------------------------------------------------------------------

    def verdict(self, path: str, form: str) -> Verdict:
        if form == "url":
            return Verdict(UNVERIFIABLE, "a URL; never fetched")
        rel = self.relative(path, form)
        if rel is None:
            where = "the home folder" if form == "home" else "an absolute path" if form == "abs" else "a path"
            return Verdict(UNVERIFIABLE, "%s outside the repository" % where)
        if not rel:
            return Verdict(FRESH, "the top of the repository", place="")
        found = self._listed(rel, form) or self._walked(rel)
        if found is not None:
            return Verdict(FRESH, self._how(found), place=found)
        return self._missing(rel)

    def _how(self, place: str) -> str:
        if place.endswith("/"):
            return "a folder: %s" % place
        if place not in self.repo.files():
            return "on disk (not tracked): %s" % place
        return "%s: %s" % ("untracked" if self.repo.untracked(place) else "tracked", place)

    def _missing(self, rel: str) -> Verdict:
        repo = self.repo
        bare = rel.rstrip("/")
        if rel.endswith("/"):
            return self._missing_dir(bare)
        moved = self._renamed(bare)
        if moved is not None:
            return moved
        base = bare.rsplit("/", 1)[-1]
        elsewhere = sorted(p for p in repo.by_base().get(base, ()) if repo.on_disk(p))
        if "/" in bare and len(elsewhere) == 1:
            return Verdict(MOVED, "not there; the one file of that name is elsewhere", elsewhere[0], elsewhere[0])
        renames, deleted = repo.history()
        gone = deleted.get(bare) or next((c for p, c in deleted.items() if p.endswith("/" + bare)), None)
        tracked = bare in repo.files()
        if elsewhere:
            return Verdict(STALE, "not there; files of that name: %s" % manifests.names_list(elsewhere, 3))
        if gone is not None:
            return Verdict(STALE, "deleted in %s" % gone if gone else "deleted in the index, not committed yet")
        if tracked:
            return Verdict(STALE, "deleted in the work tree (not committed yet)")
        if not self.walk_complete:
            return Verdict(UNVERIFIABLE, "not in the tracked or untracked files; the search of the other folders "
                           "stopped at %s entries" % "{:,}".format(200_000))
        return Verdict(STALE, "not in the work tree")

    def _renamed(self, bare: str) -> Verdict | None:
        renames, _ = self.repo.history()
        start = renames.get(bare)
        if start is None:
            suffix = "/" + bare
            hits = sorted(p for p in renames if p.endswith(suffix))
            if len(hits) != 1:
                return None
            start = renames[hits[0]]
        target, commit = start
        commits = [commit]
        for _ in range(CHAIN_MAX):
            if self.repo.on_disk(target):
                return Verdict(MOVED, renamed_in(commits[0]) if len(commits) == 1 else
                               "renamed in %s" % ", then ".join(c or "the index" for c in commits), target, target)
            nxt = renames.get(target)
            if nxt is None:
                break
            target, c = nxt
            commits.append(c)
        return None

    def _missing_dir(self, bare: str) -> Verdict:
        renames, deleted = self.repo.history()
        prefix = bare + "/"
        targets = {}
        for old, (new, commit) in renames.items():
            if old.startswith(prefix) and self.repo.on_disk(new):
                rest = old[len(prefix):]
                if new.endswith("/" + rest):
                    targets[new[: -len(rest)]] = commit
        if len(targets) == 1:
            (new_dir, commit), = targets.items()
            return Verdict(MOVED, renamed_in(commit), new_dir, new_dir)
        gone = sorted({c for p, c in deleted.items() if p.startswith(prefix)})
        if gone:
            return Verdict(STALE, "its files were deleted in %s" % ", ".join(c or "the index" for c in gone[:3]))
        if not self.walk_complete:
            return Verdict(UNVERIFIABLE, "no such folder in the listing; the disk search stopped early")
        return Verdict(STALE, "no such folder in the work tree")


# -- line spans ----------------------------------------------------------------------------------

def span_hash(lines: list[str], start: int, end: int) -> str:
    """The hash of lines start..end (1-based, inclusive), line ends and trailing blanks dropped."""
    body = "\n".join(line.rstrip() for line in lines[start - 1:end])
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def line_verdict(lines: list[str], place: str, start: int, end: int, mark: tuple[str, str] | None) -> Verdict:
    """A span of `place` (whose lines are `lines`): past its end is stale; with a mark
    (hash, date) the span must still hash the same, or be found elsewhere in the file."""
    span = "%d-%d" % (start, end) if end != start else "%d" % start
    if end > len(lines):
        return Verdict(STALE, "%s has %s; line %s is past its end" % (place, plural(len(lines), "line"), span))
    if mark is None:
        return Verdict(FRESH, "%s has %s" % (place, plural(len(lines), "line")), place=place)
    digest, date = mark
    if span_hash(lines, start, end) == digest:
        return Verdict(FRESH, "lines %s unchanged since marked on %s" % (span, date), place=place)
    size = end - start + 1
    for i in range(1, len(lines) - size + 2):
        if span_hash(lines, i, i + size - 1) == digest:
            moved = "%d-%d" % (i, i + size - 1) if size > 1 else "%d" % i
            return Verdict(MOVED, "the lines marked on %s are now at %s" % (date, moved),
                           "%s:%s" % (place, moved), place)
    return Verdict(STALE, "lines %s changed since marked on %s" % (span, date))

"""Whole-word search for the symbols notes name, over the work tree as it is now.

`git grep --cached -w -F` reads what git's index holds, which is two to three times faster on
a large tree than reading every file of the work tree; what the index does not have is read
here instead: the tracked files that differ from it (`git diff-files`, run beside the grep)
and the untracked files of the listing. A hit in a file that differs from the index counts
only if the file on disk still has the word. Both git calls start before the rest of the run
needs git (`begin`) and are read at the end (`finish`), so they overlap with the listing and
the history. Words go GREP_PATTERNS to a call, at most GREP_CALLS calls; words past that,
and every word when the work tree differs from the index in more than SCAN_FILES files, are
left out of the result (the resolver calls them unverifiable).
"""

from __future__ import annotations

import re

from engramory import scope
from engramory.verify import repo as repo_mod
from engramory.verify.repo import Incomplete

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Iterable

    from engramory.verify.repo import Repo

GREP_PATTERNS = 100  # words per `git grep` call
GREP_CALLS = 50  # calls per run at most
GREP_OUTPUT = 16 << 20  # bytes of one grep's output read at most
PLACES = 4  # files kept per word (enough to say "found in a, b, c")
SCAN_FILES = 2000  # files of the work tree read here at most (changed and untracked)
SCAN_READ = 1 << 20  # bytes of each


class Grep:
    """One search, started by `begin` and read by `finish`."""

    def __init__(self, repo: Repo, words: Iterable[str]) -> None:

        self.repo = repo
        per, calls = repo_mod.GREP_PATTERNS, repo_mod.GREP_CALLS  # the bounds tests set there
        todo = sorted(set(words))
        self.chunks = [todo[i:i + per] for i in range(0, min(len(todo), per * calls), per)]
        self.diff: subprocess.Popen[bytes] | None = None
        self.first: subprocess.Popen[bytes] | None = None
        if self.chunks:
            self.diff = repo.git.start(repo.top, ["diff-files", "--name-only", "-z"])
            self.first = self._start(self.chunks[0])

    def _start(self, chunk: list[str]) -> subprocess.Popen[bytes] | None:
        args = ["grep", "--cached", "-I", "-w", "-F", "-o", "--null", "--no-color"]
        for word in chunk:
            args += ["-e", word]
        args += ["--", "."]
        if self.repo.exclude:
            args.append(":(exclude)%s/" % self.repo.exclude)
        return self.repo.git.start(self.repo.top, args)

    def close(self) -> None:
        """Stop what was started and not read (the run stopped early: its deadline)."""
        repo_mod.reap((self.diff, self.first))
        self.diff = self.first = None

    def finish(self) -> dict[str, list[str]]:
        """{word: up to PLACES files that hold it}, absent words mapping to []."""
        if not self.chunks:
            return {}

        git = self.repo.git
        whole = True
        try:
            raw = b"".join(git.lines(self.diff, 64 << 20))
        except Incomplete:
            raw, whole = b"", False
        self.diff = None
        changed = {p for p in raw.decode("utf-8", "surrogateescape").split("\0") if p}
        found: dict[str, list[str]] = {}
        cut: set[str] = set()
        for i, chunk in enumerate(self.chunks):
            places: dict[str, list[str]] = {w: [] for w in chunk}
            proc = self.first if i == 0 else self._start(chunk)
            self.first = None
            try:
                for line in git.lines(proc, GREP_OUTPUT):
                    rel, sep, matched = line.rstrip(b"\n").partition(b"\0")
                    hit = places.get(matched.decode("utf-8", "replace")) if sep else None
                    r = rel.decode("utf-8", "surrogateescape")
                    if hit is not None and len(hit) < PLACES and r not in hit and r not in changed:
                        hit.append(r)
            except Incomplete:
                cut.update(chunk)
            found.update(places)
        prefix = self.repo.exclude + "/" if self.repo.exclude else None
        extra = sorted(r for r in changed | self.repo.untracked_files() if not (prefix and r.startswith(prefix)))
        if whole and len(extra) <= SCAN_FILES:
            self._scan(extra, found)
        else:
            cut.update(found)
        # a word a cut search did not find is unknown, not absent: leave it out
        return {w: hits for w, hits in found.items() if hits or w not in cut}

    def _scan(self, rels: list[str], found: dict[str, list[str]]) -> None:
        """Add the hits of the files the index does not hold as they are (git grep -w: a word
        is letters, digits and underscores)."""
        if not rels or not found:
            return
        pattern = re.compile(r"(?<!\w)(%s)(?!\w)" % "|".join(re.escape(w) for w in sorted(found, key=len, reverse=True)))
        for rel in rels:
            try:
                data, _ = scope.read_bounded(self.repo.top + "/" + rel, SCAN_READ)
            except OSError:
                continue
            if b"\0" in data[:8000]:
                continue  # binary, as git grep -I
            for word in set(pattern.findall(data[:SCAN_READ].decode("utf-8", "replace"))):
                hits = found.get(word)
                if hits is not None and len(hits) < PLACES and rel not in hits:
                    hits.append(rel)

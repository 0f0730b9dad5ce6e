"""One verify run over a store: read the live notes, find the repository, reuse what the cache
still vouches for, resolve the rest, keep the new verdicts. What the command, the doctor's
`--verify` and SessionStart all call. Reads only, except the cache in `.engramory/`.
"""

from __future__ import annotations

import hashlib
import os

from engramory.store import reader as store
from engramory.store import secrets as secretscan
from engramory.verify import anchors as A
from engramory.verify import cache as cache_mod
from engramory.verify import mark
from engramory.verify.extract import extract
from engramory.verify.paths import FRESH, MOVED, STALE, UNVERIFIABLE, VERDICTS, Verdict
from engramory.verify.repo import Deadline, GitCall, Repo, locate
from engramory.verify.resolve import Resolver

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from engramory.store.reader import Note


class Item:
    """One anchor of one note and its verdict, as reported (texts masked)."""

    __slots__ = ("note", "line", "kind", "text", "verdict", "reason", "candidate", "form", "path", "place")

    def __init__(self, note: str, line: int, kind: str, text: str, verdict: str, reason: str,
                 candidate: str | None, form: str = "", path: str = "", place: str = "") -> None:
        self.note = note
        self.line = line
        self.kind = kind
        self.text = text
        self.verdict = verdict
        self.reason = reason
        self.candidate = candidate
        self.form = form
        self.path = path  # the path the anchor names (path, line, scoped, pytest anchors)
        self.place = place  # the work-tree file that decided a fresh or moved verdict

    def as_dict(self) -> dict[str, Any]:
        return {"note": self.note, "line": self.line, "kind": self.kind, "text": self.text,
                "verdict": self.verdict, "reason": self.reason, "candidate": self.candidate}

    def row(self) -> list[Any]:
        return [self.line, self.kind, self.text, self.verdict, self.reason, self.candidate, self.form, self.path,
                self.place]

    @classmethod
    def from_row(cls, note: str, row: Sequence[Any]) -> Item:
        return cls(note, int(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]),
                   row[5] if isinstance(row[5], str) else None, str(row[6]), str(row[7]), str(row[8]))

    def line_text(self) -> str:
        """`note.md:12: moved path scripts/deploy.sh: ops/deploy.py (renamed in a1b2c3d)`."""
        return cache_mod.line_text(self.note, self.line, self.verdict, self.kind, self.text, self.reason, self.candidate)


class NoteScan:
    """What a run read of one live note: its stamp, hash, `verified:` date and, read from its
    text only when asked (a note the cache answers for is never parsed), its anchors."""

    __slots__ = ("rel", "sha", "size", "mtime", "verified", "updated", "text", "own", "_anchors")

    def __init__(self, note: Note) -> None:
        text = note.text or ""
        self.text = text
        self.own: frozenset[str] = frozenset()  # file names of the store's notes and index
        self._anchors: list[A.Anchor] | None = None
        self.rel = note.rel
        self.sha = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        self.size = note.size
        self.mtime = note.mtime
        fields = note.fm.fields if note.fm is not None else {}
        verified, updated = fields.get("verified"), fields.get("updated") or fields.get("created")
        self.verified = verified if isinstance(verified, str) else None
        self.updated = updated if isinstance(updated, str) else None

    @property
    def anchors(self) -> list[A.Anchor]:
        """The note's anchors, those naming one of the store's own notes or its index left out."""
        if self._anchors is None:
            own = self.own
            self._anchors = [a for a in extract(self.text) if not (
                a.kind in (A.PATH, A.LINE) and a.form != "url" and a.path.rstrip("/").rsplit("/", 1)[-1] in own)]
            self.text = ""
        return self._anchors


class Result:
    def __init__(self, root: str) -> None:
        self.root = root
        self.repo: Repo | None = None
        self.how = ""
        self.why = ""
        self.notes: list[NoteScan] = []
        self.items: list[Item] = []
        self.calls: dict[str, int] = {}
        self.reused = 0  # notes whose verdicts came from the cache
        self.complete = True

    def summary(self) -> dict[str, int]:
        counts = {v: 0 for v in VERDICTS}
        for item in self.items:
            counts[item.verdict] += 1
        return counts

    def broken(self) -> list[Item]:
        return [i for i in self.items if i.verdict in (STALE, MOVED)]


def scan_notes(root: str, env: Mapping[str, str] | None = None, deadline: float | None = None) -> list[NoteScan]:
    """The live notes of the store (archive/ left out), each read once and its anchors taken;
    path anchors naming one of the store's own notes or its index are dropped."""

    found: list[NoteScan] = []

    def visit(n: Note) -> None:
        if not n.archived and n.text is not None:
            found.append(NoteScan(n))

    st = store.load(root, env, visit, deadline)
    if st.stopped:
        raise Deadline()
    own = frozenset({n.rel.rsplit("/", 1)[-1] for n in st.notes} | {st.index_name})
    for scan in found:
        scan.own = own
    return found


def _item(note: str, a: A.Anchor, v: Verdict) -> Item:
    red = secretscan.redact
    return Item(note, a.line, a.kind, red(a.text), v.verdict, red(v.reason), red(v.candidate) if v.candidate else None,
                a.form, red(a.path), v.place)


def verify_alone(root: str, cwd: str) -> None:
    """`verify(root, None, cwd)` unless another run of this store holds its verify lock
    (SessionStart's detached run: engramory.verify.notice.in_background)."""
    fd = cache_mod.claim(root)
    if fd is None:
        return
    try:
        verify(root, None, cwd)
    finally:
        if fd >= 0:
            os.close(fd)


def verify(root: str, repo_arg: str | None = None, cwd: str | None = None, env: Mapping[str, str] | None = None,
           deadline: float | None = None, use_cache: bool = True, keep: bool = True) -> Result:
    """Verify every live note of the store at `root`; `keep` writes the cache (the doctor,
    which changes no file, reads it only). Raises OSError when `root` cannot be listed,
    Deadline when `deadline` (time.monotonic) passes first."""

    env = os.environ if env is None else env
    result = Result(root)
    git = GitCall(deadline)
    result.notes = scan_notes(root, env, deadline)
    repo, how = locate(root, repo_arg, cwd or os.getcwd(), env, git)
    result.repo = repo
    if repo is None:
        result.why = how
    else:
        result.how = how
        inside = repo.inside(root)
        repo.exclude = inside or ""
    old = cache_mod.load(root) if use_cache and repo is not None else None
    # the key is taken only against a cache of this repository: a cold run lists the tree once,
    # beside the grep, not before it
    key = _key(repo, old) if repo is not None and old is not None and old.get("repo") == repo.top else None
    reusable = key is not None and old is not None and old.get("key") == key
    cached_notes: dict[str, Any] = old.get("notes", {}) if reusable and old is not None else {}
    todo: list[tuple[str, A.Anchor]] = []
    fresh_notes: dict[str, list[Item]] = {}
    for scan in result.notes:
        entry = cached_notes.get(scan.rel)
        if (repo is not None and isinstance(entry, dict) and entry.get("sha") == scan.sha
                and cache_mod.stamps_hold(repo.top, entry.get("evidence", []))):
            fresh_notes[scan.rel] = [Item.from_row(scan.rel, row) for row in entry.get("items", [])]
            result.reused += 1
            continue
        todo += [(scan.rel, a) for a in scan.anchors]
    resolver = Resolver(repo, result.why, mark.load_marks(root, result.notes))
    verdicts = resolver.resolve_all(todo)
    made: dict[str, list[Item]] = {}
    for (note, a), v in zip(todo, verdicts):
        made.setdefault(note, []).append(_item(note, a, v))
    for scan in result.notes:
        result.items += fresh_notes.get(scan.rel) or made.get(scan.rel, [])
    result.calls = dict(git.calls)
    if repo is not None and use_cache and keep and (todo or not reusable):
        _save(root, repo, result, key or _key(repo, None), resolver, made, cached_notes)
    elif repo is None and use_cache and keep:
        cache_mod.save(root, None, notice_of(result, None))
    return result


def _key(repo: Repo, old: dict[str, Any] | None) -> dict[str, Any]:
    """The cache key of the repository as it is now. The folder digest is taken over the
    folders the cached run listed (so a second run lists nothing)."""
    dirs = old.get("dirs") if old and old.get("repo") == repo.top and isinstance(old.get("dirs"), list) else None
    if dirs is None:
        dirs = sorted(repo.dirs())[: cache_mod.DIRS_MAX]
    return {"repo": repo.top, "head": repo.head, "index": repo.index_stamp(),
            "dirs": cache_mod.dir_digest(repo.top, dirs)}


def _save(root: str, repo: Repo, result: Result, key: dict[str, Any], resolver: Resolver,
          made: dict[str, list[Item]], cached: dict[str, Any]) -> None:
    dirs = sorted(repo.dirs())[: cache_mod.DIRS_MAX]
    if cache_mod.dir_digest(repo.top, dirs) != key["dirs"]:
        key = dict(key, dirs=cache_mod.dir_digest(repo.top, dirs))
    notes: dict[str, Any] = {}
    for scan in result.notes:
        if scan.rel in made or scan.rel not in cached:
            reads = sorted({r for a in scan.anchors for r in resolver.reads.get((scan.rel, a.line, a.text), ())})
            evidence = [e for e in (_stamp(repo, r) for r in reads) if e is not None]
            notes[scan.rel] = {"sha": scan.sha, "items": [i.row() for i in made.get(scan.rel, [])],
                               "evidence": evidence}
        else:
            notes[scan.rel] = cached[scan.rel]
    cache_mod.save(root, {"repo": repo.top, "key": key, "dirs": dirs, "notes": notes}, notice_of(result, repo))


def _stamp(repo: Repo, rel: str) -> list[Any] | None:
    """[rel, size, mtime_ns] of a file a verdict rests on (as read, else as it is now)."""
    if rel in repo.evidence:
        return [rel] + list(repo.evidence[rel])
    try:
        st = os.stat(os.path.join(repo.top, rel))
    except OSError:
        return None
    return [rel, st.st_size, st.st_mtime_ns]


def notice_of(result: Result, repo: Repo | None) -> dict[str, Any]:
    """The small summary SessionStart reads: the notes with stale or moved anchors, and the
    stamps that say whether it still holds (engramory.verify.notice)."""
    import time
    by_note: dict[str, list[Item]] = {}
    for item in result.broken():
        by_note.setdefault(item.note, []).append(item)
    stamps = {s.rel: (s.size, s.mtime) for s in result.notes}
    notes = []
    for rel, items in list(by_note.items())[: cache_mod.NOTICE_NOTES]:
        size, mtime = stamps.get(rel, (0, 0.0))
        notes.append({"note": rel, "size": size, "mtime": mtime, "items": [i.row() for i in items[:3]],
                      "count": len(items)})
    return {"repo": repo.top if repo else None, "head": repo.head if repo else None,
            "index": repo.index_stamp() if repo else None, "git_dir": repo.git_dir if repo else None,
            "time": time.time(), "notes": notes, "total": len(by_note), "checked": len(result.notes)}


__all__ = ["FRESH", "MOVED", "STALE", "UNVERIFIABLE", "Item", "NoteScan", "Result", "scan_notes", "verify"]

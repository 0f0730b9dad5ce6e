"""The repository a store describes, read through git and the file system, every step bounded.

Which repository: `--repo DIR`, else the project whose auto-memory folder the store is (the
rule that finds the store: engramory.automemory, from the current folder), else the git work
tree holding ROOT. What is asked of git, at most once per run each: `rev-parse` (top, git
folder, shallow, HEAD), one `ls-files` (tracked and untracked, not ignored), one `log` of
renames and deletions (newest LOG_COMMITS commits) and one `diff --cached` for renames not
committed yet (both only when a named path is missing), `grep -w -F` in batches of
GREP_PATTERNS words (at most GREP_CALLS calls), one `cat-file --batch-check` for commit ids.
Each has a timeout and an output cap, and all of them stop at the run's deadline. Whether a
file exists is asked of the file system, so an ignored or untracked file is never missing.

Standard library only; never raises for a repository's content (malformed files, FIFOs,
huge files): what cannot be read is said.
"""

from __future__ import annotations

import os
import time

from engramory import automemory, scope
from engramory.verify import manifests

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Iterable, Iterator, Mapping, Sequence

STEP_TIMEOUT = 20.0  # seconds for one git call when the run has no deadline of its own
LOG_COMMITS = 5000  # commits searched for renames and deletions, newest first
LOG_TIMEOUT = 5.0
GREP_PATTERNS = 100  # words per `git grep` call (engramory.verify.grep)
GREP_CALLS = 50  # calls per run at most; words past GREP_CALLS * GREP_PATTERNS are not searched
PLACES = 4  # paths kept per name found on disk
LS_OUTPUT = 256 << 20
FILE_READ_MAX = 8 << 20  # a file read for its lines or symbols
LOCK_READ_MAX = 64 << 20
LOCKS_MAX = 40
MANIFESTS_MAX = 100  # package.json files read
WALK_ENTRIES = 200_000  # entries the disk walk for ignored files visits at most
HEAVY_DIRS = frozenset(["node_modules", ".venv", "venv", "target", "dist", "build", "__pycache__", ".tox"])


class Deadline(Exception):
    """The run's deadline passed (SessionStart's budget): stop, keep nothing half-made."""


class Incomplete(Exception):
    """A git call's output was cut (its output cap, or its own timeout): what it did not say
    proves nothing."""


class GitCall:
    """The one way this package runs git: no shell, `-C top`, a timeout, an output cap.
    Counts its calls by subcommand (`calls`), which tests and the bench read."""

    def __init__(self, deadline: float | None = None) -> None:
        self.deadline = deadline
        self.calls: dict[str, int] = {}

    def timeout(self, cap: float = STEP_TIMEOUT) -> float:
        if self.deadline is None:
            return cap
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Deadline()
        return min(cap, left)

    def run(self, cwd: str, args: Sequence[str], data: bytes | None = None, limit: int = LS_OUTPUT,
            cap: float = STEP_TIMEOUT) -> tuple[int, bytes]:
        """(exit status, stdout) of `git -C cwd ARGS`; (-1, b"") when git cannot be run or
        timed out (then past the deadline: Deadline)."""
        import subprocess

        timeout = self.timeout(cap)
        self.calls[args[0]] = self.calls.get(args[0], 0) + 1
        cmd = ["git", "-c", "core.quotepath=off", "-c", "color.ui=never", "-C", cwd] + list(args)
        try:
            done = subprocess.run(cmd, input=data, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  stdin=None if data is not None else subprocess.DEVNULL, timeout=timeout,
                                  check=False, env=_git_env())
        except subprocess.TimeoutExpired:
            if self.deadline is not None and time.monotonic() >= self.deadline:
                raise Deadline() from None
            return -1, b""
        except OSError:
            return -1, b""
        return done.returncode, done.stdout[:limit]

    def start(self, cwd: str, args: Sequence[str]) -> subprocess.Popen[bytes] | None:
        """`git -C cwd ARGS` started, its stdout to be read with `lines`; None when git
        cannot be run."""
        import subprocess

        self.timeout()
        self.calls[args[0]] = self.calls.get(args[0], 0) + 1
        cmd = ["git", "-c", "core.quotepath=off", "-c", "color.ui=never", "-C", cwd] + list(args)
        try:
            return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    stdin=subprocess.DEVNULL, env=_git_env())
        except OSError:
            return None

    def lines(self, proc: subprocess.Popen[bytes] | None, limit: int, cap: float = STEP_TIMEOUT) -> Iterator[bytes]:
        """The stdout of a started git, line by line. Git is killed after `limit` bytes or at
        the timeout (a watchdog: a git that hangs without output is killed too); then, after
        the lines read, Deadline (the run's deadline passed) or Incomplete."""
        import threading

        if proc is None or proc.stdout is None:
            return
        fired: list[bool] = []

        def stop() -> None:
            fired.append(True)
            proc.kill()

        cut = False
        try:
            timer = threading.Timer(self.timeout(cap), stop)
            timer.daemon = True
            timer.start()
            try:
                read = 0
                for line in proc.stdout:
                    read += len(line)
                    yield line
                    if read > limit:
                        cut = True
                        break
            finally:
                timer.cancel()
        finally:
            reap((proc,))
        if fired and self.deadline is not None and time.monotonic() >= self.deadline:
            raise Deadline()
        if fired or cut:
            raise Incomplete()


def reap(procs: Iterable[subprocess.Popen[bytes] | None]) -> None:
    """Each started git (None: not started) killed while it still runs, then waited for and its
    stdout closed: for a read done, and for calls left unread when a run stops early."""
    for proc in procs:
        if proc is None:
            continue
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PAGER", "PAGER"):
        env.pop(var, None)
    env["GIT_OPTIONAL_LOCKS"] = "0"  # read only: never take the index lock to refresh it
    env["LC_ALL"] = "C"
    return env


# -- finding the repository ----------------------------------------------------------------------

class Repo:
    """A git work tree: its top folder, HEAD, and what this run has read of it."""

    def __init__(self, top: str, git_dir: str, head: str | None, shallow: bool, git: GitCall) -> None:
        self.top = top
        self.git_dir = git_dir
        self.head = head
        self.shallow = shallow
        self.git = git
        self.exclude = ""  # the store's folder, relative to top, when the store is inside it
        self.evidence: dict[str, tuple[int, int]] = {}  # rel -> (size, mtime_ns) of files read
        self.touched: list[str] | None = None  # files read for the anchor being resolved
        self._files: set[str] | None = None
        self._untracked: set[str] = set()
        self._by_base: dict[str, list[str]] | None = None
        self._dirs: set[str] | None = None
        self._stems: dict[str, list[str]] | None = None
        self._dir_names: dict[str, list[str]] | None = None
        self._history: tuple[dict[str, tuple[str, str]], dict[str, str]] | None = None
        self._history_procs: list[subprocess.Popen[bytes] | None] = []
        self._texts: dict[str, tuple[str | None, str]] = {}
        self._locks: list[manifests.Lock] | None = None
        self.walked: tuple[dict[str, list[str]], bool] | None = None

    @property
    def short_head(self) -> str:
        return self.head[:7] if self.head else "no commit yet"

    def index_stamp(self) -> list[int]:
        """(size, mtime_ns) of git's index: it moves with every add, mv, rm, commit, checkout."""
        try:
            st = os.stat(os.path.join(self.git_dir, "index"))
        except OSError:
            return [0, 0]
        return [st.st_size, st.st_mtime_ns]

    # files
    def files(self) -> set[str]:
        """The listed files (tracked and untracked, not ignored), the store's own left out;
        the index by file name and the folders are made in the same pass."""
        if self._files is None:
            rc, out = self.git.run(self.top, ["ls-files", "-z", "-t", "--cached", "--others", "--exclude-standard"])
            items = out.decode("utf-8", "surrogateescape").split("\0")
            if self.exclude:
                prefix = "%s/" % self.exclude
                items = [i for i in items if not i[2:].startswith(prefix)]
            files = self._files = {i[2:] for i in items if len(i) > 2}
            self._untracked = {i[2:] for i in items if i[:1] == "?" and len(i) > 2}
            index: dict[str, list[str]] = {}
            dirs = {""}
            for rel in files:
                d, _, base = rel.rpartition("/")
                places = index.get(base)
                if places is None:
                    index[base] = [rel]
                else:
                    places.append(rel)
                while d not in dirs:
                    dirs.add(d)
                    d = d.rpartition("/")[0]
            self._by_base, self._dirs = index, dirs
        return self._files

    def untracked(self, rel: str) -> bool:
        return rel in self._untracked

    def untracked_files(self) -> set[str]:
        self.files()
        return self._untracked

    def named(self, *bases: str) -> list[str]:
        """The listed files with one of these file names."""
        index = self.by_base()
        return sorted(p for b in bases for p in index.get(b, ()))

    def stems(self) -> dict[str, list[str]]:
        """{file name without its last extension: paths}: README for README.md."""
        if self._stems is None:
            index: dict[str, list[str]] = {}
            for base, places in self.by_base().items():
                stem, dot, _ = base.rpartition(".")
                if dot and stem:
                    index.setdefault(stem, []).extend(places)
            self._stems = index
        return self._stems

    def dir_names(self) -> dict[str, list[str]]:
        """{folder name: folder paths} of the listing's folders."""
        if self._dir_names is None:
            index: dict[str, list[str]] = {}
            for d in self.dirs():
                if d:
                    index.setdefault(d.rsplit("/", 1)[-1], []).append(d)
            self._dir_names = index
        return self._dir_names

    def by_base(self) -> dict[str, list[str]]:
        """{file name: listed paths with it} (not sorted: callers sort what they show)."""
        self.files()
        assert self._by_base is not None
        return self._by_base

    def dirs(self) -> set[str]:
        """Every folder of the listing, "" (the top) included."""
        self.files()
        assert self._dirs is not None
        return self._dirs

    def on_disk(self, rel: str) -> bool:
        return os.path.lexists(os.path.join(self.top, rel))

    def is_dir(self, rel: str) -> bool:
        return os.path.isdir(os.path.join(self.top, rel))

    def inside(self, abspath: str) -> str | None:
        """`abspath` relative to the top when it lies in the work tree, else None."""
        real = os.path.realpath(abspath)
        top = self.top.rstrip("/")
        if real == top:
            return ""
        return real[len(top) + 1:] if real.startswith(top + "/") else None

    # history
    def history_begin(self) -> None:
        """Start the two history calls now, to be read by `history` (they run beside the rest)."""
        if self.head and self._history is None and not self._history_procs:
            self._history_procs = [
                self.git.start(self.top, ["diff", "--cached", "-M", "--name-status", "-z", "--diff-filter=RD"]),
                self.git.start(self.top, ["log", "-M", "--diff-filter=RD", "--name-status", "-z", "--format=%x01%h",
                                          "-n", str(LOG_COMMITS)])]

    def history_end(self) -> None:
        """Stop the history calls if they were started and not read (the run stopped early)."""
        reap(self._history_procs)
        self._history_procs = []

    def history(self) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
        """({old path: (new path, commit)}, {deleted path: commit}), newest first wins; renames
        staged but not committed have the commit "" (the index). A log cut short keeps what it
        said: each rename it names is true."""
        if self._history is None:
            renames: dict[str, tuple[str, str]] = {}
            deleted: dict[str, str] = {}
            if self.head:
                self.history_begin()
                staged, log = self._history_procs
                self._history_procs = []
                outs = []
                for proc, cap in ((staged, STEP_TIMEOUT), (log, LOG_TIMEOUT)):
                    got: list[bytes] = []
                    try:
                        got.extend(self.git.lines(proc, LS_OUTPUT, cap))
                    except Incomplete:
                        pass
                    outs.append(b"".join(got))
                _parse_changes(outs[0], "", renames, deleted)
                for chunk in outs[1].split(b"\x01")[1:]:
                    commit, _, rest = chunk.partition(b"\0")
                    _parse_changes(rest, commit.decode("ascii", "replace"), renames, deleted)
            self._history = (renames, deleted)
        return self._history

    # reading files of the work tree
    def file_text(self, rel: str, limit: int = FILE_READ_MAX) -> tuple[str | None, str]:
        """(text, "") or (None, why not) for a file of the work tree; read once per run, bounded,
        never blocking on a FIFO. Its (size, mtime) go into `evidence` for the cache."""
        if self.touched is not None:
            self.touched.append(rel)
        if rel in self._texts:
            return self._texts[rel]
        path = os.path.join(self.top, rel)
        try:
            data, st = scope.read_bounded(path, limit)
        except OSError as exc:
            found: tuple[str | None, str] = (None, exc.strerror or exc.__class__.__name__)
        else:
            self.evidence[rel] = (st.st_size, st.st_mtime_ns)
            if len(data) > limit:
                found = (None, "larger than %s bytes; not read" % "{:,}".format(limit))
            else:
                found = (data.decode("utf-8", "replace"), "")
        self._texts[rel] = found
        return found

    def locks(self) -> list[manifests.Lock]:
        if self._locks is None:
            self._locks = []
            names = list(manifests.LOCK_NAMES) + [b for b in self.by_base() if b.startswith("requirements")]
            for rel in sorted(r for r in self.named(*names)
                              if manifests.lock_ecosystem(r) and "node_modules/" not in r):
                if len(self._locks) >= LOCKS_MAX:
                    break
                text, why = self.file_text(rel, LOCK_READ_MAX)
                lock = manifests.read_lock(rel, text or "")
                if text is None:
                    lock.problem = why
                self._locks.append(lock)
        return self._locks

    # asking
    def objects(self, ids: Iterable[str]) -> dict[str, str]:
        """{id: object type, or "missing" / "ambiguous"} by one `cat-file --batch-check`."""
        todo = sorted(set(ids))
        if not todo:
            return {}
        rc, out = self.git.run(self.top, ["cat-file", "--batch-check"], data=("\n".join(todo) + "\n").encode())
        if rc != 0 or out.count(b"\n") != len(todo):
            return {}  # no answer is no evidence: the resolver calls them unverifiable
        result = {}
        for line, asked in zip(out.decode("ascii", "replace").splitlines(), todo):
            parts = line.split()
            result[asked] = parts[1] if len(parts) >= 2 and parts[1] in ("commit", "tree", "blob", "tag") else (
                parts[-1] if parts and parts[-1] in ("missing", "ambiguous") else "missing")
        return result

    def walk_for(self, names: set[str]) -> tuple[dict[str, list[str]], bool]:
        """{file name: up to PLACES paths} of files on disk with those names, ignored
        ones included; and whether the walk saw everything (WALK_ENTRIES, the deadline)."""
        found: dict[str, list[str]] = {}
        stack = [""]
        heavy: list[str] = []
        seen = 0
        while stack or heavy:
            rel_dir = stack.pop() if stack else heavy.pop()
            try:
                with os.scandir(os.path.join(self.top, rel_dir) if rel_dir else self.top) as it:
                    entries = list(it)
            except OSError:
                continue
            for e in entries:
                seen += 1
                if seen > WALK_ENTRIES or (self.git.deadline is not None and time.monotonic() > self.git.deadline):
                    return found, False
                rel = rel_dir + "/" + e.name if rel_dir else e.name
                if e.name in names and len(found.setdefault(e.name, [])) < PLACES:
                    found[e.name].append(rel)
                try:
                    is_dir = e.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir and e.name != ".git" and rel != self.exclude:
                    (heavy if e.name in HEAVY_DIRS else stack).append(rel)
        return found, True


def _parse_changes(raw: bytes, commit: str, renames: dict[str, tuple[str, str]], deleted: dict[str, str]) -> None:
    items = raw.decode("utf-8", "surrogateescape").lstrip("\n").split("\0")
    i = 0
    while i < len(items):
        status = items[i].strip()
        if status.startswith("R") and i + 2 < len(items):
            renames.setdefault(items[i + 1], (items[i + 2], commit))
            i += 3
        elif status.startswith("D") and i + 1 < len(items):
            deleted.setdefault(items[i + 1], commit)
            i += 2
        else:
            i += 1


def open_repo(start: str, git: GitCall) -> tuple[Repo | None, str]:
    """The work tree holding `start`, or (None, why not)."""
    rc, out = git.run(start, ["rev-parse", "--show-toplevel", "--absolute-git-dir", "--is-shallow-repository", "HEAD"])
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    if rc == -1 and not lines:
        import shutil

        if shutil.which("git") is None:
            return None, "git is not on PATH"
        return None, "git did not answer in time"
    if len(lines) < 3:
        return None, "%s is not inside a git work tree" % start
    head = lines[3] if rc == 0 and len(lines) > 3 and len(lines[3]) >= 40 else None
    return Repo(os.path.realpath(lines[0]), lines[1], head, lines[2] == "true", git), ""


def locate(root: str, repo_arg: str | None, cwd: str, env: Mapping[str, str], git: GitCall) -> tuple[Repo | None, str]:
    """(the repository the store at `root` describes, how it was chosen) or (None, why not)."""
    if repo_arg:
        found, why = open_repo(repo_arg, git)
        return (found, "--repo") if found else (None, why)
    project = auto_memory_project(root, cwd, env)
    if project is not None:
        found, why = open_repo(project, git)
        if found is not None:
            return found, "the project whose auto memory this is"
    found, why = open_repo(root, git)
    if found is not None and found.top == os.path.realpath(root):
        return None, ("the store %s is a git repository of its own (shared memory), not the code it describes; "
                      "pass --repo DIR" % root)
    if found is not None:
        return found, "the git work tree holding the store"
    return None, "no git repository holds %s, and it is not this project's auto memory; pass --repo DIR" % root


def auto_memory_project(root: str, cwd: str, env: Mapping[str, str]) -> str | None:
    """The project folder whose auto-memory folder (engramory.automemory's rule) is `root`."""

    real = os.path.realpath(root)
    for project in automemory.project_candidates({"cwd": os.path.abspath(cwd)}, env):
        index = automemory.auto_memory_index(project, env)
        if index is not None and os.path.realpath(os.path.dirname(index)) == real:
            return project
    return None

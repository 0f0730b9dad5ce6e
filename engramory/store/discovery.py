"""Every memory store Claude Code knows on this machine, for `engramory doctor --all`.

Read from the 2.1.332 CLI: each project's auto memory is `<config>/projects/<name>/memory/`
(<config> is $CLAUDE_CONFIG_DIR or ~/.claude); `autoMemoryDirectory` moves it, read the way
the host reads it (engramory.automemory.configured_dir: the project's local settings, then
the user settings, never the project settings), for the project of the current folder, of
every folder a session transcript names, and for every other project as far as the user
setting goes.

Subagent memory (`agent-memory`), measured on the 2.1.332 CLI (tests/hosts/claude/test_agent_memory_claude.py):
an agent defined in `.claude/agents/<agent>.md` or `<config>/agents/<agent>.md` with
`memory: user | project | local` in its frontmatter gets a folder the CLI creates when the
agent first runs, and the `MEMORY.md` in it is shown to that agent:
`<config>/agent-memory/<agent>/` (user), `<start>/.claude/agent-memory/<agent>/` (project) and
`<start>/.claude/agent-memory-local/<agent>/` (local), where <start> is the folder the
session started in, not the git root (auto memory is keyed by the git root). So the project
and local ones are looked for under the current folder and under every start folder a
session transcript (`<config>/projects/<name>/*.jsonl`, its `cwd`) names. A folder the host
created with nothing in it yet is listed as empty, not audited. Only folders that exist are
listed; nothing is created or written.

One project can end up with two memory folders, and the host then loads only one of them
(`store-split`, naming both):
- the same path spelled another way: another case (a case-insensitive disk), or through
  /private on macOS (/tmp and /private/tmp), each sanitized to its own name;
- a project moved to another folder: the two names differ only by path components before
  the project's own last component (`-home-u-app` and `-home-u-code-app`), unless the
  session transcripts in both folders name two project folders that both still exist;
- a project renamed or copied: the two folders' notes (file name and bytes) or index lines
  largely coincide (at least two shared, and half of the smaller folder's).
"""

from __future__ import annotations

import json
import os
import re
import stat

from engramory import automemory, scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

AUTO = "auto-memory"
SETTING_LOCAL = "autoMemoryDirectory (local settings)"
SETTING_USER = "autoMemoryDirectory (user settings)"
AGENT_USER = "agent-memory (user)"
AGENT_PROJECT = "agent-memory (project)"
AGENT_LOCAL = "agent-memory (local)"
NOTE_READ_MAX = 1 << 16  # a note compared for a split is read up to this many bytes
SPLIT_FILES_MAX = 5000  # files per folder compared for a split
TRANSCRIPT_READ = 1 << 16  # bytes of one session transcript searched for its cwd


def _subfolders(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as it:
            return sorted(e.path for e in it if not e.name.startswith(".") and e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def known_stores(env: Mapping[str, str] | None = None, cwd: str | None = None) -> list[tuple[str, str]]:
    """(kind, folder) for every memory folder the host knows that exists, each once."""
    env = os.environ if env is None else env
    config_dir = automemory.claude_config_dir(env)
    found: list[tuple[str, str]] = []
    for project in _subfolders(os.path.join(config_dir, "projects")):
        memory = os.path.join(project, "memory")
        if os.path.isdir(memory):
            found.append((AUTO, memory))
    here = os.path.abspath(cwd or os.getcwd())
    starts = [here] + [p for p in (_project_path(d) for d in _subfolders(os.path.join(config_dir, "projects")))
                       if p and os.path.isdir(p)]  # every folder a session started in, as far as known
    found.extend(_configured_stores(starts, env))
    for agent in _subfolders(os.path.join(config_dir, "agent-memory")):
        found.append((AGENT_USER, agent))
    for start in starts:
        for sub, kind in (("agent-memory", AGENT_PROJECT), ("agent-memory-local", AGENT_LOCAL)):
            for agent in _subfolders(os.path.join(start, ".claude", sub)):
                found.append((kind, agent))
    return _once(found)


def _configured_stores(starts: list[str], env: Mapping[str, str]) -> list[tuple[str, str]]:
    """Memory folders a setting moved: each project's own local settings, then the user
    settings everyone else reads."""
    readers: list[str | None] = []
    for start in starts:
        projects = automemory.project_candidates({"cwd": start}, {})
        if projects and projects[0] not in readers:
            readers.append(projects[0])
    readers.append(None)
    found = []
    for reader in readers:
        moved, source = automemory.configured_dir(reader, env)
        if moved and os.path.isdir(moved):
            local = bool(source) and os.path.basename(str(source)) == "settings.local.json"
            found.append((SETTING_LOCAL if local else SETTING_USER, moved))
    return found


def _once(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each folder once (by its real path), the first kind found for it."""
    seen: set[str] = set()
    out = []
    for kind, folder in found:
        real = os.path.realpath(folder)
        if real not in seen:
            seen.add(real)
            out.append((kind, folder))
    return out


SPLIT_CODE = "store-split"


def is_empty(folder: str) -> bool:
    """A folder the host created and nothing was stored in yet (no entry but dot files):
    not a store with a missing index."""
    try:
        with os.scandir(folder) as it:
            return not any(not e.name.startswith(".") for e in it)
    except OSError:
        return False


def _split_key(name: str) -> str:
    """The project folder name two spellings of one path share."""
    key = name.lower()
    return key[len("-private"):] if key.startswith("-private-") else key


def _moved(a: str, b: str) -> bool:
    """Whether two sanitized project names differ only by path components before the
    project's own last component: one folder's project moved under another parent."""
    pa, pb = a.strip("-").split("-"), b.strip("-").split("-")
    if pa == pb or pa[-1:] != pb[-1:] or not pa[-1]:
        return False
    head = 0
    while head < min(len(pa), len(pb)) and pa[head] == pb[head]:
        head += 1
    tail = 0
    while tail < min(len(pa), len(pb)) - head and pa[-1 - tail] == pb[-1 - tail]:
        tail += 1
    # what is left between the shared start and the shared end: one run of components on at
    # least one side, nothing else (so `-home-u-a-app` / `-home-u-b-app`, `-home-u-app` / `-home-u-x-app`)
    return head >= 1 and max(len(pa), len(pb)) - head - tail <= 2


def _regular_files(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            return [e for i, e in zip(range(SPLIT_FILES_MAX), it) if e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _read(path: str, limit: int) -> bytes | None:
    """Up to `limit` bytes of a regular file, never following a symlink, never blocking: the
    lstat turns a link away, the bounded reader (scope.read_bounded) anything but a file."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return None
        return scope.read_bounded(path, limit - 1)[0][:limit] if limit > 0 else b""
    except OSError:
        return None


def _fingerprint(folder: str) -> tuple[set[tuple[str, str]], set[str]]:
    """(file name and sha256 of each note, each non-blank index line) of a memory folder."""
    import hashlib  # only `doctor --all` compares folders: the doctor of one store never loads it

    notes: set[tuple[str, str]] = set()
    lines: set[str] = set()
    for e in _regular_files(folder):
        if not e.name.endswith(".md"):
            continue
        data = _read(e.path, NOTE_READ_MAX)
        if data is None:
            continue
        if e.name == "MEMORY.md":
            lines = {ln.strip() for ln in data.decode("utf-8", "replace").splitlines() if ln.strip()}
        else:
            notes.add((e.name, hashlib.sha256(data).hexdigest()))
    return notes, lines


def _coincide(a: set[Any], b: set[Any]) -> bool:
    shared = len(a & b)
    return shared >= 2 and 2 * shared >= min(len(a), len(b))


_CWD_RE = re.compile(r'"cwd"\s*:\s*("(?:[^"\\]|\\.)*")')


def _project_path(project_folder: str) -> str | None:
    """The project folder a session transcript (`<config>/projects/<name>/*.jsonl`) names."""
    transcripts = sorted((e for e in _regular_files(project_folder) if e.name.endswith(".jsonl")),
                         key=lambda e: e.name)
    for e in transcripts[:8]:
        data = _read(e.path, TRANSCRIPT_READ)
        m = _CWD_RE.search(data.decode("utf-8", "replace")) if data else None
        if m:
            try:
                value = json.loads(m.group(1))
            except ValueError:
                continue
            if isinstance(value, str) and os.path.isabs(value):
                return value
    return None


def _resolves(name: str, budget: list[int]) -> bool | None:
    """Whether some existing folder's absolute path sanitizes to `name`: the name is read
    back component by component from /, listing only folders whose own sanitized name is a
    prefix of what is left (each listing spends one of `budget`). None when it cannot tell:
    a hashed (cut) name, or the budget spent."""
    if not name.startswith("-") or len(name) > automemory.PROJECT_NAME_MAX:
        return None

    def walk(folder: str, rest: str, depth: int) -> bool | None:
        if not rest:
            return True
        if depth > 40 or budget[0] <= 0:
            return None
        budget[0] -= 1
        try:
            with os.scandir(folder) as it:
                entries = [e for _, e in zip(range(20000), it)]
        except OSError:
            return False
        unsure = False
        want = rest[1:2]
        for e in entries:
            c = e.name[:1]
            if (c if c.isascii() and c.isalnum() else "-") != want:
                continue  # cheap: the first character already differs
            part = automemory.sanitize_project_path("/" + e.name)
            if (rest == part or rest.startswith(part + "-")) and e.is_dir():
                found = walk(e.path, rest[len(part):], depth + 1)
                if found:
                    return True
                unsure = unsure or found is None
        return None if unsure else False

    return walk("/", name, 0)


def _project_exists(project_folder: str) -> bool:
    """Whether the project a `<config>/projects/<name>` folder belongs to is still on disk
    (or cannot be told): a session transcript's cwd that exists, or a folder whose path
    sanitizes to <name>."""
    path = _project_path(project_folder)
    if path and os.path.isdir(path):
        return True
    return _resolves(os.path.basename(project_folder), [200]) is not False


def splits(stores: Iterable[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """folder -> (an earlier folder holding memory of the same project, why it reads so)."""
    autos = [folder for kind, folder in stores if kind == AUTO]
    out: dict[str, tuple[str, str]] = {}
    first: dict[str, str] = {}
    for folder in autos:
        key = _split_key(os.path.basename(os.path.dirname(folder)))
        if key in first:
            out[folder] = (first[key], "another spelling of the same path")
        else:
            first[key] = folder
    pairs = _SplitPairs()
    for i, folder in enumerate(autos):
        if folder in out:
            continue
        for other in autos[:i]:
            if other in out:
                continue
            why = pairs.why(other, folder)
            if why:
                out[folder] = (other, why)
                break
    return out


class _SplitPairs:
    """Two auto-memory folders compared, each folder's fingerprint and each project folder's
    existence worked out once."""

    def __init__(self) -> None:
        self.prints: dict[str, tuple[set[tuple[str, str]], set[str]]] = {}
        self.known: dict[str, bool] = {}

    def exists(self, project_folder: str) -> bool:
        if project_folder not in self.known:
            self.known[project_folder] = _project_exists(project_folder)
        return self.known[project_folder]

    def fingerprint(self, folder: str) -> tuple[set[tuple[str, str]], set[str]]:
        if folder not in self.prints:
            self.prints[folder] = _fingerprint(folder)
        return self.prints[folder]

    def why(self, other: str, folder: str) -> str:
        """Why `folder` reads as holding the memory of the same project as `other` ("" if not)."""
        na, la = self.fingerprint(other)
        nb, lb = self.fingerprint(folder)
        if _coincide(na, nb) or _coincide(la, lb):
            return "the two folders' notes or index lines largely coincide (a renamed or copied project)"
        if _moved(os.path.basename(os.path.dirname(other)), os.path.basename(os.path.dirname(folder))) and not (
                self.exists(os.path.dirname(other)) and self.exists(os.path.dirname(folder))):
            return "the two project names differ only by a folder on the way (a moved project)"
        return ""



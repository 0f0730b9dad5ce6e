"""Issue 19, "one bounded reader": every read of a store file (a note, an index, the config,
anything under `.engramory/`), by every command and hook, goes through
`engramory.scope.read_bounded` (non-blocking open, a FIFO or device refused before a byte is
read, at most limit + 1 bytes held), directly or through `store.read_bounded` /
`config.read_bounded`, which wrap it.

An AST scan of engramory/ lists every way of opening a file (the builtin `open`, `os.open`,
`io.open`, `os.fdopen`, `posix.open`, `Path.open`, `Path.read_text` / `read_bytes`,
`io.FileIO`), as a call or as a reference that could become one, and finds none outside the
allow-list below, where each entry says why it is not a store read."""

from __future__ import annotations

import ast
from typing import Dict, List, Set, Tuple

from tests.conftest import ROOT

PACKAGE = ROOT / "engramory"

# (file, enclosing function) -> why that open is not a read of a store file
ALLOWED: Dict[Tuple[str, str], str] = {
    ("scope.py", "<module>"): "the bounded reader's own alias of posix.open / os.open",
    ("scope.py", "read_bounded"): "the bounded reader itself",
    ("compact/apply.py", "read_plan"): "the plan file the user names with --apply PLAN, not a store file; it may be a "
                                 "pipe (`--apply <(engramory compact --json)`), so it is read blocking, 64 MiB at most",
    ("fsutil.py", "backup"): "the installer's backup copy of a host settings file it is about to rewrite",
    ("fsutil.py", "replace_with"): "opens a new temporary file for writing (the one atomic replace)",
    ("store/metadir.py", "claim"): "opens (creating it) a lock file to flock, never reads it",
    ("curate/searchindex.py", "build"): "creates the empty private file (O_EXCL, 0600) the search index is built in; "
                                        "SQLite opens the index itself, only after an lstat found a regular file",
    ("guard.py", "_trace"): "appends to the test-only trace file ($ENGRAMORY_TRACE_FILE)",
    ("hosts/claudelike.py", "trace"): "appends to the test-only trace file ($ENGRAMORY_TRACE_FILE)",
    ("hosts/gemini/__init__.py", "_trace"): "appends to the test-only trace file ($ENGRAMORY_TRACE_FILE)",
    ("hosts/claude/check.py", "_smoke_all"): "writes the scratch index of the install smoke run",
    ("install/settingshooks.py", "smoke_index"): "writes the scratch index of a --check deny smoke run",
    ("hosts/windsurf/install.py", "smoke_payload"): "reads back the scratch index of a --check deny smoke run",
    ("hosts/codex/install.py", "read_config"): "the installer reads Codex's config.toml (host settings)",
    ("hosts/copilot/install.py", "_read"): "the installer reads a Copilot settings file (host settings, 1 MiB at most)",
    ("install/pluginfile.py", "_read"): "the installer reads a host's plugin file (1 MiB at most)",
    ("hosts/hermes/install.py", "_write_plugin"): "the installer copies the bundle's own plugin files",
    ("hosts/openclaw/install.py", "_plugin_problems"): "the installed plugin's index.mjs (not a memory index)",
    ("install/bundle.py", "_same_file_content"): "compares the bundle's own files with an installed copy",
    ("install/bundle.py", "apply_skill"): "the installer copies the bundle's own files",
    ("install/settings.py", "read_regular"): "host settings.json, already non-blocking and bounded",
    ("store/blobstore.py", "save"): "writes the blob store's running total (O_NOFOLLOW | O_NONBLOCK)",
    ("store/blobstore.py", "add"): "opens a kept blob only to fsync it; nothing is read",
    ("store/journalfile.py", "append"): "appends one entry to the journal (O_APPEND | O_NOFOLLOW | O_NONBLOCK)",
    ("store/metadir.py", "fsync_dir"): "opens a folder to fsync it",
    ("store/lock.py", "_flock"): "the lock file, opened to flock it (O_NONBLOCK, refused unless regular)",
    ("curate/searchrefresh.py", "_listed"): "opens a notes folder (O_DIRECTORY) to list it and lstat its names by dir_fd; "
                                            "no file is read",
    ("store/lock.py", "_excl"): "creates the O_EXCL fallback lock file and writes its owner into it",
}

# Files whose reads have not moved to the bounded reader yet, each with the reason (none now).
TEMPORARY_ALLOWED: Dict[str, str] = {}

OPENERS = frozenset(["open", "fdopen", "FileIO", "_open"])  # by name or as an attribute
PATH_READERS = frozenset(["read_text", "read_bytes"])  # only as an attribute: Path.read_text()


def opens(tree: ast.AST) -> List[Tuple[int, str, str]]:
    """(line, enclosing function, source) of every reference to a way of opening a file."""
    found: List[Tuple[int, str, str]] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name if where == "<module>" else where)
                continue
            if isinstance(child, ast.ClassDef):
                visit(child, where)
                continue
            if isinstance(child, ast.Name) and child.id in OPENERS:
                found.append((child.lineno, where, child.id))
            elif isinstance(child, ast.Attribute) and child.attr in OPENERS | PATH_READERS:
                found.append((child.lineno, where, ast.unparse(child)))
            visit(child, where)

    visit(tree, "<module>")
    return found


def scan() -> List[Tuple[str, int, str, str]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for line, where, source in opens(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            out.append((rel, line, where, source))
    return out


def test_every_open_outside_the_bounded_reader_is_allowed_with_a_reason() -> None:
    stray = ["engramory/%s:%d: %s in %s()" % (rel, line, source, where) for rel, line, where, source in scan()
             if (rel, where) not in ALLOWED and rel not in TEMPORARY_ALLOWED]
    assert not stray, ("reads that bypass engramory.scope.read_bounded (use it, or store.read_bounded / "
                       "config.read_bounded; allow-list only what is not a store read):\n" + "\n".join(stray))


def test_the_allow_lists_hold_nothing_stale() -> None:
    """An entry whose open is gone is removed, so the list stays the list of exceptions."""
    seen: Set[Tuple[str, str]] = {(rel, where) for rel, _, where, _ in scan()}
    files = {rel for rel, _ in seen}
    stale = [k for k in ALLOWED if k not in seen] + [f for f in TEMPORARY_ALLOWED if f not in files]
    assert not stale, "allow-list entries with no open left: %s" % stale


def test_the_scan_finds_every_kind_of_open() -> None:
    """The scan is not blind: each way of opening a file is found, aliases included."""
    src = ("import io, os, posix\nfrom pathlib import Path\n"
           "def f(p):\n    open(p)\n    os.open(p, 0)\n    io.open(p)\n    posix.open(p, 0)\n"
           "    Path(p).read_text()\n    Path(p).read_bytes()\n    Path(p).open()\n    os.fdopen(3)\n"
           "    io.FileIO(p)\n    g = open\n    return read_text(p)\n")
    found = [source for _, _, source in opens(ast.parse(src))]
    assert found == ["open", "os.open", "io.open", "posix.open", "Path(p).read_text", "Path(p).read_bytes",
                     "Path(p).open", "os.fdopen", "io.FileIO", "open"], found

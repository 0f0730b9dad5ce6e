"""The doctor's checks of a store shared through git (rows in engramory.doctor.codes):

- `index-conflict-markers` (error): a merge left conflict markers in the index; the host loads
  them into every session. Needs no git: it runs in the SessionStart audit too.
- `merge-driver-unset` (warning): `.gitattributes` names the engramory-index driver for the
  index but this clone's git config lacks it, so git falls back to the line merge.
- `engramory-state-tracked` (warning): `.engramory/` (journal, blobs, manifest) is committed.

`shared_by_sync(root)` tells a store `sync init` set up (the index merges with the driver)
from one that sits in a work tree by accident, for the doctor's `store-in-git`."""

from __future__ import annotations

import os

from engramory.doctor.codes import MAX_PER_NOTE, Finding
from engramory.sync.indexparse import MARKER_RE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from engramory.doctor.codes import Context
    from engramory.store.reader import Store

DRIVER = "engramory-index"


_MARKER_RUNS = ("<" * 7, ">" * 7, "|" * 7, "=" * 7)


def marker_lines(text: str) -> list[int]:
    """1-based numbers of the lines of `text` that are conflict markers."""
    if not any(run in text for run in _MARKER_RUNS):
        return []  # a marker starts with seven of one of these: a clean index costs four searches
    return [i + 1 for i, line in enumerate(text.split("\n")) if MARKER_RE.match(line.rstrip("\r"))]


def _git_facts(root: str, index_name: str) -> tuple[str, str, str] | None:
    """(top, the index relative to it, the store folder relative to it), or None outside git."""
    # lazy: gitops loads subprocess, and the SessionStart audit and `doctor --skip store-in-git` run no git
    from engramory.sync import gitops

    try:
        top = gitops.toplevel(root)
    except gitops.GitError:
        return None
    if top is None:
        return None
    prefix = os.path.relpath(os.path.realpath(root), top).replace(os.sep, "/")
    prefix = "" if prefix == "." else prefix
    return top, (prefix + "/" if prefix else "") + index_name, prefix


def shared_by_sync(root: str, index_name: str = "MEMORY.md") -> bool:
    """Whether git merges this store's index with the engramory driver (`sync init` set it
    up): the store is in its repository on purpose."""

    facts = _git_facts(root, index_name)
    if facts is None:
        return False
    # lazy: as in _git_facts (git ran there, so this costs nothing more)
    from engramory.sync import gitops

    try:
        return gitops.check_attr(facts[0], "merge", facts[1]) == DRIVER
    except gitops.GitError:
        return False


def check_sync(st: Store, ctx: Context) -> Iterator[Finding]:
    if st.index_text is not None:
        lines = marker_lines(st.index_text)
        for number in lines[:MAX_PER_NOTE]:
            yield Finding("index-conflict-markers", st.index_name, number,
                          "a conflict marker: a merge left its conflicts in the index, and the host loads them "
                          "into every session; keep one version of each note and delete the markers "
                          "(`engramory merge-index --resolve %s` repairs it where git still knows the merge)"
                          % st.index_name)
    if not ctx.git:
        return
    yield from _git_findings(st)


def _git_findings(st: Store) -> Iterator[Finding]:

    facts = _git_facts(st.root, st.index_name)
    if facts is None:
        return
    # lazy: as in _git_facts (git ran there, so this costs nothing more)
    from engramory.sync import gitops

    top, index_rel, prefix = facts
    try:
        attr = gitops.check_attr(top, "merge", index_rel)
        driver = gitops.config_get(top, "merge.%s.driver" % DRIVER)
        tracked = gitops.ls_files(top, [(prefix + "/" if prefix else "") + ".engramory"])
    except gitops.GitError:
        return
    if attr == DRIVER and not driver:
        yield Finding("merge-driver-unset", st.index_name, 0,
                      ".gitattributes merges this index with the %s driver, but this clone's git config does not "
                      "define it, so git falls back to the line merge (a conflict for every two new notes): run "
                      "`engramory sync init` here (or `engramory sync`, which registers it)" % DRIVER)
    if tracked:
        yield Finding("engramory-state-tracked", ".engramory", 0,
                      "%d file%s of .engramory/ (this machine's journal, blobs and review manifest) %s committed: "
                      "they conflict on every sync and carry old versions of notes around; run `git rm -r --cached "
                      "%s` and ignore the folder (`engramory sync init` adds /.engramory/ to .gitignore)" % (
                          len(tracked), "" if len(tracked) == 1 else "s", "is" if len(tracked) == 1 else "are",
                          (prefix + "/" if prefix else "") + ".engramory"))

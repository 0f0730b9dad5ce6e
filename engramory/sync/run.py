"""`engramory sync [ROOT]`: one command for memory shared through git.

In order: find the repository, the branch and its upstream (a clear refusal for no git, no
remote, no upstream, a detached HEAD, a merge left unfinished); fetch; refuse, before anything
is written, a pull or a push that would delete more than max(10, 10 %) of the live notes (a move
into archive/ is not a deletion) unless `--force`; register the merge driver if this clone
lacks it (`sync init`'s work, when it was never done); commit the store's changes as ONE commit whose
message lists engramory's journal entries since the last sync and the changes made outside it;
merge the upstream with the driver (conflicts: listed, the merge left for the user to finish or
abort, nothing pushed); journal what the merge brought in; check the merged store (conflict
markers, an index over its cap: nothing pushed; broken pointers: reported); push.

It never rewrites published history: no rebase, no reset, no force push (`--force` only lifts
the mass-delete refusal). Everything runs under the store lock, so no engramory write lands in
the middle of it.
"""

from __future__ import annotations

import os

from engramory import scope
from engramory.doctor.codes import Context
from engramory.doctor.index import check_pointers
from engramory.exitcodes import EX_BUSY, EX_OK, EX_REFUSED
from engramory.size import n as _n
from engramory.store import journal
from engramory.store import reader as store
from engramory.sync import changes, gitops, init, limits
from engramory.sync.changes import Where
from engramory.sync.checks import check_sync


class Outcome:
    """What one sync did, for the text and the --json renderers."""

    __slots__ = ("code", "status", "lines", "data")

    def __init__(self) -> None:
        self.code = EX_OK
        self.status = "synced"
        self.lines: list[str] = []
        self.data: dict[str, object] = {}

    def stop(self, status: str, message: str, code: int = EX_REFUSED) -> Outcome:
        self.status = status
        self.code = code
        self.lines.append(message)
        return self


class Stop(Exception):
    def __init__(self, status: str, message: str, code: int = EX_REFUSED) -> None:
        super().__init__(message)
        self.status = status
        self.code = code



def preconditions(root: str) -> tuple[Where, str, str, str]:
    """(where, branch, upstream as `remote/branch`, remote), or Stop with the next step."""
    try:
        top = init.find_top(root)
    except init.Refused as exc:
        raise Stop("no-repository", str(exc)) from None
    where = Where(root, top)
    name = gitops.branch(top)
    if name is None:
        raise Stop("detached-head", "HEAD is detached in %s (no branch is checked out): check out the branch to "
                                    "sync (`git switch main`), then run `engramory sync` again" % top)
    if gitops.rev(top, "MERGE_HEAD") is not None or gitops.unmerged(top, ["."]):
        raise Stop("merge-in-progress", "a merge is not finished in %s (conflicts the last sync left?): resolve them, "
                                        "`git add` the files and `git commit`, or `git merge --abort`; then run "
                                        "`engramory sync` again" % top)
    remotes = gitops.remotes(top)
    if not remotes:
        raise Stop("no-remote", "the repository %s has no remote to sync with: add one (`git remote add origin "
                                "URL`), push once (`git push -u origin %s`), then run `engramory sync` again" % (top, name))
    upstream = gitops.upstream(top)
    remote = gitops.config_get(top, "branch.%s.remote" % name)
    if upstream is None or remote is None:
        raise Stop("no-upstream", "the branch %s has no upstream branch: push it once with `git push -u %s %s` "
                                  "(after a first commit), then run `engramory sync` again" % (name, remotes[0], name))
    return where, name, upstream, remote


def register(where: Where, out: Outcome) -> None:
    """Register the driver in this clone, and write what `sync init` writes if it never ran."""
    try:
        plan = init.plan(where.root)
    except init.Refused as exc:
        raise Stop("init-failed", str(exc)) from None
    if plan.empty:
        return
    init.apply(plan)
    for key in plan.config:
        out.lines.append("registered %s in %s" % (key, os.path.join(gitops.git_dir(where.top), "config")))
    for name in plan.files:
        out.lines.append("added the engramory line to %s" % os.path.join(where.root, name))


def check_deletions(where: Where, head: str | None, upstream: str, force: bool, out: Outcome) -> None:
    """Refuse (Stop) a pull or a push that deletes too many live notes, before anything is written."""
    if head is None:
        return
    base = gitops.merge_base(where.top, head, upstream)
    if base is None:
        return
    for direction, deleted, live in (
        ("pull", changes.deletions(where, gitops.diff_names(where.top, base, upstream, where.spec)),
         len(changes.live_notes(where, head))),
        ("push", changes.archived_since(where, changes.deletions(where, gitops.diff_names(
            where.top, base, None, where.spec))), len(changes.live_notes(where, base))),
    ):
        out.data["%s_deletes" % direction] = deleted
        if deleted and changes.too_many(len(deleted), live):
            what = "%s of the %s live notes" % (_n(len(deleted)), _n(live))
            if force:
                out.lines.append("--force: the %s deletes %s" % (direction, what))
                continue
            shown = ", ".join(deleted[:5]) + (" and %s more" % _n(len(deleted) - 5) if len(deleted) > 5 else "")
            source = "the other side" if direction == "pull" else "this machine"
            raise Stop("mass-delete", "this sync would %s the deletion of %s by %s (more than max(10, 10%%) = %s): %s. "
                                      "Nothing was committed, merged or pushed. Retire notes with `engramory archive` "
                                      "(a move into archive/ is not a deletion); if the deletion is meant, run "
                                      "`engramory sync --force`" % (
                                          direction, what, source, _n(max(10, live // 10)), shown))


def commit(where: Where, out: Outcome) -> str | None:
    """Commit the store's own changes (nothing else of the repository) as one commit."""
    status = [(xy, p) for xy, p in gitops.status(where.top, where.spec) if where.in_store(p) is not None]
    if not status:
        return None
    message = changes.commit_message(where, status, changes.load_state(where.root))
    gitops.run(where.top, ["add", "-A", "--", *where.spec])
    done = gitops.run(where.top, ["commit", "-q", "-F", "-", "--", *where.spec], check=False, data=message.encode())
    if done.code != 0:
        hint = ("tell git who you are first (`git config user.name NAME` and `git config user.email EMAIL`)"
                if "user.name" in done.err or "identity" in done.err else "git said: %s" % done.err[-300:])
        raise Stop("commit-failed", "the commit of the store's changes failed: %s" % hint)
    out.lines.append("committed %d changed file%s: %s" % (len(status), "" if len(status) == 1 else "s",
                                                         message.split("\n", 1)[0]))
    return message


def merge(where: Where, upstream: str, out: Outcome) -> str | None:
    """Merge the upstream with the driver; the HEAD before it (None: nothing to merge)."""
    head = gitops.rev(where.top, "HEAD")
    theirs = gitops.rev(where.top, upstream)
    if theirs is None or head == theirs or (head is not None and gitops.merge_base(where.top, head, theirs) == theirs):
        return None
    done = gitops.run(where.top, ["merge", "--ff", "--no-edit", "-m", "engramory sync: merge %s" % upstream, upstream],
                      check=False)
    if done.code == 0:
        out.lines.append("merged %s" % upstream)
        return head
    left = gitops.unmerged(where.top, ["."])
    if not left:
        raise Stop("merge-failed", "git could not merge %s: %s; nothing was pushed" % (upstream, done.err[-400:]))
    out.data["conflicts"] = left
    said = [line.split(": ", 1)[1] for line in (done.err + "\n" + done.text).splitlines()
            if line.startswith("engramory merge-index: ")]
    listed = "; ".join(_conflict_text(where, p, said) for p in left)
    raise Stop("conflicts", "merging %s left %d file%s for you to finish: %s. Nothing was pushed. Finish it (`git add` "
                            "each file, `git commit`) and run `engramory sync` again, or go back with `git merge --abort`"
               % (upstream, len(left), "" if len(left) == 1 else "s", listed))


def _conflict_text(where: Where, path: str, said: list[str]) -> str:
    """One conflicted file, with what the index driver said about it (conflicts, the cap)."""
    rel = where.in_store(path)
    if rel == changes.INDEX:
        mine = [s.split(": ", 1)[1] for s in said if s.split(": ", 1)[0] == path and ": " in s]
        return "%s (%s)" % (path, "; ".join(mine) if mine else "its conflicts are in one block after the title line")
    return "%s (changed on both sides: edit it to the version to keep)" % path


def check_merged(where: Where, before: str | None, out: Outcome) -> None:
    """Journal what the merge brought in, then hold the merged store to what a push needs."""

    if before is not None:
        entry = changes.journal_pull(where, before, gitops.rev(where.top, "HEAD") or "HEAD", "merge")
        if entry is not None:
            out.lines.append("journal entry %d: what the merge brought in (%d file%s)" % (
                entry.id, len(entry.changes), "" if len(entry.changes) == 1 else "s"))
    index = os.path.join(where.root, changes.INDEX)
    try:
        data, _ = scope.read_bounded(index, 16 << 20)
    except OSError:
        return
    st = store.load(where.root)
    ctx = Context(git=False)
    found = [f for check in (check_pointers, check_sync) for f in check(st, ctx)]
    markers = [f for f in found if f.code == "index-conflict-markers"]
    if markers:
        raise Stop("conflict-markers", "%s:%d holds conflict markers (%d line%s); nothing was pushed: repair it with "
                                       "`engramory merge-index --resolve %s`, commit, and sync again" % (
                                           index, markers[0].line, len(markers), "" if len(markers) == 1 else "s",
                                           index))
    over = limits.over_cap(index, data)
    if over is not None:
        raise Stop("over-cap", "%s; nothing was pushed: compact it, commit, and run `engramory sync` again" % over)
    for f in found:
        if f.severity == "error":
            out.lines.append("doctor: %s:%d: %s: %s" % (f.path, f.line, f.code, f.message))


def push(where: Where, branch: str, remote: str, out: Outcome) -> None:
    head = gitops.rev(where.top, "HEAD")
    upstream = gitops.upstream(where.top)
    theirs = gitops.rev(where.top, upstream) if upstream else None
    if head is None or head == theirs:
        out.lines.append("nothing to push")
        return
    merge_ref = gitops.config_get(where.top, "branch.%s.merge" % branch) or "refs/heads/" + branch
    done = gitops.run(where.top, ["push", "--porcelain", remote, "HEAD:%s" % merge_ref], check=False,
                      timeout=gitops.NETWORK_TIMEOUT)
    if done.code != 0:
        if "rejected" in done.text or "rejected" in done.err or "fetch first" in done.err:
            raise Stop("remote-moved", "the remote %s moved on while this sync ran (another machine pushed): nothing was "
                                       "lost; run `engramory sync` again" % remote, EX_BUSY)
        raise Stop("push-failed", "the push to %s failed: %s; the commits are kept here: run `engramory sync` again "
                                  "once the remote is reachable" % (remote, done.err[-400:]))
    out.lines.append("pushed to %s (%s)" % (remote, merge_ref))


def sync(root: str, force: bool = False) -> Outcome:
    out = Outcome()
    try:
        where, branch, upstream, remote = preconditions(root)
        out.data.update({"repository": where.top, "branch": branch, "upstream": upstream})
        gitops.run(where.top, ["fetch", "--quiet", remote], timeout=gitops.NETWORK_TIMEOUT)
        with journal.lock(root):  # local steps only: no engramory write lands in the middle
            check_deletions(where, gitops.rev(where.top, "HEAD"), upstream, force, out)
            register(where, out)
            if commit(where, out) is not None:
                entries = journal.entries(root)
                changes.save_state(root, {"journal_seen": entries[-1].id if entries else 0})
            before = merge(where, upstream, out)
            check_merged(where, before, out)
        push(where, branch, remote, out)
    except Stop as stop:
        return out.stop(stop.status, str(stop), stop.code)
    except gitops.GitMissing as exc:
        return out.stop("no-git", str(exc))
    except gitops.GitError as exc:
        return out.stop("git-error", str(exc))
    except journal.LockTimeout as exc:
        return out.stop("busy", str(exc), EX_BUSY)
    return out

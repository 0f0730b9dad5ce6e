"""A compaction plan for a store and applying one: `plan_for` (the store read once, the
operations of engramory.compact.plan, the invariants checked on their result), its text with
the unified diff of every file it would change (`render_text`) and its JSON (`plan_dict`,
which `--apply PLAN` reads back), and `apply`: under the store lock it re-reads the store,
refuses when it changed since the plan (the digest), writes every file atomically and records
one journal entry holding everything it replaced, so `engramory undo` puts the store back
byte for byte. A plan over part of a store could drop a pointer to a note it never read, so
none is made when a file of the store cannot be read whole. `engramory compact` is
engramory.commands.compact."""

from __future__ import annotations

import difflib
import json
import os
import sys

from engramory import guard, hosts
from engramory.compact import plan as compactplan
from engramory.compact.work import Measure, Plan, Target
from engramory.config import positive_int
from engramory.exitcodes import EX_DATAERR, EX_NOINPUT
from engramory.size import Caps, Window
from engramory.size import n as _n
from engramory.store import blobstore, journal
from engramory.store import reader as store_mod
from engramory.store.secrets import redact_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

PLAN_VERSION = 1
HOST = "claude"  # the host whose window the effects are also given in


class CompactError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message



def _signed(value: int) -> str:
    return ("+" if value > 0 else "") + _n(value)


def host_window() -> tuple[Window, str]:
    """(window, title) of the host that loads the index: its sizes and caps are the guard's."""

    mod = hosts.load(HOST)
    return mod.window(), str(getattr(mod, "TITLE", HOST))


def host_unit() -> tuple[str, str]:
    window, title = host_window()
    return window.unit, title


def parse_target(text: str) -> tuple[int | None, int | None]:
    """`LINES/BYTES`, `LINES/` or `/BYTES` (or plain `LINES`); ValueError when malformed."""

    lines_s, sep, bytes_s = text.partition("/")
    lines = positive_int(lines_s) if lines_s.strip() else None
    nbytes = positive_int(bytes_s) if bytes_s.strip() else None
    if (lines_s.strip() and lines is None) or (bytes_s.strip() and nbytes is None) or (lines is None and nbytes is None):
        raise ValueError("--target takes LINES/BYTES with positive whole numbers, e.g. 140/17500, not %r" % text[:40])
    return lines, nbytes


def caps_for(store: store_mod.Store, window: Window, env: Mapping[str, str] | None = None) -> Caps:
    """The caps the guard holds this index to, in the window's unit."""

    return guard.caps_for(store.index_path, env, window)[0]


def target_for(caps: Caps, lines: int | None, nbytes: int | None) -> Target:
    if lines is None and nbytes is None:
        return Target(caps.warn_lines, caps.warn_bytes, "the warn caps")
    return Target(lines if lines is not None else caps.warn_lines, nbytes if nbytes is not None else caps.warn_bytes,
                  "--target")


def load_store(root: str, env: Mapping[str, str] | None = None) -> store_mod.Store:
    try:
        st = store_mod.load(root, env)
    except OSError as exc:
        raise CompactError(EX_NOINPUT, "cannot read the store folder %s: %s; pass the folder that holds %s"
                           % (root, exc.strerror or exc.__class__.__name__, "MEMORY.md")) from None
    if st.index_raw is None or st.index_text is None:
        code, reason = st.index_error or ("index-missing", "not read")
        raise CompactError(EX_NOINPUT, "cannot compact %s: %s (%s); fix the index first (`engramory doctor %s`)"
                           % (st.index_path, reason, code, root))
    if st.index_size > len(st.index_raw):
        raise CompactError(EX_NOINPUT, "cannot compact %s: it is %s bytes, more than the %s this command reads; "
                           "cut it down by hand first (`engramory doctor %s` shows where)"
                           % (st.index_path, "{:,}".format(st.index_size), "{:,}".format(len(st.index_raw)), root))
    if st.index_bad_bytes:
        offset, line = st.index_bad_bytes[0]
        raise CompactError(EX_NOINPUT, "cannot compact %s: it is not UTF-8 (first bad byte at offset %d, line %d), "
                           "and rewriting it would change those bytes; fix the encoding first (`engramory doctor %s`)"
                           % (st.index_path, offset, line, root))
    unread = unread_files(st)
    if unread:
        raise CompactError(EX_NOINPUT, unread_refusal(root, unread))
    return st


SHOW_UNREAD = 5  # unread files named in the refusal; the doctor lists every one


def unread_refusal(root: str, unread: list[str]) -> str:
    shown = "; ".join(unread[:SHOW_UNREAD])
    if len(unread) > SHOW_UNREAD:
        shown += " and %s more" % _n(len(unread) - SHOW_UNREAD)
    one = len(unread) == 1
    it, files = ("it", "that file") if one else ("them", "those files")
    return ("cannot compact %s: %s file%s of the store could not be read: %s; a plan over part of a store could "
            "drop a pointer to a note it never read, so none is made. Fix %s, move %s out of the store or cut %s "
            "down, then run `engramory compact %s` again (`engramory doctor %s` reports %s too)"
            % (root, _n(len(unread)), "" if one else "s", shown, files, it, it, root, root, it))


def unread_files(st: store_mod.Store) -> list[str]:
    """Each part of the store that was not read whole, with why and its numbers: the config,
    a folder that cannot be listed, a `.md` entry that is not a regular file (a FIFO, a device,
    a link to one), a note that cannot be read or is past the reader's limit. A note that is
    not UTF-8 was read whole (its bytes are in the digest) and is left alone by every plan."""
    out = []
    cfg = st.config
    if cfg.exists and cfg.raw is None:
        out.append("%s (%s)" % (os.path.basename(cfg.path), "; ".join(cfg.errors[:1]) or "not read"))
    out.extend("%s/ (a folder that cannot be listed: %s)" % (rel, why) for rel, why in sorted(st.unlistable))
    out.extend("%s (%s)" % (rel, why) for rel, why in sorted(st.skipped))
    for n in st.notes:
        if n.error is None or n.error[0] == "file-not-utf8":
            continue
        if n.error[0] == "note-too-large":
            out.append("%s (%s bytes, past the %s-byte limit a note is read to)" % (n.rel, _n(n.size),
                                                                                 _n(store_mod.READ_MAX)))
        else:
            out.append("%s (%s)" % (n.rel, n.error[1]))
    return out


def plan_for(root: str, lines: int | None, nbytes: int | None, env: Mapping[str, str] | None = None) -> Plan:
    st = load_store(root, env)
    window, _ = host_window()
    caps = caps_for(st, window, env)
    return compactplan.make_plan(st, target_for(caps, lines, nbytes), window, caps)


# -- rendering ----------------------------------------------------------------------------


def diff_text(plan: Plan) -> str:
    out: list[str] = []
    for ch in plan.changes:
        if ch.action == "move":
            out.append("diff --git a/%s b/%s\nrename from %s\nrename to %s\n" % (ch.path, ch.to, ch.path, ch.to))
            if ch.after == ch.before:
                continue
        a = ch.before.decode("utf-8", "surrogateescape").splitlines(keepends=True)
        b = ch.after.decode("utf-8", "surrogateescape").splitlines(keepends=True)
        for line in difflib.unified_diff(a, b, "a/" + ch.path, "b/" + (ch.to or ch.path), n=1):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _measure_text(m: Measure | None, unit: str) -> str:
    assert m is not None
    return "%s lines, %s %s (%s bytes on disk)" % (_n(m.lines), _n(m.units), unit, _n(m.bytes))


def render_text(plan: Plan, root: str, title: str, outcome: str | None = None) -> str:
    """The plan for a person and an agent: the summary first (what a host that shows only the
    start of a long output still shows), then each operation, then the diff. `outcome`
    replaces the closing next step (after --apply)."""
    out = _summary_lines(plan, root, title)
    out += _decision_lines(plan)
    out.append(_next_step(plan, root, outcome))
    out.append("Plan digest: %s" % plan.digest)
    out += _operation_lines(plan)
    diff = diff_text(plan)
    if diff:
        out.append("")
        out.append("Diff of every file the plan changes:")
        out.append(diff.rstrip("\n"))
    return "\n".join(out) + "\n"


def _summary_lines(plan: Plan, root: str, title: str) -> list[str]:
    """The first lines: the index against its target, the plan's size, its result, the invariants."""
    st = plan.store
    t = plan.target
    c = plan.caps
    out = ["engramory compact: %s is %s, counted as %s counts it; target %s lines / %s %s (%s); hard caps %s / %s."
           % (os.path.join(root, st.index_name), _measure_text(plan.before, plan.unit), title, _n(t.lines),
              _n(t.bytes), plan.unit, t.source, _n(c.hard_lines), _n(c.hard_bytes))]
    if plan.operations:
        counts: dict[str, int] = {}
        for op in plan.operations:
            counts[op.op] = counts.get(op.op, 0) + 1
        out.append("Plan: %d operation%s (%s); %d file%s change."
                   % (len(plan.operations), "" if len(plan.operations) == 1 else "s",
                      ", ".join("%d %s" % (n, name) for name, n in counts.items()),
                      len(plan.changes), "" if len(plan.changes) == 1 else "s"))
    state = "within the target" if plan.within_target else "still OVER the target"
    out.append("Result: %s: %s." % (_measure_text(plan.after, plan.unit), state))
    out.append("Invariants: %s." % "; ".join("%s %s" % (name, "ok" if ok else "FAILED: " + detail)
                                             for name, ok, detail in plan.invariants))
    return out


def _decision_lines(plan: Plan) -> list[str]:
    """The proposals, and the decisions a plan that cannot reach its target leaves."""
    out = []
    if plan.proposals:
        out.append("Proposals (never applied; settle them by hand, edit by edit):")
        for item in plan.proposals:
            out.append("  - %s %s: %s" % (item.kind, " + ".join(item.paths), item.reason))
    if plan.status in ("decisions-needed", "refused"):
        out.append("Decisions needed before the target can be reached:" if plan.status != "refused"
                   else "The plan is REFUSED (an invariant failed); decisions needed:")
        for item in plan.decisions:
            if item.kind == compactplan.PROPOSE_MERGE:
                continue
            out.append("  - %s %s: %s" % (item.kind, ", ".join(item.paths), item.reason))
        if plan.proposals:
            out.append("  - or settle the proposals above")
    return out


def _next_step(plan: Plan, root: str, outcome: str | None) -> str:
    if outcome is not None:
        return outcome
    if plan.status == "nothing-to-do":
        return "Nothing to do: the index is within the target."
    if plan.status == "refused":
        return "Nothing can be applied: the plan breaks an invariant (above)."
    return ("Next: show this plan to the user, then apply it with `engramory compact %s --apply -` "
            "(or save it with --json and apply that file with --apply PLAN); %s. Then handle the "
            "proposals and decisions by hand." % (root, _undo_words(plan)))


def _operation_lines(plan: Plan) -> list[str]:
    if not plan.operations:
        return []
    st = plan.store
    out = ["", "Operations, in order:"]
    for k, op in enumerate(plan.operations, 1):
        e = op.effect
        where = "%s:%d" % (st.index_name, op.line) if op.line else st.index_name
        out.append("  %d. %s %s [%s lines, %s %s, %s bytes]" % (
            k, op.op, where, _signed(e["lines"]), _signed(e["units"]), plan.unit, _signed(e["bytes"])))
        out.append("     %s" % op.reason)
    return out


def _undo_words(plan: Plan) -> str:
    """What the plan's apply promises about undo: only what the journal can keep."""

    problem = blobstore.undo_problem((c.path, len(c.before)) for c in plan.changes)
    if problem is None:
        return "`engramory undo` reverses it"
    return ("its undo cannot be kept (%s): applying it needs --no-undo, and then nothing takes it back" % problem)


def plan_dict(plan: Plan, root: str) -> dict[str, Any]:
    st = plan.store
    return {
        "version": PLAN_VERSION,
        "kind": "engramory-compact-plan",
        "root": os.path.abspath(root),
        "index": st.index_name,
        "status": plan.status,
        "exit": plan.exit_code,
        "digest": plan.digest,
        "unit": plan.unit,
        "caps": plan.caps.as_dict(),
        "target": plan.target.as_dict(),
        "before": plan.before.as_dict() if plan.before else None,
        "after": plan.after.as_dict() if plan.after else None,
        "within_target": plan.within_target,
        "operations": [op.as_dict() for op in plan.operations],
        "proposals": [p.as_dict() for p in plan.proposals],
        "decisions": [d.as_dict() for d in plan.decisions],
        "invariants": [{"name": n, "ok": ok, "detail": d} for n, ok, d in plan.invariants],
        "changes": [c.as_dict() for c in plan.changes],
        "diff": diff_text(plan),
    }


JSON_STYLE: dict[str, Any] = {"indent": 2, "ensure_ascii": False}  # how a plan is printed and saved


# -- applying -----------------------------------------------------------------------------


def read_plan(source: str) -> dict[str, Any]:
    try:
        if source == "-":
            raw = sys.stdin.buffer.read(64 << 20)
        else:
            with open(source, "rb") as f:
                raw = f.read(64 << 20)
    except OSError as exc:
        raise CompactError(EX_NOINPUT, "cannot read the plan %s: %s" % (source, exc.strerror or exc)) from None
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise CompactError(EX_DATAERR, "%s is not a compact plan (not JSON: %s); save one with "
                           "`engramory compact ROOT --json > plan.json`" % (source, exc)) from None
    if not isinstance(obj, dict) or obj.get("kind") != "engramory-compact-plan" or obj.get("version") != PLAN_VERSION:
        raise CompactError(EX_DATAERR, "%s is not a version-%d engramory compact plan" % (source, PLAN_VERSION))
    target = obj.get("target")
    if (not isinstance(target, dict) or not isinstance(target.get("lines"), int) or not isinstance(target.get("bytes"), int)
            or not isinstance(obj.get("digest"), str) or not isinstance(obj.get("changes"), list)):
        raise CompactError(EX_DATAERR, "%s is a damaged compact plan (target, digest or changes missing)" % source)
    return obj


def _change_keys(changes: list[Any]) -> list[tuple[Any, ...]]:
    keys: list[tuple[Any, ...]] = []
    for c in changes:
        if isinstance(c, dict):
            keys.append((c.get("path"), c.get("action"), c.get("to", ""), c.get("before_sha256"), c.get("after_sha256")))
        else:
            keys.append(("?",))
    return keys


def apply(root: str, saved: dict[str, Any] | None, lines: int | None, nbytes: int | None, argv: list[str],
          env: Mapping[str, str] | None = None, no_undo: bool = False) -> tuple[Plan, Any]:
    """Re-plan under the store lock, compare with `saved` (None: plan-and-apply), write.
    Returns the plan and the journal entry this transaction appended under the lock (None
    when nothing was written): never the journal's last line read afterwards, which another
    writer waiting for the lock may already own."""

    if saved is not None:
        lines, nbytes = saved["target"]["lines"], saved["target"]["bytes"]
    try:
        with journal.transaction(root, command="compact", argv=argv, no_undo=no_undo) as tx:
            plan = _replan(root, saved, lines, nbytes, env)
            if plan.refused:
                raise CompactError(2, "the plan breaks an invariant, so nothing was written: %s" % "; ".join(
                    d for _, ok, d in plan.invariants if not ok))
            if not plan.changes:
                raise _Nothing(plan)
            _write_changes(tx, plan)
    except _Nothing as nothing:
        return nothing.plan, None
    except journal.JournalError as exc:
        raise _journal_failure(exc) from None
    return plan, tx.entry


def _replan(root: str, saved: dict[str, Any] | None, lines: int | None, nbytes: int | None,
            env: Mapping[str, str] | None) -> Plan:
    """The plan the store gives now, held to `saved` when there is one."""
    st = load_store(root, env)
    window, _ = host_window()
    caps = caps_for(st, window, env)
    target = target_for(caps, lines, nbytes)
    if saved is not None:
        target.source = str(saved["target"].get("source", "the plan"))
    plan = compactplan.make_plan(st, target, window, caps)
    if saved is not None:
        _same_plan(saved, plan, root)
    return plan


def _same_plan(saved: dict[str, Any], plan: Plan, root: str) -> None:
    if saved["digest"] != plan.digest:
        raise CompactError(EX_DATAERR, "the store changed since the plan was made (digest %s, now %s): "
                           "nothing was written; run `engramory compact %s` again and apply the new plan"
                           % (saved["digest"][:19], plan.digest[:19], root))
    # the saved plan was printed masked: compare it with this plan masked the same way
    if _change_keys(saved["changes"]) != _change_keys(redact_json([c.as_dict() for c in plan.changes])):
        raise CompactError(EX_DATAERR, "the plan's changes differ from what the store gives now: "
                           "nothing was written; make a new plan")


def _write_changes(tx: Any, plan: Plan) -> None:
    """Every change of `plan`, each file first held to the bytes the plan was made from."""
    for ch in plan.changes:
        data = tx.read(ch.path)
        if data != ch.before:
            raise CompactError(EX_DATAERR, "%s changed while the plan was applied: nothing was written" % ch.path)
        if ch.action == "move":
            if tx.read(ch.to) is not None:
                raise CompactError(EX_DATAERR, "%s already exists: nothing was written" % ch.to)
            tx.move(ch.path, ch.to)
            if ch.after != ch.before:
                tx.write(ch.to, ch.after)
        else:
            tx.write(ch.path, ch.after)


def _journal_failure(exc: journal.JournalError) -> CompactError:
    """The message of a transaction the journal refused or could not finish."""
    if isinstance(exc, journal.JournalConflict):
        return CompactError(EX_DATAERR, "the store changed while the plan was applied (%s): nothing was written; "
                            "make a new plan" % exc)
    if isinstance(exc, journal.LockTimeout):
        return CompactError(EX_DATAERR, "%s; nothing was written: try again when the other engramory command is done"
                            % exc)
    if isinstance(exc, journal.StoreDamaged):
        return CompactError(EX_NOINPUT, "the plan cannot be applied: %s" % exc)
    return CompactError(EX_DATAERR, "the plan cannot be applied: %s; nothing was written" % exc)


class _Nothing(Exception):
    def __init__(self, plan: Plan) -> None:
        super().__init__("nothing to do")
        self.plan = plan



"""What `new`, `update`, `archive` and `restore` share: the dry run, the checks of a note's
content (size, Why:/How to apply:, secrets, dates), the store's readOnly rules, the body from
stdin, how refusals become exit codes, and the receipt's tail."""

from __future__ import annotations

import fnmatch
import sys

from engramory import config
from engramory.curate import notes
from engramory.curate.notes import NEEDS_LABELS, Refusal, n
from engramory.doctor.notes import has_label, relative_dates
from engramory.doctor.scan import scan_note
from engramory.exitcodes import EX_BUSY, EX_NOINPUT, EX_REFUSED
from engramory.store import descriptions, journal
from engramory.store import reader as store
from engramory.store.reader import Note

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


class DryRun(Exception):
    """Raised inside the transaction once every check passed, so that nothing is written; it
    carries the receipt of what would have been written (`engramory <cmd> --dry-run [--json]`)."""

    def __init__(self, receipt: Callable[[], int]) -> None:
        super().__init__("dry run")
        self.receipt = receipt


def dry_run_or(work: Callable[[], int]) -> Callable[[], int]:
    def run() -> int:
        try:
            return work()
        except DryRun as dry:
            return dry.receipt()

    return run


# -- checks every writing command shares ----------------------------------------------------------

def description_warnings(desc: str, slug: str) -> list[str]:
    """The doctor's description-weak finding for a note `new` or `update` writes, as a receipt
    warning: the same judgement (store.descriptions.weakness), so the two never disagree."""

    why = descriptions.weakness(desc, slug)
    return [] if why is None else ["doctor would warn description-weak: %s; %s" % (why, descriptions.ADVICE)]


def read_only(root: str, rels: Sequence[str]) -> None:
    cfg = config.load_store_config(root)
    for rel in rels:
        for pattern in cfg.read_only:
            if fnmatch.fnmatchcase(rel, pattern.strip().lstrip("/")):
                raise Refusal("%s is read-only: the store config %s lists it under \"readOnly\" (%r); ask the "
                              "user to change it themselves" % (rel, cfg.path, pattern))


# archive moves a note's bytes through the journal (read whole, written beside, kept for undo);
# past this it refuses even with --no-undo. A note past store.READ_MAX is not parsed, so update
# and restore, which need its frontmatter, refuse past that.
MOVE_MAX = 16 << 20


def within_read(st: store.Store, rel: str, limit: int, hint: str) -> None:
    """Refuse a note over `limit` bytes before the transaction reads it: moving or changing it
    would read it whole (a 100 MB note cost 313 MB to archive, 215 MB to restore or update)."""
    note = st.by_rel.get(rel)
    if note is None or note.size <= limit:
        return
    what = "engramory reads of a note" if limit == store.READ_MAX else "engramory moves"
    raise Refusal("%s is %s bytes, more than the %s bytes %s (the cap of one note is %s bytes); nothing was "
                  "written: %s" % (rel, n(note.size), n(limit), what, n(st.config.note_max_bytes), hint))


def labels_ok(body: str) -> bool:

    low = body.lower()
    return has_label(low, "why") and has_label(low, "how to apply")


def check_secret(text: str, what: str) -> None:
    """Refuse a note text in which the doctor would find a secret (its message masks it)."""

    probe = Note("", "", False)
    probe.text = text
    secrets = [f for f in scan_note(probe) if f.code == "secret"]
    if secrets:
        raise Refusal("%s holds what looks like a secret at line %d: %s. Memory is plain text loaded into "
                      "sessions; record only where the secret lives (an environment variable name, a password "
                      "manager entry)" % (what, secrets[0].line, secrets[0].message))


def check_content(type_: str, text: str, body: str, cap: int, force: bool) -> None:

    size = len(text.encode("utf-8"))
    if size > cap:
        raise Refusal("the note would be %s bytes, over the %s-byte cap per note (noteMaxBytes): one note holds "
                      "one fact; split it or trim the body by %s bytes" % (n(size), n(cap), n(size - cap)))
    if type_ in NEEDS_LABELS and not labels_ok(body):
        raise Refusal("a %s note needs a Why: line (the reason) and a How to apply: line (what to do next time): "
                      "give --why and --how" % type_)
    check_secret(text, "the note")
    if type_ == "project" and not force:
        spans = relative_dates(body.lower())
        if spans:
            a, b = spans[0]
            raise Refusal("a project note must use absolute dates: %s is relative and wrong tomorrow; write the "
                          "calendar date (today is %s), or pass --force" % (notes._q(body[a:b]), notes.today()))


def links_to(st: store.Store, slugs: set[str], skip: set[str]) -> list[str]:
    """`path:line: [[target]]` for every live note's link to one of `slugs`."""
    out = []
    for note in st.live:
        if note.rel in skip:
            continue
        for target, line in note.link_list():
            key = target.strip().lower()
            key = key[:-3] if key.endswith(".md") else key
            if key in slugs:
                out.append("%s:%d: [[%s]]" % (note.rel, line, target.strip()))
    return out


def body_arg(args_body: str | None, cap: int) -> str | None:
    try:
        piped = args_body is None and sys.stdin is not None and not sys.stdin.isatty()
    except (OSError, ValueError):
        piped = False
    if args_body == "-" or piped:
        try:
            text = notes.read_stdin(cap)
        except (OSError, ValueError, AttributeError):
            if args_body == "-":
                raise Refusal("stdin cannot be read; give the body with --body") from None
            return None
        return text if (args_body == "-" or text.strip()) else None
    return args_body


def run(as_json: bool, work: object) -> int:
    """Run a command body, turning refusals and store conflicts into messages and exit codes."""
    try:
        return int(work())  # type: ignore[operator]
    except Refusal as exc:
        return notes.fail(as_json, str(exc), exc.code)
    except (journal.JournalConflict, journal.LockTimeout) as exc:
        return notes.fail(as_json, str(exc), EX_BUSY)
    except journal.StoreDamaged as exc:
        return notes.fail(as_json, str(exc), EX_NOINPUT)
    except journal.JournalError as exc:
        return notes.fail(as_json, str(exc), EX_REFUSED)
    except UnicodeError:
        return notes.fail(as_json, "an argument is not valid UTF-8 text (undecodable bytes); nothing was written: "
                          "pass the text as UTF-8", EX_REFUSED)
    except OSError as exc:
        return notes.fail(as_json, "%s: %s; nothing was written" % (exc.filename or "the store", exc.strerror or exc),
                          EX_REFUSED)


NO_UNDO_HELP = ("write even when its undo cannot be kept (a prior version over the blob store's caps); the "
                "receipt and `engramory log` then say it cannot be undone")


def receipt_text(root: str, entry: journal.Entry | None, lines: list[str], warnings: list[str],
                  dry: bool) -> str:
    out = list(lines)
    if dry:
        out.append("dry run: nothing was written")
    elif entry is not None and entry.undoable:
        out.append("journal entry %d: `engramory undo %d` takes it back" % (entry.id, entry.id))
    elif entry is not None:
        out.append("journal entry %d: undo is NOT possible for it (%s)" % (entry.id, entry.undo_blocker()))
    out.extend("warning: " + w for w in warnings)
    return "\n".join(out)

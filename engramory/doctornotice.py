"""The doctor part of the SessionStart notice (issue 11): one line per store with doctor
errors, after the size notice, on a time budget; for a large store, the count a detached
child left (`save_doctor_summary`), never a walk of every note. Reached through
engramory.notices, and only at a session start that found a store.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

DOCTOR_BUDGET = 0.2  # seconds for the doctor part of SessionStart, whatever the store's size

# The doctor's own size findings repeat what the notice already says; git is a subprocess.
DOCTOR_SKIP = ("index-over-cap", "index-warn-zone", "store-in-git")




def doctor_line(root: str, env: "Mapping[str, str] | None" = None, budget: float = DOCTOR_BUDGET) -> "str | None":
    """One line when the store at `root` has doctor errors, or None. Runs once per session
    (never on the per-call path) and stops reading notes after `budget` seconds, so a store
    of any size starts the session in time (the host gives up on the hook at 10 s and then
    loses its notice too). A missing or failing doctor never costs the session its start."""
    try:
        from engramory.store import review  # lazy: only when a store folder changed

        if review.large_store(root):
            # the count the last detached reconcile left (save_doctor_summary), if the store
            # has not moved since: one small read, not a walk of every note
            found = load_doctor_summary(root)
            if found is None:
                return None
            errors, complete = found
        else:
            from engramory.doctor import run as doctor  # lazy: the doctor once a session, on a budget

            errors, complete = doctor.quick_errors(root, env, budget, DOCTOR_SKIP)
    except Exception:  # noqa: BLE001 - a broken or absent doctor must not break the session start
        return None
    if errors <= 0:
        return None
    return "the memory store %s has %s%d doctor error%s; run `engramory doctor %s` to see and fix them." % (
        root, "" if complete else "at least ", errors, "" if errors == 1 else "s", root,
    )


def _store_stamp(root: str) -> "list[int]":
    """What moves when a note is added, removed or renamed, or the index changes: the store
    folder's and the index's mtime_ns and the index's size (three stats' worth)."""
    import os

    from engramory.scope import index_name_for  # lazy: only a call that may change an index needs this

    st = os.stat(root)
    ix = os.stat(os.path.join(root, index_name_for(root)))
    return [st.st_mtime_ns, ix.st_mtime_ns, ix.st_size]


def save_doctor_summary(root: str, env: "Mapping[str, str] | None" = None) -> None:
    """The doctor's error count for a large store, made without a time budget by the detached
    child SessionStart starts, for the next SessionStart to read (`load_doctor_summary`)."""
    import json
    import os

    from engramory.doctor import run as doctor  # lazy: the doctor once a session, on a budget
    from engramory.fsutil import write_atomic  # lazy: os only when the state changed
    from engramory.store import metadir  # lazy: os only for the seed of the config stamps

    meta = metadir.meta_dir(root)  # made first: making it moves the folder's stamp
    stamp = _store_stamp(root)
    errors, complete = doctor.quick_errors(root, env, 600.0, DOCTOR_SKIP)
    data = json.dumps({"version": 1, "stamp": stamp, "errors": errors, "complete": complete}).encode()
    write_atomic(os.path.join(meta, metadir.DOCTOR_NOTICE), data, 0o600)


def load_doctor_summary(root: str) -> "tuple[int, bool] | None":
    """(errors, complete) from the summary `save_doctor_summary` left, or None when there is
    none, it is damaged, or the store moved since it was made."""
    from engramory import jsonlite  # lazy: config stamps only at session start
    from engramory.store import metadir  # lazy: os only for the seed of the config stamps

    raw, _ = metadir.read(metadir.path(root, metadir.DOCTOR_NOTICE), 4096)
    if raw is None or len(raw) > 4096:
        return None
    try:
        obj = jsonlite.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    if (not isinstance(obj, dict) or obj.get("version") != 1 or obj.get("stamp") != _store_stamp(root)
            or not isinstance(obj.get("errors"), int) or isinstance(obj.get("errors"), bool)):
        return None
    return int(obj["errors"]), obj.get("complete") is True


def doctor_lines(roots: "Sequence[str]", env: "Mapping[str, str] | None", budget: float) -> "list[str]":
    """doctor_line for each store, sharing one time budget."""
    import time

    end = time.monotonic() + budget
    out = []
    for root in roots:
        left = end - time.monotonic()
        if left <= 0:
            break
        line = doctor_line(root, env, left)
        if line:
            out.append(line)
    return out

"""The edges every host's install / uninstall / --check share: the first line of the report,
the interpreter the hooks will run, the usage error for a scope the host does not have, the
deletion of a settings file install created, and the last lines of a --check that lists its
problems. Part of the installer core; engramory.installer re-exports all of it. Standard
library only; Python 3.9+.
"""

from __future__ import annotations

import os
import sys

from engramory.install.settings import Change, SettingsError, WriteError, apply_change, read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any


def header(verb: str, host: str, scope: str | None, dry_run: bool) -> str:
    """`engramory install --host codex (user scope, dry run: nothing is written)`, one line."""
    bits = (["%s scope" % scope] if scope else []) + (["dry run: nothing is written"] if dry_run else [])
    return "engramory %s --host %s%s\n" % (verb, host, " (%s)" % ", ".join(bits) if bits else "")


def interpreter(given: str | None, host: str | None = None) -> str:
    """The Python the hooks will run (`given`, else this one); refused unless absolute."""
    exe = given or sys.executable
    if not exe or not os.path.isabs(exe):
        raise SettingsError(
            "cannot tell which Python runs this (sys.executable is %r); run the installer with an "
            "absolute interpreter path, e.g. /usr/bin/python3 -m engramory install%s"
            % (exe, " --host %s" % host if host else "")
        )
    return exe


def scope_of(args: argparse.Namespace | None, verb: str, title: str, scopes: Sequence[tuple[str, str]],
             scope: str | None = None) -> str | None:
    """`scope` (default: `args.scope`, else user) when it is one of `scopes` ((scope, where it
    installs)); else None, with the usage error on stderr (the caller exits 64)."""
    scope = scope or getattr(args, "scope", None) or "user"
    if scope in dict(scopes):
        return scope
    sys.stderr.write("engramory %s: --scope %s is not a %s scope; use %s\n" % (
        "uninstall" if verb == "uninstall" else "install", scope, title,
        " or ".join("--scope %s (%s)" % pair for pair in scopes)))
    return None


def apply_or_delete(change: Change) -> str | None:
    """installer.apply_change, except that a file install created and that now holds only our
    entries (after None) is deleted without a backup: nothing of the user's is in it. Refuses
    when the file changed since it was read."""
    if change.after is None and change.before is not None:
        if read_regular(change.path) != change.before:
            raise SettingsError("%s: changed on disk while this ran; nothing was written to it: run "
                                "this again" % change.path)
        os.unlink(change.path)
        return None
    return apply_change(change)


def finish_problems(problems: Sequence[str], next_step: str, healthy: str,
                    out: Callable[[str], Any] | None = None) -> int:
    """The end of a --check that collects its problems as lines: each problem, then the next
    step and 1; or the healthy line and 0."""
    write = out or sys.stdout.write
    for problem in problems:
        write("  problem: %s\n" % problem)
    if problems:
        write("  next step: %s\n" % next_step)
        return 1
    write("  healthy: %s\n" % healthy)
    return 0


def reinstall_step(host: str, scope: str | None = None) -> str:
    """The next step a --check names: the install command, run with this Python."""
    return "run `%s -m engramory install --host %s%s` from the engramory checkout" % (
        sys.executable or "python3", host, " --scope %s" % scope if scope else "")


def earlier_note(path: str, legacy_script: str, host: str) -> str:
    """--check's note on wiring an install from before the generic entry wrote: it runs the
    host's own entry script, a shim that still guards, until a reinstall."""
    return ("%s was written by an earlier install: it runs hooks/%s (still shipped, it still guards); a reinstall "
            "moves it to hooks/engramory_hook.py %s" % (path, legacy_script, host))


def refused(verb: str, exc: SettingsError) -> int:
    """Say on stderr what stopped `verb` ("install", "uninstall"), and that nothing was changed
    unless a write failed part-way (a WriteError). 1."""
    sys.stderr.write("engramory %s: %s\n" % (verb, exc))
    if not isinstance(exc, WriteError):
        sys.stderr.write("engramory %s: nothing was changed.\n" % verb)
    return 1


def run_verb(verb: str, work: Callable[[], int], where: str) -> int:
    """Run one verb's work (`verb`: "install" or "uninstall"), reporting what stops it: a
    refusal (nothing was changed, unless a write failed part-way) or a failed write (`where`
    names the folder when the error names no file). 1 for either."""
    try:
        return work()
    except SettingsError as exc:
        return refused(verb, exc)
    except BrokenPipeError:
        raise  # `... | head`: the reader left (engramory.cli handles it)
    except OSError as exc:
        sys.stderr.write("engramory %s: could not write %s: %s; check the permissions and free space, then run "
                         "this again\n" % (verb, exc.filename or where, exc.strerror or exc))
        return 1

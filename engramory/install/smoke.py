"""The `install --check` scaffolding, for every host's installer: the report of what works
and what would keep the guard from acting (with a fix per problem), a hook run fed the
payload a host would send, and the checks that a hook's interpreter runs and that every
bundle module imports. Part of the installer core; engramory.installer re-exports all of
it. Standard library only; Python 3.9+.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from engramory.install.bundle import MANIFEST, PACKAGE_DIR, bundle_files, is_bundle, read_manifest, safe_rel
from engramory.install.hookcommands import HOOK_TIMEOUT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any


class Report:
    """What `install --check` found, as lines: ok (works), note (worth knowing) and problem
    (the guard would not act). Every problem carries its reason and its fix. `finish`
    prints the report and returns the exit status: 0 healthy, 1 with any problem."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.oks: list[str] = []
        self.notes: list[str] = []
        self.problems: list[tuple[str, str]] = []

    def ok(self, line: str) -> None:
        self.oks.append(line)

    def note(self, line: str) -> None:
        self.notes.append(line)

    def problem(self, reason: str, fix: str) -> None:
        if (reason, fix) not in self.problems:
            self.problems.append((reason, fix))

    @property
    def healthy(self) -> bool:
        return not self.problems

    def finish(self, healthy_line: str, out: Callable[[str], Any] | None = None) -> int:
        write = out or sys.stdout.write
        write(self.title + "\n")
        for line in self.oks:
            write("  ok: %s\n" % line)
        for line in self.notes:
            write("  note: %s\n" % line)
        for reason, fix in self.problems:
            write("  problem: %s\n    fix: %s\n" % (reason, fix))
        if self.problems:
            write("  the guard would not act: %d problem%s\n" % (len(self.problems), "" if len(self.problems) == 1 else "s"))
            return 1
        write("  healthy: %s\n" % healthy_line)
        return 0

    def as_json(self) -> dict[str, Any]:
        return {
            "title": self.title, "healthy": self.healthy, "ok": self.oks, "notes": self.notes,
            "problems": [{"reason": r, "fix": f} for r, f in self.problems],
        }


class Smoke:
    """One hook run: its exit status, stdout and stderr; `error` when it could not start."""

    def __init__(self, rc: int, stdout: bytes, stderr: bytes, error: str = "") -> None:
        self.rc = rc
        self.stdout = stdout
        self.stderr = stderr
        self.error = error

    def json(self) -> Any:
        """stdout as JSON (None when it is empty or not JSON)."""
        text = self.stdout.decode("utf-8", "replace").strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return None

    def last_error_line(self) -> str:
        lines = self.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[-1][:200] if lines else ""


def smoke(
    argv: Sequence[str], payload: Any, env: Mapping[str, str] | None = None, cwd: str | None = None,
    timeout: float = HOOK_TIMEOUT,
) -> Smoke:
    """Run a hook command (split_command(...).argv()) with `payload` (JSON-encoded unless
    bytes) on stdin, as the host would. `env` is the complete environment (default: ours
    without ENGRAMORY_*)."""
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
    if env is None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    try:
        proc = subprocess.run(
            list(argv), input=data, capture_output=True, timeout=timeout, env=dict(env), cwd=cwd,
        )
    except subprocess.TimeoutExpired:
        return Smoke(-1, b"", b"", "it did not answer within %g s (the host gives up and lets the call through)" % timeout)
    except OSError as exc:
        return Smoke(-1, b"", b"", "it could not start (%s)" % (exc.strerror or exc))
    return Smoke(proc.returncode, proc.stdout, proc.stderr)


def interpreter_problem(exe: str) -> str | None:
    """Why `exe` cannot run a hook, or None."""
    if not exe:
        return "the command names no interpreter"
    if not os.path.isabs(exe):
        found = shutil.which(exe)
        if not found:
            return "the interpreter %s is not on PATH" % exe
        exe = found
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        return "the interpreter %s does not exist or cannot run" % exe
    return None


def import_problems(interpreter: str, bundle_dir: str, modules: Iterable[str]) -> list[str]:
    """Import every module in `modules` ("engramory.guard", ...) from `bundle_dir` with the
    hooks' interpreter, the way the hooks run (-I -S). A hook whose import fails exits 0
    and lets everything through, so a missing or broken module is a problem even though
    no hook ever fails loudly. Returns one line per cause of a failed import."""
    names = sorted(set(modules))
    if not names:
        return []
    # A missing module shows as the error of every module that imports it (`from engramory
    # import guard` says "cannot import name 'guard'"): the child names the missing module
    # itself, and the lines are grouped by cause, so one lost file is one line, not ninety.
    code = (
        "import sys,importlib,importlib.util,re\n"
        "sys.path.insert(0,sys.argv[1])\n"
        "bad=[]\n"
        "def cause(e):\n"
        "    m=re.match(r\"cannot import name '(\\w+)' from '([\\w.]+)'\",str(e))\n"
        "    if m and isinstance(e,ImportError):\n"
        "        full=m.group(2)+'.'+m.group(1)\n"
        "        try: spec=importlib.util.find_spec(full)\n"
        "        except BaseException: spec=0\n"
        "        if spec is None: return 'ModuleNotFoundError(\"No module named %r\")'%full\n"
        "    t=e.__traceback__\n"
        "    while t is not None and t.tb_next is not None: t=t.tb_next\n"
        "    f=t.tb_frame.f_code.co_filename if t is not None else ''\n"
        "    root=sys.argv[1].rstrip('/')+'/'\n"
        "    if f.startswith(root) and f.endswith('.py'):\n"
        "        return '%r (raised in %s)'%(e,f[len(root):-3].replace('/','.').replace('.__init__',''))\n"
        "    return repr(e)\n"
        "for m in sys.argv[2:]:\n"
        "    try: importlib.import_module(m)\n"
        "    except BaseException as e: bad.append('%s\\t%s'%(m,cause(e).replace('\\n',' ')))\n"
        "print('\\n'.join(bad))\n"
    )
    try:
        proc = subprocess.run(
            [interpreter, "-I", "-S", "-c", code, bundle_dir, *names], capture_output=True, timeout=30,
            cwd=bundle_dir if os.path.isdir(bundle_dir) else None,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return ["could not run %s to import the bundle: %s" % (interpreter, exc)]
    if proc.returncode != 0:
        return ["importing the bundle with %s failed: %s" % (interpreter, proc.stderr.decode("utf-8", "replace").strip()[-200:])]
    causes: dict[str, list[str]] = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        module, _, why = line.partition("\t")
        if module.strip():
            causes.setdefault(why, []).append(module)
    out = []
    for why, failed in causes.items():
        if len(failed) == 1:
            out.append("%s: %s" % (failed[0], why))
        else:
            shown = ", ".join(failed[:3]) + (" and %d more" % (len(failed) - 3) if len(failed) > 3 else "")
            out.append("%s: %d modules fail to import (%s)" % (why, len(failed), shown))
    return out


def modules_of(files: Iterable[str]) -> list[str]:
    """Dotted module names of the package files in a manifest's file list."""
    out = []
    for rel in files:
        if rel.startswith(PACKAGE_DIR + "/") and rel.endswith(".py"):
            mod = rel[:-3].replace("/", ".")
            if mod.endswith(".__main__"):
                continue  # runs the CLI when imported
            out.append(mod[: -len(".__init__")] if mod.endswith(".__init__") else mod)
    return sorted(out)


def bundle_problems(bundle_dir: str, interpreter: str) -> list[str]:
    """Every file the manifest of `bundle_dir` lists is there, and every package module in
    it imports with `interpreter`."""
    manifest = read_manifest(os.path.join(bundle_dir, MANIFEST))
    if manifest is None:
        if is_bundle(bundle_dir):
            files, _ = bundle_files(bundle_dir)
        else:
            return ["%s holds no engramory bundle (no %s)" % (bundle_dir, MANIFEST)]
    else:
        files = [f for f in manifest["files"] if isinstance(f, str) and safe_rel(f)]
        if manifest.get("mode") == "link" or manifest.get("mode") == "in-place":
            files, _ = bundle_files(bundle_dir)
    missing = [f for f in files if not os.path.exists(os.path.join(bundle_dir, f))]
    problems = ["%s is missing from %s" % (f, bundle_dir) for f in missing[:10]]
    if len(missing) > 10:
        problems.append("... and %d more files are missing" % (len(missing) - 10))
    problems.extend(import_problems(interpreter, bundle_dir, modules_of(f for f in files if f not in missing)))
    return problems

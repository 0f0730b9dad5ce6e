"""The bundle copy, for every host's installer: which files a user's copy needs (checkout or
wheel layout), the plan and its application (copy, --link, in place), the manifest that
proves a folder is ours and records what install created, and taking the folder back out.
Part of the installer core; engramory.installer re-exports all of it. Standard library
only; Python 3.9+.
"""

from __future__ import annotations

import json
import os
import shutil

import engramory
from engramory import __version__, fsutil
from engramory.install.settings import SettingsError, WriteError, canonical, read_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

SKILL_NAME = "engramory"
MANIFEST = ".engramory-install.json"  # inside a copied bundle folder: proves it is ours
LINK_MANIFEST = ".engramory-link.json"  # beside a --link symlink

# What a user's copy needs at run time; tests, bench, caches and VCS data stay behind.
TOP_FILES = ("SKILL.md", "rules-snippet.md", "PORTING.md", "README.md")
PACKAGE_DIR = "engramory"
FLAT_PY_DIRS = ("hooks", "tools")
DATA_DIRS = ("schemas", "templates")
PLUGIN_MANIFEST = ".claude-plugin/plugin.json"  # never copied: it would make the skill a plugin too
BUNDLE_DATA = "_bundle"  # inside the installed package (wheel): hooks/, tools/, SKILL.md, ...


def source_root() -> str:
    """The bundle this installer runs from: the checkout (the folder holding engramory/ and
    hooks/), or, installed from a wheel, `engramory/_bundle` inside the package, whose files
    `bundle_path` maps back to the checkout layout."""
    package = os.path.dirname(os.path.abspath(engramory.__file__))
    checkout = os.path.dirname(package)
    if os.path.isdir(os.path.join(checkout, "hooks")) or not os.path.isdir(os.path.join(package, BUNDLE_DATA)):
        return checkout
    return os.path.join(package, BUNDLE_DATA)


def is_wheel_layout(root: str) -> bool:
    return os.path.basename(root) == BUNDLE_DATA and not os.path.isdir(os.path.join(root, PACKAGE_DIR))


def bundle_path(root: str, rel: str) -> str:
    """Where the bundle file `rel` ("engramory/guard.py", "hooks/x.py", "SKILL.md") is read
    from: `root/rel` in a checkout; in a wheel the package files are the package itself."""
    if is_wheel_layout(root) and rel.startswith(PACKAGE_DIR + "/"):
        return os.path.join(os.path.dirname(os.path.dirname(root)), rel)
    return os.path.join(root, rel)


def bundle_files(root: str, required: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """(relative paths to install, problems: expected files that are missing). `required`
    names files a host's hooks cannot run without ("hooks/engramory_index_guard.py"): a
    host installer refuses to wire a hook when its file is among the problems."""
    files: list[str] = []
    notes: list[str] = []
    for name in TOP_FILES:
        if os.path.isfile(os.path.join(root, name)):
            files.append(name)
        else:
            notes.append("%s is not in %s; skipped" % (name, root))
    package_base = os.path.dirname(os.path.dirname(root)) if is_wheel_layout(root) else root
    files.extend(_walk(package_base, PACKAGE_DIR, lambda n: n.endswith(".py") or n == "py.typed"))
    for top in FLAT_PY_DIRS:
        files.extend(_flat_py(root, top))
    for top in DATA_DIRS:
        files.extend(_walk(root, top, lambda n: not n.endswith((".pyc", ".pyo"))))
    for rel in required:
        if rel not in files and not os.path.isfile(bundle_path(root, rel)):
            notes.append("%s is missing from %s: the hook that runs it could not run" % (rel, root))
    return files, notes


def _walk(base: str, top: str, keep: Callable[[str], bool]) -> list[str]:
    """The files under `base/top` that `keep` accepts, relative to `base`, in sorted order;
    caches, the wheel's bundle data and dot-names stay out."""
    files: list[str] = []
    for folder, dirs, names in os.walk(os.path.join(base, top)):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", BUNDLE_DATA) and not d.startswith("."))
        for n in sorted(names):
            if not n.startswith(".") and keep(n):
                rel = os.path.relpath(os.path.join(folder, n), base)
                files.append(rel.replace(os.sep, "/"))
    return files


def _flat_py(root: str, top: str) -> list[str]:
    """The .py files directly in `root/top` (hooks/, tools/), sorted; none when it is absent."""
    base = os.path.join(root, top)
    if not os.path.isdir(base):
        return []
    return [
        "%s/%s" % (top, n) for n in sorted(os.listdir(base))
        if n.endswith(".py") and os.path.isfile(os.path.join(base, n))
    ]


def missing_required(notes: Iterable[str]) -> list[str]:
    """The problems among bundle_files' notes that make a hook unable to run."""
    return [n for n in notes if "could not run" in n]


def is_bundle(path: str) -> bool:
    return os.path.isfile(os.path.join(path, PACKAGE_DIR, "__init__.py")) and os.path.isdir(
        os.path.join(path, "hooks")
    )


def same_path(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def read_manifest(path: str) -> dict[str, Any] | None:
    try:
        raw = read_regular(path, 4 << 20)
        if raw is None:
            return None
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("installer") != SKILL_NAME:
        return None
    if not isinstance(data.get("files"), list):
        data["files"] = []
    if not isinstance(data.get("settings"), dict):
        data["settings"] = {}
    return data


def write_manifest(path: str, data: Mapping[str, Any]) -> None:
    fsutil.write_atomic(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8"))


# -- planning the skill folder -----------------------------------------------------------


class SkillPlan:
    """What install will do to the skill folder."""

    def __init__(self) -> None:
        self.mode = "copy"  # copy | link | in-place
        self.add: list[str] = []
        self.update: list[str] = []
        self.same: list[str] = []
        self.stale: list[str] = []  # files an earlier install copied that the bundle dropped
        self.unlink_first = False  # a symlink from an earlier --link goes
        self.clear_folder: list[str] = []  # an earlier copy goes, for --link
        self.link_ok = False  # the links already point at the source
        self.files: list[str] = []

    @property
    def changed(self) -> bool:
        return bool(
            self.add or self.update or self.stale or self.unlink_first or self.clear_folder
            or (self.mode == "link" and not self.link_ok)
        )


def link_entries(files: Iterable[str]) -> list[str]:
    """The top-level names --link makes one link each for (SKILL.md, engramory, hooks, ...)."""
    return sorted({f.replace("\\", "/").split("/", 1)[0] for f in files})


def plan_skill(target: Any, source: str, files: list[str], link: bool) -> SkillPlan:
    """Decide, without writing, how the skill folder gets to hold the bundle. Raises
    SettingsError when the folder exists and is not ours.

    --link makes a real folder holding one link per top-level entry of the bundle, not one
    link for the whole folder: a whole-checkout link would carry .claude-plugin/ along, and
    Claude Code 2.1.332 then also loads the folder as a plugin, so every hook ran twice."""
    plan = SkillPlan()
    plan.files = files
    dest = target.skill_dir
    if os.path.lexists(dest) and not os.path.islink(dest) and os.path.isdir(dest) and same_path(dest, source):
        plan.mode = "in-place"
        old = read_manifest(os.path.join(dest, MANIFEST))
        plan.files = list(old["files"]) if old else []
        return plan
    if link and is_wheel_layout(source):
        raise SettingsError(
            "--link needs a checkout of engramory, and this one was installed from a package (%s); "
            "install without --link (a copy), or run the installer from a checkout" % source
        )
    plan.mode = "link" if link else "copy"
    if link:
        plan.files = link_entries(files)
    if os.path.islink(dest):  # one link for the whole folder, from an earlier version
        if not is_bundle(dest) and os.path.exists(dest):
            raise SettingsError(
                "%s is a link to %s, which is not an engramory bundle; move it away, then run this again"
                % (dest, os.path.realpath(dest))
            )
        plan.unlink_first = True
    elif os.path.lexists(dest):
        _plan_over_earlier(plan, dest, source, files, link)
    if link:
        return plan
    _plan_copies(plan, dest, source, files)
    return plan


def _plan_over_earlier(plan: SkillPlan, dest: str, source: str, files: list[str], link: bool) -> None:
    """The skill folder exists (not a link): what of an earlier install goes or stays. Raises
    SettingsError when the folder is not ours, or --link would delete files we did not put."""
    if not os.path.isdir(dest):
        raise SettingsError("%s exists and is not a folder; move it away, then run this again" % dest)
    old = read_manifest(os.path.join(dest, MANIFEST))
    if old is None:
        raise SettingsError(
            "%s exists but was not installed by engramory (no %s in it); move it away or "
            "use another --scope, then run this again" % (dest, MANIFEST)
        )
    old_files = [f for f in old["files"] if isinstance(f, str) and safe_rel(f)]
    old_link = old.get("mode") == "link"
    if link and old_link and sorted(old_files) == plan.files and all(
        os.path.islink(os.path.join(dest, n)) and same_path(os.path.join(dest, n), bundle_path(source, n))
        for n in plan.files
    ):
        plan.link_ok = True
    elif link or old_link:
        # Links and copies never mix: what an earlier install put there goes first.
        if link:
            foreign = _foreign_files(dest, old_files)
            if foreign:
                raise SettingsError(
                    "%s holds files engramory did not install (%s); --link would have to "
                    "delete them: move them away or install without --link" % (dest, ", ".join(foreign[:5]))
                )
        plan.clear_folder = old_files
    else:
        plan.stale = [f for f in old_files if f not in files]


def _plan_copies(plan: SkillPlan, dest: str, source: str, files: list[str]) -> None:
    """Sort each bundle file into add / same / update for a copy install."""
    for rel in files:
        src = bundle_path(source, rel)
        dst = os.path.join(dest, rel)
        if plan.unlink_first or plan.clear_folder or not os.path.lexists(dst):
            plan.add.append(rel)
        elif _same_file_content(src, dst):
            plan.same.append(rel)
        else:
            plan.update.append(rel)


def safe_rel(rel: str) -> bool:
    """A manifest entry we may delete: relative, inside the folder, no '..'."""
    parts = rel.replace("\\", "/").split("/")
    return bool(rel) and not os.path.isabs(rel) and ".." not in parts and "" not in parts


def _foreign_files(dest: str, ours: list[str]) -> list[str]:
    known = set(ours) | {MANIFEST}
    out = []
    for folder, dirs, names in os.walk(dest):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for n in names:
            rel = os.path.relpath(os.path.join(folder, n), dest).replace(os.sep, "/")
            if rel not in known:
                out.append(rel)
    return sorted(out)


def _same_file_content(a: str, b: str) -> bool:
    try:
        if os.path.islink(b) or not os.path.isfile(b):
            return False
        sa, sb = os.stat(a), os.stat(b)
        if sa.st_size != sb.st_size or (sa.st_mode & 0o777) != (sb.st_mode & 0o777):
            return False
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def apply_skill(plan: SkillPlan, target: Any, source: str) -> None:
    dest = target.skill_dir
    if plan.mode == "in-place":
        return
    if plan.unlink_first:
        os.unlink(dest)
    if plan.clear_folder:
        remove_listed(dest, plan.clear_folder)
        prune_empty(dest)
    if plan.mode == "link":
        if plan.link_ok:
            return
        os.makedirs(dest, exist_ok=True)
        for name in plan.files:
            src = bundle_path(source, name)
            try:
                os.symlink(src, os.path.join(dest, name), target_is_directory=os.path.isdir(src))
            except OSError as exc:
                raise WriteError(
                    "cannot create the link %s -> %s (%s); install without --link to copy instead"
                    % (os.path.join(dest, name), src, exc.strerror or exc.__class__.__name__)
                ) from None
        return
    for rel in plan.add + plan.update:
        src = bundle_path(source, rel)
        with open(src, "rb") as f:
            data = f.read()
        fsutil.write_atomic(os.path.join(dest, rel), data, mode=os.stat(src).st_mode & 0o777)
    remove_listed(dest, plan.stale)
    prune_empty(dest)
    precompile(dest)


def precompile(folder: str) -> None:
    """Write the bytecode of the copied Python files now, with the interpreter the hooks
    will run: the guard runs on every edit, and otherwise its first runs compile the package
    (and every run does, where the folder is not writable at hook time). Best effort."""
    import compileall

    for sub in ("engramory", "hooks", "tools"):
        path = os.path.join(folder, sub)
        if os.path.isdir(path) and not os.path.islink(path):
            try:
                compileall.compile_dir(path, quiet=2, workers=1)
            except Exception:  # noqa: BLE001 - a cache; the hooks compile on their own if need be
                pass


def folder_action_line(
    label: str, action: str, dest: str, manifest: dict[str, Any] | None, dry_run: bool, others: Sequence[str] = ()
) -> str:
    """One report line for what uninstall does to an installed folder (every host)."""
    verb = "would remove" if dry_run else "removed"
    if action == "unlink":
        what = "%s the link %s" % (verb, dest)
    elif action == "remove":
        what = "%s %s (%d files)" % (verb, dest, len(manifest["files"]) if manifest else 0)
    elif action == "manifest-only":
        what = "%s is the bundle itself; its files stay" % dest
    elif action == "keep-shared":
        what = "%s stays: still used by %s" % (dest, ", ".join(others))
    elif action == "foreign":
        what = "%s was not installed by engramory; left alone" % dest
    else:
        what = "nothing installed at %s" % dest
    return "  %s: %s\n" % (label, what)


def _inside(path: str, folder: str) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def remove_listed(folder: str, rels: Iterable[str]) -> list[str]:
    """Delete the listed regular files (or links) under `folder`; return those that went."""
    gone = []
    for rel in rels:
        if not safe_rel(rel):
            continue
        p = os.path.join(folder, rel)
        if not _inside(os.path.dirname(p), folder):
            continue  # reached through a link: not a file of this folder, never delete it
        if os.path.islink(p) or os.path.isfile(p):
            try:
                os.unlink(p)
                gone.append(rel)
            except OSError:
                pass
        parent = os.path.join(os.path.dirname(p), "__pycache__")
        if os.path.isdir(parent) and rel.endswith(".py"):
            shutil.rmtree(parent, ignore_errors=True)  # only bytecode Python made for our files
    return gone


def prune_empty(folder: str) -> None:
    """Remove folders left empty under `folder` (not `folder` itself)."""
    for current, _, _ in sorted(os.walk(folder), key=lambda t: -len(t[0])):
        if current != folder:
            try:
                os.rmdir(current)
            except OSError:
                pass


class Place:
    """Where a host's bundle copy lives, for plan_skill / apply_skill and the manifest: the
    subclass sets `skill_dir`. The manifest is inside that folder, or beside it when the folder
    is one symlink (an earlier --link)."""

    skill_dir: str

    @property
    def link_manifest(self) -> str:
        return os.path.join(os.path.dirname(self.skill_dir), LINK_MANIFEST)

    def manifest_path(self) -> str:
        if os.path.islink(self.skill_dir):
            return self.link_manifest
        return os.path.join(self.skill_dir, MANIFEST)

# -- the steps every host's install and uninstall share ------------------------------------

RUNTIME_DIRS = (PACKAGE_DIR + "/", "tools/")  # what a host's hooks and the agent's check need


def runtime_files(
    source: str, scripts: Iterable[str], dirs: Sequence[str] = RUNTIME_DIRS, top: Sequence[str] = (),
    scripts_dir: str = "hooks",
) -> tuple[list[str], list[str]]:
    """(the bundle files a host's copy holds: `dirs`, the `top` files and <scripts_dir>/<script>
    for each of `scripts`; the problems that leave one of those hooks unable to run)."""
    required = ["%s/%s" % (scripts_dir, s) for s in scripts]
    files, notes = bundle_files(source, required=required)
    keep = [f for f in files if f.startswith(tuple(dirs)) or f in required or f in top]
    return keep, missing_required(notes)


def record_install(
    path: str, host: str, plan: SkillPlan, settings: str, record: Mapping[str, Any], old: Mapping[str, Any] | None,
    created: Sequence[str] | None = None, extra: Mapping[str, Any] | None = None,
) -> None:
    """Write the manifest at `path` for an install of `host`: the files the folder holds (copy:
    those copied; link: the links made; in place: none) and, per settings file, what install
    created. `record` is this settings file's record on a first install; a later one keeps the
    first install's record (what it created is what uninstall takes back), adding the `created`
    containers it had not recorded yet. `old` is the manifest found before this install: its
    other records carry over. `extra` goes to the top level. A no-op install writes nothing."""
    manifest: dict[str, Any] = {
        "installer": SKILL_NAME, "host": host, "version": __version__, "mode": plan.mode,
        "files": sorted(plan.files) if plan.mode in ("copy", "link") else [],
        "settings": dict(old["settings"]) if old is not None else {},
    }
    prior = manifest["settings"].get(settings)
    if not isinstance(prior, dict):
        manifest["settings"][settings] = dict(record)
    elif created is not None:
        kept = [c for c in prior.get("created", []) if isinstance(c, str)]
        manifest["settings"][settings] = dict(prior, created=kept + [c for c in created if c not in kept])
    manifest.update(extra or {})
    current = read_manifest(path)
    if current is not None and canonical(current) == canonical(manifest):
        return
    write_manifest(path, manifest)


def bundle_action(dest: str, manifest: Mapping[str, Any] | None) -> str:
    """What uninstall does to the bundle folder `dest`: "unlink" (a --link symlink), "remove"
    (a copy of ours), "manifest-only" (the bundle itself, installed in place: its files stay),
    "foreign" (a folder engramory did not install) or "" (nothing there)."""
    if os.path.islink(dest):
        return "unlink"
    if not os.path.isdir(dest):
        return ""
    if manifest is None:
        return "foreign"
    return "manifest-only" if manifest.get("mode") == "in-place" else "remove"


def take_out_bundle(dest: str, action: str, manifest: Mapping[str, Any] | None, manifest_path: str,
                    link_manifest: str) -> str:
    """Do `action` (bundle_action) to the bundle folder `dest`; returns the report line for a
    folder that stays because it holds files engramory did not install, else ""."""
    if action == "unlink":
        os.unlink(dest)
        unlink_quietly(link_manifest)
    elif action == "remove" and manifest is not None:
        remove_listed(dest, [f for f in manifest["files"] if isinstance(f, str)] + [MANIFEST])
        prune_empty(dest)
        try:
            os.rmdir(dest)
        except OSError:
            left = files_left(dest)
            return "  note: %s still holds files engramory did not install%s; left in place\n" % (
                dest, " (%s)" % ", ".join(left[:5]) if left else "")
    elif action == "manifest-only":
        unlink_quietly(manifest_path)
    return ""


def files_left(folder: str) -> list[str]:
    """Every file under `folder`, relative, sorted."""
    found: list[str] = []
    for current, _, names in os.walk(folder):
        found.extend(os.path.relpath(os.path.join(current, n), folder).replace(os.sep, "/") for n in names)
    return sorted(found)


def unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def remove_made_dirs(folders: Iterable[str]) -> None:
    """Remove each folder install made, innermost first, when it is empty now (else it stays)."""
    for folder in folders:
        try:
            os.rmdir(folder)
        except OSError:
            pass

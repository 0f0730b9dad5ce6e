"""`engramory install --host hermes` / `engramory uninstall --host hermes`: put the index
guard plugin into Hermes Agent and enable it; take out exactly that.

Where things go (the Hermes home is $HERMES_HOME when set, else ~/.hermes):
- `<home>/plugins/engramory/`: the plugin (plugin.yaml, __init__.py), a copy of the
  engramory package beside it, and the shell-hook script under hooks/, with a manifest of
  the files copied. A copy, not a pointer to this checkout: Hermes imports the plugin in its
  own Python, and the copy keeps working if the checkout moves or goes.
- `<home>/config.yaml`: `engramory` added to `plugins.enabled` (Hermes loads no plugin that
  is not listed there) and taken out of `plugins.disabled` (which would win).

config.yaml is the user's YAML, and this runtime has no YAML library. `hermes plugins enable`
would do the job but rewrites the whole file through a YAML dump, dropping the user's
comments and layout. So the installer makes one minimal line edit instead: it adds a
`- engramory` item to the `enabled` list (or writes the list, or the `plugins:` block, when
missing) and leaves every other byte alone. It edits only shapes it fully understands (a
top-level `plugins:` block mapping, `enabled:` as a block or one-line flow list of plain
names) and refuses anything else, untouched, with the command to run instead. When PyYAML
is importable the whole file must also parse before the edit, and parse after it to the same
data with only `engramory` added to or removed from the lists. A change is shown as a diff
(--dry-run) or backed up and replaced atomically; a second install changes nothing.
"""

from __future__ import annotations

import json
import os
import re
import sys

from engramory import __version__, fsutil
from engramory.installer import (
    MANIFEST,
    Change,
    SettingsError,
    apply_change,
    prune_empty,
    read_manifest,
    read_regular,
    remove_listed,
    safe_rel,
    source_root,
    unified_diff,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping
    from typing import Any

HOST = "hermes"
PLUGIN = "engramory"
PLUGIN_SOURCE = "hermes/engramory"  # in the bundle: plugin.yaml and __init__.py
SHELL_HOOK = "hooks/engramory_hermes_shell_hook.py"
BOM = b"\xef\xbb\xbf"
RESTART = "Hermes loads plugins when a session starts: start a new session (`hermes plugins list` shows it enabled)."
ENABLE_BY_HAND = "run `hermes plugins enable %s --no-allow-tool-override` instead (it rewrites config.yaml)" % PLUGIN

_KEY = re.compile(r"""^(?P<indent> *)(?P<key>[A-Za-z_][\w.-]*|"[^"\\]*"|'[^']*')[ \t]*:(?=\s|$)(?P<rest>.*)$""")
_PLAIN = re.compile(r"^[\w./@+-][\w./@+ -]*$")


def hermes_home(env: Mapping[str, str] | None = None) -> str:
    environ = os.environ if env is None else env
    home = environ.get("HERMES_HOME", "").strip()
    if home:
        return os.path.abspath(os.path.expanduser(home))
    if sys.platform == "win32":
        local = environ.get("LOCALAPPDATA", "").strip()
        return os.path.join(local, "hermes") if local else os.path.expanduser("~/AppData/Local/hermes")
    return os.path.expanduser("~/.hermes")


class Target:
    def __init__(self, home: str) -> None:
        self.home = home
        self.config = os.path.join(home, "config.yaml")
        self.plugin_dir = os.path.join(home, "plugins", PLUGIN)
        self.manifest = os.path.join(self.plugin_dir, MANIFEST)


# -- config.yaml, line by line --------------------------------------------------------------------


def _strip_comment(value: str) -> str:
    """A one-line YAML value without its comment (a `#` after whitespace, outside quotes)."""
    quote = None
    for i, ch in enumerate(value):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or value[i - 1] in " \t"):
            return value[:i].rstrip()
    return value.rstrip()


def _scalar(text: str) -> str | None:
    """A plain or quoted one-line name, or None when it is anything else."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        inner = text[1:-1]
        return inner if "\\" not in inner and text[0] not in inner else None
    return text if _PLAIN.match(text) else None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _blank(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith("#")


class ConfigText:
    """config.yaml as lines, with where the plugins block and its lists are."""

    def __init__(self, path: str, raw: bytes | None) -> None:
        self.path = path
        self.raw = raw
        self.bom = bool(raw and raw.startswith(BOM))
        body = raw[3:] if raw and self.bom else (raw or b"")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SettingsError("%s: not UTF-8 text (byte %d); Hermes reads it as UTF-8: fix it, then run this again" % (path, exc.start)) from None
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.lines = text.replace("\r\n", "\n").split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
            self.final_newline = True
        else:
            self.final_newline = not self.lines
        self._check()

    def refuse(self, why: str) -> SettingsError:
        return SettingsError("%s: %s; it was left untouched: %s" % (self.path, why, ENABLE_BY_HAND))

    def _check(self) -> None:
        seen_content = False
        for n, line in enumerate(self.lines, 1):
            if "\t" in line[: _indent(line) + 1] and line.strip():
                raise self.refuse("line %d is indented with a tab, which YAML does not allow" % n)
            s = line.strip()
            if s.startswith("%") and _indent(line) == 0:
                raise self.refuse("line %d is a YAML directive this installer does not handle" % n)
            if s in ("---", "...") or s.startswith("--- "):
                if seen_content:
                    raise self.refuse("it holds more than one YAML document (line %d)" % n)
                continue
            if _blank(line):
                continue
            if not seen_content and _indent(line) == 0 and not _KEY.match(line):
                raise self.refuse("its top level is not a mapping of keys (line %d: %r)" % (n, line[:40]))
            seen_content = True

    def render(self) -> bytes:
        text = self.newline.join(self.lines)
        if self.lines and self.final_newline:
            text += self.newline
        return (BOM if self.bom else b"") + text.encode("utf-8")

    # where things are

    def top_key(self, name: str) -> int | None:
        found = [i for i, line in enumerate(self.lines) if _indent(line) == 0 and self._key(line) == name]
        if len(found) > 1:
            raise self.refuse("the key %r appears %d times at the top level" % (name, len(found)))
        return found[0] if found else None

    @staticmethod
    def _key(line: str) -> str | None:
        m = _KEY.match(line)
        if not m:
            return None
        key = m.group("key")
        return key[1:-1] if key[0] in "'\"" else key

    def block_end(self, start: int, indent: int) -> int:
        """The index after the last line belonging to the value of the key on `start`."""
        end = start + 1
        last = start + 1
        while end < len(self.lines):
            line = self.lines[end]
            if not _blank(line):
                if _indent(line) <= indent and not (line.lstrip().startswith("-") and _indent(line) == indent and indent > 0):
                    break
                last = end + 1
            end += 1
        return last

    def child_indent(self, start: int, end: int) -> int | None:
        for line in self.lines[start + 1 : end]:
            if not _blank(line):
                return _indent(line)
        return None

    def child_key(self, start: int, end: int, indent: int, name: str) -> int | None:
        found = []
        for i in range(start + 1, end):
            line = self.lines[i]
            if _blank(line):
                continue
            if _indent(line) < indent:
                raise self.refuse("line %d is indented less than the rest of the plugins block" % (i + 1))
            if _indent(line) == indent and self._key(line) == name:
                found.append(i)
        if len(found) > 1:
            raise self.refuse("plugins.%s appears %d times" % (name, len(found)))
        return found[0] if found else None


def _list_items(cfg: ConfigText, key_line: int, indent: int) -> tuple[str, list[tuple[int, str | None]], int]:
    """(shape, [(line index, name or None)], index after the list) for `key:` at `indent`.
    shape: "block", "flow" (one-line [..]) or "null"; raises for anything else."""
    line = cfg.lines[key_line]
    m = _KEY.match(line)
    assert m is not None
    value = _strip_comment(m.group("rest")).strip()
    if value.startswith("["):
        if not value.endswith("]") or value.count("[") != 1 or "{" in value:
            raise cfg.refuse("line %d holds a list this installer cannot edit safely" % (key_line + 1))
        inner = value[1:-1].strip()
        names = [] if not inner else [_scalar(x) for x in inner.split(",")]
        if any(x is None for x in names):
            raise cfg.refuse("line %d holds list items this installer cannot read" % (key_line + 1))
        return "flow", [(key_line, x) for x in names], key_line + 1
    if value not in ("", "~", "null"):
        raise cfg.refuse("line %d: %s is not a list of plugin names" % (key_line + 1, line.strip()[:60]))
    items: list[tuple[int, str | None]] = []
    i = key_line + 1
    end = key_line + 1
    while i < len(cfg.lines):
        item = cfg.lines[i]
        if _blank(item):
            i += 1
            continue
        s = item.lstrip(" ")
        if not (s.startswith("- ") or s == "-") or _indent(item) < indent:
            if _indent(item) > indent:
                raise cfg.refuse("line %d continues a list item over several lines" % (i + 1))
            break
        items.append((i, _scalar(_strip_comment(s[1:]))))
        i += 1
        end = i
    if value in ("~", "null") and items:
        raise cfg.refuse("line %d is null but is followed by list items" % (key_line + 1))
    return ("block" if items else "null"), items, end


def _with_yaml(before: bytes | None, after: bytes, path: str, name: str, added: bool) -> None:
    """When PyYAML is at hand: the file must parse, and the edit must change nothing but
    `name`'s place in plugins.enabled / plugins.disabled."""
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        return

    def load(data: bytes | None) -> Any:
        return yaml.safe_load(data.decode("utf-8-sig")) if data else None

    try:
        old = load(before)
    except yaml.YAMLError as exc:
        raise SettingsError(
            "%s: not valid YAML (%s); fix it, then run this again" % (path, str(exc).splitlines()[0])
        ) from None
    try:
        new = load(after)
    except yaml.YAMLError:
        new = ()  # cannot equal anything below

    def without_us(data: Any) -> str:
        # Everything but `name` in the two lists; an empty or null list and a plugins block
        # left empty count as absent (Hermes reads them all as "nothing").
        data = json.loads(json.dumps(data, default=str)) if data is not None else {}
        if isinstance(data, dict) and isinstance(data.get("plugins"), dict):
            plugins = data["plugins"]
            for key in ("enabled", "disabled"):
                if isinstance(plugins.get(key), list):
                    plugins[key] = [x for x in plugins[key] if x != name]
                if key in plugins and not plugins[key]:
                    del plugins[key]
            if not plugins:
                del data["plugins"]
        elif isinstance(data, dict) and "plugins" in data and not data["plugins"]:
            del data["plugins"]
        return json.dumps(data, sort_keys=True)

    def listed(data: Any, key: str) -> bool:
        plugins = data.get("plugins") if isinstance(data, dict) else None
        items = plugins.get(key) if isinstance(plugins, dict) else None
        return isinstance(items, list) and name in items

    ok = new != () and without_us(old) == without_us(new)
    if ok and added:
        ok = listed(new, "enabled") and not listed(new, "disabled")
    elif ok:
        ok = not listed(new, "enabled")
    if not ok:
        raise SettingsError(
            "%s: a minimal edit would not give the intended YAML (a layout this installer "
            "misreads); it was left untouched: %s" % (path, ENABLE_BY_HAND)
        )


def enable_text(cfg: ConfigText, name: str = PLUGIN) -> list[str]:
    """Edit `cfg` so that `name` is in plugins.enabled and not in plugins.disabled. Returns
    what was done, one line each (empty: already so)."""
    report: list[str] = []
    nl_item = "- " + name
    top = cfg.top_key("plugins")
    if top is None:
        while cfg.lines and cfg.lines[-1].strip() == "":
            cfg.lines.pop()
        cfg.lines.extend(["plugins:", "  enabled:", "  " + nl_item])
        cfg.final_newline = True
        return ["added plugins.enabled: [%s]" % name]
    m = _KEY.match(cfg.lines[top])
    assert m is not None
    value = _strip_comment(m.group("rest")).strip()
    comment = m.group("rest").strip()[len(value):].strip()
    if value in ("{}", "~", "null") and cfg.block_end(top, 0) == top + 1:
        cfg.lines[top] = "plugins:" + (" " + comment if comment else "")
        cfg.lines[top + 1 : top + 1] = ["  enabled:", "  " + nl_item]
        return ["added plugins.enabled: [%s]" % name]
    if value:
        raise cfg.refuse("`plugins:` holds %r, not a block of settings" % value[:40])
    end = cfg.block_end(top, 0)
    indent = cfg.child_indent(top, end)
    if indent is None:
        cfg.lines[top + 1 : top + 1] = ["  enabled:", "  " + nl_item]
        return ["added plugins.enabled: [%s]" % name]

    # out of plugins.disabled first: it would win over enabled
    disabled = cfg.child_key(top, end, indent, "disabled")
    if disabled is not None:
        shape, items, _ = _list_items(cfg, disabled, indent)
        ours = [i for i, x in items if x == name]
        if ours:
            if shape == "flow":
                _rewrite_flow(cfg, disabled, [x for _, x in items if x != name])
            else:
                for i in reversed(ours):
                    del cfg.lines[i]
            report.append("removed %s from plugins.disabled (it would keep the plugin off)" % name)
            end = cfg.block_end(top, 0)

    enabled = cfg.child_key(top, end, indent, "enabled")
    pad = " " * indent
    if enabled is None:
        cfg.lines[top + 1 : top + 1] = [pad + "enabled:", pad + nl_item]
        report.append("added plugins.enabled: [%s]" % name)
        return report
    shape, items, after = _list_items(cfg, enabled, indent)
    if any(x == name for _, x in items):
        return report
    if shape == "flow":
        _rewrite_flow(cfg, enabled, [x for _, x in items] + [name])
    elif shape == "block":
        last = items[-1][0]
        cfg.lines.insert(last + 1, " " * _indent(cfg.lines[last]) + nl_item)
    else:
        line = cfg.lines[enabled]
        m = _KEY.match(line)
        assert m is not None
        if _strip_comment(m.group("rest")).strip() in ("~", "null"):
            cfg.lines[enabled] = pad + "enabled:"
        cfg.lines.insert(enabled + 1, pad + nl_item)
    report.append("added %s to plugins.enabled" % name)
    return report


def disable_text(cfg: ConfigText, name: str = PLUGIN, drop_empty: bool = False) -> list[str]:
    """Take `name` out of plugins.enabled. With `drop_empty` (install created them), an
    `enabled:` list and a `plugins:` block left empty go too."""
    top = cfg.top_key("plugins")
    if top is None:
        return []
    end = cfg.block_end(top, 0)
    indent = cfg.child_indent(top, end)
    if indent is None:
        return []
    enabled = cfg.child_key(top, end, indent, "enabled")
    if enabled is None:
        return []
    shape, items, after = _list_items(cfg, enabled, indent)
    ours = [i for i, x in items if x == name]
    if not ours:
        return []
    rest = [x for _, x in items if x != name]
    if shape == "flow":
        _rewrite_flow(cfg, enabled, rest)
    else:
        for i in reversed(ours):
            del cfg.lines[i]
    if drop_empty and not rest:
        del cfg.lines[enabled]
        end = cfg.block_end(top, 0)
        if cfg.child_indent(top, end) is None:
            del cfg.lines[top]
        while cfg.lines and cfg.lines[-1].strip() == "":
            cfg.lines.pop()
    return ["removed %s from plugins.enabled" % name]


def _rewrite_flow(cfg: ConfigText, index: int, items: list[Any]) -> None:
    line = cfg.lines[index]
    start, stop = line.index("["), line.index("]") + 1
    cfg.lines[index] = line[:start] + "[" + ", ".join(items) + "]" + line[stop:]


# -- the plugin folder ---------------------------------------------------------------------------


def plugin_files(source: str) -> list[tuple[str, str]]:
    """(source path, path inside the plugin folder) for everything the plugin needs."""
    out: list[tuple[str, str]] = []
    for name in ("plugin.yaml", "__init__.py"):
        out.append((os.path.join(source, PLUGIN_SOURCE, name), name))
    package = os.path.join(source, "engramory")
    for folder, dirs, names in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for n in sorted(names):
            if n.endswith(".py") or n == "py.typed":
                full = os.path.join(folder, n)
                out.append((full, os.path.relpath(full, source).replace(os.sep, "/")))
    out.append((os.path.join(source, SHELL_HOOK), SHELL_HOOK))
    return out


def _read(path: str) -> bytes | None:
    """Stat first, regular files only, bounded (installer.read_regular): None when missing."""
    return read_regular(path)


def _plan_files(target: Target, files: list[tuple[str, str]]) -> tuple[list[str], list[str], list[str]]:
    """(new, updated, stale) relative paths; raises when the folder is not ours."""
    manifest = read_manifest(target.manifest)
    if os.path.lexists(target.plugin_dir):
        if os.path.islink(target.plugin_dir) or not os.path.isdir(target.plugin_dir):
            raise SettingsError("%s exists and is not a folder engramory installed; move it away, then run this again" % target.plugin_dir)
        if manifest is None and os.listdir(target.plugin_dir):
            raise SettingsError(
                "%s exists but was not installed by engramory (no %s in it); move it away, then run this again"
                % (target.plugin_dir, MANIFEST)
            )
    new, updated = [], []
    for src, rel in files:
        have = _read(os.path.join(target.plugin_dir, rel))
        if have is None:
            new.append(rel)
        elif have != _read(src):
            updated.append(rel)
    wanted = {rel for _, rel in files}
    stale = [f for f in (manifest or {}).get("files", []) if isinstance(f, str) and f not in wanted and safe_rel(f)]
    return new, updated, stale


# -- install / uninstall ------------------------------------------------------------------------


def _usage(args: argparse.Namespace, what: str) -> int | None:
    if (getattr(args, "scope", "user") or "user") != "user":
        sys.stderr.write(
            "engramory %s: --scope %s does not apply to Hermes: a plugin lives in the Hermes home "
            "(set HERMES_HOME to choose another)\n" % (what, args.scope)
        )
        return 64
    if getattr(args, "link", False):
        sys.stderr.write("engramory %s: --link is not available for --host hermes; the plugin is always a copy\n" % what)
        return 64
    return None


def install(args: argparse.Namespace) -> int:
    """`engramory install --host hermes`: 0 done, 1 refused (nothing changed), 64 usage."""
    bad = _usage(args, "install")
    if bad is not None:
        return bad
    target = Target(hermes_home())
    if getattr(args, "check", False):
        return run_check(target)
    try:
        return _install(target, bool(getattr(args, "dry_run", False)))
    except SettingsError as exc:
        sys.stderr.write("engramory install: %s\n" % exc)
        sys.stderr.write("engramory install: nothing was changed.\n")
        return 1
    except OSError as exc:
        sys.stderr.write(
            "engramory install: could not write %s: %s; check the permissions and free space, then run this again\n"
            % (exc.filename or target.home, exc.strerror or exc)
        )
        return 1


def _config_change(target: Target, enable: bool, drop_empty: bool = False) -> tuple[Change, list[str]]:
    raw = _read(target.config) if not os.path.isdir(target.config) else None
    if os.path.isdir(target.config):
        raise SettingsError("%s is a folder, not a file; move it away, then run this again" % target.config)
    cfg = ConfigText(target.config, raw)
    report = enable_text(cfg) if enable else disable_text(cfg, drop_empty=drop_empty)
    after = cfg.render() if report else raw
    if report:
        assert after is not None
        _with_yaml(raw, after, target.config, PLUGIN, enable)
    return Change(target.config, raw, after), report


def _install(target: Target, dry_run: bool) -> int:
    out = sys.stdout.write
    source = source_root()
    files = plugin_files(source)
    missing = [src for src, _ in files if not os.path.isfile(src)]
    if missing:
        raise SettingsError("%s is missing from this bundle: it cannot install the Hermes plugin" % missing[0])
    new, updated, stale = _plan_files(target, files)
    old_manifest = read_manifest(target.manifest)
    change, report = _config_change(target, enable=True)

    out("engramory install --host hermes (%s%s)\n" % (target.home, ", dry run: nothing is written" if dry_run else ""))
    out("  plugin: %s %d files to %s (%d new, %d updated, %d unchanged)\n" % (
        "would copy" if dry_run else "copied", len(new) + len(updated), target.plugin_dir,
        len(new), len(updated), len(files) - len(new) - len(updated)))
    for rel in stale:
        out("    - %s (no longer in the bundle: %s)\n" % (rel, "would remove" if dry_run else "removed"))
    out("  config: %s\n" % target.config)
    for line in report or ["%s is already in plugins.enabled" % PLUGIN]:
        out("    %s\n" % line)
    import shutil

    if shutil.which("hermes") is None:
        out("  note: no `hermes` command on PATH; the plugin takes effect in sessions of the Hermes "
            "that uses %s\n" % target.home)
    if os.environ.get("HERMES_SAFE_MODE", "").strip().lower() in ("1", "true", "yes"):
        out("  note: HERMES_SAFE_MODE is set: Hermes loads no plugin while it is\n")
    if dry_run:
        diff = unified_diff(target.config, change.before, change.after)
        out(diff if diff else "  config: no change\n")
        return 0

    # The plugin's files and manifest first, config.yaml last: Hermes never sees the plugin
    # enabled before its files are all there.
    if new or updated or stale or old_manifest is None:
        claim: dict[str, Any] = {"installer": "engramory", "host": HOST, "version": __version__,
                 "files": sorted({rel for _, rel in files} | set((old_manifest or {}).get("files", [])))}
        claim["config"] = (old_manifest or {}).get("config") or {}
        fsutil.write_atomic(target.manifest, (json.dumps(claim, indent=2, sort_keys=True) + "\n").encode("utf-8"))
        for src, rel in files:
            if rel in new or rel in updated:
                with open(src, "rb") as f:
                    data = f.read()
                fsutil.write_atomic(os.path.join(target.plugin_dir, rel), data, mode=os.stat(src).st_mode & 0o777)
        remove_listed(target.plugin_dir, stale)
        prune_empty(target.plugin_dir)
    _record(target, files, old_manifest, change)
    saved = apply_change(change)
    if saved:
        out("  backup of the previous config.yaml: %s\n" % saved)
    if change.changed or new or updated:
        out("  " + RESTART + "\n")
    else:
        out("  already installed: nothing changed.\n")
    return 0


def _record(target: Target, files: list[tuple[str, str]], old: dict[str, Any] | None, change: Change) -> None:
    config = dict((old or {}).get("config") or {})
    if change.changed and "created_file" not in config:
        config["created_file"] = change.before is None
        before = ConfigText(target.config, change.before)
        config["created_plugins"] = before.top_key("plugins") is None
    manifest = {"installer": "engramory", "host": HOST, "version": __version__,
                "files": sorted(rel for _, rel in files), "config": config}
    current = read_manifest(target.manifest)
    if current is not None and json.dumps(current, sort_keys=True) == json.dumps(manifest, sort_keys=True):
        return  # a no-op install writes nothing
    fsutil.write_atomic(target.manifest, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def uninstall(args: argparse.Namespace) -> int:
    """`engramory uninstall --host hermes`: 0 done, 1 refused (nothing changed), 64 usage."""
    bad = _usage(args, "uninstall")
    if bad is not None:
        return bad
    target = Target(hermes_home())
    try:
        return _uninstall(target, bool(getattr(args, "dry_run", False)))
    except SettingsError as exc:
        sys.stderr.write("engramory uninstall: %s\n" % exc)
        sys.stderr.write("engramory uninstall: nothing was changed.\n")
        return 1
    except OSError as exc:
        sys.stderr.write("engramory uninstall: could not write %s: %s; check the permissions, then run this again\n"
                         % (exc.filename or target.home, exc.strerror or exc))
        return 1


def _uninstall(target: Target, dry_run: bool) -> int:
    out = sys.stdout.write
    manifest = read_manifest(target.manifest)
    record = (manifest or {}).get("config") or {}
    change, report = _config_change(target, enable=False, drop_empty=bool(record.get("created_plugins")))
    if change.after is not None and record.get("created_file") and not change.after.strip(BOM + b" \r\n"):
        change.after = None  # install created the file and nothing else is in it now
    verb = "would remove" if dry_run else "removed"
    out("engramory uninstall --host hermes (%s%s)\n" % (target.home, ", dry run: nothing is written" if dry_run else ""))
    out("  config: %s: %s\n" % (target.config, "; ".join(report) if report else "%s is not in plugins.enabled" % PLUGIN))
    if manifest is not None:
        out("  plugin: %s %s (%d files)\n" % (verb, target.plugin_dir, len(manifest["files"])))
    elif os.path.isdir(target.plugin_dir):
        out("  plugin: %s was not installed by engramory; left alone\n" % target.plugin_dir)
    else:
        out("  plugin: nothing installed at %s\n" % target.plugin_dir)
    if dry_run:
        diff = unified_diff(target.config, change.before, change.after)
        if diff:
            out(diff)
        return 0
    # config.yaml first: Hermes never finds the plugin enabled while its files are gone.
    saved = None
    if change.after is None and change.before is not None:
        if _read(target.config) != change.before:
            raise SettingsError("%s: changed on disk while this ran; run this again" % target.config)
        os.unlink(target.config)
    else:
        saved = apply_change(change)
    if manifest is not None:
        remove_listed(target.plugin_dir, [f for f in manifest["files"] if isinstance(f, str)] + [MANIFEST])
        prune_empty(target.plugin_dir)
        try:
            os.rmdir(target.plugin_dir)
        except OSError:
            out("  note: %s still holds files engramory did not install; left in place\n" % target.plugin_dir)
    if saved:
        out("  backup of the previous config.yaml: %s\n" % saved)
    return 0


def run_check(target: Target) -> int:
    """`engramory install --host hermes --check`: the plugin's files are there and it is
    enabled. 0 healthy, 1 a problem (each printed with what to do)."""
    out = sys.stdout.write
    problems: list[str] = []
    manifest = read_manifest(target.manifest)
    if manifest is None:
        problems.append("no engramory plugin in %s" % target.plugin_dir)
    else:
        gone = [f for f in manifest["files"] if isinstance(f, str) and not os.path.isfile(os.path.join(target.plugin_dir, f))]
        if gone:
            problems.append("%d plugin files are missing (%s)" % (len(gone), ", ".join(gone[:3])))
    try:
        cfg = ConfigText(target.config, _read(target.config))
        if enable_text(cfg):
            problems.append("%s is not enabled in %s" % (PLUGIN, target.config))
    except SettingsError as exc:
        problems.append(str(exc))
    out("engramory install --host hermes --check (%s)\n" % target.home)
    for p in problems:
        out("  problem: %s\n" % p)
    if problems:
        out("  next step: run `engramory install --host hermes`, then start a new Hermes session\n")
        return 1
    out("  healthy: the plugin is installed and enabled\n")
    return 0


def check(args: argparse.Namespace) -> int:
    """The registry's INSTALLER contract: `install --host hermes --check`."""
    return run_check(Target(hermes_home()))

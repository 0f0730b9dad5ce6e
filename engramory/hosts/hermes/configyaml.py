"""Hermes's config.yaml, edited line by line: `engramory` into and out of `plugins.enabled`
(and out of `plugins.disabled`, which would win), every other byte left alone.

This runtime has no YAML library, and `hermes plugins enable` rewrites the whole file through a
YAML dump (the user's comments and layout go), so the edit is one minimal line edit. It handles
only shapes it fully understands (a top-level `plugins:` block mapping, `enabled:` / `disabled:`
as a block or one-line flow list of plain names) and refuses anything else (SettingsError, the
file untouched) with the command to run instead. When PyYAML is importable, the file must parse
before the edit and parse after it to the same data with only the plugin's name moved
(`check_with_yaml`).
"""

from __future__ import annotations

import json
import re

from engramory.install.settings import SettingsError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PLUGIN = "engramory"
BOM = b"\xef\xbb\xbf"
ENABLE_BY_HAND = "run `hermes plugins enable %s --no-allow-tool-override` instead (it rewrites config.yaml)" % PLUGIN

_KEY = re.compile(r"""^(?P<indent> *)(?P<key>[A-Za-z_][\w.-]*|"[^"\\]*"|'[^']*')[ \t]*:(?=\s|$)(?P<rest>.*)$""")
_PLAIN = re.compile(r"^[\w./@+-][\w./@+ -]*$")


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


def _without(data: Any, name: str) -> str:
    """Everything but `name` in the two lists, as canonical JSON; an empty or null list and a
    plugins block left empty count as absent (Hermes reads them all as "nothing")."""
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


def _listed(data: Any, key: str, name: str) -> bool:
    plugins = data.get("plugins") if isinstance(data, dict) else None
    items = plugins.get(key) if isinstance(plugins, dict) else None
    return isinstance(items, list) and name in items


def _as_intended(old: Any, new: Any, name: str, added: bool) -> bool:
    """Whether `new` is `old` with only `name` added to enabled (and out of disabled), or
    taken out of enabled."""
    if new == () or _without(old, name) != _without(new, name):
        return False
    if added:
        return _listed(new, "enabled", name) and not _listed(new, "disabled", name)
    return not _listed(new, "enabled", name)


def check_with_yaml(before: bytes | None, after: bytes, path: str, name: str, added: bool) -> None:
    """When PyYAML is at hand: the file must parse, and the edit must change nothing but
    `name`'s place in plugins.enabled / plugins.disabled."""
    try:
        import yaml  # type: ignore[import-untyped]  # optional: the runtime is standard library only
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
        new = ()  # cannot equal anything
    if not _as_intended(old, new, name, added):
        raise SettingsError(
            "%s: a minimal edit would not give the intended YAML (a layout this installer "
            "misreads); it was left untouched: %s" % (path, ENABLE_BY_HAND)
        )


def _enabled_lines(pad: str, name: str) -> list[str]:
    return [pad + "enabled:", pad + "- " + name]


def _empty_block(cfg: ConfigText, top: int, name: str) -> list[str] | None:
    """`plugins:` holding `{}`, `~` or `null` on its line and nothing below: the list is
    written under it. None: a block to edit; raises for any other value."""
    m = _KEY.match(cfg.lines[top])
    assert m is not None
    value = _strip_comment(m.group("rest")).strip()
    comment = m.group("rest").strip()[len(value):].strip()
    if value in ("{}", "~", "null") and cfg.block_end(top, 0) == top + 1:
        cfg.lines[top] = "plugins:" + (" " + comment if comment else "")
        cfg.lines[top + 1 : top + 1] = _enabled_lines("  ", name)
        return ["added plugins.enabled: [%s]" % name]
    if value:
        raise cfg.refuse("`plugins:` holds %r, not a block of settings" % value[:40])
    return None


def _out_of_disabled(cfg: ConfigText, top: int, end: int, indent: int, name: str) -> list[str]:
    disabled = cfg.child_key(top, end, indent, "disabled")
    if disabled is None:
        return []
    shape, items, _ = _list_items(cfg, disabled, indent)
    ours = [i for i, x in items if x == name]
    if not ours:
        return []
    if shape == "flow":
        _rewrite_flow(cfg, disabled, [x for _, x in items if x != name])
    else:
        for i in reversed(ours):
            del cfg.lines[i]
    return ["removed %s from plugins.disabled (it would keep the plugin off)" % name]


def _into_enabled(cfg: ConfigText, top: int, end: int, indent: int, name: str) -> list[str]:
    enabled = cfg.child_key(top, end, indent, "enabled")
    pad = " " * indent
    if enabled is None:
        cfg.lines[top + 1 : top + 1] = _enabled_lines(pad, name)
        return ["added plugins.enabled: [%s]" % name]
    shape, items, _after = _list_items(cfg, enabled, indent)
    if any(x == name for _, x in items):
        return []
    if shape == "flow":
        _rewrite_flow(cfg, enabled, [x for _, x in items] + [name])
    elif shape == "block":
        last = items[-1][0]
        cfg.lines.insert(last + 1, " " * _indent(cfg.lines[last]) + "- " + name)
    else:
        m = _KEY.match(cfg.lines[enabled])
        assert m is not None
        if _strip_comment(m.group("rest")).strip() in ("~", "null"):
            cfg.lines[enabled] = pad + "enabled:"
        cfg.lines.insert(enabled + 1, pad + "- " + name)
    return ["added %s to plugins.enabled" % name]


def enable_text(cfg: ConfigText, name: str = PLUGIN) -> list[str]:
    """Edit `cfg` so that `name` is in plugins.enabled and not in plugins.disabled. Returns
    what was done, one line each (empty: already so)."""
    top = cfg.top_key("plugins")
    if top is None:
        while cfg.lines and cfg.lines[-1].strip() == "":
            cfg.lines.pop()
        cfg.lines.extend(["plugins:"] + _enabled_lines("  ", name))
        cfg.final_newline = True
        return ["added plugins.enabled: [%s]" % name]
    fresh = _empty_block(cfg, top, name)
    if fresh is not None:
        return fresh
    end = cfg.block_end(top, 0)
    indent = cfg.child_indent(top, end)
    if indent is None:
        cfg.lines[top + 1 : top + 1] = _enabled_lines("  ", name)
        return ["added plugins.enabled: [%s]" % name]
    # out of plugins.disabled first: it would win over enabled
    report = _out_of_disabled(cfg, top, end, indent, name)
    if report:
        end = cfg.block_end(top, 0)
    return report + _into_enabled(cfg, top, end, indent, name)


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

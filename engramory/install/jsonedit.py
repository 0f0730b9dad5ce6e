"""Edit a JSON text by splicing, so that every byte the edit does not need to touch stays.

Installers change a user's settings file a little (add one hook group, take it back out).
Parsing it into Python and dumping it again would rewrite the whole file: `1e400` would
become `Infinity` (not JSON: the host then ignores the whole file), `"\\u00e9"` would become
`"é"`, and key spacing, blank lines and number spellings would all change. This module parses
with positions instead, and `edit(text, new_value)` compares the parsed value with the new
one and rewrites only the members and elements that differ:

- a member or element that is equal in both is kept byte for byte (numbers as written,
  escapes, spacing, comments where allowed);
- a new member goes after the last member of its object, a new element where it belongs in
  its array, laid out like its neighbours (indent, CRLF or LF, one line or many);
- a removed member or element is cut together with its separator, so removing what was
  added gives back the exact text it was added to.

`parse(text, comments=False)` is strict RFC 8259 JSON, like JavaScript's JSON.parse: no
comments, no trailing commas, no NaN/Infinity, no duplicate keys (a rewrite would silently
keep one). `comments=True` also skips `//` and `/* */` comments and allows trailing commas
(JSONC, for hosts whose settings allow them). Numbers that are not integers parse to
`Number`, a float that remembers how it was written. Standard library only.
"""

from __future__ import annotations

import difflib
import json
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 400
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_WS = " \t\n\r"
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"')
_SPACE = re.compile(r"[ \t\n\r]*")


class JsonError(ValueError):
    """Not JSON we can edit; `msg`, `line`, `column` locate the problem."""

    def __init__(self, msg: str, text: str, pos: int) -> None:
        self.msg = msg
        self.pos = pos
        self.line = text.count("\n", 0, pos) + 1
        self.column = pos - (text.rfind("\n", 0, pos) + 1) + 1
        super().__init__("%s at line %d, column %d" % (msg, self.line, self.column))


class DuplicateKey(JsonError):
    def __init__(self, key: str, text: str, pos: int) -> None:
        self.key = key
        super().__init__("the key %r appears twice in one object" % key[:60], text, pos)


class Number(float):
    """A non-integer JSON number: compares as a float, renders as it was written."""

    text: str

    def __new__(cls, text: str) -> Number:
        self = super().__new__(cls, float(text))
        self.text = text
        return self

    def __copy__(self) -> Number:
        return self

    def __deepcopy__(self, memo: object) -> Number:
        return self

    def __reduce__(self) -> tuple[type[Number], tuple[str]]:
        return (Number, (self.text,))


class BigInt(int):
    """An integer too long for int(); keeps its digits (compares as 0: never edited)."""

    text: str

    def __new__(cls, text: str) -> BigInt:
        self = super().__new__(cls, 0)
        self.text = text
        return self

    def __copy__(self) -> BigInt:
        return self

    def __deepcopy__(self, memo: object) -> BigInt:
        return self

    def __reduce__(self) -> tuple[type[BigInt], tuple[str]]:
        return (BigInt, (self.text,))


class Node:
    """A parsed value and where it sits: text[start:end] is its source."""

    __slots__ = ("kind", "start", "end", "value", "keys", "children")

    def __init__(self, kind: str, start: int) -> None:
        self.kind = kind  # "object" | "array" | "scalar"
        self.start = start
        self.end = start
        self.value: Any = None
        self.keys: list[tuple[str, int]] = []  # object members: (key, offset of its quote)
        self.children: list[Node] = []  # object member values / array elements


class _Parser:
    def __init__(self, text: str, comments: bool) -> None:
        self.s = text
        self.comments = comments

    def fail(self, msg: str, pos: int) -> JsonError:
        return JsonError(msg, self.s, pos)

    def skip(self, i: int) -> int:
        s, n = self.s, len(self.s)
        i = _SPACE.match(s, i).end()  # type: ignore[union-attr]  # always matches
        if not self.comments:
            return i
        while i < n:
            c = s[i]
            if c in _WS:
                i += 1
            elif self.comments and s.startswith("//", i):
                j = s.find("\n", i)
                i = n if j < 0 else j + 1
            elif self.comments and s.startswith("/*", i):
                j = s.find("*/", i + 2)
                if j < 0:
                    raise self.fail("unterminated comment", i)
                i = j + 2
            else:
                break
        return i

    def string(self, i: int) -> tuple[str, int]:
        m = _STRING.match(self.s, i)
        if m is None:
            return self._bad_string(i)
        raw = m.group(0)
        if "\\" not in raw:
            return raw[1:-1], m.end()
        try:
            return json.loads(raw), m.end()
        except ValueError:
            raise self.fail("bad escape in a string", i) from None

    def _bad_string(self, i: int) -> tuple[str, int]:
        s, j, n = self.s, i + 1, len(self.s)
        while j < n:
            c = s[j]
            if c == '"':
                break
            if c == "\\":
                j += 2
                continue
            if c < " ":
                raise self.fail("control character in a string", j)
            j += 1
        raise self.fail("unterminated string" if j >= n else "bad escape in a string", i)

    def value(self, i: int, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise self.fail("nested more than %d levels" % MAX_DEPTH, i)
        s = self.s
        i = self.skip(i)
        if i >= len(s):
            raise self.fail("expected a value", i)
        c = s[i]
        if c == "{":
            return self.obj(i, depth)
        if c == "[":
            return self.arr(i, depth)
        node = Node("scalar", i)
        if c == '"':
            node.value, node.end = self.string(i)
            return node
        for word, val in (("true", True), ("false", False), ("null", None)):
            if s.startswith(word, i):
                node.value, node.end = val, i + len(word)
                return node
        node.value, node.end = self.number(i)
        return node

    def number(self, i: int) -> tuple[Any, int]:
        """The number at `i` and where it ends: an int, a BigInt past what int() converts, or a
        Number (kept as written) when it has a fraction or an exponent."""
        m = _NUMBER.match(self.s, i)
        if not m:
            raise self.fail("expected a value", i)
        text = m.group(0)
        if m.group(1) or m.group(2):
            return Number(text), m.end()
        try:
            return int(text), m.end()
        except ValueError:  # more digits than int() converts
            return BigInt(text), m.end()

    def obj(self, i: int, depth: int) -> Node:
        node = Node("object", i)
        value: dict[str, Any] = {}
        s = self.s
        j = self.skip(i + 1)
        while True:
            if j < len(s) and s[j] == "}" and (not node.keys or self.comments):
                break
            if j >= len(s) or s[j] != '"':
                raise self.fail("expected a key in double quotes", j)
            key, k = self.string(j)
            if key in value:
                raise DuplicateKey(key, s, j)
            k = self.skip(k)
            if k >= len(s) or s[k] != ":":
                raise self.fail("expected ':'", k)
            child = self.value(k + 1, depth + 1)
            node.keys.append((key, j))
            node.children.append(child)
            value[key] = child.value
            j = self.skip(child.end)
            if j < len(s) and s[j] == ",":
                j = self.skip(j + 1)
                continue
            if j < len(s) and s[j] == "}":
                break
            raise self.fail("expected ',' or '}'", j)
        node.end = j + 1
        node.value = value
        return node

    def arr(self, i: int, depth: int) -> Node:
        node = Node("array", i)
        s = self.s
        j = self.skip(i + 1)
        while True:
            if j < len(s) and s[j] == "]" and (not node.children or self.comments):
                break
            child = self.value(j, depth + 1)
            node.children.append(child)
            j = self.skip(child.end)
            if j < len(s) and s[j] == ",":
                j = self.skip(j + 1)
                continue
            if j < len(s) and s[j] == "]":
                break
            raise self.fail("expected ',' or ']'", j)
        node.end = j + 1
        node.value = [c.value for c in node.children]
        return node


def parse(text: str, comments: bool = False) -> Node:
    """The tree of `text` (one JSON value, whitespace around it allowed)."""
    p = _Parser(text, comments)
    node = p.value(0, 0)
    end = p.skip(node.end)
    if end != len(text):
        raise p.fail("extra data after the value", end)
    return node


def canonical(value: Any) -> str:
    """Equal exactly when two values mean the same (True and 1 differ, key order does not)."""

    def norm(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, (Number, BigInt)):
            return {"\0number": v.text}
        if isinstance(v, float):
            return {"\0number": repr(v)}
        return v

    return json.dumps(norm(value), sort_keys=True, ensure_ascii=True)


def same(a: Any, b: Any) -> bool:
    """canonical(a) == canonical(b), without building either string."""
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if ta is dict or tb is dict:
        return ta is tb and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if ta is list or tb is list:
        return ta is tb and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if ta in (Number, BigInt) or tb in (Number, BigInt):
        return ta is tb and a.text == b.text
    if ta is float or tb is float:
        return ta is tb and repr(a) == repr(b)
    return ta is tb and a == b


def dump(value: Any, unit: str | None, newline: str = "\n", indent: str = "") -> str:
    """`value` as JSON; `unit` None for one line, else the indent of one level. Numbers parsed
    from a file come back as they were written; a float that is not finite is refused."""
    if isinstance(value, (Number, BigInt)):
        return value.text
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        return json.dumps(value, allow_nan=False)
    if isinstance(value, dict):
        items = [(json.dumps(k, ensure_ascii=False) + ": ", v) for k, v in value.items()]
        open_, close = "{", "}"
    elif isinstance(value, (list, tuple)):
        items = [("", v) for v in value]
        open_, close = "[", "]"
    else:
        raise TypeError("not a JSON value: %r" % (value,))
    if not items:
        return open_ + close
    if unit is None:
        return open_ + ", ".join(k + dump(v, None) for k, v in items) + close
    inner = indent + unit
    parts = [newline + inner + k + dump(v, unit, newline, inner) for k, v in items]
    return open_ + ",".join(parts) + newline + indent + close


class Style:
    """How new text is laid out: one indent level, the line ending, one line or many."""

    def __init__(self, text: str) -> None:
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.unit = "  "
        for line in text.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and len(stripped) < len(line):
                lead = line[: len(line) - len(stripped)]
                self.unit = "\t" if lead.startswith("\t") else lead
                break


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    j = start
    while j < pos and text[j] in " \t":
        j += 1
    return text[start:j]


class _Editor:
    def __init__(self, text: str, style: Style) -> None:
        self.text = text
        self.style = style
        self.splices: list[tuple[int, int, str]] = []

    def multiline(self, node: Node) -> bool:
        if node.children:
            return "\n" in self.text[node.start : node.end]
        return "\n" in self.text.strip()  # an empty container follows the file's layout

    def render(self, value: Any, at: int, multiline: bool) -> str:
        if not multiline:
            return dump(value, None)
        return dump(value, self.style.unit, self.style.newline, _line_indent(self.text, at))

    def replace(self, node: Node, value: Any) -> None:
        self.splices.append((node.start, node.end, self.render(value, node.start, True)))

    def change(self, node: Node, new: Any) -> None:
        if same(node.value, new):
            return
        if node.kind == "object" and isinstance(new, dict):
            self.change_object(node, new)
        elif node.kind == "array" and isinstance(new, list):
            self.change_array(node, new)
        else:
            self.replace(node, new)

    def change_object(self, node: Node, new: dict[str, Any]) -> None:
        keep = []
        for (key, _), child in zip(node.keys, node.children):
            if key in new:
                keep.append(True)
                self.change(child, new[key])
            else:
                keep.append(False)
        old = {k for k, _ in node.keys}
        added = [(k, v) for k, v in new.items() if k not in old]
        starts = [pos for _, pos in node.keys]
        self.rebuild(node, starts, keep, [(len(node.keys), "%s: " % json.dumps(k, ensure_ascii=False), v) for k, v in added])

    def change_array(self, node: Node, new: list[Any]) -> None:
        old = [canonical(c.value) for c in node.children]
        matcher = difflib.SequenceMatcher(None, old, [canonical(v) for v in new], autojunk=False)
        keep = [True] * len(old)
        inserts: list[tuple[int, str, Any]] = []
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                continue
            if op == "replace" and i2 - i1 == j2 - j1:
                for k in range(i2 - i1):
                    self.change(node.children[i1 + k], new[j1 + k])
                continue
            for k in range(i1, i2):
                keep[k] = False
            inserts.extend((i2, "", v) for v in new[j1:j2])
        self.rebuild(node, [c.start for c in node.children], keep, inserts)

    def rebuild(self, node: Node, starts: list[int], keep: list[bool], inserts: list[tuple[int, str, Any]]) -> None:
        """Cut the members not kept and put `inserts` ((before index, key prefix, value)) in,
        each with its separator, so that cutting what was put in restores the text."""
        if all(keep) and not inserts:
            return
        text = self.text
        children = node.children
        ends = [c.end for c in children]
        multi = self.multiline(node)
        if not any(keep):
            # Nothing of the old content stays: the inside is laid out anew.
            if not inserts:
                self.splices.append((node.start + 1, node.end - 1, ""))
                return
            outer = _line_indent(text, node.start)
            inner = outer + self.style.unit
            nl = self.style.newline
            if multi:
                body = ",".join(
                    nl + inner + prefix + dump(v, self.style.unit, nl, inner) for _, prefix, v in inserts
                ) + nl + outer
            else:
                body = ", ".join(prefix + dump(v, None) for _, prefix, v in inserts)
            self.splices.append((node.start + 1, node.end - 1, body))
            return
        first_kept = keep.index(True)
        for i, kept in enumerate(keep):
            if kept:
                continue
            if i > first_kept:
                self.splices.append((ends[i - 1], ends[i], ""))  # ", <member>"
            else:
                self.splices.append((starts[i], starts[i + 1], ""))  # "<member>, "
        for before, prefix, value in inserts:
            kept_before = [i for i in range(before) if keep[i]]
            if kept_before:
                # after the last kept member before the slot: ",<gap><member>"
                anchor = kept_before[-1]
                gap = self.gap(starts, ends, anchor, multi)
                item = prefix + self.render(value, starts[anchor], multi)
                self.splices.append((ends[anchor], ends[anchor], "," + gap + item))
            else:
                # before the first kept member: "<member>,<gap>"
                gap = text[self._gap_start(starts[first_kept]) : starts[first_kept]] if multi else " "
                item = prefix + self.render(value, starts[first_kept], multi)
                self.splices.append((starts[first_kept], starts[first_kept], item + "," + gap))

    def _gap_start(self, pos: int) -> int:
        """Where the whitespace that leads up to `pos` on its own line starts (its newline)."""
        j = pos
        while j > 0 and self.text[j - 1] in " \t":
            j -= 1
        if j > 0 and self.text[j - 1] == "\n":
            j -= 1
            if j > 0 and self.text[j - 1] == "\r":
                j -= 1
        return j

    def gap(self, starts: list[int], ends: list[int], anchor: int, multi: bool) -> str:
        if not multi:
            return " "
        return self.style.newline + _line_indent(self.text, starts[anchor])

    def result(self) -> str:
        out = []
        last = 0
        # Inserts at a point where a cut starts go after the cut; order is stable otherwise.
        for start, end, rep in sorted(self.splices, key=lambda s: (s[0], s[1] == s[0])):
            if start == end and start < last:
                start = end = last  # an insert where a cut began: right after the cut
            if start < last:
                raise AssertionError("overlapping edits")  # a bug, never user input
            out.append(self.text[last:start])
            out.append(rep)
            last = end
        out.append(self.text[last:])
        return "".join(out)


def edit(text: str, new: Any, comments: bool = False, tree: Node | None = None) -> str:
    """`text` changed to hold `new`, touching only what differs (see the module docstring).
    A blank `text` gets `new` laid out with two spaces and a final newline."""
    if not text.strip():
        return dump(new, "  ") + "\n"
    root = tree if tree is not None else parse(text, comments)
    if root.kind != "scalar" and not root.children and isinstance(new, (dict, list)) and new:
        # `{}` alone: lay the new content out in full (cutting it again gives `{}` back)
        inner = dump(new, Style(text).unit, Style(text).newline)
        return text[: root.start] + inner + text[root.end :]
    editor = _Editor(text, Style(text))
    editor.change(root, new)
    return editor.result()

"""The restricted frontmatter reader: a `key: value` subset of YAML, read without YAML.

Accepted, line by line, between a first line `---` and the next line `---`:

- blank lines and full-line comments (`# ...`, at any indent);
- `key: value` at column 0, where key is ASCII `[A-Za-z][A-Za-z0-9_-]*`, one colon and at least
  one space, and value is one of
  - a plain scalar on one line that YAML reads as a string (not a number, boolean, null or
    timestamp), with no `: ` and no ` #` inside, and not starting with a YAML indicator;
  - a plain date `YYYY-MM-DD` that exists in the calendar (YAML reads it as that date);
  - a single- or double-quoted scalar closed on the same line (the usual escapes), optionally
    followed by ` # comment`;
  - nothing at all (YAML null);
- `key:` with nothing after it, followed by indented `key: value` lines of one and the same
  indent: one level of nesting, which is how Claude Code writes `metadata:` / `  type: user`.

A leading BOM and CRLF line ends are accepted. Anything else is a problem with a line number,
never an exception: the reader returns what it could read plus the problems. The contract,
checked by a property test against PyYAML: when `problems` is empty, `yaml.safe_load` of
the block gives the same mapping (empty plain value = null, plain date = that date).
"""

from __future__ import annotations

import functools
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Dict, Optional, Union

    Scalar = Optional[str]
    Value = Union[Scalar, Dict[str, Scalar]]

FENCE = "---"
KEY_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")

# What YAML 1.1 (PyYAML's resolver) reads as something other than a string. A plain value
# matching one of these would mean one thing here and another to YAML, so it must be quoted.
_NON_STRING_SOURCE = (
    r"""(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF
    |~|null|Null|NULL|<<|=
    |[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
    |[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+
    |[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
    |[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9]
     (?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)\Z"""
)
# One frontmatter line in the accepted shape: indent, key, colon, then nothing or a space.
_LINE_RE = re.compile(r"( *)([A-Za-z][A-Za-z0-9_-]*):(?: +(.*))?\Z")
_NON_STRING_KEYS = frozenset(
    "yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF null Null NULL".split()
)
# The fast path: a block whose every line is `key: value` with a value that is either plain
# printable ASCII text starting with a letter (no colon or hash) or a YYYY-MM-DD date, or
# nothing, each line ending in a bare newline. Such a value needs no further reading, and
# since it holds no colon, a line splits at its one colon; any other block (CRLF lines, a tab,
# a control or non-ASCII character) goes to the careful reader. Trailing spaces belong to the
# plain value itself (never to a second ` *` after it): two quantifiers over the same spaces
# made a long run of them before a colon cost quadratic time.
_FAST_BLOCK = re.compile(
    r"---[ \t]*\r?\n((?: *[A-Za-z][A-Za-z0-9_-]*:(?: +(?:[A-Za-z][ -\"$-9;-~]*|[0-9]{4}-[0-9]{2}-[0-9]{2} *)| *)\n)*)"
    r"---[ \t]*(?:\r?\n|\Z)"
)
# The block `engramory new` writes (and most stores hold): the five protocol fields in their
# order, one space after each colon, values in _FAST_BLOCK's plain alphabet with no trailing
# space, both dates YYYY-MM-DD, bare newlines. One match reads all five, where the line loop of
# _parse_flat costs about as much again as the match; it gives exactly what _parse_flat would
# (tests/unit/store/test_frontmatter.py holds the two to the same result).
_CANON_VALUE = r"([A-Za-z](?:[ -\"$-9;-~]*[!\"$-9;-~])?)\n"
_CANON_DATE = r"([0-9]{4}-[0-9]{2}-[0-9]{2})\n"
_CANON_BLOCK = re.compile(
    "---\nname: " + _CANON_VALUE + "description: " + _CANON_VALUE + "type: " + _CANON_VALUE
    + "created: " + _CANON_DATE + "updated: " + _CANON_DATE + "---(?:\n|\\Z)"
)
_CANON_LINES = {"name": 2, "description": 3, "type": 4, "created": 5, "updated": 6}
_PLAIN_TEXT = re.compile(r"[A-Za-z][^\t:#]*\Z")
_NON_STRING_FIRST = frozenset("yYnNtTfFoO~<=+-.0123456789")
_CTRL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_NOT_KEY_VALUE = "not a `key: value` line"
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
# Characters YAML refuses outright, or reads as a line break inside a line.
_BAD_CHAR_SOURCE = "[^\x09\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029]"


@functools.cache
def _rx(source: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern only the careful reader needs, compiled the first time it does: _NON_STRING
    and _BAD_CHAR take some 5 ms each to compile, and a store whose notes all take the fast
    path never uses them."""
    return re.compile(source, flags)
_PLAIN_START_BAD = frozenset(",[]{}#&*!|>'\"%@`")
_DQ_ESCAPES = {
    "0": "\0", "a": "\a", "b": "\b", "t": "\t", "\t": "\t", "n": "\n", "v": "\v", "f": "\f",
    "r": "\r", "e": "\x1b", " ": " ", '"': '"', "/": "/", "\\": "\\", "N": "\x85",
    "_": "\xa0", "L": "\u2028", "P": "\u2029",
}
_DQ_HEX = {"x": 2, "u": 4, "U": 8}


class Problem:
    """Something the reader did not accept. `code` is one of the doctor's frontmatter codes."""

    __slots__ = ("code", "line", "message")

    def __init__(self, code: str, line: int, message: str) -> None:
        self.code = code
        self.line = line
        self.message = message

    def __repr__(self) -> str:
        return "Problem(%r, %d, %r)" % (self.code, self.line, self.message)


class Frontmatter:
    """What a note's frontmatter says. `fields` maps keys to a string, None (empty plain
    value) or, for a nested block, a dict of the same. `line_of` gives 1-based line numbers,
    nested keys as "parent.child". `body_start` is the offset of the body in the text."""

    __slots__ = ("present", "closed", "fields", "line_of", "problems", "body_start", "body_line", "end_line")

    def __init__(self) -> None:
        self.present = False
        self.closed = False
        self.fields: dict[str, Value] = {}
        self.line_of: dict[str, int] = {}
        self.problems: list[Problem] = []
        self.body_start = 0
        self.body_line = 1
        self.end_line = 0

    def get(self, key: str) -> Value:
        return self.fields.get(key)

    def nested(self, parent: str, key: str) -> Scalar:
        block = self.fields.get(parent)
        if isinstance(block, dict):
            return block.get(key)
        return None


def is_valid_date(text: str) -> bool:
    """A real calendar date written YYYY-MM-DD (year 1 to 9999)."""
    # the doctor asks twice per note (created, updated) of the same few hundred dates: one
    # dict lookup answers instead of a regex match; only 10-character texts are remembered,
    # and only so many, so a hostile store cannot grow the table
    known = _VALID_DATES.get(text)
    if known is None:
        known = len(text) == 10 and DATE_RE.match(text) is not None and _calendar_ok(text)
        if len(text) == 10 and len(_VALID_DATES) < _VALID_DATES_MAX:
            _VALID_DATES[text] = known
    return known


_VALID_DATES: dict[str, bool] = {}
_VALID_DATES_MAX = 4096


_CALENDAR: dict[str, bool] = {}


def _calendar_ok(text: str) -> bool:
    # A store repeats the same few hundred dates across thousands of notes: remember them.
    known = _CALENDAR.get(text)
    if known is None:
        known = _CALENDAR[text] = _calendar_check(text)
    return known


def _calendar_check(text: str) -> bool:
    year, month, day = int(text[:4]), int(text[5:7]), int(text[8:10])
    if year < 1 or not 1 <= month <= 12 or day < 1:
        return False
    if month == 2 and day == 29:
        return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return day <= _DAYS[month - 1]


def _after_quote(rest: str) -> bool:
    """Only spaces, or spaces then a comment, may follow a closing quote."""
    stripped = rest.lstrip(" ")
    return not stripped or (stripped.startswith("#") and len(stripped) < len(rest))


def _double_quoted(raw: str) -> tuple[str | None, str]:
    """(value, error) for a value starting with a double quote."""
    out: list[str] = []
    i, n = 1, len(raw)
    while i < n:
        ch = raw[i]
        if ch == '"':
            if not _after_quote(raw[i + 1:]):
                return None, "text after the closing quote"
            return "".join(out), ""
        if ch == "\\":
            if i + 1 >= n:
                break
            esc = raw[i + 1]
            if esc in _DQ_ESCAPES:
                out.append(_DQ_ESCAPES[esc])
                i += 2
                continue
            width = _DQ_HEX.get(esc)
            digits = raw[i + 2:i + 2 + width] if width else ""
            if not width or len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
                return None, "unknown escape %r in a double-quoted value" % ("\\" + esc)
            code = int(digits, 16)
            if code > 0x10FFFF:
                return None, "escape \\%s%s is not a character" % (esc, digits)
            out.append(chr(code))
            i += 2 + width
            continue
        out.append(ch)
        i += 1
    return None, "the quote is not closed on the same line (multi-line values are not allowed)"


def _single_quoted(raw: str) -> tuple[str | None, str]:
    i = 1
    out = []
    n = len(raw)
    while i < n:
        j = raw.find("'", i)
        if j < 0:
            break
        out.append(raw[i:j])
        if raw.startswith("'", j + 1):
            out.append("'")
            i = j + 2
            continue
        if not _after_quote(raw[j + 1:]):
            return None, "text after the closing quote"
        return "".join(out), ""
    return None, "the quote is not closed on the same line (multi-line values are not allowed)"


def _plain(raw: str) -> tuple[str | None, str, str]:
    """(value, problem code, reason) for an unquoted value; value None means empty."""
    value = raw.rstrip(" ") if raw.endswith(" ") else raw
    if len(value) == 10 and DATE_RE.match(value):
        if _calendar_ok(value):
            return value, "", ""
        return value, "fm-bad-date", "%s is not a date in the calendar" % value
    if _PLAIN_TEXT.match(value):
        # starts with a letter, no tab, colon or hash: text, unless it is a YAML keyword
        if value in _NON_STRING_KEYS:
            return value, "fm-malformed", "YAML reads %r as a number, boolean, null or timestamp, not text; quote it" % value
        return value, "", ""
    if not value or value.startswith("#"):
        return None, "", ""
    reason = _must_quote(value)
    if reason:
        return None, "fm-malformed", reason
    if value[0] not in _NON_STRING_FIRST:
        return value, "", ""
    return _maybe_not_text(value)


def _must_quote(value: str) -> str:
    """Why an unquoted value YAML would not read as this text must be quoted ("" when it need not)."""
    first = value[0]
    if first in _PLAIN_START_BAD:
        if first in "[{":
            return "lists and maps are not allowed; write one plain line or quote it"
        return "a value starting with %r must be quoted" % first
    if first in "-?:" and (len(value) == 1 or value[1] == " "):
        return "a value starting with %r must be quoted" % (first + " ").strip()
    if "\t" in value:
        return "tab inside an unquoted value; quote the value"
    if ": " in value or value.endswith(":"):
        return "unquoted ': ' inside the value; YAML reads it as a map: quote the value"
    if " #" in value:
        return "unquoted ' #' inside the value; YAML drops the rest as a comment: quote the value"
    return ""


def _maybe_not_text(value: str) -> tuple[str | None, str, str]:
    """A plain value starting like a date, number, boolean or null: which one YAML reads."""
    if DATE_RE.match(value):
        if is_valid_date(value):
            return value, "", ""
        return value, "fm-bad-date", "%s is not a date in the calendar" % value
    if _rx(_NON_STRING_SOURCE, re.X).match(value):
        return value, "fm-malformed", "YAML reads %r as a number, boolean, null or timestamp, not text; quote it" % value[:40]
    return value, "", ""


def _value(raw: str) -> tuple[str | None, str, str]:
    first = raw[0]
    if first == '"':
        v, err = _double_quoted(raw)
        return v, ("fm-malformed" if err else ""), err
    if first == "'":
        v, err = _single_quoted(raw)
        return v, ("fm-malformed" if err else ""), err
    return _plain(raw)


def parse(text: str) -> Frontmatter:
    """Read the frontmatter at the top of `text` (a whole note). Never raises."""
    start = 1 if text.startswith("\ufeff") else 0
    m = _CANON_BLOCK.match(text, start)
    if m is not None:
        fm = _canonical(m)
        if fm is not None:
            return fm
    m = _FAST_BLOCK.match(text, start)
    if m is not None:
        block = m.group(1)
        lines = block.split("\n")
        lines.pop()  # the block ends with a newline
        fm = _parse_flat(lines) if block[:1] != " " and "\n " not in block else _parse_fast(lines)
        if fm is not None:
            fm.present = fm.closed = True
            fm.body_start = m.end()
            fm.end_line = len(lines) + 2
            fm.body_line = fm.end_line + 1
            return fm
    return _parse_lines(text, start)


def _canonical(m: re.Match[str]) -> Frontmatter | None:
    """_parse_flat's reading of the five-field block _CANON_BLOCK matched; None where that
    would refuse it (a YAML keyword as a value, a date not in the calendar)."""
    name, desc, type_, created, updated = m.groups()
    if (name in _NON_STRING_KEYS or desc in _NON_STRING_KEYS or type_ in _NON_STRING_KEYS
            or not _calendar_ok(created) or not _calendar_ok(updated)):
        return None
    fm = Frontmatter()
    fm.fields = {"name": name, "description": desc, "type": type_, "created": created, "updated": updated}
    fm.line_of = _CANON_LINES.copy()
    fm.present = fm.closed = True
    fm.body_start = m.end()
    fm.end_line = 7
    fm.body_line = 8
    return fm


def _parse_flat(lines: list[str]) -> Frontmatter | None:
    """_parse_fast for a block with no indented line, the usual one: each line is a key, its
    one colon and a plain value or nothing (then YAML null: no nested block follows)."""
    fm = Frontmatter()
    fields = fm.fields
    line_of = fm.line_of
    number = 1
    for line in lines:
        number += 1
        key, _, raw = line.partition(":")
        if raw:
            raw = raw.strip(" ")
        if key in _NON_STRING_KEYS or raw in _NON_STRING_KEYS or key in line_of:
            return None
        line_of[key] = number
        if raw:
            if raw[0] <= "9" and not _calendar_ok(raw):
                return None
            fields[key] = raw
        else:
            fields[key] = None
    return fm


def _parse_fast(lines: list[str]) -> Frontmatter | None:
    """The common case: only `key: value` lines of plain ASCII (as _FAST_BLOCK matched them),
    at most one nested block. Returns None whenever anything needs the careful reader, which
    then decides."""
    fm = Frontmatter()
    fields = fm.fields
    line_of = fm.line_of
    parent: str | None = None
    indent = 0
    number = 1
    for line in lines:
        number += 1
        head, _, raw = line.partition(":")
        if raw:
            raw = raw.strip(" ")
        key = head.lstrip(" ")
        lead = len(head) - len(key)
        value: str | None = raw or None
        if not _fast_value_ok(key, raw, value):
            return None
        if lead:
            if parent is None or (indent and lead != indent) or not _fast_nested(fm, parent, key, value, number):
                return None
            indent = lead
            continue
        _close_block(fields, parent)
        parent = None
        indent = 0
        if key in line_of:
            return None
        line_of[key] = number
        if value is None:
            fields[key] = {}
            parent = key
        else:
            fields[key] = value
    _close_block(fields, parent)
    return fm


def _fast_value_ok(key: str, raw: str, value: str | None) -> bool:
    """Whether the fast reader may take this key and value as they stand."""
    if key in _NON_STRING_KEYS or raw in _NON_STRING_KEYS:
        return False
    return value is None or value[0] > "9" or _calendar_ok(value)


def _fast_nested(fm: Frontmatter, parent: str, key: str, value: str | None, number: int) -> bool:
    """One line of the open nested block, for the fast reader (False: a repeated key)."""
    dotted = parent + "." + key
    if dotted in fm.line_of:
        return False
    fm.line_of[dotted] = number
    block = fm.fields[parent]
    assert isinstance(block, dict)
    block[key] = value
    return True


def _close_block(fields: dict[str, Value], parent: str | None) -> None:
    """A nested block that closes with no line in it is YAML null."""
    if parent is not None and not fields[parent]:
        fields[parent] = None


def _parse_lines(text: str, start: int) -> Frontmatter:
    """The careful reader: line by line, every problem with its line number."""
    fm = Frontmatter()
    first_end = text.find("\n", start)
    first = text[start:] if first_end < 0 else text[start:first_end]
    if first.rstrip("\r").rstrip(" \t") != FENCE:
        fm.problems.append(Problem("fm-missing", 1, "no frontmatter: the first line must be ---"))
        fm.body_start = start
        return fm
    fm.present = True
    pos = len(text) if first_end < 0 else first_end + 1
    number = 1
    reader = _Careful(fm)
    size = len(text)
    while pos < size:
        end = text.find("\n", pos)
        if end < 0:
            end = size
        line = text[pos:end]
        pos = end + 1
        number += 1
        if line.endswith("\r"):
            line = line[:-1]
        if line.startswith(FENCE) and line.rstrip(" \t") == FENCE:
            _close_block(fm.fields, reader.parent)
            fm.closed = True
            fm.body_start = min(pos, size)
            fm.body_line = number + 1
            fm.end_line = number
            return fm
        reader.line(line, number)
    _close_block(fm.fields, reader.parent)
    # with no closing fence the body was read as frontmatter: its lines are not the problem
    problems = fm.problems
    problems[:] = [p for p in problems if not p.message.startswith(_NOT_KEY_VALUE)]
    problems.append(Problem(
        "fm-unclosed", 1, "the frontmatter opened on line 1 is never closed with a --- line",
    ))
    fm.end_line = reader.last_key_line or 1
    fm.body_start = size
    fm.body_line = number + 1
    return fm


class _Careful:
    """The careful reader's state between lines: the open nested block and its indent."""

    __slots__ = ("fm", "parent", "indent", "last_key_line")

    def __init__(self, fm: Frontmatter) -> None:
        self.fm = fm
        self.parent: str | None = None  # key of the open nested block
        self.indent = 0  # indent of that block's children, once known
        self.last_key_line = 0

    def line(self, line: str, number: int) -> None:
        """One line inside the block (not its closing fence)."""
        problems = self.fm.problems
        m = _LINE_RE.match(line)
        if m is None or (not line.isascii() or _CTRL.search(line)) and _rx(_BAD_CHAR_SOURCE).search(line):
            problem = _diagnose(line)
            if problem:
                problems.append(Problem("fm-malformed", number, problem))
            return
        lead, key, raw = m.group(1), m.group(2), m.group(3)
        if key in _NON_STRING_KEYS:
            problems.append(Problem("fm-malformed", number, "YAML reads the key %r as a non-string" % key))
            return
        value, code, reason = _value(raw) if raw else (None, "", "")
        if lead:
            self.nested(len(lead), key, value, code, reason, number)
        else:
            self.top(key, value, code, reason, number)

    def nested(self, lead: int, key: str, value: str | None, code: str, reason: str, number: int) -> None:
        """An indented line: a field of the open nested block."""
        fm = self.fm
        parent = self.parent
        if parent is None or (self.indent and lead != self.indent):
            fm.problems.append(Problem(
                "fm-malformed", number,
                "indented line where none belongs (only one nested block, with one indent, is allowed)",
            ))
            return
        self.indent = lead
        block = fm.fields[parent]
        assert isinstance(block, dict)
        dotted = parent + "." + key
        if key in block or dotted in fm.line_of:
            fm.problems.append(Problem(
                "fm-duplicate-key", number,
                "%s appears twice (also line %d); keep one" % (dotted, fm.line_of.get(dotted, 0)),
            ))
            return
        fm.line_of[dotted] = number
        self.last_key_line = number
        if code:
            fm.problems.append(Problem(code, number, "%s: %s" % (dotted, reason)))
            if value is None:
                return
        block[key] = value

    def top(self, key: str, value: str | None, code: str, reason: str, number: int) -> None:
        """A top-level key: it closes any open block (an empty one stays YAML null)."""
        fm = self.fm
        _close_block(fm.fields, self.parent)
        self.parent = None
        self.indent = 0
        if key in fm.line_of:
            fm.problems.append(Problem(
                "fm-duplicate-key", number,
                "%s appears twice (also line %d); keep one" % (key, fm.line_of[key]),
            ))
            return
        fm.line_of[key] = number
        self.last_key_line = number
        if code:
            fm.problems.append(Problem(code, number, "%s: %s" % (key, reason)))
            if value is None:
                return
        if value is None:
            # `key:` alone (or with a comment) may open a nested block
            fm.fields[key] = {}
            self.parent = key
            return
        fm.fields[key] = value


def _diagnose(line: str) -> str:
    """Why a frontmatter line is not accepted ("" for blank lines and comments)."""
    bad = _rx(_BAD_CHAR_SOURCE).search(line)
    if bad:
        return "control or line-break character U+%04X in the frontmatter" % ord(bad.group())
    content = line.lstrip(" ")
    if not content or content.startswith("#"):
        return ""
    if content.startswith("\t"):
        return "tab used as indentation; use spaces"
    m = KEY_RE.match(content)
    if m and content.startswith(":", m.end()):
        return "put one space after the colon in %r" % content[:m.end() + 1]
    return _NOT_KEY_VALUE + " (multi-line values, lists and free text are not allowed here)"

"""Gemini CLI's edit model: the bytes `write_file` and `replace` leave on disk, or a stated
upper bound where Gemini matches loosely.

Read from Gemini CLI 0.61.0's shipped code (`tools/edit.js`, `tools/write-file.js`) and
checked against the bytes the real CLI wrote (tests/hosts/gemini/test_prediction.py):

- Files are read as UTF-8 text (a BOM stays in the text as U+FEFF; bad bytes become U+FFFD)
  and written back as UTF-8.
- write_file writes `content` as given; if the OLD file holds any CRLF, every LF of the new
  content becomes CRLF. A BOM of the old file is not kept. No final newline is added.
- replace: the file holds CRLF if it has any; its text, `old_string` and `new_string` are all
  turned LF before matching, and the result is written back with every LF as CRLF. Then, in
  order: the exact substring (more than one match is refused unless `allow_multiple`, which
  replaces all); a line-by-line match after trimming each line, re-indented; a token regex
  anchored at a line start; a fuzzy (Levenshtein) match for `old_string` of 10 or more
  characters. The result keeps the original's trailing-newline state. An empty `old_string`
  creates a missing file and is refused on an existing one; `old_string == new_string` is
  refused.

The first three strategies are emulated exactly. The fuzzy match is not (a pure-Python
Levenshtein over every window is too slow for a hook); when none of the first three matches,
the edit is assumed to land and is sized by an upper bound (`Bound`). JavaScript semantics
matter here and are kept: `.` does not match `\\r`, `\\u2028` or `\\u2029`, `trim()` and `\\s`
have JavaScript's whitespace set, `^` in a multiline regex also matches after a lone `\\r`.
"""

from engramory import edits
from engramory.size import count_lines

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Union

# JavaScript's WhiteSpace and LineTerminator code points: what trim() strips and \s matches.
JS_SPACE = edits._JS_SPACE  # noqa: SLF001 - one definition of JavaScript's whitespace set
_LINE_BREAKS = ("\r", "\u2028", "\u2029")
_DELIMS = ("(", ")", ":", "[", "]", "{", "}", ">", "<", "=")
FUZZY_MIN = 10  # old_string shorter than this (UTF-16 units) never goes to the fuzzy match
FUZZY_THRESHOLD = 0.1
FUZZY_WORK_LIMIT = 4e8  # Gemini skips the fuzzy match when lines * len(old)^2 is past this

EXACT = "exact"
FLEXIBLE = "flexible"
REGEX = "regex"
CREATE = "create"
WRITE = "write"


class Bound:
    """An upper bound on the result of an edit Gemini may apply through its fuzzy match:
    at most `lines` lines and `nbytes` bytes. `why` says, in a clause, what was bounded."""

    __slots__ = ("lines", "nbytes", "why")

    def __init__(self, lines: int, nbytes: int, why: str) -> None:
        self.lines = lines
        self.nbytes = nbytes
        self.why = why

    def __repr__(self) -> str:
        return "Bound(%d lines, %d bytes)" % (self.lines, self.nbytes)


if TYPE_CHECKING:
    Outcome = Union[bytes, Bound, None]


def js_len(text: str) -> int:
    """A string's length as JavaScript counts it (UTF-16 code units)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def js_trim(text: str) -> str:
    return text.strip(JS_SPACE)


def read_text(raw: bytes) -> str:
    """The file as Node reads it with `readFile(path, "utf-8")`: BOM kept, bad bytes U+FFFD."""
    return raw.decode("utf-8", "replace")


def encode(text: str) -> bytes:
    return edits.encode(text)


def to_crlf(text: str) -> str:
    """JavaScript's `text.replace(/\\r?\\n/g, "\\r\\n")`."""
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def js_lines(text: str) -> "list[str]":
    """`text.match(/.*(?:\n|$)/g).slice(0, -1)`: lines with their LF. Text before a lone CR
    (or U+2028/U+2029) that is not followed by LF is not part of any line, as in Gemini."""
    if not any(ch in text for ch in _LINE_BREAKS):  # the common case, without a scan
        out = text.split("\n")
        lines = [line + "\n" for line in out[:-1]]
        if out[-1]:
            lines.append(out[-1])
        return lines
    lines = []
    p, n = 0, len(text)
    while p < n:
        q = min((i for i in (text.find(ch, p) for ch in ("\n",) + _LINE_BREAKS) if i >= 0), default=n)
        if q == n:
            lines.append(text[p:])
            break
        if text[q] == "\n":
            lines.append(text[p : q + 1])
        p = q + 1  # a lone CR ends no line: JavaScript's `.` stops there and the match fails
    return lines


def _lead(line: str) -> str:
    """The line's leading run of spaces and tabs (`/^([ \t]*)/`)."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def restore_trailing_newline(original: str, modified: str) -> str:
    had = original.endswith("\n")
    if had and not modified.endswith("\n"):
        return modified + "\n"
    if not had and modified.endswith("\n"):
        return modified[:-1]
    return modified


def apply_indentation(lines: "list[str]", target: str) -> "list[str]":
    if not lines:
        return []
    ref_indent = _lead(lines[0])
    out = []
    for line in lines:
        if js_trim(line) == "":
            out.append("")
        elif line.startswith(ref_indent):
            out.append(target + line[len(ref_indent) :])
        else:
            out.append(target + line.lstrip(JS_SPACE))
    return out


# -- the strategies -------------------------------------------------------------------------


def exact(text: str, old: str, new: str, allow_multiple: bool) -> "tuple[str | None, int]":
    """(result, occurrences); result None when nothing matched or Gemini refuses the count."""
    count = text.count(old)
    if count == 0:
        return None, 0
    if not allow_multiple and count > 1:
        return None, count
    return restore_trailing_newline(text, text.replace(old, new)), count


def flexible(text: str, old: str, new: str, raw_new: str) -> "tuple[str | None, int]":
    source = js_lines(text)
    search = [js_trim(line) for line in old.split("\n")]
    replace_lines = new.split("\n")
    count = 0
    i = 0
    n = len(search)
    while i <= len(source) - n:
        window = source[i : i + n]
        if all(js_trim(line) == search[k] for k, line in enumerate(window)):
            count += 1
            block = "\n".join(apply_indentation(replace_lines, _lead(window[0])))
            if raw_new != "" and window[-1].endswith("\n") and not block.endswith("\n"):
                block += "\n"
            source[i : i + n] = [block]
        i += 1
    if count == 0:
        return None, 0
    return restore_trailing_newline(text, "".join(source)), count


def _js_space_class() -> str:
    import re

    return "[%s]" % re.escape(JS_SPACE)


def _regex_for(old: str) -> "re.Pattern[str] | None":
    import re

    processed = old
    for delim in _DELIMS:
        processed = processed.replace(delim, " %s " % delim)
    tokens = [t for t in re.split(_js_space_class() + "+", processed) if t]
    if not tokens:
        return None
    space = _js_space_class() + "*"
    body = space.join(re.escape(t) for t in tokens)
    # JavaScript's multiline ^ matches after any line terminator, a lone CR included.
    return re.compile("(?:\\A|(?<=[\n\r\u2028\u2029]))([ \t]*)" + body)


def regex(text: str, old: str, new: str, allow_multiple: bool) -> "tuple[str | None, int]":
    pattern = _regex_for(old)
    if pattern is None:
        return None, 0
    count = sum(1 for _ in pattern.finditer(text))
    if count == 0:
        return None, 0
    new_lines = new.split("\n")

    def repl(m: "re.Match[str]") -> str:  # noqa: F821 - re is imported where it is used
        return "\n".join(apply_indentation(new_lines, m.group(1) or ""))

    result = pattern.sub(repl, text, count=0 if allow_multiple else 1)
    return restore_trailing_newline(text, result), count


def fuzzy_bound(text: str, old: str, new: str, allow_multiple: bool) -> "tuple[int, int] | None":
    """(lines, bytes) at most, of the LF text after a fuzzy match; None when Gemini would not
    try one (old_string too short, or too much work)."""
    if js_len(old) < FUZZY_MIN:
        return None
    source = js_lines(text)
    if len(source) * js_len(old) ** 2 > FUZZY_WORK_LIMIT:
        return None
    search_lines = [line.rstrip(JS_SPACE) for line in js_lines(old)]
    if not search_lines:
        return None
    n = len(search_lines)
    search_block = "\n".join(search_lines)
    s16 = js_len(search_block)
    # Each match replaces n source lines whose trimmed text is within 10% (whitespace weighted)
    # of old_string: it holds at least this many non-space UTF-16 units, so that many bytes.
    nonspace = js_len("".join(ch for ch in search_block if ch not in JS_SPACE))
    removed_min = max(0, nonspace - int(FUZZY_THRESHOLD * s16)) + (n - 1)
    indent = max((len(_lead(line)) for line in source), default=0)
    new_lines = new.split("\n")
    added_max = sum(len(encode(line)) + indent for line in new_lines if js_trim(line) != "") + (len(new_lines) - 1)
    k = 1 if not allow_multiple else max(1, -(-len(source) // n))
    base = encode(text)
    lines = count_lines(base) + max(0, len(new_lines) - n) * k
    nbytes = len(base) + max(0, added_max - removed_min) * k + 1  # +1: a restored final newline
    return lines, nbytes


# -- the tools ------------------------------------------------------------------------------


def unescape(content: str) -> str:
    """Gemini's `unescapeStringForGeminiBug`, applied to write_file content for models that
    are neither Gemini 2/3 nor custom."""
    if "\\" not in content:
        return content
    import re

    def sub(m: "re.Match[str]") -> str:
        return {"n": "\n", "t": "\t", "r": "\r", "\n": "\n"}.get(m.group(1), m.group(1))

    return re.sub(r"\\+(n|t|r|'|\"|`|\\|\n)", sub, content)


def write_file(before: "bytes | None", content: str) -> bytes:
    """The bytes write_file leaves. `before`: the file now (None: missing)."""
    if before is not None and "\r\n" in read_text(before):
        content = to_crlf(content)
    return encode(content)


def _refused(old: str, norm_old: str, norm_new: str) -> str:
    """Why Gemini refuses a replace in an existing file before it looks for old_string ("": it does not)."""
    if old == "" or norm_old == "":
        return "create-existing"
    if norm_old == norm_new:
        return "no-change"
    return ""


def _matched(text: str, norm_old: str, norm_new: str, new: str,
             allow_multiple: bool) -> "tuple[str | None, str] | None":
    """The first strategy that finds old_string (exact, then flexible, then regex): (the text it
    leaves, None when Gemini refuses; its name), or None when none finds it."""
    result, count = exact(text, norm_old, norm_new, allow_multiple)
    if count:
        return result, EXACT
    name = FLEXIBLE
    result, count = flexible(text, norm_old, norm_new, new)
    if not count:
        name = REGEX
        result, count = regex(text, norm_old, norm_new, allow_multiple)
    if not count:
        return None
    if result is None or (not allow_multiple and count != 1):
        return None, name
    return result, name


def _fuzzy(text: str, norm_old: str, norm_new: str, allow_multiple: bool, crlf: bool) -> Bound:
    bound = fuzzy_bound(text, norm_old, norm_new, allow_multiple)
    if bound is None:
        # Gemini would refuse ("could not find"), but an emulation can be wrong: size the
        # worst case, new_string added whole, rather than stay silent on an index edit.
        base = encode(text)
        bound = (count_lines(base) + norm_new.count("\n") + 1, len(base) + len(encode(norm_new)) + 1)
    lines, nbytes = bound
    if crlf:
        nbytes += lines  # every LF becomes CRLF: one more byte per line at most
    return Bound(lines, nbytes, "Gemini may apply this replace through its fuzzy match")


def replace(before: "bytes | None", old: str, new: str, allow_multiple: bool) -> "tuple[Outcome, str]":
    """(the bytes replace leaves, a Bound, or None when Gemini refuses and writes nothing;
    the strategy that decided)."""
    if before is None:
        if old == "":
            return encode(new), CREATE  # a new file gets new_string as given
        return None, "missing"
    original = read_text(before)
    crlf = "\r\n" in original
    text = original.replace("\r\n", "\n")
    norm_old = old.replace("\r\n", "\n")
    norm_new = new.replace("\r\n", "\n")
    refused = _refused(old, norm_old, norm_new)
    if refused:
        return None, refused
    matched = _matched(text, norm_old, norm_new, new, allow_multiple)
    if matched is None:
        return _fuzzy(text, norm_old, norm_new, allow_multiple, crlf), "bound"
    result, name = matched
    if result is None:
        return None, name
    return encode(to_crlf(result) if crlf else result), name

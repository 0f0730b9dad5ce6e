"""What engramory's own commands put on an index line, checked and written one way.

new, update and restore build a pointer line `- [label](slug.md) \u2014 hook` from text a
user typed (--title, --description, --hook) or from a note's description. Every such text goes
through `field`, and every line through `check_line`, whichever command made it:

- one line: runs of whitespace become one space; a control character (C0, DEL, C1), a lone
  surrogate, or an invisible / bidirectional one is refused, naming the field and code point;
- no markdown link: a line's pointer is its first note link (pointers.note_links), so a link in a
  label or hook makes the line name a second note;
- no secret (secretscan), refused with the value masked: the index is loaded into every session;
- at most LINE_MAX units for the whole line, counted in the unit of the host's window (UTF-16
  units for Claude Code), the doctor's index-long-line limit;
- nothing that opens or closes a block the host skips (layout.py models both): a run of three
  hyphens would end YAML frontmatter, `<!--` and `-->` open and close an HTML comment. They are
  escaped with a backslash (`--\\-`, `\\<!--`, `--\\>`), which markdown shows as the character.

Otherwise the label shows what the user typed: a backslash stays one backslash, except a
trailing one, which would escape the closing bracket; square brackets become parentheses, since
the label ends at the first `]`.
"""

from __future__ import annotations

import re

from engramory import hiddenchars
from engramory.curate.notes import Refusal, n
from engramory.doctor.codes import INDEX_LINE_MAX as LINE_MAX  # counted here in the window's unit
from engramory.layout import quote
from engramory.size import text_units
from engramory.store import secrets
from engramory.store.pointers import LINK_RE, note_links

SEPARATOR = " \u2014 "

_DASHES = re.compile(r"-{3,}")

SECRET_NEXT = ("The index is loaded into every session: record only where the secret lives (an environment "
               "variable name, a password manager entry)")


def _bad_char(text: str, i: int) -> bool:
    o = ord(text[i])
    if o < 0x20 or 0x7F <= o < 0xA0 or 0xD800 <= o < 0xE000:
        return True
    return hiddenchars.hidden_at(text, i)  # the doctor's rule, from the one table


def field(name: str, value: str) -> str:
    """`value` as one line, or a Refusal naming `name` (e.g. "--hook") and what is wrong."""
    text = " ".join(value.split())
    for i, ch in enumerate(text):
        if _bad_char(text, i):
            if 0xD800 <= ord(ch) < 0xE000:
                raise Refusal("the %s is not valid UTF-8 text (undecodable bytes); nothing was written: pass it "
                              "as UTF-8" % name)
            raise Refusal("the %s holds a control or invisible character (U+%04X at character %d): an index line "
                          "is plain visible text; remove it" % (name, ord(ch), i + 1))
    m = LINK_RE.search(text)
    if m is not None:
        raise Refusal("the %s holds a markdown link %s: an index line is the entry of one note (its first "
                      "link), so a link here would name another; mention other notes in the note's body as "
                      "[[name]]" % (name, quote(m.group(), 80)))
    refuse_secret(name, text)
    return text


def refuse_secret(where: str, text: str, known: str = "") -> None:
    """A Refusal for the first secret in `text` that `known` (what is there already) lacks."""
    for s in secrets.find(text):
        value = text[s.start:s.end]
        if value in known:
            continue
        raise Refusal("the %s holds what looks like a secret (%s: %s); nothing was written. %s"
                      % (where, s.kind, secrets.mask(value), SECRET_NEXT))


def escape(text: str) -> str:
    """`text` with what would open or close a skipped block backslash-escaped."""
    if "-" not in text:
        return text
    text = text.replace("<!--", "\\<!--").replace("-->", "--\\>")
    return _DASHES.sub(lambda m: "--" + "\\-" * (len(m.group()) - 2), text)


def label(text: str) -> str:
    """The label as written between the brackets."""
    text = escape(" ".join(text.split()).replace("[", "(").replace("]", ")"))
    trailing = len(text) - len(text.rstrip("\\"))
    return text + "\\" if trailing % 2 else text


def pointer_line(slug: str, label_text: str, hook: str | None = None) -> str:
    line = "- [%s](%s.md)" % (label(label_text), slug)
    if hook:
        line += SEPARATOR + escape(" ".join(hook.split()))
    return line


def label_of(line: str) -> str | None:
    """The label of the line's pointer (its first note link) as written, spaces folded."""
    links = note_links(line)
    return " ".join(links[0][0].group(1).split()) if links else None


def relabel(line: str, text: str) -> str:
    """`line` with its pointer's label replaced by `text`; every other byte kept."""
    links = note_links(line)
    if not links:
        return line
    m = links[0][0]
    return line[:m.start(1)] + label(text) + line[m.end(1):]


def check_line(line: str, unit: str, old: str | None = None, field_name: str = "--title") -> None:
    """Refuse an index line over LINE_MAX units (unless it was as long already: `old`, the line
    it replaces) or one holding a secret that `old` did not."""
    size = text_units(line, unit)
    if size > LINE_MAX and (old is None or size > text_units(old, unit)):
        raise Refusal("the pointer line would be %s %s long, over the %d an index line may take (the doctor's "
                      "index-long-line limit, counted as the host counts): give a shorter %s; the details "
                      "belong in the note" % (n(size), unit, LINE_MAX, field_name))
    refuse_secret("index line", line, old or "")

"""Generated edits for the differential prediction checks: seed files in the shapes hosts
treat differently (LF, CRLF, mixed line endings, a BOM, trailing spaces, curly quotes, no final
newline) and edits that hit each matching rule (exact, CRLF-insensitive, trailing-whitespace,
quote-folded, ambiguous, missing, deletion, replace-all, whole-file writes). Deterministic:
the same seed gives the same cases, so a failure replays."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import List

BOM = b"\xef\xbb\xbf"


@dataclass
class Case:
    name: str
    seed: bytes  # the file before (always exists: hosts want a prior read)
    kind: str  # "write" or "edit"
    content: str = ""
    old: str = ""
    new: str = ""
    replace_all: bool = False


def _lines(rng: random.Random, n: int) -> List[str]:
    words = ["alpha", "beta", "gamma", "delta", "it's", "\u201cquoted\u201d", "x  y", "tail  "]
    return ["- [n%d](n%d.md) %s %d" % (i, i, rng.choice(words), rng.randrange(1000)) for i in range(n)]


def _seed(rng: random.Random, lines: List[str], shape: str) -> bytes:
    if shape == "crlf":
        text = "\r\n".join(lines) + "\r\n"
    elif shape == "mixed":
        text = "".join(line + ("\r\n" if i % 2 else "\n") for i, line in enumerate(lines))
    elif shape == "noeol":
        text = "\n".join(lines)
    else:
        text = "\n".join(lines) + "\n"
    data = text.encode("utf-8")
    return BOM + data if shape == "bom" else data


SHAPES = ("lf", "crlf", "mixed", "bom", "noeol")


def cases(count: int = 60, seed: int = 15) -> List[Case]:
    rng = random.Random(seed)
    out: List[Case] = []
    i = 0
    while len(out) < count:
        shape = SHAPES[i % len(SHAPES)]
        lines = _lines(rng, rng.randrange(3, 9))
        data = _seed(rng, lines, shape)
        pick = i % 12
        k = rng.randrange(len(lines))
        target = lines[k]
        name = "%02d-%s-%d" % (len(out), shape, pick)
        if pick == 0:
            out.append(Case(name, data, "write", content="- [w](w.md) one\n- [w2](w2.md) two\n"))
        elif pick == 1:
            out.append(Case(name, data, "edit", old=target, new=target + " EDITED\n- [added](added.md) new line"))
        elif pick == 2:  # two lines with LF, against whatever the file has
            j = min(k + 1, len(lines) - 1)
            old = target + "\n" + lines[j] if j != k else target
            out.append(Case(name, data, "edit", old=old, new="- [merged](merged.md) one line"))
        elif pick == 3:  # trailing whitespace differs
            out.append(Case(name, data, "edit", old=target + "   ", new="- [ws](ws.md) trailing"))
        elif pick == 4:  # curly quotes where the file is straight, and the reverse
            old = target.replace("it's", "it\u2019s").replace("\u201cquoted\u201d", '"quoted"')
            out.append(Case(name, data, "edit", old=old, new="- [q](q.md) quote \u2019fold\u2019"))
        elif pick == 5:  # deletion of a whole line
            out.append(Case(name, data, "edit", old=target, new=""))
        elif pick == 6:  # not in the file
            out.append(Case(name, data, "edit", old="no such text %d" % i, new="x"))
        elif pick == 7:  # ambiguous, then replace-all
            out.append(Case(name, data, "edit", old="](n", new="](m", replace_all=bool(rng.randrange(2))))
        elif pick == 8:  # with the file's own line break at the end
            out.append(Case(name, data, "edit", old=target + "\n", new="- [nl](nl.md) a\n- [nl2](nl2.md) b\n"))
        elif pick == 9:  # CRLF inside old and new
            j = min(k + 1, len(lines) - 1)
            out.append(Case(name, data, "edit", old=target + "\r\n" + lines[j] if j != k else target,
                            new="- [c1](c1.md) one\r\n- [c2](c2.md) two"))
        elif pick == 10:  # a write with CRLF content
            out.append(Case(name, data, "write", content="- [a](a.md) one\r\n- [b](b.md) two\r\n"))
        else:  # indentation differs
            out.append(Case(name, data, "edit", old="  " + target, new="- [ind](ind.md) indented"))
        i += 1
    return out

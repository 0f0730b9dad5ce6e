"""opencode's edit matcher (Ts() in its edit tool: a chain of replacers, each proposing spans
of the file that the edit's oldString may mean; the first that is found once wins), ported.
Loaded only when an edit of a guarded file is predicted (hosts/opencode/__init__.py,
apply_edit): the ignored path never pays for it.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
ANCHOR_SIMILARITY = 0.65


def _trim(s: "str") -> "str":
    return s.strip(_JS_SPACE)


def _lev(a: "str", b: "str") -> "int":
    if a == "" or b == "":
        return max(len(a), len(b))
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (0 if a[i - 1] == b[j - 1] else 1))
        prev = cur
    return prev[len(b)]


def _span(lines: "list[str]", start: "int", end: "int") -> "tuple[int, int]":
    """(offset of line `start`, offset of the end of line `end`), lines joined by '\\n'."""
    a = sum(len(lines[m]) + 1 for m in range(start))
    b = a
    for m in range(start, end + 1):
        b += len(lines[m]) + (1 if m < end else 0)
    return a, b


def _simple(o: "str", e: "str") -> "Iterator[str]":
    yield e


def _line_trimmed(o: "str", e: "str") -> "Iterator[str]":
    r, t = o.split("\n"), e.split("\n")
    if t[-1] == "":
        t.pop()
    for i in range(len(r) - len(t) + 1):
        if all(_trim(r[i + y]) == _trim(t[y]) for y in range(len(t))):
            a, b = _span(r, i, i + len(t) - 1) if t else (0, 0)
            yield o[a:b]


def _anchor_candidates(r: "list[str]", t: "list[str]") -> "list[tuple[int, int]]":
    """(first, last) line pairs whose ends match the block's and whose length is near its own."""
    first, last, size = _trim(t[0]), _trim(t[-1]), len(t)
    slack = max(1, size // 4)
    cands = []
    for a in range(len(r)):
        if _trim(r[a]) != first:
            continue
        g = next((g for g in range(a + 2, len(r)) if _trim(r[g]) == last), None)
        if g is not None and abs((g - a + 1) - size) <= slack:
            cands.append((a, g))
    return cands


def _anchor_score(r: "list[str]", t: "list[str]", a: "int", g: "int", early: "bool") -> "float":
    """How alike the middle lines are (opencode's similarity, stopping early for one candidate)."""
    size, c = len(t), g - a + 1
    n = min(size - 2, c - 2)
    if n <= 0:
        return 1.0
    h = 0.0
    for k in range(1, min(size - 1, c - 1)):
        d, w = _trim(r[a + k]), _trim(t[k])
        m = max(len(d), len(w))
        if m == 0:
            continue
        h += (1 - _lev(d, w) / m) / (n if early else 1)
        if early and h >= ANCHOR_SIMILARITY:
            break
    return h if early else h / n


def _block_anchor(o: "str", e: "str") -> "Iterator[str]":
    r, t = o.split("\n"), e.split("\n")
    if len(t) < 3:
        return
    if t[-1] == "":
        t.pop()
    cands = _anchor_candidates(r, t)
    best: tuple[int, int] | None = None
    best_score = -1.0
    if len(cands) == 1:
        best, best_score = cands[0], _anchor_score(r, t, cands[0][0], cands[0][1], True)
    for a, g in cands if len(cands) > 1 else ():
        s = _anchor_score(r, t, a, g, False)
        if s > best_score:
            best, best_score = (a, g), s
    if best is not None and best_score >= ANCHOR_SIMILARITY:
        x, y = _span(r, best[0], best[1])
        yield o[x:y]


def _ws_norm(s: "str") -> "str":
    import re  # only here: the edit path, never the hot path of a tool the guard leaves alone

    return _trim(re.sub(r"\s+", " ", s))


def _whitespace_normalised(o: "str", e: "str") -> "Iterator[str]":
    import re

    t = _ws_norm(e)
    lines = o.split("\n")
    for u in lines:
        if _ws_norm(u) == t:
            yield u
        elif t in _ws_norm(u):
            words = re.split(r"\s+", _trim(e))
            if words:
                pattern = r"\s+".join(re.escape(w) for w in words)
                m = re.search(pattern, u)
                if m:
                    yield m.group(0)
    n = e.split("\n")
    if len(n) > 1:
        for y in range(len(lines) - len(n) + 1):
            block = "\n".join(lines[y : y + len(n)])
            if _ws_norm(block) == t:
                yield block


def _dedent(s: "str") -> "str":
    import re

    u = s.split("\n")
    m = [x for x in u if len(_trim(x)) > 0]
    if not m:
        return s
    least = min(len(re.match(r"^(\s*)", x).group(1)) for x in m)  # type: ignore[union-attr]
    return "\n".join(x if len(_trim(x)) == 0 else x[least:] for x in u)


def _indentation_flexible(o: "str", e: "str") -> "Iterator[str]":
    t = _dedent(e)
    lines, n = o.split("\n"), len(e.split("\n"))
    for y in range(len(lines) - n + 1):
        block = "\n".join(lines[y : y + n])
        if _dedent(block) == t:
            yield block


_ESC = r"\\(n|t|r|'|\"|`|\\|\n|\$)"
_ESC_MAP = {"n": "\n", "t": "\t", "r": "\r", "'": "'", '"': '"', "`": "`", "\\": "\\", "\n": "\n", "$": "$"}


def _unescape(s: "str") -> "str":
    import re

    return re.sub(_ESC, lambda m: _ESC_MAP[m.group(1)], s)


def _escape_normalised(o: "str", e: "str") -> "Iterator[str]":
    t = _unescape(e)
    if t in o:
        yield t
    lines, n = o.split("\n"), len(t.split("\n"))
    for y in range(len(lines) - n + 1):
        block = "\n".join(lines[y : y + n])
        if _unescape(block) == t:
            yield block


def _trimmed_boundary(o: "str", e: "str") -> "Iterator[str]":
    r = _trim(e)
    if r == e:
        return
    if r in o:
        yield r
    lines, n = o.split("\n"), len(e.split("\n"))
    for k in range(len(lines) - n + 1):
        block = "\n".join(lines[k : k + n])
        if _trim(block) == r:
            yield block


def _mostly_same(m: "list[str]", r: "list[str]") -> "bool":
    """At least half the non-blank middle lines equal once trimmed (or none to compare)."""
    same = seen = 0
    for g in range(1, len(m) - 1):
        c, h = _trim(m[g]), _trim(r[g])
        if c or h:
            seen += 1
            same += c == h
    return seen == 0 or same / seen >= 0.5


def _context_aware(o: "str", e: "str") -> "Iterator[str]":
    r = e.split("\n")
    if len(r) < 3:
        return
    if r[-1] == "":
        r.pop()
    t = o.split("\n")
    first, last = _trim(r[0]), _trim(r[-1])
    for y in range(len(t)):
        if _trim(t[y]) != first:
            continue
        u = next((u for u in range(y + 2, len(t)) if _trim(t[u]) == last), None)
        if u is not None and u - y + 1 == len(r) and _mostly_same(t[y : u + 1], r):
            yield "\n".join(t[y : u + 1])


def _multi_occurrence(o: "str", e: "str") -> "Iterator[str]":
    start = 0
    while True:
        i = o.find(e, start)
        if i == -1:
            return
        yield e
        start = i + len(e)


REPLACERS = (
    _simple, _line_trimmed, _block_anchor, _whitespace_normalised, _indentation_flexible,
    _escape_normalised, _trimmed_boundary, _context_aware, _multi_occurrence,
)


def _too_large(y: "str", e: "str") -> "bool":
    r = len(e.split("\n"))
    if len(y.split("\n")) >= max(r + 3, r * 2):
        return True
    if r == 1:
        return False
    return len(_trim(y)) > max(len(_trim(e)) + 500, len(_trim(e)) * 4)


def _js_replacement(new: "str", match: "str", before: "str", after: "str") -> "str":
    """`new` as String.prototype.replace reads a replacement string: $$, $&, $`, $'."""
    if "$" not in new:
        return new
    import re

    return re.sub(r"\$([$&`'])", lambda m: {"$": "$", "&": match, "`": before, "'": after}[m.group(1)], new)


def _replace_every(o: "str", y: "str", r: "str") -> "str":
    out, pos = [], 0
    while True:
        i = o.find(y, pos)
        if i == -1:
            break
        out.append(o[pos:i])
        out.append(_js_replacement(r, y, o[:i], o[i + len(y) :]))
        pos = i + len(y)
    out.append(o[pos:])
    return "".join(out)


def replace(o: "str", e: "str", r: "str", replace_all: "bool" = False) -> "str | None":
    """opencode's Ts(): the text after the edit, or None where it throws (the edit fails)."""
    if e == r or e == "":
        return None
    for replacer in REPLACERS:
        for y in replacer(o, e):
            u = o.find(y)
            if u == -1:
                continue
            if _too_large(y, e):
                return None
            if replace_all:
                # a whitespace-only oldString: not modelled, and the host's result is absurd
                return None if y == "" else _replace_every(o, y, r)
            if u == o.rfind(y):
                return o[:u] + r + o[u + len(y) :]
    return None  # not found, or only ambiguous matches

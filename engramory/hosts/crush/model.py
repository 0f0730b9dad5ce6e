"""Crush's edit and multiedit tools as engramory predicts them: an exact match (once, or
every one with replace_all), a CRLF file edited as LF and its endings restored, and Crush's
whitespace-normalised fallback judged by its worst case (it re-indents what it matches).
Loaded only when a call on a guarded file is predicted (hosts/crush/__init__.py, predict).
"""

from __future__ import annotations

from engramory.edits import encode
from engramory.hosts import claudelike


def _norm(line: str) -> str:
    return " ".join(line.split())


def _loose_match(text: str, old: str) -> bool:
    """Whether Crush's whitespace-normalised fallback finds `old` once, as whole lines."""
    want = [_norm(line) for line in old.split("\n")]
    if want and want[-1] == "" and len(want) > 1:
        want = want[:-1]
    if not any(want):
        return False
    lines = [_norm(line) for line in text.split("\n")]
    hits = sum(1 for i in range(len(lines) - len(want) + 1) if lines[i : i + len(want)] == want)
    return hits == 1


def _replace(text: str, old: str, new: str, replace_all: bool) -> str | claudelike.Unknown | None:
    n = text.count(old)
    if n == 0:
        return claudelike.Unknown(new, "Crush re-indents a whitespace-normalised match") if _loose_match(text, old) else None
    if n > 1 and not replace_all:
        return None
    return text.replace(old, new) if replace_all else text.replace(old, new, 1)


def _start(before: bytes | None, edits: list[tuple[str, str, bool]]) -> tuple[str, list[tuple[str, str, bool]], bool] | None:
    """(the text the edits start from, the edits left to apply, whether the file is CRLF), or
    None where Crush refuses the call: an empty old_string creates a file, and only a new one."""
    creates = bool(edits) and edits[0][0] == ""
    if before is None:
        return (edits[0][1], edits[1:], False) if creates else None
    if creates:
        return None  # "file already exists"
    raw = before.decode("utf-8", "replace")
    crlf = "\r\n" in raw
    return (raw.replace("\r\n", "\n") if crlf else raw), edits, crlf


def _run(text: str, edits: list[tuple[str, str, bool]], multi: bool) -> tuple[str, bool, bool] | None:
    """(text after the edits, whether one applied, whether one met only the fallback), or None
    where an edit fails the call (multiedit skips an edit that does not match)."""
    applied = unknown = False
    for old, new, replace_all in edits:
        result = None if old == "" else _replace(text, old, new, replace_all)
        if result is None:
            if multi:
                continue
            return None
        if isinstance(result, claudelike.Unknown):
            unknown = True
            continue
        text, applied = result, True
    return text, applied, unknown


def apply_edits(before: bytes | None, edits: list[tuple[str, str, bool]], multi: bool) -> bytes | claudelike.Unknown | None:
    """The bytes `edit` (one edit) or `multiedit` writes, an Unknown for a fallback match,
    or None when Crush refuses the call."""
    start = _start(before, edits)
    if start is None:
        return None
    text, rest, crlf = start
    run = _run(text, rest, multi)
    if run is None:
        return None
    text, applied, unknown = run
    if unknown:
        return claudelike.Unknown("".join(new for _, new, _ in edits), "Crush re-indents a whitespace-normalised match")
    if not applied and before is not None:
        return None  # every edit failed: an error, nothing written
    if crlf and "\r\n" not in text:
        text = text.replace("\n", "\r\n")
    return encode(text)

"""What a tool hands back: an Answer (text for the model, data for structuredContent) or a
ToolError (an `isError` result with the numbers and the next step), and the budget that keeps
every result under RESULT_MAX characters by construction."""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

RESULT_MAX = 25_000  # characters of one serialized tools/call result, at most
# characters of JSON-escaped text a view or a listing fills, at most: the text goes out twice,
# as the text content and inside structuredContent (Claude Code 2.1.332 shows the model only the
# structured copy when there is one), and both must fit in RESULT_MAX with the facts beside them
TEXT_BUDGET = 11_000


class Answer:
    __slots__ = ("text", "data")

    def __init__(self, text: str, data: dict[str, Any]) -> None:
        self.text = text
        self.data = data


class ToolError(Exception):
    """A refusal or a failure the model can act on: nothing was changed (unless `data` says
    otherwise). The message says what happened, with numbers, and what to do next."""

    def __init__(self, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.data = dict(data or {})


def cost(text: str) -> int:
    """Characters `text` takes inside a JSON string (escapes included), plus its newline."""
    return len(json.dumps(text, ensure_ascii=False)) - 1


def fit(lines: list[str], budget: int = TEXT_BUDGET) -> int:
    """How many of `lines` fit in `budget` characters (at least one, cut short if it must be)."""
    used = 0
    for i, line in enumerate(lines):
        used += cost(line)
        if used > budget:
            return max(i, 1)
    return len(lines)


def cut(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[: limit - 1] + "\u2026"

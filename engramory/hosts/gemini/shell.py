"""Gemini CLI: run_shell_command before it runs (imported by engramory.hosts.gemini only for a
command whose text may write a file: it holds `<<`, `>` with printf or echo, `>>` or `tee`).

Measured on Gemini CLI 0.61.0 (its shell tool): the command, trimmed, runs under `bash -c`
inside a subshell the CLI wraps it in with newlines (so a heredoc keeps its closing line), in the
project folder or the call's `dir_path` under it. Gemini shows the guard no bytes of a shell
write, so two rules decide, in this order, in the package (`gemini._shell_decision`):

- the writes whose bytes the command text fixes (heredoc, printf, echo: engramory.shellwrite's
  `predicted`, the reading Codex's guard uses too) are judged by the core exactly as a
  write_file is (caps, and the stale-write rule on the session's read record);
- every other append (`>> FILE`, `tee -a FILE`: from a command whose output only the shell
  knows) to an index already at or over a hard cap is denied here, since any text it adds grows
  the index past the cap (`unpredicted_appends`, `at_cap`).

This module never imports the package back (the package passes what it needs)."""

from engramory import scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from engramory.judge import Decision
    from engramory.size import Window

TOOL = "run_shell_command"
EDIT_INSTEAD = "Edit the index with replace or write_file instead (the guard checks those)."


def appends(command: str) -> "list[str]":
    """The files a shell command appends to (`>> f`, `tee -a f`), as written."""
    import re  # only for a command past the package's string gate (`>>` or `tee` in its text)

    out = []
    for m in re.finditer(r"(?:>>|\btee\s+(?:-a|--append)\s+)\s*(\"[^\"]+\"|'[^']+'|[^\s;&|<>]+)", command):
        word = m.group(1)
        out.append(word[1:-1] if word[:1] in "\"'" else word)
    return out


def unpredicted_appends(command: str, base: str, predicted: "Sequence[str]") -> "list[str]":
    """The absolute paths (from `base`) of the files the command appends to, less one for each
    append that was predicted (`predicted`: their target words, one per append): what only the
    at-cap rule can judge. A word the two readings spell differently stays in (judged by both,
    never by neither); a word after `cd DIR &&` is taken from `base`, as it always was here."""
    left = list(predicted)
    out = []
    for word in appends(command):
        if word in left:
            left.remove(word)
        else:
            out.append(scope.resolve_path(word, base))
    return out


def at_cap(path: str, env: "Mapping[str, str]", window: "Window", window_text: str) -> "Decision | None":
    """The deny for an append the guard cannot predict to the index `path`, when `path` is
    already at or over a hard cap; None below the caps or when `path` cannot be read."""
    before = scope.read_regular(path)
    if before is None:
        return None
    from engramory import judge  # lazy: the decision only for an append to an index
    from engramory.size import count_lines  # lazy: sizes only for an append to an index
    from engramory.size import n as _n  # lazy: sizes only for an append to an index

    caps, notes = judge.caps_for(path, env, window)
    lines, nbytes = count_lines(before), len(before)
    if lines < caps.hard_lines and nbytes < caps.hard_bytes:
        return None
    return judge.Decision(
        judge.DENY,
        judge.masked(
            "engramory blocked this %s: it appends to the memory index %s, which is already at its hard cap "
            "(%s lines / %s bytes; caps %s / %s), so anything added grows it past the cap. %s. %s %s%s"
            % (TOOL, path, _n(lines), _n(nbytes), _n(caps.hard_lines), _n(caps.hard_bytes), window_text,
               EDIT_INSTEAD, judge.COMPACT_STEPS, (" " + " ".join(notes)) if notes else "")),
        path,
    )

"""Whole-file writes a shell command makes through a heredoc, printf or echo, predicted exactly or not at all.

A host with no write tool (Codex) replaces a file by running `cat > FILE <<'EOF' ... EOF` in
its shell. Measured on Codex 0.171.0, such a write after a stale read drops what another writer
added since, and a guard that reads no redirection lets it grow an index past its cap. This
module reads the few forms whose result the command text fixes, so the core can judge them as
it judges a patch:

    cat > FILE <<DELIM        cat >> FILE <<DELIM        cat <<DELIM > FILE   (also >FILE, >|)
    tee FILE <<DELIM          tee -a FILE <<DELIM        (either with > /dev/null)

The heredoc's text is what the file receives when its delimiter is quoted (`<<'EOF'`, `<<"EOF"`,
`<<\\EOF`: the shell expands nothing) or when the text holds no `$`, backquote or backslash
(the only characters an unquoted heredoc expands). Everything else is not predicted: a word with
a variable, a glob or a tilde, a second redirection, a pipe into the command, a quote left open
on the line, a heredoc with no closing line, anything after a line continued with a backslash.

The same holds for the builtins that print what their words say:

    printf 'FORMAT' [ARGS...] > FILE     (>>, >|; also `printf -- FORMAT`)
    echo [-n] [-E] WORDS > FILE          (>>, >|)

read as bash's builtins run them (`bash -c`, which Codex and Gemini CLI use): a format of literal
text, the escapes \\n \\t \\\\ \\a \\b \\f \\r \\v, `%%` and `%s` (used again while arguments
remain); any other directive or escape is not predicted, nor `echo -e`, an echo word with a
backslash or a first word that reads as an option (zsh's echo differs from bash's there), nor
`=word` (zsh expands it). For a relative FILE or an append, the command must
be the script's first, alone on its line or after one `cd DIR &&` (earlier commands could move
the folder or change the file). The caller then decides as it did without this module.

A line is read as a shell would split it into words and operators, quotes included; no `re` and
no `shlex`: this runs inside a pre-tool hook, on shell commands that carry a heredoc or a `>`.
"""

from engramory import scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Tuple

    Token = Tuple[str, str, bool]  # (kind: "w" word or "o" operator, value, safe)

# Characters an unquoted word may not hold for its value to be known without a shell: expansion,
# globbing, brace and tilde expansion, escapes.
_UNSAFE = frozenset("$`\\*?[]{}~")
# Characters that end an unquoted word.
_BREAK = frozenset(" \t;&|()<>")
_SEPARATORS = frozenset(("&&", "||", ";", "&", "|", "(", ")", ";;"))
_CATS = frozenset(("cat", "/bin/cat", "/usr/bin/cat"))
_TEES = frozenset(("tee", "/bin/tee", "/usr/bin/tee"))
_APPEND_FLAGS = frozenset(("-a", "--append"))
_DEV_NULL = "/dev/null"


class HeredocWrite:
    """One write a heredoc makes: `target` as written (relative to `folder` when not absolute;
    `folder` is the argument of a `cd` before it on its line, else None), whether it appends,
    and the exact text it writes."""

    __slots__ = ("target", "append", "text", "folder")

    def __init__(self, target: str, append: bool, text: str, folder: "str | None") -> None:
        self.target = target
        self.append = append
        self.text = text
        self.folder = folder

    def __repr__(self) -> str:
        return "HeredocWrite(%r, append=%r, %d chars, folder=%r)" % (self.target, self.append, len(self.text),
                                                                      self.folder)


def tokens(line: str) -> "Optional[List[Token]]":
    """The words and operators of one line as the shell splits them, each word with its value
    after quote removal and whether that value is known without a shell (no expansion left);
    None when a quote is left open (the line goes on into the next). A `#` starting a word ends
    the line. Redirection operators are "<", "<<", "<<-", "<<<", ">", ">>", ">|", with a file
    descriptor number in front ("2>") and "&>", ">&"."""
    out: List[Token] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in " \t":
            i += 1
            continue
        if c == "#":
            break
        op = _operator(line, i)
        if op:
            out.append(("o", op, True))
            i += len(op)
            continue
        got = _word(line, i)
        if got is None:
            return None
        value, safe, i = got
        if i < n and line[i] in "<>" and value.isdigit() and safe and line[i - 1] not in "'\"":
            op = _operator(line, i)
            out.append(("o", value + op, True))
            i += len(op)
            continue
        out.append(("w", value, safe))
    return out


def _operator(line: str, i: int) -> str:
    for op in ("<<<", "<<-", "&&", "||", ";;", "<<", ">>", ">|", "&>", ">&", "<&", "<>"):
        if line.startswith(op, i):
            return op
    c = line[i]
    return c if c in ";&|()<>" else ""


def _word(line: str, i: int) -> "Optional[Tuple[str, bool, int]]":
    """(value, safe, end) of the word at `i`; None for a quote left open."""
    parts: List[str] = []
    safe = True
    n = len(line)
    while i < n and line[i] not in _BREAK:
        c = line[i]
        if c in "'\"":
            got = _quoted(line, i)
            if got is None:
                return None
            inner, i = got
            safe = safe and (c == "'" or _plain_in_double_quotes(inner))
            parts.append(inner)
            continue
        step = 2 if c == "\\" else 1  # an escaped character belongs to the word, whatever it is
        safe = safe and c not in _UNSAFE and not (c == "=" and not parts)  # zsh expands `=cmd`
        parts.append(line[i:i + step])
        i += step
    return "".join(parts), safe, i


def _plain_in_double_quotes(inner: str) -> bool:
    """Whether the text inside double quotes is its own value: no expansion (`$`, backquote) and
    no backslash the shell removes (one before `$`, backquote, `"` or a backslash; any other
    backslash stays, as in `"a\\n"`, two characters)."""
    if "$" in inner or "`" in inner:
        return False
    at = inner.find("\\")
    while at >= 0:
        if at + 1 >= len(inner) or inner[at + 1] in "$`\"\\":
            return False
        at = inner.find("\\", at + 2)
    return True


def _quoted(line: str, i: int) -> "Optional[Tuple[str, int]]":
    """(the text inside the quote opening at `i`, the index past its close); None when open."""
    q = line[i]
    j = i + 1
    while j < len(line) and line[j] != q:
        j += 2 if q == '"' and line[j] == "\\" else 1
    return None if j >= len(line) else (line[i + 1:j], j + 1)


def _raw_delimiter(line: str, spec_at: int) -> "Tuple[str, bool] | None":
    """(delimiter, quoted) of the heredoc whose word starts at or after `spec_at`."""
    while spec_at < len(line) and line[spec_at] in " \t":
        spec_at += 1
    got = _word(line, spec_at)
    if got is None:
        return None
    value, _, end = got
    raw = line[spec_at:end]
    if not value:
        return None
    quoted = any(q in raw for q in "'\"\\")
    return value.replace("\\", "") if quoted else value, quoted


def _openers(line: str) -> "Optional[List[Tuple[bool, str, bool]]]":
    """Per heredoc opened on the line, in order: (strip tabs, delimiter, quoted); None when the
    line cannot be read (a quote left open, a delimiter that is not a plain word)."""
    found: List[Tuple[bool, str, bool]] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in "'\"":
            got = _quoted(line, i)
            if got is None:
                return None
            i = got[1]
        elif c == "\\":
            i += 2
        elif c == "#" and (i == 0 or line[i - 1] in " \t;&|()"):
            break
        elif line.startswith("<<", i) and not line.startswith("<<<", i):
            strip = line.startswith("<<-", i)
            i += 3 if strip else 2
            spec = _raw_delimiter(line, i)
            if spec is None:
                return None
            found.append((strip, spec[0], spec[1]))
        else:
            i += 3 if line.startswith("<<<", i) else 1
    return found


def _body(lines: "List[str]", start: int, strip: bool, delim: str) -> "Tuple[Optional[str], int]":
    """(the heredoc's text, the index of the line after its closing line); text None when no
    line closes it."""
    got: List[str] = []
    for k in range(start, len(lines)):
        line = lines[k].lstrip("\t") if strip else lines[k]
        if line == delim:
            return "".join(part + "\n" for part in got), k + 1
        got.append(line)
    return None, len(lines)


def heredoc_writes(command: str) -> "List[HeredocWrite]":
    """Every write of the forms above that `command` (a shell script) makes, in order."""
    out: List[HeredocWrite] = []
    lines = command.split("\n")
    k = 0
    first = True  # no command line before this one
    while k < len(lines):
        line = lines[k]
        k += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "<<" not in line:
            plain = _plain_line(line, first)
            if plain is None:
                return out  # a quote or a line running on into later lines: nothing after it is read
            out.extend(plain)
            first = False
            continue
        openers = _openers(line)
        if openers is None or line.endswith("\\"):
            return out  # unreadable, or continued on the next line: nothing after it is read
        texts: List[Optional[str]] = []
        for strip, delim, quoted in openers:
            text, k = _body(lines, k, strip, delim)
            if text is None:
                return out
            texts.append(text if quoted or not any(c in text for c in "$`\\") else None)
        if len(openers) == 1 and texts[0] is not None:
            write = _write_of(line, texts[0], first)
            if write is not None:
                out.append(write)
        first = False
    return out


def _plain_line(line: str, first: bool) -> "Optional[List[HeredocWrite]]":
    """The printf/echo writes of a line with no heredoc; None when nothing after it can be read
    (a quote left open, or a line continued on the next)."""
    if tokens(line) is None or line.endswith("\\"):
        return None
    return _print_writes(line, first) if ">" in line else []


def _write_of(line: str, text: str, first: bool) -> "HeredocWrite | None":
    split = _commands(line)
    if split is None:
        return None
    commands, seps = split
    at = next((j for j, cmd in enumerate(commands) if any(t[0] == "o" and t[1] in ("<<", "<<-") for t in cmd)), -1)
    if at < 0 or (at and seps[at - 1] == "|") or (at < len(seps) and seps[at] == "|"):
        return None  # piped into or out of: keep to the plain forms
    folder = _cd_before(commands[:at], seps[:at]) if at else ""
    if folder is None:  # something other than `cd DIR &&` before it: only an absolute overwrite is read
        first = False
    parsed = _simple(commands[at])
    if parsed is None:
        return None
    target, append = parsed
    if (append or not target.startswith("/")) and not first:
        return None
    return HeredocWrite(target, append, text, folder or None)


def _commands(line: str) -> "Optional[Tuple[List[List[Token]], List[str]]]":
    """The line's simple commands and the separators between them; None for a line that is
    not read (a quote left open, a backquote, a subshell or command substitution)."""
    toks = None if "`" in line else tokens(line)
    if toks is None or any(t[0] == "o" and t[1] in ("(", ")") for t in toks):
        return None
    commands: List[List[Token]] = [[]]
    seps: List[str] = []
    for t in toks:
        if t[0] == "o" and t[1] in _SEPARATORS:
            commands.append([])
            seps.append(t[1])
        else:
            commands[-1].append(t)
    return commands, seps


def _cd_before(before: "List[List[Token]]", seps: "List[str]") -> "str | None":
    """The folder of `cd DIR &&` when it is all that comes before ("" for none); None otherwise."""
    if len(before) != 1 or seps != ["&&"]:
        return None
    words = before[0]
    if len(words) != 2 or words[0][:2] != ("w", "cd") or words[1][0] != "w" or not words[1][2] or not words[1][1]:
        return None
    if words[1][1] == "-":
        return None
    return words[1][1]


def _simple(cmd: "List[Token]") -> "Tuple[str, bool] | None":
    """(target, append) of one `cat`/`tee` command with a heredoc as its only input."""
    words: List[Token] = []
    redirects: List[Tuple[str, Token]] = []
    j = 0
    while j < len(cmd):
        if cmd[j][0] == "o":
            if j + 1 >= len(cmd) or cmd[j + 1][0] != "w":
                return None
            redirects.append((cmd[j][1], cmd[j + 1]))
            j += 2
        else:
            words.append(cmd[j])
            j += 1
    heredocs = [r for r in redirects if r[0] in ("<<", "<<-")]
    outs = [(op, w[1]) for op, w in redirects if op in (">", ">>", ">|") and w[2] and w[1]]
    if not words or not all(w[2] for w in words) or len(heredocs) != 1 or len(outs) + 1 != len(redirects):
        return None
    args = [w[1] for w in words]
    if args[0] in _CATS:
        return _cat(args[1:], outs)
    if args[0] in _TEES:
        return _tee(args[1:], outs)
    return None


def _cat(args: "List[str]", outs: "List[Tuple[str, str]]") -> "Tuple[str, bool] | None":
    if args not in ([], ["-"]) or len(outs) != 1:
        return None
    return outs[0][1], outs[0][0] == ">>"


def _tee(args: "List[str]", outs: "List[Tuple[str, str]]") -> "Tuple[str, bool] | None":
    append = bool(args) and args[0] in _APPEND_FLAGS
    if append:
        args = args[1:]
    if len(args) != 1 or args[0].startswith("-") or len(outs) > 1 or any(w != _DEV_NULL for _, w in outs):
        return None
    return args[0], append


# --- printf and echo: `printf 'FORMAT' [ARGS...] > FILE`, `echo [-n] WORDS >> FILE` -------------

_PRINTERS = frozenset(("printf", "echo"))
_OUTS = frozenset((">", ">>", ">|"))
# The format escapes read; any other backslash in a format (octal, `\x`, `\u`, `\c`, `\e`, `\"`)
# is not predicted. bash's and zsh's builtin printf agree on these.
_ESCAPES = {"\\": "\\", "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _print_writes(line: str, first: bool) -> "List[HeredocWrite]":
    """The writes of the line's `printf`/`echo` commands with their output sent to a file."""
    split = _commands(line)
    if split is None:
        return []
    commands, seps = split
    out: List[HeredocWrite] = []
    for at, cmd in enumerate(commands):
        if not any(t[0] == "o" and t[1] in _OUTS for t in cmd):
            continue
        if (at and seps[at - 1] == "|") or (at < len(seps) and seps[at] == "|"):
            continue  # piped into or out of: keep to the plain forms
        folder = _cd_before(commands[:at], seps[:at]) if at else ""
        got = _printed(cmd)
        if got is None:
            continue
        target, append, text = got
        if (append or not target.startswith("/")) and (folder is None or not first):
            continue
        out.append(HeredocWrite(target, append, text, folder or None))
    return out


def _printed(cmd: "List[Token]") -> "Tuple[str, bool, str] | None":
    """(target, append, text) of one `printf`/`echo` command whose only redirection is its output
    to one file."""
    words: List[Token] = []
    outs: List[Tuple[str, str]] = []
    j = 0
    while j < len(cmd):
        if cmd[j][0] == "o":
            if cmd[j][1] not in _OUTS or j + 1 >= len(cmd) or cmd[j + 1][0] != "w":
                return None
            if not cmd[j + 1][2] or not cmd[j + 1][1]:
                return None
            outs.append((cmd[j][1], cmd[j + 1][1]))
            j += 2
        else:
            words.append(cmd[j])
            j += 1
    if len(outs) != 1 or not words or not all(w[2] for w in words) or words[0][1] not in _PRINTERS:
        return None
    args = [w[1] for w in words[1:]]
    text = _printf(args) if words[0][1] == "printf" else _echo(args)
    if text is None:
        return None
    return outs[0][1], outs[0][0] == ">>", text


def _printf(args: "List[str]") -> "Optional[str]":
    """What bash's builtin `printf FORMAT ARGS...` prints, for a format of literal text, the
    escapes in _ESCAPES, `%%` and `%s`; None for any other format. The format is used again
    while arguments remain (if it consumed any); a `%s` with none left prints nothing."""
    if args[:1] == ["--"]:
        args = args[1:]  # the end of options: a format may start with "-" after it
    elif args[:1] and args[0].startswith("-"):
        return None  # an option (`-v`), or a format bash reads as one ("- [a](a.md)": an error)
    if not args:
        return None
    pieces = _format_pieces(args[0])
    if pieces is None:
        return None
    rest = args[1:]
    if None not in pieces:
        return "".join(p for p in pieces if p is not None)
    out: List[str] = []
    while True:
        out.extend((rest.pop(0) if rest else "") if p is None else p for p in pieces)
        if not rest:
            return "".join(out)


def _format_pieces(fmt: str) -> "Optional[List[Optional[str]]]":
    """A printf format as literal pieces and None for each `%s`; None for a format holding
    any other directive or escape."""
    pieces: List[Optional[str]] = []
    i, n = 0, len(fmt)
    while i < n:
        c = fmt[i]
        if c != "\\" and c != "%":
            pieces.append(c)
            i += 1
            continue
        pair = fmt[i:i + 2]
        if c == "\\" and len(pair) == 2 and pair[1] in _ESCAPES:
            pieces.append(_ESCAPES[pair[1]])
        elif pair in _DIRECTIVES:
            pieces.append(_DIRECTIVES[pair])
        else:
            return None
        i += 2
    return pieces


_DIRECTIVES: "dict[str, Optional[str]]" = {"%%": "%", "%s": None}


def _echo(args: "List[str]") -> "Optional[str]":
    """What bash's builtin `echo` prints with options `-n` and `-E` only (escapes not read, as
    bash does by default); None for `-e`, a first word after the options that reads like one
    (`-x`, `--`, a lone `-`, which zsh takes for the end of them; `- [a](a.md)` is read) or any
    backslash (zsh's echo reads escapes)."""
    newline = "\n"
    while args and len(args[0]) > 1 and args[0][0] == "-" and all(c in "neE" for c in args[0][1:]):
        if "e" in args[0]:
            return None
        if "n" in args[0]:
            newline = ""
        args = args[1:]
    if (args and args[0][:1] == "-" and (args[0][1:2].isalnum() or args[0][1:2] in ("", "-"))) or any(
            "\\" in a for a in args):
        return None
    return " ".join(args) + newline


# --- the writes as a host judges them ----------------------------------------------------------


class Predicted:
    """One write `predicted` found: the file's absolute `path`, its `target` word as the command
    spells it (quotes removed), whether it appends, its bytes now (`before`, None: missing or
    unreadable) and after."""

    __slots__ = ("path", "target", "append", "before", "after")

    def __init__(self, path: str, target: str, append: bool, before: "Optional[bytes]", after: bytes) -> None:
        self.path = path
        self.target = target
        self.append = append
        self.before = before
        self.after = after


def predicted(command: str, base: "Optional[str]", keep: "Callable[[str], bool]") -> "List[Predicted]":
    """Every write `heredoc_writes` reads in `command` run in the folder `base`, whose path
    `keep` accepts (only those are read). The one reading of a shell write for every host that
    judges it before it runs (Codex's exec_command, Gemini CLI's run_shell_command). A text the
    shell could not be given (a lone surrogate) is not predicted."""
    out: List[Predicted] = []
    for w in heredoc_writes(command):
        folder = scope.resolve_path(w.folder, base) if w.folder else base
        path = scope.resolve_path(w.target, folder)
        if not keep(path):
            continue
        try:
            data = w.text.encode("utf-8")
        except UnicodeEncodeError:
            continue
        before = scope.read_regular(path)
        out.append(Predicted(path, w.target, w.append, before, (before or b"") + data if w.append else data))
    return out

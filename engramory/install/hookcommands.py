"""Hook commands, for every host's installer: the `-c` launcher that makes a missing script
a hook error instead of a deny, the quoting that keeps a command right under sh, Git Bash
and PowerShell, and the POSIX-sh splitting that `install --check` follows a command with.
Part of the installer core; engramory.installer re-exports all of it. Standard library
only; Python 3.9+.
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

HOOK_TIMEOUT = 10  # seconds; a stalled hook fails open, so keep it short


def sh_quote(path: str) -> str:
    """A path in double quotes for `sh -c` and Git Bash: forward slashes on Windows, and the
    four characters special inside double quotes escaped."""
    if os.name == "nt":
        path = path.replace("\\", "/")
    out = []
    for ch in path:
        if ch in '\\"$`':
            out.append("\\")
        out.append(ch)
    return '"' + "".join(out) + '"'


def shell_word(path: str) -> str:
    """`path` bare when it holds only characters no shell treats specially (so the command
    also reads right under PowerShell, which Claude Code uses on Windows without Git Bash),
    else double-quoted for sh / Git Bash."""
    if os.name == "nt":
        path = path.replace("\\", "/")  # Git Bash would read a backslash as an escape
    if path and all(c.isascii() and (c.isalnum() or c in "/:._-+") for c in path):
        return path
    return sh_quote(path)


# Python exits 2 when the script it is given does not exist, and Claude Code (like Cursor)
# reads exit 2 as a deny: a deleted or moved skill folder would then block every Edit and
# Write. So the script is run from `-c`: a missing file is a traceback and exit 1, which the
# host reports as a hook error and lets the call through (and `install --check` names).
# `__file__` is set so the script finds its bundle exactly as when run directly.
# --- registry (issue 9): the launcher imports the script as a module, so the interpreter
# runs its cached bytecode: exec(compile(...)) parsed the source on every hook call, about
# 1 ms, a sixth of a bare interpreter start (bench/bench_hook.py). A missing script is still
# an ImportError, exit 1. The script's folder goes first on sys.path and `__file__` is set
# by the import, so the script finds its bundle exactly as before.
LAUNCHER = (
    "import sys;p=sys.argv[1].replace(chr(92),'/');d,_,f=p.rpartition('/');"
    "sys.path.insert(0,d or '.');__import__(f[:-3])"
)
# Launchers earlier versions wrote: still recognised as ours (install --check, uninstall).
OLD_LAUNCHERS = (
    "import sys;p=sys.argv[1];exec(compile(open(p,'rb').read(),p,'exec'),{'__name__':'__main__','__file__':p})",
)
LAUNCHERS = (LAUNCHER,) + OLD_LAUNCHERS
# --- end registry ---


def hook_command(interpreter: str, script: str, base_var: str | None = None) -> str:
    """`<interpreter> -I -S -c <launcher> "<script>"`: the script is always quoted (it sits
    under the user's home, where spaces are common); the interpreter only when it needs to be.

    With `base_var` ("CLAUDE_PROJECT_DIR"), `script` is relative to the folder that variable
    names when the hook runs: `"${CLAUDE_PROJECT_DIR}/.claude/skills/engramory/hooks/x.py"`,
    expanded by the shell the host runs hooks in. That is what committed (project) settings
    need: the same line works in every clone, wherever it is."""
    if base_var is None:
        word = sh_quote(script)
    else:
        if os.path.isabs(script) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", base_var):
            raise ValueError("hook_command: base_var needs a variable name and a relative script")
        word = '"${%s}/%s' % (base_var, sh_quote(script.replace(os.sep, "/"))[1:])
    return "%s -I -S -c %s %s" % (shell_word(interpreter), sh_quote(LAUNCHER), word)


class HookCommand:
    """A hook command taken apart: the interpreter, its flags, and the script it runs (with
    every `$VAR` the shell would expand expanded from `env`). `variables` lists the names
    that were expanded and `unset` those that were empty: a script path built on an unset
    variable does not exist when the host runs it."""

    def __init__(self, words: list[str], variables: list[str], unset: list[str]) -> None:
        self.words = words
        self.variables = variables
        self.unset = unset
        self.interpreter = words[0] if words else ""
        self.launcher = len(words) >= 6 and words[1:4] == ["-I", "-S", "-c"] and words[4] in LAUNCHERS
        rest = words[5:] if self.launcher else words[1:]
        self.script = next((w for w in rest if w.endswith(".py")), "")

    def argv(self) -> list[str]:
        """What to run (subprocess, no shell) to run this hook as the host would."""
        return list(self.words)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Splitter:
    """One pass of `split_command` over one command: `i` walks the text, `cur` is the word
    being built and `have` says whether a word was started (an empty `''` is still a word).
    One method per thing the shell treats specially."""

    def __init__(self, command: str, environ: Mapping[str, str]) -> None:
        self.command = command
        self.environ = environ
        self.words: list[str] = []
        self.variables: list[str] = []
        self.unset: list[str] = []
        self.cur: list[str] = []
        self.have = False
        self.i = 0

    def run(self) -> HookCommand:
        command, n = self.command, len(self.command)
        while self.i < n:
            c = command[self.i]
            if c in " \t\n":
                self.end_word()
                self.i += 1
            elif c == "'":
                self.single_quoted()
            elif c == '"':
                self.double_quoted()
            elif c == "\\":
                if self.i + 1 < n:
                    self.cur.append(command[self.i + 1])
                self.i += 2
                self.have = True
            elif c == "$":
                if command.startswith("$(", self.i):
                    raise ValueError("command substitution is not supported: %r" % command)
                self.dollar()
                self.have = True
            elif c in "|;&<>`()":
                raise ValueError("%r: only a simple command (no %s) can be checked" % (command, c))
            else:
                self.cur.append(c)
                self.have = True
                self.i += 1
        self.end_word()
        return HookCommand(self.words, self.variables, self.unset)

    def end_word(self) -> None:
        if self.have:
            self.words.append("".join(self.cur))
            self.cur, self.have = [], False

    def single_quoted(self) -> None:
        command = self.command
        end = command.find("'", self.i + 1)
        if end < 0:
            raise ValueError("unbalanced single quote in %r" % command)
        self.cur.append(command[self.i + 1 : end])
        self.have = True
        self.i = end + 1

    def double_quoted(self) -> None:
        command, n = self.command, len(self.command)
        self.i += 1
        self.have = True
        while True:
            if self.i >= n:
                raise ValueError("unbalanced double quote in %r" % command)
            c = command[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\" and self.i + 1 < n and command[self.i + 1] in '\\"$`\n':
                self.cur.append(command[self.i + 1])
                self.i += 2
            elif c == "$" and command.startswith("$(", self.i) or c == "`":
                raise ValueError("command substitution is not supported: %r" % command)
            elif c == "$":
                self.dollar()
            else:
                self.cur.append(c)
                self.i += 1

    def dollar(self) -> None:
        """`$NAME` or `${NAME}` at `i`, expanded from the environment; a `$` not followed by a
        name stays a `$`."""
        command, j = self.command, self.i
        if command.startswith("${", j):
            end = command.find("}", j)
            if end < 0:
                raise ValueError("unbalanced ${ in %r" % command)
            name = command[j + 2 : end]
            nxt = end + 1
        else:
            m = _NAME.match(command[j + 1 :])
            if not m:
                self.cur.append("$")
                self.i = j + 1
                return
            name = m.group(0)
            nxt = j + 1 + len(name)
        if not _NAME.fullmatch(name):
            raise ValueError("unsupported expansion ${%s}" % name)
        self.variables.append(name)
        value = self.environ.get(name, "")
        if not value:
            self.unset.append(name)
        self.cur.append(value)
        self.i = nxt


def split_command(command: str, env: Mapping[str, str] | None = None) -> HookCommand:
    """Split `command` into words as POSIX sh does for the simple commands hooks use: single
    and double quotes, backslash escapes, `$NAME` and `${NAME}` expanded from `env` (default:
    os.environ). Raises ValueError for what this does not handle (unbalanced quotes, `$(...)`,
    backticks, pipes, `;`, `&&`, redirections)."""
    return _Splitter(command, os.environ if env is None else env).run()

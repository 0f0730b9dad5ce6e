"""engramory.shellwrite against the shell itself: every write it predicts is run through
`bash -c` in a scratch folder and the file's bytes compared with the prediction, on the forms it
reads and on generated ones (hypothesis); the forms it must not read (expansion, pipes, a second
redirection, quotes left open, relative targets after other commands) predict nothing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engramory.shellwrite import heredoc_writes, tokens

BASH = shutil.which("bash")
needs_bash = pytest.mark.skipif(BASH is None, reason="bash is the oracle")
OLD = "- [old](old.md) was here\n"


def run_bash(script: str, where: Path) -> None:
    assert BASH is not None
    done = subprocess.run([BASH, "-c", script], cwd=str(where), capture_output=True, timeout=20, check=False)
    assert done.returncode == 0, done.stderr


def check_against_bash(script: str, where: Path) -> list[bytes]:
    """Predict, run, compare; the predicted bytes of each write (one write per file)."""
    (where / "mem").mkdir(exist_ok=True)
    for name in ("MEMORY.md", "mem/MEMORY.md", "my file.md", "mem/my file.md"):
        (where / name).write_text(OLD, encoding="utf-8")
    writes = heredoc_writes(script)
    if not writes:
        return []  # nothing predicted: nothing to hold against the shell
    before = {w.target: (where / (w.folder or ".") / w.target).read_bytes() for w in writes if w.append}
    run_bash(script, where)
    got = []
    for w in writes:
        path = where / (w.folder or ".") / w.target
        expect = (before[w.target] if w.append else b"") + w.text.encode("utf-8")
        assert path.read_bytes() == expect, (script, w)
        got.append(expect)
    return got


READ = [
    ("cat > MEMORY.md <<'EOF'\n- a\n- b\nEOF\n", "MEMORY.md", False, "- a\n- b\n"),
    ("cat >MEMORY.md <<EOF\n- a\nEOF", "MEMORY.md", False, "- a\n"),
    ("cat <<'EOF' > MEMORY.md\n- $HOME\nEOF\n", "MEMORY.md", False, "- $HOME\n"),
    ('cat > MEMORY.md <<"EOF"\n`x` \\n $y\nEOF\n', "MEMORY.md", False, "`x` \\n $y\n"),
    ("cat > MEMORY.md << \\EOF\n$z\nEOF\n", "MEMORY.md", False, "$z\n"),
    ("cat >> MEMORY.md <<EOF\n- new\nEOF\n", "MEMORY.md", True, "- new\n"),
    ("cat >| MEMORY.md <<EOF\n\nEOF\n", "MEMORY.md", False, "\n"),
    ("cat - > MEMORY.md <<EOF\nx\nEOF\n", "MEMORY.md", False, "x\n"),
    ("tee MEMORY.md <<'EOF'\n- t\nEOF\n", "MEMORY.md", False, "- t\n"),
    ("tee -a MEMORY.md <<'EOF' >/dev/null\n- t\nEOF\n", "MEMORY.md", True, "- t\n"),
    ("tee --append MEMORY.md > /dev/null <<'EOF'\n- t\nEOF\n", "MEMORY.md", True, "- t\n"),
    ("cd mem && cat > MEMORY.md <<'EOF'\n- in mem\nEOF\n", "MEMORY.md", False, "- in mem\n"),
    ("cat > MEMORY.md <<-'EOF'\n\t- tabbed\n\t\tEOF\n", "MEMORY.md", False, "- tabbed\n"),
    ("cat > 'my file.md' <<'EOF'\nq\nEOF\n", "my file.md", False, "q\n"),
    ("cat > MEMORY.md <<'EOF' && echo done\nx\nEOF\n", "MEMORY.md", False, "x\n"),
    ("cat > MEMORY.md <<'EOF'\nEOF\n", "MEMORY.md", False, ""),
    ("cat > MEMORY.md <<'EOF'\n  EOF\n EOF \nEOF\n", "MEMORY.md", False, "  EOF\n EOF \n"),
    ("cat > MEMORY.md <<'EOF'\n- caf\u00e9 \u65e5\u672c\nEOF\n", "MEMORY.md", False, "- caf\u00e9 \u65e5\u672c\n"),
    ("# a comment first\ncat > MEMORY.md <<'EOF'\nc\nEOF\n", "MEMORY.md", False, "c\n"),
    # printf: literal text, the escapes it reads, %% and %s, the format used again for more arguments
    ("printf '# Index\\n- [a](a.md)\\n' > MEMORY.md", "MEMORY.md", False, "# Index\n- [a](a.md)\n"),
    ("printf '%s\\n' '- a' '- b' '- c' > MEMORY.md", "MEMORY.md", False, "- a\n- b\n- c\n"),
    ("printf '%s=%s;' a 1 b > MEMORY.md", "MEMORY.md", False, "a=1;b=;"),
    ("printf '100%% %s\\t|\\\\|\\a\\b\\f\\r\\v' x >> MEMORY.md", "MEMORY.md", True, "100% x\t|\\|\a\b\f\r\v"),
    ("printf 'once\\n' extra args > MEMORY.md", "MEMORY.md", False, "once\n"),
    ("printf '%s' > MEMORY.md", "MEMORY.md", False, ""),
    ('printf -- "- [b](b.md)\\n" >> MEMORY.md', "MEMORY.md", True, "- [b](b.md)\n"),
    ("printf -- '-%s-' -- > MEMORY.md", "MEMORY.md", False, "----"),
    ("printf -- -- a > MEMORY.md", "MEMORY.md", False, "--"),
    (">MEMORY.md printf 'x\\n'", "MEMORY.md", False, "x\n"),
    ("cd mem && printf '%s\\n' z >| MEMORY.md && echo done", "MEMORY.md", False, "z\n"),
    ("printf 'caf\u00e9 %s\\n' \u65e5 > 'my file.md'", "my file.md", False, "caf\u00e9 \u65e5\n"),
    # echo: no escapes read, -n and -E
    ("echo '- [c](c.md)' >> MEMORY.md", "MEMORY.md", True, "- [c](c.md)\n"),
    ("echo -n a   b \"c  d\" > MEMORY.md", "MEMORY.md", False, "a b c  d"),
    ("echo > MEMORY.md", "MEMORY.md", False, "\n"),
    ("echo -nE -n x >MEMORY.md", "MEMORY.md", False, "x"),
    ("echo -E '100%' > MEMORY.md y", "MEMORY.md", False, "100% y\n"),
    ("echo a-b -c > MEMORY.md", "MEMORY.md", False, "a-b -c\n"),
]


@pytest.mark.parametrize("script,target,append,text", READ)
def test_read_forms_predict_the_exact_write(script: str, target: str, append: bool, text: str) -> None:
    got = heredoc_writes(script)
    assert [(w.target, w.append, w.text) for w in got] == [(target, append, text)]


@needs_bash
@pytest.mark.parametrize("script", [r[0] for r in READ])
def test_read_forms_match_bash(script: str, tmp_path: Path) -> None:
    assert len(check_against_bash(script, tmp_path)) == 1


NOT_READ = [
    "cat > MEMORY.md <<EOF\n- $HOME\nEOF\n",  # unquoted: the shell expands it
    "cat > MEMORY.md <<EOF\n- `date`\nEOF\n",
    "cat > MEMORY.md <<EOF\n- a \\\n b\nEOF\n",  # a continuation the shell joins
    "cat > $F <<'EOF'\nx\nEOF\n",
    "cat > ~/MEMORY.md <<'EOF'\nx\nEOF\n",
    "cat > *.md <<'EOF'\nx\nEOF\n",
    "cat > MEMORY.md 2>/dev/null <<'EOF'\nx\nEOF\n",
    "cat > MEMORY.md > other.md <<'EOF'\nx\nEOF\n",
    "cat a.md > MEMORY.md <<'EOF'\nx\nEOF\n",
    "cat -n > MEMORY.md <<'EOF'\nx\nEOF\n",
    "echo x | cat > MEMORY.md <<'EOF'\nx\nEOF\n",
    "cat > MEMORY.md <<'EOF' | wc\nx\nEOF\n",
    "cat <<'A' <<'B' > MEMORY.md\na\nA\nb\nB\n",
    "cat > MEMORY.md <<'EOF'\nno closing line\n",
    "tee MEMORY.md other.md <<'EOF'\nx\nEOF\n",
    "tee MEMORY.md > copy.md <<'EOF'\nx\nEOF\n",
    "tee -i MEMORY.md <<'EOF'\nx\nEOF\n",
    "sort > MEMORY.md <<'EOF'\nb\na\nEOF\n",
    "echo hi\ncat > MEMORY.md <<'EOF'\nx\nEOF\n",  # relative, not the first command
    "cd mem; cat > MEMORY.md <<'EOF'\nx\nEOF\n",
    "cd $D && cat > MEMORY.md <<'EOF'\nx\nEOF\n",
    "mkdir -p m && cat > MEMORY.md <<'EOF'\nx\nEOF\n",
    "sed -i d MEMORY.md && cat >> MEMORY.md <<'EOF'\nx\nEOF\n",
    "( cat > MEMORY.md <<'EOF'\nx\nEOF\n)",
    "x=$(cat > MEMORY.md <<'EOF'\nx\nEOF\n)",
    "echo 'cat > MEMORY.md <<EOF'\nx\nEOF\n",
    "echo \"it's\ncat > /abs/MEMORY.md <<'EOF'\nx\nEOF\n\"",
    "cat > MEMORY.md <<< 'here string'",
    "cat > MEMORY.md <<'EOF' \\\n && true\nx\nEOF\n",
    "foo \\\ncat > /s/MEMORY.md <<'EOF'\nx\nEOF\n",  # `foo cat > ...`: foo writes the file
    # printf and echo: any format or word the shell or printf works out
    'printf "%s\\n" "$HOME" > MEMORY.md',
    "printf '%d\\n' 1 > MEMORY.md",
    "printf '%5s' x > MEMORY.md",
    "printf '%b' 'a\\n' > MEMORY.md",
    "printf '%q' x > MEMORY.md",
    "printf '\\101' > MEMORY.md",
    "printf '\\x41' > MEMORY.md",
    "printf '\\u00e9' > MEMORY.md",
    "printf 'a\\c' > MEMORY.md",
    "printf 'a\\' > MEMORY.md",
    "printf 'a%' > MEMORY.md",
    "printf 'a\\\"' > MEMORY.md",
    "printf -v x 'a' > MEMORY.md",
    "printf -- > MEMORY.md",
    'printf "- [b](b.md)\\n" >> MEMORY.md',  # bash: "- : invalid option", nothing written
    'printf "- $ x\\n" >> MEMORY.md',
    "printf > MEMORY.md",
    'printf "a\\\\n" > MEMORY.md',  # bash removes one backslash inside double quotes
    "printf a > MEMORY.md > other.md",
    "printf a 2>&1 > MEMORY.md",
    "printf a &> MEMORY.md",
    "printf a 1> MEMORY.md",
    "printf a | tee MEMORY.md",
    "printf a > MEMORY.md | cat",
    "printf '%s' *.md > MEMORY.md",
    "printf x > $F",
    "printf y; printf x >> /abs/MEMORY.md",
    "echo -1 > MEMORY.md",
    "echo start; printf x > MEMORY.md",
    "echo start\nprintf x >> /abs/MEMORY.md",
    "X=1 printf a > MEMORY.md",
    "command printf a > MEMORY.md",
    "/usr/bin/printf a > MEMORY.md",
    "builtin echo a > MEMORY.md",
    "/bin/echo a > MEMORY.md",
    "echo -e 'a\\tb' > MEMORY.md",
    "echo -ne a > MEMORY.md",
    "echo 'a\\tb' > MEMORY.md",  # zsh's echo reads escapes
    "echo - a > MEMORY.md",  # zsh: the end of options
    "echo -- a > MEMORY.md",
    "echo -x a > MEMORY.md",
    "echo =ls > MEMORY.md",  # zsh: the path of ls
    "echo ~ > MEMORY.md",
    "echo {a,b} > MEMORY.md",
    "echo `date` > MEMORY.md",
    "echo $(date) > MEMORY.md",
    "echo a \\\n b > MEMORY.md",
    "echo 'open\nline' > MEMORY.md",
    "(echo a > MEMORY.md)",
    "echo 'echo a > MEMORY.md'",
]


@pytest.mark.parametrize("script", NOT_READ)
def test_forms_a_shell_must_work_out_predict_nothing(script: str) -> None:
    assert heredoc_writes(script) == []


def test_absolute_overwrite_is_read_after_other_commands() -> None:
    got = heredoc_writes("echo start\nmkdir -p /s && cat > /s/MEMORY.md <<'EOF'\nx\nEOF\necho end\n")
    assert [(w.target, w.append, w.text) for w in got] == [("/s/MEMORY.md", False, "x\n")]
    # but an append there depends on what ran before: not read
    assert heredoc_writes("echo start\ncat >> /s/MEMORY.md <<'EOF'\nx\nEOF\n") == []


def test_only_the_first_command_of_a_line_writes_a_relative_file() -> None:
    got = heredoc_writes("printf x > MEMORY.md && printf y >> MEMORY.md && echo z > /s/MEMORY.md")
    assert [(w.target, w.append, w.text) for w in got] == [("MEMORY.md", False, "x"), ("/s/MEMORY.md", False, "z\n")]


def test_bodies_are_skipped_not_read_as_commands() -> None:
    script = "cat > /s/a.md <<'EOF'\ncat > /s/b.md <<'X'\nnot a command\nX\nEOF\n"
    assert [w.target for w in heredoc_writes(script)] == ["/s/a.md"]


def test_tokens_split_as_the_shell_does() -> None:
    assert tokens("cat>a.md<<'E'&&x") == [("w", "cat", True), ("o", ">", True), ("w", "a.md", True),
                                        ("o", "<<", True), ("w", "E", True), ("o", "&&", True), ("w", "x", True)]
    assert tokens("echo 'open") is None
    assert tokens('a "b $c" 2>x # rest') == [("w", "a", True), ("w", "b $c", False), ("o", "2>", True),
                                            ("w", "x", True)]


LINE = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\r\n"), max_size=30)
BODY = st.lists(LINE | st.sampled_from(["EOF", " EOF", "\tEOF", "$HOME", "`x`", "\\", "'", '"', "-"]), max_size=6)
DELIM = st.sampled_from(["EOF", "'EOF'", '"EOF"', "\\EOF", "END_OF_NOTE", "'A B'"])
FORM = st.sampled_from([
    "cat > {t} <<{d}", "cat >{t} <<{d}", "cat <<{d} > {t}", "cat >> {t} <<{d}", "tee {t} <<{d} >/dev/null",
    "tee -a {t} <<{d} > /dev/null", "cd mem && cat > {t} <<{d}", "cat > {t} <<-{d}",
])
TARGET = st.sampled_from(["MEMORY.md", "'my file.md'", '"MEMORY.md"', "./MEMORY.md"])


@needs_bash
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(form=FORM, delim=DELIM, body=BODY, target=TARGET)
def test_generated_heredocs_match_bash(form: str, delim: str, body: list[str], target: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Whatever is predicted is what bash writes, byte for byte (nothing predicted is fine)."""
    word = delim.replace("'", "").replace('"', "").replace("\\", "")
    strip = "<<-" in form
    closing = ("\t" if strip else "") + word
    # a body line that closes the heredoc early would have bash run the rest as commands
    body = [b for b in body if (b.lstrip("\t") if strip else b) != word]
    script = form.format(t=target, d=delim) + "\n" + "".join(b + "\n" for b in body) + closing + "\n"
    where = tmp_path_factory.mktemp("sh")
    check_against_bash(script, where)


PIECE = st.sampled_from(["a", " ", "-", "#", "[x](x.md)", "\u00e9", "\u65e5", "'", '"', "$", "`", "*", "~", "=", "{", "}",
                         "\\n", "\\t", "\\\\", "\\a", "\\v", "\\r", "\\c", "\\101", "\\x41", "\\e", "\\", "%s", "%%",
                         "%d", "%5s", "%b", "%", "-n", "-e", "-E", "--"])
WORD = st.lists(PIECE, max_size=5).map("".join)


def quote(word: str, how: int) -> str:
    if how == 0:
        return word if word else "''"
    if how == 1 and "'" not in word:
        return "'" + word + "'"
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


PRINT = st.sampled_from(["printf", "printf --", "echo", "echo -n", "echo -E", "echo -nE"])
REDIRECT = st.sampled_from(["> {t}", ">> {t}", ">| {t}", ">{t}"])


@needs_bash
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cmd=PRINT, words=st.lists(st.tuples(WORD, st.integers(0, 2)), max_size=4), redirect=REDIRECT,
       target=TARGET, redirect_at=st.integers(0, 4), cd=st.booleans())
def test_generated_printf_and_echo_match_bash(cmd: str, words: list[tuple[str, int]], redirect: str, target: str,
                                              redirect_at: int, cd: bool,
                                              tmp_path_factory: pytest.TempPathFactory) -> None:
    """printf and echo writes: whatever is predicted is what bash writes, byte for byte."""
    parts = [quote(w, how) for w, how in words]
    parts.insert(min(redirect_at, len(parts)), redirect.format(t=target))
    script = ("cd mem && " if cd else "") + cmd + " " + " ".join(parts)
    event("predicted" if check_against_bash(script, tmp_path_factory.mktemp("sh")) else "not predicted")


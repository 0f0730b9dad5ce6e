"""The documents are part of the product: SKILL.md is what the agent follows, PORTING.md and
rules-snippet.md are what a user types from. So every claim a test can check is checked here
against the code: the skill frontmatter obeys the skill rules, every repo path a document
names exists, every command and flag it shows is accepted, every cap it states is the code's
number, and the templates pass the doctor.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from engramory import cli, config, exitcodes, hosts, size
from engramory.commands import doctor as doctor_cmd
from engramory.doctor import codes
from engramory.doctor import run as doctor
from engramory.doctor.check import EXIT as CHECK_EXIT
from engramory.hosts import codex, mcponly
from engramory.store import reader as store
from tests.conftest import ROOT, index_text

DOCS = ("SKILL.md", "rules-snippet.md", "PORTING.md", "README.md")
OWN_DOCS = ("SKILL.md", "rules-snippet.md", "PORTING.md")

# --- skill frontmatter rules (Agent Skills spec, as summarised in the Claude Code reference §5)

NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
PORTABLE_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
RESERVED_WORDS = ("anthropic", "claude")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_BODY_LINES = 500
SKILL_NAME = "engramory"  # the folder users drop the bundle into: ~/.claude/skills/engramory


def split_frontmatter(text: str) -> tuple[str, str]:
    """(frontmatter, body); raises ValueError when the file does not open with a closed block."""
    if not text.startswith("---\n"):
        raise ValueError("SKILL.md must start with a '---' line")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise ValueError("the frontmatter block is not closed by a '---' line")
    return text[4 : end + 1], text[end + 5 :]


def frontmatter_problems(text: str) -> list[str]:
    """Every way `text` breaks the skill rules (empty when it follows them)."""
    try:
        head, body = split_frontmatter(text)
        data = yaml.safe_load(head)
    except (ValueError, yaml.YAMLError) as exc:
        return [str(exc)]
    if not isinstance(data, dict):
        return ["the frontmatter is not a mapping"]
    problems = []
    extra = set(data) - PORTABLE_KEYS
    if extra:
        problems.append("keys outside the portable set: %s" % sorted(extra))
    name = data.get("name")
    if not isinstance(name, str) or not NAME_RE.match(name):
        problems.append("name %r is not lowercase words joined by single hyphens" % (name,))
    else:
        if len(name) > MAX_NAME:
            problems.append("name is %d characters (max %d)" % (len(name), MAX_NAME))
        if any(w in name for w in RESERVED_WORDS):
            problems.append("name contains a reserved word")
        if name != SKILL_NAME:
            problems.append("name %r is not the skill folder name %r" % (name, SKILL_NAME))
    desc = data.get("description")
    if not isinstance(desc, str) or not desc.strip():
        problems.append("description is missing or empty")
    else:
        if len(desc) > MAX_DESCRIPTION:
            problems.append("description is %d characters (max %d)" % (len(desc), MAX_DESCRIPTION))
        if "<" in desc or ">" in desc:  # stricter than "no XML tags": no angle bracket at all
            problems.append("description contains an angle bracket")
    n_body = len(body.splitlines())
    if n_body > MAX_BODY_LINES:
        problems.append("body is %d lines (max %d)" % (n_body, MAX_BODY_LINES))
    return problems


def read(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def test_skill_frontmatter_follows_the_rules() -> None:
    assert frontmatter_problems(read("SKILL.md")) == []


def test_skill_description_says_what_and_when() -> None:
    head, _ = split_frontmatter(read("SKILL.md"))
    desc = yaml.safe_load(head)["description"]
    for words in ("MEMORY.md", "start of a task", "recall", "durable"):
        assert words in desc


GOOD_HEAD = "---\nname: engramory\ndescription: Recall and save durable facts.\n---\n"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: engramory\n", "must start"),
        ("---\nname: engramory\ndescription: x\n", "not closed"),
        ("---\nname: engramory\ndescription: [\n---\nbody\n", "while parsing"),
        (GOOD_HEAD.replace("engramory", "Engramory"), "lowercase"),
        (GOOD_HEAD.replace("engramory", "engramory--x"), "lowercase"),
        (GOOD_HEAD.replace("engramory", "-engramory"), "lowercase"),
        (GOOD_HEAD.replace("engramory", "claude-memory"), "reserved"),
        (GOOD_HEAD.replace("engramory", "memory"), "folder name"),
        (GOOD_HEAD.replace("engramory", "a" * 65), "65 characters"),
        (GOOD_HEAD.replace("Recall and save durable facts.", "''"), "empty"),
        (GOOD_HEAD.replace("Recall and save durable facts.", "x" * 1025), "1025 characters"),
        (GOOD_HEAD.replace("Recall", "<b>Recall</b>"), "angle bracket"),
        (GOOD_HEAD.replace("---\n", "---\nwhen_to_use: always\n", 1), "portable set"),
        (GOOD_HEAD + "line\n" * 501, "501 lines"),
    ],
)
def test_frontmatter_checker_catches(text: str, problem: str) -> None:
    problems = frontmatter_problems(text)
    assert any(problem in p for p in problems), problems


def test_frontmatter_checker_accepts_a_valid_skill() -> None:
    assert frontmatter_problems(GOOD_HEAD + "line\n" * 500) == []


# --- what the documents mention -----------------------------------------------------------

FENCE_RE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
INLINE_RE = re.compile(r"`([^`\n]+)`")


def code_lines(text: str) -> list[str]:
    """Every line of every fenced block, and every inline code span, comments cut off."""
    out = []
    for block in FENCE_RE.findall(text):
        for line in block.splitlines():
            # A markdown block (a snippet to paste) quotes its commands as inline code.
            out.extend(INLINE_RE.findall(line) or [line])
    out.extend(INLINE_RE.findall(FENCE_RE.sub("", text)))
    return [re.sub(r"\s#\s.*$", "", line).strip() for line in out if line.strip()]


# How the documents write "this skill's folder"; a path after one of these is repo-relative.
SKILL_DIR_PREFIXES = ("${CLAUDE_SKILL_DIR}/", "<skill>/")
REPO_DIRS = ("tools/", "hooks/", "templates/", "schemas/", "engramory/", "tests/", "bench/", ".ci/", ".claude-plugin/")
REPO_FILES = ("SKILL.md", "PORTING.md", "README.md", "rules-snippet.md", "pyproject.toml", ".pre-commit-hooks.yaml")


def tokens(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def repo_path(token: str) -> str | None:
    """The repo-relative path a token names, or None when it names something else."""
    token = token.strip("\"'(),;:")
    for prefix in SKILL_DIR_PREFIXES:
        if token.startswith(prefix):
            token = token[len(prefix) :]
    if "<" in token or "*" in token or "$" in token:
        return None
    if token.startswith(REPO_DIRS) or token in REPO_FILES:
        return token.rstrip("/")
    return None


def mentioned_paths(text: str) -> set[str]:
    return {p for line in code_lines(text) for t in tokens(line) for p in [repo_path(t)] if p}


class Invocation:
    """One command line a document shows: which program, and the flags with their values."""

    def __init__(self, doc: str, line: str, program: tuple[str, ...], args: list[str]) -> None:
        self.doc = doc
        self.line = line
        self.program = program  # ("engramory", "install") or ("script", "tools/engramory_check.py")
        self.args = args

    def flags(self) -> list[tuple[str, list[str]]]:
        """(flag, plain-word values that follow it); "user|project" lists alternatives."""
        out = []
        for i, arg in enumerate(self.args):
            if arg.startswith("-"):
                flag = arg.split("=", 1)[0]
                nxt = self.args[i + 1] if i + 1 < len(self.args) else ""
                values = nxt.split("|") if re.fullmatch(r"[a-z]+(\|[a-z]+)*", nxt) else []
                out.append((flag, values))
        return out

    def __repr__(self) -> str:
        return "%s: %s" % (self.doc, self.line)


ENTRY_SCRIPT = "tools/engramory.py"


def invocations(doc: str, text: str) -> list[Invocation]:
    found = []
    # A shown line may chain commands (`a && b`): each one is checked on its own.
    commands = [part for line in code_lines(text) for part in re.split(r"\s(?:&&|\|\||;)\s", line)]
    for line in commands:
        t = tokens(line)
        if t[:3] == ["python3", "-m", "engramory"] and len(t) > 3:
            found.append(Invocation(doc, line, ("engramory", t[3]), t[4:]))
        elif t[:1] == ["engramory"] and len(t) > 1 and re.fullmatch(r"[a-z]+", t[1]):
            found.append(Invocation(doc, line, ("engramory", t[1]), t[2:]))
        elif t[:1] == ["python3"] and len(t) > 2 and repo_path(t[1]) == ENTRY_SCRIPT and re.fullmatch(r"[a-z]+", t[2]):
            # tools/engramory.py runs every command: check the subcommand's own flags
            found.append(Invocation(doc, line, ("engramory", t[2]), t[3:]))
        elif t[:1] == ["python3"] and len(t) > 1:
            script = repo_path(t[1])
            if script and script.endswith(".py"):
                found.append(Invocation(doc, line, ("script", script), t[2:]))
    return found


ALL_TEXT = {name: read(name) for name in DOCS}
ALL_INVOCATIONS = [inv for name, text in ALL_TEXT.items() for inv in invocations(name, text)]


def test_extractors_find_what_a_document_shows() -> None:
    sample = (
        "Run `engramory install --host cursor --scope user|project` or\n"
        "```sh\npython3 \"${CLAUDE_SKILL_DIR}/tools/engramory_check.py\" <root>/MEMORY.md  # count\n"
        "python3 -m engramory doctor --json <root> && python3 -m engramory check --json x\n```\n"
        "and keep `~/.claude/skills/engramory` and `hooks/x.py`.\n"
    )
    found = invocations("sample", sample)
    assert [i.program for i in found] == [
        ("script", "tools/engramory_check.py"),
        ("engramory", "doctor"),
        ("engramory", "check"),
        ("engramory", "install"),
    ]
    assert found[1].flags() == [("--json", [])]
    assert found[3].flags() == [("--host", ["cursor"]), ("--scope", ["user", "project"])]
    assert mentioned_paths(sample) == {"tools/engramory_check.py", "hooks/x.py"}


def test_the_documents_show_the_commands_a_user_needs() -> None:
    """Guards the tests below against passing because nothing was extracted."""
    shown = {(i.doc, i.program) for i in ALL_INVOCATIONS}
    assert ("SKILL.md", ("script", "tools/engramory_check.py")) in shown
    assert ("SKILL.md", ("script", "tools/engramory_doctor.py")) in shown
    assert ("rules-snippet.md", ("script", "tools/engramory_check.py")) in shown
    assert ("PORTING.md", ("engramory", "install")) in shown
    hosts = {v for i in ALL_INVOCATIONS for f, vals in i.flags() if f == "--host" for v in vals}
    assert {"cursor", "hermes"} <= hosts


@pytest.mark.parametrize("doc", DOCS)
def test_every_repo_path_a_document_names_exists(doc: str) -> None:
    missing = sorted(p for p in mentioned_paths(ALL_TEXT[doc]) if not (ROOT / p).exists())
    assert missing == [], "%s names paths that do not exist in the repository" % doc


def help_text(program: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    if program[0] == "engramory":
        # As a user runs it from a checkout: `python3 -m engramory <command> --help`.
        cmd = [sys.executable, "-m", "engramory", program[1], "--help"]
    else:
        # As a host runs a script: isolated, from the bundle's own folder only.
        cmd = [sys.executable, "-I", "-S", str(ROOT / program[1]), "--help"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, timeout=60)


PROGRAMS = sorted({i.program for i in ALL_INVOCATIONS})


@pytest.mark.parametrize("program", PROGRAMS, ids=[" ".join(p) for p in PROGRAMS])
def test_every_command_the_documents_show_accepts_their_flags(program: tuple[str, ...]) -> None:
    if program[0] == "engramory":
        assert program[1] in cli.COMMANDS, "`engramory %s` is not a command" % program[1]
    else:
        assert (ROOT / program[1]).is_file(), "%s does not exist" % program[1]
    proc = help_text(program)
    assert proc.returncode == 0, "%s --help failed: %s" % (" ".join(program), proc.stderr[-500:])
    help_out = proc.stdout
    for inv in ALL_INVOCATIONS:
        if inv.program != program:
            continue
        for flag, values in inv.flags():
            assert re.search(r"(^|[\s,\[])%s\b" % re.escape(flag), help_out), (
                "%r shows %s, which `%s --help` does not list" % (inv, flag, " ".join(program))
            )
            for value in values:
                assert re.search(r"\b%s\b" % re.escape(value), help_out), (
                    "%r shows %s %s, which `%s --help` does not mention" % (inv, flag, value, " ".join(program))
                )


ENV_RE = re.compile(r"\bENGRAMORY_[A-Z_]+\b")


def test_every_environment_variable_the_documents_name_is_read_by_the_code() -> None:
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "engramory").rglob("*.py"))
    named = {v for text in ALL_TEXT.values() for v in ENV_RE.findall(text)}
    assert sorted(v for v in named if v not in source) == []


# --- numbers -------------------------------------------------------------------------------

NUMBER_UNIT_RE = re.compile(r"(?<![\w.,-])(\d{1,3}(?:,\d{3})+|\d+)(?:\s+|-)(lines?|bytes?)\b")
ROUGH_SIZE_RE = re.compile(r"\b\d+(?:\.\d+)?\s*(?:KB|KiB|kB|MB|MiB)\b")
# the doctor's: the host's recall scan (lines read per note) and the text output cap per check
CAP_LINES = {size.WARN_LINES, size.HARD_LINES, store.HOST_SCAN_LINES, doctor.OUTPUT_CAP}
# and Codex's: the largest index a shell read records as seen (its output measured uncut up to it)
CAP_BYTES = {size.WARN_BYTES, size.HARD_BYTES, config.NOTE_MAX_BYTES, codex.SHELL_SEEN_LIMIT}


def n(value: int) -> str:
    return "{:,}".format(value)


def stated_sizes(text: str) -> list[tuple[int, str, str]]:
    return [(int(m.group(1).replace(",", "")), m.group(2), m.group(0)) for m in NUMBER_UNIT_RE.finditer(text)]


def test_size_phrase_parser() -> None:
    text = "at 150 lines, a 25,000-byte index, 8,192 bytes, not 3.5 lines or line 201"
    assert [(v, u) for v, u, _ in stated_sizes(text)] == [(150, "lines"), (25000, "byte"), (8192, "bytes")]


@pytest.mark.parametrize("doc", DOCS + ("templates/MEMORY.md",))
def test_every_line_and_byte_count_in_the_documents_is_a_cap_of_the_code(doc: str) -> None:
    text = ALL_TEXT.get(doc) or read(doc)
    wrong = [
        phrase
        for value, unit, phrase in stated_sizes(text)
        if value not in (CAP_LINES if unit.startswith("line") else CAP_BYTES)
    ]
    assert wrong == [], "%s states sizes the code does not use" % doc
    # Caps are stated exactly: "25 KB" is ambiguous (25,000 or 25,600?) and was wrong before.
    assert ROUGH_SIZE_RE.findall(text) == []


def test_skill_states_each_cap_as_the_code_has_it() -> None:
    text = read("SKILL.md")
    assert "Warn cap: %s lines or %s bytes." % (size.WARN_LINES, n(size.WARN_BYTES)) in text
    assert "Hard cap: %s lines or %s bytes." % (size.HARD_LINES, n(size.HARD_BYTES)) in text
    assert "at or under %s bytes" % n(config.NOTE_MAX_BYTES) in text
    head, _ = split_frontmatter(text)
    assert "%s lines and %s bytes" % (size.HARD_LINES, n(size.HARD_BYTES)) in yaml.safe_load(head)["description"]


def test_skill_store_config_example_is_valid_and_shows_the_defaults() -> None:
    text = read("SKILL.md")
    blocks = re.findall(r"^```json\n(.*?)^```", text, re.S | re.M)
    assert len(blocks) == 1
    example = json.loads(blocks[0])
    assert config.validate(example) == []
    assert list(example) == list(config.CONFIG_KEYS)
    for key, attr in config.CONFIG_CAPS:
        assert example[key] == config.DEFAULTS[attr]
    assert example["noteMaxBytes"] == config.NOTE_MAX_BYTES
    assert "`%s`" % config.CONFIG_NAME in text and "`%s`" % config.INDEX_NAME in text


# --- exit codes: the sentences in SKILL.md against the code and a real run --------------

def stated_codes(text: str, command: str) -> dict[int, str]:
    m = re.search(r"Exit codes of %s: ([^.]+)\." % command, text)
    assert m, "SKILL.md has no 'Exit codes of %s:' sentence" % command
    codes = {}
    for part in m.group(1).split(","):
        number, meaning = part.strip().split(" ", 1)
        codes[int(number)] = " ".join(meaning.split())
    return codes


def run_tool(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
    return subprocess.run(
        [sys.executable, "-I", "-S", str(ROOT / "tools" / script), *args],
        capture_output=True, text=True, env=env, timeout=120,
    )


def test_check_exit_codes_are_the_ones_the_skill_states(tmp_path: Path) -> None:
    stated = stated_codes(read("SKILL.md"), "check")
    expected = {code: status for status, code in CHECK_EXIT.items()}
    expected[exitcodes.EX_USAGE] = "usage error"
    expected[exitcodes.EX_NOINPUT] = "cannot read"
    assert stated == expected

    sizes = {"OK": 10, "WARN": size.WARN_LINES + 1, "OVER": size.HARD_LINES + 1}
    for status, lines in sizes.items():
        store = tmp_path / status
        store.mkdir()
        (store / "MEMORY.md").write_text(index_text(lines))
        proc = run_tool("engramory_check.py", str(store / "MEMORY.md"))
        assert (proc.returncode, proc.stdout.split(":")[0]) == (CHECK_EXIT[status], status)
    assert run_tool("engramory_check.py", "--bogus").returncode == exitcodes.EX_USAGE
    assert run_tool("engramory_check.py", str(tmp_path / "missing.md")).returncode == exitcodes.EX_NOINPUT
    # Other documents that list check's codes agree with the code too.
    for doc, text in ALL_TEXT.items():
        for code, status in re.findall(r"\b(\d+) (OK|WARN|OVER)\b", text):
            assert CHECK_EXIT[status] == int(code), "%s: %s %s" % (doc, code, status)


def doctor_script() -> Path:
    return ROOT / "tools" / "engramory_doctor.py"


def test_doctor_exit_codes_are_the_ones_the_skill_states(tmp_path: Path) -> None:
    stated = stated_codes(read("SKILL.md"), "doctor")
    assert stated == {0: "no errors", 1: "errors", 2: "usage error or unreadable root"}
    assert doctor_script().is_file(), "tools/engramory_doctor.py, which SKILL.md tells the agent to run, is missing"

    clean = tmp_path / "clean"
    shutil.copytree(ROOT / "templates", clean)
    assert run_tool("engramory_doctor.py", str(clean)).returncode == 0

    broken = tmp_path / "broken"
    shutil.copytree(ROOT / "templates", broken)
    with open(broken / "MEMORY.md", "a", encoding="utf-8") as f:
        f.write("- [Gone](no-such-note.md) — a pointer to a note that does not exist\n")
    proc = run_tool("engramory_doctor.py", str(broken))
    assert proc.returncode == 1, proc.stdout + proc.stderr

    assert run_tool("engramory_doctor.py", str(tmp_path / "no-such-root")).returncode == 2
    assert run_tool("engramory_doctor.py", "--no-such-flag", str(clean)).returncode == 2


# --- templates -------------------------------------------------------------------------------

def test_templates_pass_the_doctor_clean(tmp_path: Path) -> None:
    # A copy outside this git work tree: a tracked folder is rightly a finding of its own.
    store = tmp_path / "memory"
    shutil.copytree(ROOT / "templates", store)

    code = doctor_cmd.main(["--strict", str(store)])
    assert code == 0
    proc = run_tool("engramory_doctor.py", "--strict", "--json", str(store))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report: Any = json.loads(proc.stdout)
    assert report["findings"] == [], report["findings"]


def test_templates_hold_an_index_and_one_note_per_type() -> None:
    names = sorted(p.name for p in (ROOT / "templates").glob("*.md"))
    assert "MEMORY.md" in names
    types = []
    for note in (ROOT / "templates").glob("*.md"):
        if note.name == "MEMORY.md":
            continue
        head, _ = split_frontmatter(note.read_text(encoding="utf-8"))
        data = yaml.safe_load(head)
        types.append(data.get("type") or data.get("metadata", {}).get("type"))
    assert sorted(types) == ["feedback", "project", "reference", "user"]
    index_check = run_tool("engramory_check.py", str(ROOT / "templates" / "MEMORY.md"))
    assert index_check.returncode == 0, index_check.stdout


# --- PORTING.md -----------------------------------------------------------------------------

# Every host list below is derived from the registry (engramory.hosts): a host is named by its
# module's TITLE, and its PORTING row and section are the ones whose name (before any " (...)")
# occurs in that TITLE ("Hermes" for "Hermes Agent", "Windsurf (Cascade)" for "Windsurf").
NO_FILE_ACCESS = "Hosts without file access"
# `engramory install` with no --host wires Claude Code, and Claude Desktop's section shows its
# command inline: neither has a fenced `engramory install --host` line in PORTING.md.
NO_FENCED_INSTALL = {"claude", "claude-desktop"}
LEVELS = ("enforced before the write", "checked after", "discipline only", "not supported")
SECTION_FIELDS = ("Hook point.", "What ships.", "Guarantee.", "Setup.", "Verified on.", "Known host bugs")


def porting_table() -> list[list[str]]:
    text = read("PORTING.md")
    table = text.split("## At a glance", 1)[1].split("\n\n")[1]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.splitlines()]
    assert rows[0] == ["Host", "Pre-write hook point", "What this bundle ships", "Guarantee level", "Verified on"]
    return rows[2:]


def porting_sections() -> dict[str, str]:
    parts = re.split(r"^## ", read("PORTING.md"), flags=re.M)
    return {p.split("\n", 1)[0].strip(): p for p in parts[1:]}


def of_host(names: Any, title: str) -> str:
    """The one name among `names` (PORTING rows or section headings) that stands for the host
    called `title`."""
    found = [n for n in names if n.split(" (")[0] in title]
    assert len(found) == 1, "PORTING.md: %d rows or sections for %s: %s" % (len(found), title, found)
    return str(found[0])


def suite_pins(name: str) -> set[str]:
    """The versions the host's own suite (tests/hosts/<name>/) pins: its npm dependencies, or
    the pip requirements of a Python host."""
    suite = ROOT / "tests" / "hosts" / name
    pins: set[str] = set()
    if (suite / "package.json").is_file():
        pins.update(json.loads((suite / "package.json").read_text(encoding="utf-8"))["dependencies"].values())
    if (suite / "requirements.txt").is_file():
        pins.update(re.findall(r"==([\w.]+)", (suite / "requirements.txt").read_text(encoding="utf-8")))
    return pins


def test_porting_covers_every_host_with_every_field() -> None:
    rows = porting_table()
    assert all(len(r) == 5 for r in rows)
    sections = porting_sections()
    row_names = [r[0] for r in rows]
    # one row and one section per registry host, and one of each for the hosts engramory cannot guard
    titles = [hosts.load(name).TITLE for name in hosts.names()]
    mine = [of_host(row_names, t) for t in titles] + [of_host(row_names, NO_FILE_ACCESS)]
    assert sorted(mine) == sorted(row_names), "PORTING.md's table and the registry (engramory.hosts) disagree"
    for title in titles:
        for field in SECTION_FIELDS:
            assert "**%s" % field in sections[of_host(sections, title)], "%s: no %r" % (title, field)
    assert of_host(sections, NO_FILE_ACCESS)
    for row in rows:
        assert any(row[3].startswith(level) for level in LEVELS), row


def test_porting_claims_match_what_ships_and_what_was_tested() -> None:
    rows = {r[0]: r for r in porting_table()}
    for name in hosts.names():
        mod = hosts.load(name)
        row = rows[of_host(rows, mod.TITLE)]
        # every registry host ships something (a shim, a plugin or the MCP server) and says how
        assert not row[2].startswith("no shim"), row
        assert "--host %s" % name in row[2] or name == "claude", row
        if mod.respond is not mcponly.respond:
            # a host with a hook has its own tests, verified or not (tests/hosts/contract.py)
            assert list((ROOT / "tests" / "hosts" / name).glob("test_*.py")), "no tests/hosts/%s/test_*.py" % name
        if not mod.VERIFIED:
            assert row[4].startswith("not verified"), row
            continue
        # verified: on the version its own suite pins, the one the row names
        assert mod.VERIFIED in suite_pins(name), "%s: VERIFIED %s is not what tests/hosts/%s pins" % (name, mod.VERIFIED, name)
        assert re.match(r"[\w .-]+ %s[ ,]" % re.escape(mod.VERIFIED), row[4]), row
        if (ROOT / "tests" / "hosts" / name / "package.json").is_file():
            assert row[4].endswith(", end-to-end suite on the real CLI"), row
    other = rows[of_host(rows, NO_FILE_ACCESS)]
    assert not other[3].startswith("enforced") and other[4] == "not applicable", other
    hosts_flags = {v for i in ALL_INVOCATIONS if i.doc == "PORTING.md" for f, vals in i.flags() if f == "--host" for v in vals}
    assert hosts_flags == set(hosts.names()) - NO_FENCED_INSTALL


def test_skill_store_config_example_validates_against_the_schema() -> None:
    import jsonschema

    schema = json.loads((ROOT / "schemas" / "store-config.schema.json").read_text(encoding="utf-8"))
    (block,) = re.findall(r"^```json\n(.*?)^```", read("SKILL.md"), re.S | re.M)
    jsonschema.validate(json.loads(block), schema)


def test_plugin_install_command_names_the_real_plugin_and_marketplace() -> None:
    plugin = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    shown = re.findall(r"/plugin install ([\w-]+)@([\w-]+)", "\n".join(ALL_TEXT.values()))
    assert shown, "no document shows how to install the plugin"
    for name, marketplace in shown:
        assert (name, marketplace) == (plugin["name"], market["name"])
        assert name in [p["name"] for p in market["plugins"]]


def test_rules_snippet_blocks_are_short_and_point_at_the_protocol() -> None:
    blocks = re.findall(r"^```markdown\n(.*?)^```", read("rules-snippet.md"), re.S | re.M)
    assert len(blocks) == 2
    for block in blocks:
        assert len(block.splitlines()) <= 12
        assert "MEMORY.md" in block and ("engramory skill" in block or "SKILL.md" in block)
    # Without a hook, the agent itself must run the check after each index write.
    assert "tools/engramory_check.py" in blocks[1]


def test_skill_names_the_types_and_line_limit_the_doctor_uses() -> None:
    from engramory.store import reader as store

    text = read("SKILL.md")
    m = re.search(r"- `type`: `(\w+)`, `(\w+)`, `(\w+)` or `(\w+)`", text)
    assert m and m.groups() == store.TYPES
    for kind in store.TYPES:
        assert "**%s**:" % kind in text and "## %s\n" % kind in text  # described, and indexed

    assert "any index line over %d characters" % codes.INDEX_LINE_MAX in " ".join(text.split())


def test_skill_examples_make_a_store_the_doctor_finds_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The notes SKILL.md shows in full, with the index lines that point at them, pass the
    doctor with no finding at all (the other index lines point at notes shown only in prose)."""

    blocks = re.findall(r"^```markdown\n(.*?)^```", read("SKILL.md"), re.S | re.M)
    notes = {}
    for block in blocks:
        if block.startswith("---\n"):
            head, _ = split_frontmatter(block)
            notes[yaml.safe_load(head)["name"] + ".md"] = block
    assert sorted(notes) == ["full-suite-before-done.md", "test-command.md"]
    (index,) = [b for b in blocks if b.startswith("# Memory Index")]
    kept = [
        line for line in index.splitlines(keepends=True)
        if not line.startswith("- [") or re.search(r"\]\(([^)]+)\)", line).group(1) in notes  # type: ignore[union-attr]
    ]
    assert len([line for line in kept if line.startswith("- [")]) == len(notes)
    store = tmp_path / "memory"
    store.mkdir()
    (store / "MEMORY.md").write_text("".join(kept), encoding="utf-8")
    for name, text in notes.items():
        (store / name).write_text(text, encoding="utf-8")
    code = doctor_cmd.main(["--json", "--strict", str(store)])
    report = json.loads(capsys.readouterr().out)
    assert report["findings"] == [], report["findings"]
    assert code == 0
    proc = run_tool("engramory_doctor.py", "--strict", str(store))
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("doc", DOCS)
def test_documents_name_no_path_of_this_machine(doc: str) -> None:
    # Docs speak of `~/...`, `<root>` and repo-relative paths; an absolute path from the
    # machine they were written on would be wrong on every other one.
    text = ALL_TEXT[doc]
    assert re.findall(r"(?<![\w.~])/(?:work|root|tmp|home/\w+|Users/\w+)/\S*", text) == []
    assert str(ROOT) not in text


# --- the curation commands (issue 12) ----------------------------------------------------

CURATION = ("new", "update", "archive", "restore", "search", "log", "undo")


def test_skill_shows_every_curation_command_through_the_entry_script() -> None:
    shown = {i.program for i in ALL_INVOCATIONS if i.doc == "SKILL.md" and ENTRY_SCRIPT in i.line}
    assert {("engramory", c) for c in CURATION} <= shown
    assert all(c in cli.COMMANDS for c in CURATION)
    text = read("SKILL.md")
    assert "read the index first; search when nothing in it fits" in text
    assert "`engramory new` does steps 3 and 4" in text


def test_curation_exit_codes_are_the_ones_the_skill_states(tmp_path: Path) -> None:

    text = " ".join(read("SKILL.md").split())
    writers = stated_codes(text, "new, update, archive, restore and undo")
    assert writers == {exitcodes.EX_OK: "done", exitcodes.EX_REFUSED: "refused", exitcodes.EX_BUSY: "busy",
                       exitcodes.EX_USAGE: "usage error", exitcodes.EX_NOINPUT: "cannot read"}
    assert stated_codes(text, "search") == {exitcodes.EX_OK: "found", exitcodes.EX_NO_MATCH: "no match",
                                            exitcodes.EX_USAGE: "usage error", exitcodes.EX_NOINPUT: "cannot read"}
    store = tmp_path / "mem"
    store.mkdir()
    new = ["new", str(store), "--type", "user", "--description", "The user prefers tabs", "--body", "Tabs."]
    assert run_tool("engramory.py", *new).returncode == exitcodes.EX_OK
    assert run_tool("engramory.py", *new).returncode == exitcodes.EX_REFUSED  # the name is taken
    assert run_tool("engramory.py", "new", str(store), "--type", "nope").returncode == exitcodes.EX_USAGE
    assert run_tool("engramory.py", "undo", str(tmp_path / "missing")).returncode == exitcodes.EX_NOINPUT
    assert run_tool("engramory.py", "search", "tabs", str(store)).returncode == exitcodes.EX_OK
    assert run_tool("engramory.py", "search", "spaces", str(store)).returncode == exitcodes.EX_NO_MATCH
    # busy: another process holds the store lock
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; sys.path.insert(0, %r); "
                               "from engramory.store import journal\nwith journal.lock(%r):\n print('held', flush=True); "
                               "time.sleep(4)" % (str(ROOT), str(store))], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        proc = subprocess.run(
            [sys.executable, "-I", "-S", "-c", "import sys; sys.path.insert(0, %r); from engramory import cli; from engramory.store import journal; "
             "journal.LOCK_TIMEOUT = 0.3; "
             "raise SystemExit(cli.main(%r))" % (str(ROOT), ["undo", str(store)])],
            capture_output=True, text=True, timeout=60)
        assert proc.returncode == exitcodes.EX_BUSY, proc.stderr
    finally:
        holder.communicate()


def test_skill_curation_block_runs_as_shown(tmp_path: Path) -> None:
    """Every command of the skill's curation block, with its placeholders filled in, in order,
    against the default root (a project's auto-memory folder under CLAUDE_CONFIG_DIR)."""
    text = read("SKILL.md")
    block = text.split("### Curation commands", 1)[1]
    lines = FENCE_RE.findall(block)[0].strip().splitlines()
    project = tmp_path / "project"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "CLAUDE"))}
    env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "config")
    fill = {
        "<words, an error string or a file name>": "ECONNREFUSED",
        "<one line>": "Rerun ECONNREFUSED test failures after starting redis",
        "<the fact>": "connect ECONNREFUSED 127.0.0.1:6379 means redis is down.",
        "<the reason>": "it wasted an hour in November 2026",
        "<what to do next time>": "run docker compose up redis, then rerun",
        "<a sharper line>": "ECONNREFUSED on 6379 in tests: start redis and rerun",
        "<name>": "rerun-econnrefused-test-failures-after-starting",  # what `new` derives
    }
    codes = []
    for line in lines[1:] + lines[:1]:  # search last, once there is something to find
        for key, value in fill.items():
            line = line.replace(key, value)
        argv = shlex.split(line.replace("${CLAUDE_SKILL_DIR}", str(ROOT)))
        assert argv[0] == "python3"
        proc = subprocess.run([sys.executable, "-I", "-S", *argv[1:]], cwd=project, env=env,
                              capture_output=True, text=True, timeout=60)
        codes.append((argv[2], proc.returncode, proc.stderr[-300:]))
    assert [(c, rc) for c, rc, _ in codes] == [
        ("new", 0), ("update", 0), ("archive", 0), ("restore", 0), ("log", 0), ("undo", 0), ("search", 0)], codes


# --- compact (owner: compact) -----------------------------------------------------------------

def test_compact_exit_codes_are_the_ones_the_skill_states(tmp_path: Path) -> None:

    stated = stated_codes(read("SKILL.md"), "compact")
    assert stated == {0: "nothing to do", 1: "operations planned or applied", 2: "decisions needed",
                      64: "usage error", 65: "the store changed since the plan", 66: "cannot read"}
    assert exitcodes.EX_DATAERR == 65 and exitcodes.EX_USAGE == 64 and exitcodes.EX_NOINPUT == 66
    shown = {(i.doc, i.program) for i in ALL_INVOCATIONS}
    assert ("SKILL.md", ("engramory", "compact")) in shown and ("SKILL.md", ("engramory", "review")) in shown
    store = tmp_path / "s"
    store.mkdir()
    (store / "MEMORY.md").write_text(index_text(3))
    run = [sys.executable, "-I", "-S", str(ROOT / "tools" / "engramory.py"), "compact", str(store)]
    assert subprocess.run(run, capture_output=True, timeout=60).returncode == 0
    (store / "MEMORY.md").write_text(index_text(160))
    assert subprocess.run(run, capture_output=True, timeout=60).returncode == 1
    assert subprocess.run(run + ["--target", "nope"], capture_output=True, timeout=60).returncode == 64
    assert subprocess.run(run[:-1] + [str(tmp_path / "none")], capture_output=True, timeout=60).returncode == 66


def test_skill_states_the_cold_score_and_pointer_limit_of_the_code() -> None:
    from engramory.compact import plan as compactplan

    text = " ".join(read("SKILL.md").split())
    assert "index line over %d characters" % compactplan.POINTER_MAX in text
    bonus = compactplan.TYPE_BONUS
    assert ("plus %d for a project note, %d for reference, %d for feedback, %d for user"
            % (bonus["project"], bonus["reference"], bonus["feedback"], bonus["user"])) in text
    assert compactplan.FROM_INDEX in text


# --- registry (issue 9): each host's load window as the docs state it ------------------------


def test_porting_load_window_rows_match_the_registry() -> None:
    from engramory import hosts

    text = (ROOT / "PORTING.md").read_text(encoding="utf-8")
    section = text.split("## Load windows: what each host counts", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in section.splitlines() if r.startswith("| ") and not r.startswith("| Host") and not r.startswith("|---")]
    claude = hosts.load("claude")
    window = claude.window()
    row = next(r for r in rows if r.startswith("| Claude Code %s |" % claude.VERIFIED))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == str(window.lines) and cells[2] == "{:,}".format(window.size) and cells[3] == window.unit
    for name in ("cursor", "hermes"):
        w = hosts.load(name).window()
        row = next(r for r in rows if hosts.load(name).TITLE in r)
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[1] == str(w.lines) and cells[2] == "{:,}".format(w.size) and cells[3] == w.unit
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    caps = window.caps()
    assert "hard cap %d lines or %s units" % (caps.hard_lines, "{:,}".format(caps.hard_bytes)) in readme
    assert "warn past %d lines or %s units" % (caps.warn_lines, "{:,}".format(caps.warn_bytes)) in readme
    assert "25,000 UTF-16 units" in readme and window.unit == size.UTF16


def test_readme_hosts_table_is_the_registry() -> None:
    """README's host table lists every registry host, with the version its module says it was
    verified on and the install command that reaches its installer."""
    from engramory import hosts

    text = read("README.md")
    table = text.split("## Hosts\n\n", 1)[1].split("\n\n")[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.splitlines()[2:]]
    assert len(rows) == len(hosts.names())
    for row, name in zip(rows, hosts.names()):
        mod = hosts.load(name)
        assert row[0] == mod.TITLE
        assert row[1] == mod.VERIFIED if mod.VERIFIED else row[1].startswith("not verified")
        flag = "" if name == "claude" else " --host %s" % name
        root = " --root DIR" if getattr(mod, "INSTALLER", "").startswith(("engramory.hosts.claude_desktop.install",
                                                                           "engramory.hosts.zed.install")) else ""
        assert row[2] == "`python3 -m engramory install%s%s`" % (flag, root)

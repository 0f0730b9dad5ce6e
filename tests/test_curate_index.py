"""Issue 19: what new / update / archive / restore write into the index, driven through both
real entry points (`python3 -m engramory` and `tools/engramory.py` under -I -S)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

ENTRY_POINTS = {
    "module": [sys.executable, "-m", "engramory"],
    "tools": [sys.executable, "-I", "-S", str(ROOT / "tools" / "engramory.py")],
}


class Cli:
    def __init__(self, base: list[str], home: Path) -> None:
        self.base = base
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAMORY_")}
        self.env["HOME"] = str(home)
        self.env["CLAUDE_CONFIG_DIR"] = str(home / "claude")

    def __call__(self, *argv: str, env: dict[str, str] | None = None, stdin: str = "") -> subprocess.CompletedProcess[str]:
        full = dict(self.env, **(env or {}))
        r = subprocess.run([*self.base, *argv], capture_output=True, text=True, env=full, cwd=str(ROOT),
                           input=stdin, timeout=120)
        assert "Traceback" not in r.stderr, r.stderr
        return r


@pytest.fixture(params=sorted(ENTRY_POINTS))
def cli(request: pytest.FixtureRequest, tmp_path: Path) -> Cli:
    return Cli(ENTRY_POINTS[request.param], tmp_path)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    root.mkdir()
    return root


def note(root: Path, name: str, type_: str = "reference", desc: str | None = None, body: str = "") -> None:
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    slug = Path(name).stem
    (root / name).write_text("---\nname: %s\ndescription: %s\ntype: %s\ncreated: 2026-01-01\nupdated: 2026-01-01\n"
                             "---\n%s\n" % (slug, desc or "what %s is about, in words" % slug, type_,
                                            body or "The body of %s." % slug))


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.relative_to(root).as_posix().startswith(".engramory/")}


def full_index(n: int = 197) -> str:
    return "\n".join(["# Memory Index", "", "## reference"] + ["- [n%d](n%d.md)" % (i, i) for i in range(n)]) + "\n"


def new_args(root: Path, *extra: str, desc: str = "The user is a backend lead on payments") -> list[str]:
    return ["new", str(root), "--type", "user", "--description", desc, "--body", "Backend lead.", *extra]


# -- 1: the caps hold under another index name ------------------------------------------------------

def test_index_name_env_names_the_index_the_commands_write_and_judge(cli: Cli, store: Path) -> None:
    (store / "MEMORY.md").write_text(full_index())
    env = {"ENGRAMORY_INDEX_NAME": "AGENTS.md"}
    # the index in force is AGENTS.md, as the guard and the doctor have it: MEMORY.md is not touched
    r = cli(*new_args(store, "--json"), env=env)
    assert r.returncode == 0, r.stderr
    assert (store / "MEMORY.md").read_text() == full_index()
    receipt = json.loads(r.stdout)
    assert receipt["index"]["path"] == "AGENTS.md"
    assert "(user-backend-lead-payments.md)" in (store / "AGENTS.md").read_text()
    # and it is held to the caps like any index
    (store / "AGENTS.md").write_text(full_index())
    before = files(store)
    r = cli(*new_args(store, "--name", "second", desc="A second fact about the user here"), env=env)
    assert r.returncode == 1 and "from 200 to 203 lines (hard cap 200: 3 over)" in r.stderr
    assert files(store) == before
    doctor = cli("doctor", "--json", "--no-schema", str(store), env=env)
    assert json.loads(doctor.stdout)["index"] == "AGENTS.md"


def test_index_path_elsewhere_does_not_switch_the_caps_off(cli: Cli, store: Path, tmp_path: Path) -> None:
    (store / "MEMORY.md").write_text(full_index())
    note(store, "archive/logs.md")
    env = {"ENGRAMORY_INDEX_PATH": str(tmp_path / "other" / "MEMORY.md")}
    before = files(store)
    r = cli(*new_args(store), env=env)
    assert r.returncode == 1 and "from 200 to 203 lines" in r.stderr, (r.stdout, r.stderr)
    r = cli("restore", "logs", str(store), env=env)
    assert r.returncode == 1 and "hard cap 200" in r.stderr, (r.stdout, r.stderr)
    assert files(store) == before


def test_index_path_in_the_store_is_its_index(cli: Cli, store: Path) -> None:
    env = {"ENGRAMORY_INDEX_PATH": str(store / "NOTES.md")}
    r = cli(*new_args(store, "--json"), env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["index"]["path"] == "NOTES.md" and not (store / "MEMORY.md").exists()
    doctor = json.loads(cli("doctor", "--json", str(store), env=env).stdout)
    assert doctor["index"] == "NOTES.md" and doctor["counts"]["error"] == 0, doctor


# -- 4: every text a command writes is scanned for secrets ------------------------------------------

@pytest.mark.parametrize("field", ["--hook", "--title", "--description", "--why", "--how", "--body"])
def test_new_refuses_a_secret_in_any_field_masked(cli: Cli, store: Path, field: str) -> None:
    (store / "MEMORY.md").write_text("# Memory Index\n")
    args = ["new", str(store), "--type", "feedback", "--name", "deploys", "--description", "How deploys go out",
            "--body", "Deploy with the script.", "--why", "it is safe", "--how", "run it"]
    if field in args:
        args[args.index(field) + 1] = "use token " + TOKEN
    else:
        args += [field, "use token " + TOKEN]
    before = files(store)
    r = cli(*args)
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "secret" in r.stderr and "ghp_\u2026 (40 chars, masked)" in r.stderr, r.stderr
    assert TOKEN not in r.stderr + r.stdout
    assert files(store) == before and not (store / ".engramory" / "journal.jsonl").exists()


@pytest.mark.parametrize("field", ["--title", "--description", "--why"])
def test_update_refuses_a_secret_in_any_field(cli: Cli, store: Path, field: str) -> None:
    (store / "MEMORY.md").write_text("# Memory Index\n\n## reference\n- [Logs](logs.md)\n")
    note(store, "logs.md")
    before = files(store)
    r = cli("update", "logs", str(store), field, "token " + TOKEN)
    assert r.returncode == 1 and "ghp_\u2026 (40 chars, masked)" in r.stderr and TOKEN not in r.stderr, r.stderr
    assert files(store) == before


def test_restore_refuses_a_pointer_that_would_carry_a_secret(cli: Cli, store: Path) -> None:
    (store / "MEMORY.md").write_text("# Memory Index\n")
    note(store, "archive/keys.md", desc="the deploy key is " + TOKEN)
    before = files(store)
    r = cli("restore", "keys", str(store))
    assert r.returncode == 1 and "ghp_\u2026 (40 chars, masked)" in r.stderr and TOKEN not in r.stderr, r.stderr
    assert files(store) == before


# -- 5: a line's pointer is its first link ------------------------------------------------------------

TWO_LINKS = ("# Memory Index\n\n## reference\n"
             "- [Billing maintainer](billing-owner.md) \u2014 owns the [deploy dashboard](deploy-dashboard.md)\n"
             "- [Deploy dashboard](deploy-dashboard.md)\n")


def two_link_store(root: Path) -> None:
    (root / "MEMORY.md").write_text(TWO_LINKS)
    note(root, "billing-owner.md", desc="who maintains billing and its dashboards")
    note(root, "deploy-dashboard.md", desc="where the deploy dashboard lives and its panels")


def test_archive_drops_only_the_notes_own_line(cli: Cli, store: Path) -> None:
    two_link_store(store)
    r = cli("archive", "deploy-dashboard", str(store), "--json")
    assert r.returncode == 0, r.stderr
    receipt = json.loads(r.stdout)
    assert receipt["moved"][0]["removed_lines"] == [5]
    assert (store / "MEMORY.md").read_text() == TWO_LINKS.rsplit("- [Deploy", 1)[0]
    assert any("MEMORY.md:4" in w and "deploy-dashboard.md" in w for w in receipt["warnings"]), receipt
    doctor = json.loads(cli("doctor", "--json", str(store)).stdout)
    assert not [f for f in doctor["findings"] if f["code"] == "note-orphan"], doctor["findings"]


def test_update_type_moves_only_the_notes_own_line(cli: Cli, store: Path) -> None:
    two_link_store(store)
    r = cli("update", "deploy-dashboard", str(store), "--type", "project", "--why", "ops", "--how", "look")
    assert r.returncode == 0, r.stderr
    index = (store / "MEMORY.md").read_text()
    assert index == ("# Memory Index\n\n## reference\n"
                     "- [Billing maintainer](billing-owner.md) \u2014 owns the [deploy dashboard](deploy-dashboard.md)\n"
                     "\n## project\n- [Deploy dashboard](deploy-dashboard.md)\n")


def test_compact_keeps_the_notes_own_line(cli: Cli, store: Path) -> None:
    two_link_store(store)
    r = cli("compact", str(store), "--target", "3/10000", "--json")
    plan = json.loads(r.stdout)
    assert not [op for op in plan["operations"] if op["op"] == "drop-duplicate-pointer"], plan["operations"]


def test_doctor_counts_one_pointer_per_line(cli: Cli, store: Path) -> None:
    (store / "MEMORY.md").write_text("# Memory Index\n\n## reference\n"
                                     "- [Billing maintainer](billing-owner.md) \u2014 see [dash](deploy-dashboard.md)\n")
    note(store, "billing-owner.md", desc="who maintains billing and its dashboards")
    note(store, "deploy-dashboard.md", desc="where the deploy dashboard lives and its panels")
    doctor = json.loads(cli("doctor", "--json", str(store)).stdout)
    orphans = [f["path"] for f in doctor["findings"] if f["code"] == "note-orphan"]
    assert orphans == ["deploy-dashboard.md"] and doctor["notes"]["pointers"] == 1, doctor


# -- 6: no write hides what the host loads ------------------------------------------------------------

def test_a_description_with_dashes_cannot_close_a_frontmatter(cli: Cli, store: Path) -> None:
    (store / "MEMORY.md").write_text("---\n# Memory Index\n\n## user\n- [Role](role.md) \u2014 backend lead\n")
    note(store, "role.md", type_="user")
    r = cli("new", str(store), "--type", "user", "--description", "User separates CSV sections with --- lines",
            "--body", "CSV sections are split by lines of three dashes.", "--json")
    assert r.returncode == 0, r.stderr
    check = json.loads(cli("check", "--json", str(store / "MEMORY.md")).stdout)["files"][0]
    assert check["lines"] == 6, check  # every entry still loaded
    line = (store / "MEMORY.md").read_text().splitlines()[-1]
    assert line.startswith("- [User separates CSV sections with --\\- lines](")


def test_a_description_with_a_comment_end_cannot_close_a_comment(cli: Cli, store: Path) -> None:
    (store / "MEMORY.md").write_text("# Memory Index\n<!-- notes to self\n\n## user\n- [Role](role.md)\n")
    note(store, "role.md", type_="user")
    r = cli("new", str(store), "--type", "user", "--description", "User writes arrows like --> in specs",
            "--hook", "and <!-- in templates", "--body", "Arrows are written as two dashes and a bracket.")
    assert r.returncode == 0, r.stderr
    text = (store / "MEMORY.md").read_text()
    assert "-->" not in text and "like --\\> in specs" in text and "and \\<!-- in templates" in text
    check = json.loads(cli("check", "--json", str(store / "MEMORY.md")).stdout)["files"][0]
    assert check["lines"] == len(text.splitlines()), check  # the comment stays unclosed: all loaded


def test_a_write_that_hides_loaded_entries_is_refused_with_numbers(cli: Cli, store: Path) -> None:
    # the host reads lines 1-2 as frontmatter (up to the first "---"); archiving a drops that
    # "---", and the block would then run to line 5's, hiding b's and c's lines
    (store / "MEMORY.md").write_text("---\n- [a](a.md) --- old\n- [b](b.md)\n- [c](c.md)\n- [d](d.md) ---\n")
    for x in "abcd":
        note(store, x + ".md")
    before = files(store)
    r = cli("archive", "a", str(store))
    assert r.returncode == 1, r.stdout
    assert "3 entries the host loads now would be hidden" in r.stderr, r.stderr
    assert "line 3" in r.stderr and "frontmatter" in r.stderr
    assert files(store) == before


def test_a_pointer_that_would_land_where_the_host_skips_is_refused(cli: Cli, store: Path) -> None:
    # "## user" sits inside what the host reads as frontmatter (lines 1-4): a pointer put
    # under it would be in the file and in no session
    (store / "MEMORY.md").write_text("---\n## user\n- [a](a.md)\n## project ---\n# Memory Index\n")
    note(store, "a.md", type_="user")
    before = files(store)
    r = cli(*new_args(store))
    assert r.returncode == 1 and "the line it adds would not be loaded" in r.stderr, (r.stdout, r.stderr)
    assert "frontmatter" in r.stderr and files(store) == before


def test_compact_refuses_a_plan_after_which_the_host_loads_less(cli: Cli, store: Path) -> None:
    # pointerify would cut line 2's "---": the frontmatter would then run on to line 4's
    long = "- [A](a.md) \u2014 " + "the first part of a long line that goes on and on about a. " * 3 + "then --- a rule"
    (store / "MEMORY.md").write_text("---\n" + long + "\n- [B](b.md)\n- [C](c.md) ---\n")
    for x in "abc":
        note(store, x + ".md", type_="user")
    before = files(store)
    r = cli("compact", str(store), "--target", "2/20", "--apply", "-")
    assert r.returncode == 2 and "the host would no longer load" in r.stderr, (r.stdout, r.stderr)
    assert 'line 3 "- [B](b.md)"' in r.stderr
    assert files(store) == before


def test_doctor_reports_pointers_the_host_skips(cli: Cli, store: Path) -> None:
    (store / "MEMORY.md").write_text("---\n# Memory Index\n\n## user\n- [Role](role.md)\n"
                                     "- [CSV](csv.md) \u2014 sections split by --- lines\n")
    note(store, "role.md", type_="user")
    note(store, "csv.md", type_="user")
    doctor = json.loads(cli("doctor", "--json", str(store)).stdout)
    hidden = [f for f in doctor["findings"] if f["code"] == "index-hidden-pointer"]
    assert [f["line"] for f in hidden] == [5, 6] and hidden[0]["severity"] == "error", doctor["findings"]
    assert "frontmatter" in hidden[0]["message"]


# -- 10: one bounded read of the index ---------------------------------------------------------------

PEAK = """
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stdout.write("%d %d\\n" % (r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.stderr.write(r.stderr)
"""


def test_a_huge_index_is_refused_early_in_bounded_memory(cli: Cli, store: Path) -> None:
    line = "- [entry %07d about one more thing](n%07d.md) \u2014 a hook\n"
    with open(store / "MEMORY.md", "w") as f:
        f.write("# Memory Index\n\n## reference\n")
        f.writelines(line % (i, i) for i in range(300_000))  # about 16 MB
    note(store, "n0000001.md")
    size = (store / "MEMORY.md").stat().st_size
    before = files(store)
    for argv in (new_args(store), ["archive", "n0000001", str(store)], ["update", "n0000001", str(store), "--body", "x"]):
        r = subprocess.run([sys.executable, "-c", PEAK, *cli.base, *argv], capture_output=True, text=True,
                           env=cli.env, cwd=str(ROOT), timeout=120)
        code, peak_kb = (int(x) for x in r.stdout.split())
        assert peak_kb < 60_000, (argv[0], peak_kb)  # about 19 MB, as `check` on it; it was 230 MB
        assert code == 1, r.stderr
        assert "{:,} bytes".format(size) in r.stderr and "1,048,576" in r.stderr, r.stderr
    assert files(store) == before


# -- 15, 16: what the label shows, and one validation of every text on the index line ---------------

def test_update_description_keeps_backslashes_as_typed(cli: Cli, store: Path) -> None:
    (store / "MEMORY.md").write_text("# Memory Index\n\n## reference\n- [what logs.md is about, in words](logs.md)\n")
    note(store, "logs.md", desc="what logs.md is about, in words")
    r = cli("update", "logs", str(store), "--description", "CI logs live under D:\\ci\\logs")
    assert r.returncode == 0, r.stderr
    assert "- [CI logs live under D:\\ci\\logs](logs.md)\n" in (store / "MEMORY.md").read_text()
    r = cli("update", "logs", str(store), "--title", "C:\\temp\\")
    assert r.returncode == 0, r.stderr
    assert "- [C:\\temp\\\\](logs.md)\n" in (store / "MEMORY.md").read_text()  # "\]" would escape the bracket


def test_update_title_over_the_line_cap_is_refused(cli: Cli, store: Path) -> None:
    (store / "MEMORY.md").write_text("# Memory Index\n\n## reference\n- [Logs](logs.md)\n")
    note(store, "logs.md")
    before = files(store)
    r = cli("update", "logs", str(store), "--title", "x" * 10_229)
    assert r.returncode == 1 and "10,242" in r.stderr and "200" in r.stderr, r.stderr
    # counted in the window's unit: 100 astral characters are 200 UTF-16 units
    r = cli("update", "logs", str(store), "--title", "\U0001f600" * 100)
    assert r.returncode == 1 and "UTF-16" in r.stderr, r.stderr
    assert files(store) == before


@pytest.mark.parametrize("field,value,needle", [
    ("--title", "red \x1b[31mtext", "U+001B"),
    ("--hook", "bell \x07 here", "U+0007"),
    ("--title", "bidi \u202e flip", "U+202E"),
    ("--hook", "see [the runbook](runbook.md)", "link"),
    ("--title", "see [the runbook](runbook.md)", "link"),
])
def test_title_and_hook_get_the_checks_description_gets(cli: Cli, store: Path, field: str, value: str,
                                                        needle: str) -> None:
    (store / "MEMORY.md").write_text("# Memory Index\n\n## reference\n- [Logs](logs.md)\n")
    note(store, "logs.md")
    before = files(store)
    r = cli(*new_args(store, field, value))
    assert r.returncode == 1 and needle in r.stderr and field in r.stderr, r.stderr
    if field == "--title":
        r = cli("update", "logs", str(store), field, value)
        assert r.returncode == 1 and needle in r.stderr, r.stderr
    assert files(store) == before


def test_a_store_folder_is_known_by_the_index_name_in_force(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engramory.curate import notes as notes_mod

    (store / "AGENTS.md").write_text("# Memory Index\n")
    monkeypatch.chdir(store.parent)
    assert not notes_mod.is_path_like(store.name)
    monkeypatch.setenv("ENGRAMORY_INDEX_NAME", "AGENTS.md")
    assert notes_mod.is_path_like(store.name)
    assert notes_mod.resolve_root(str(store / "AGENTS.md")) == (str(store), False)


# -- property: no command makes the host load fewer pointers than it did ------------------------------

PRELUDES = ("# Memory Index\n", "---\n# Memory Index\n", "# Memory Index\n<!-- notes to self\n",
            "---\ntitle: memory\n---\n# Memory Index\n", "<!-- a comment -->\n# Memory Index\n")
TRICKY = ("---", "-->", "<!--", "--- lines", "a -- b", "\\", "C:\\x\\", "[x]", "(y)", "----", "<!-- -->", "ok")


def _loaded_targets(data: bytes) -> set[str]:
    from engramory import layout
    from engramory.hosts import claude
    from engramory.store import pointers

    out = set()
    for _, text, whole, loaded in layout.counted_lines(claude.window(), data):
        target = pointers.line_pointer(text) if whole and loaded else None
        if target:
            out.add(target)
    return out


def _quiet(*argv: str) -> int:
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from engramory import cli as engramory_cli

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = engramory_cli.main(list(argv))
    assert "Traceback" not in err.getvalue() and code in (0, 1), (argv, code, err.getvalue())
    return code


steps = st.lists(st.tuples(st.sampled_from(("new", "update", "archive")), st.integers(0, 9),
                           st.lists(st.sampled_from(TRICKY), min_size=1, max_size=3),
                           st.sampled_from(("--title", "--hook", "--description"))), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(PRELUDES), steps)
def test_no_command_hides_a_pointer_the_host_loads(prelude: str, ops: list[tuple[str, int, list[str], str]]) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "mem"
        root.mkdir()
        (root / "MEMORY.md").write_text(prelude)
        r = str(root)
        for kind, k, words, field in ops:
            text = "note %d says %s" % (k, " ".join(words))
            name = "n%d" % k
            before = (root / "MEMORY.md").read_bytes()
            snap = files(root)
            if kind == "new":
                args = ["new", r, "--type", "user", "--name", name, "--description", "fact %d about things" % k,
                        "--body", "body %d" % k, "--force"]
                if field != "--description":
                    args += [field, text]
                else:
                    args[args.index("--description") + 1] = text
                code = _quiet(*args)
            elif kind == "update":
                code = _quiet("update", name, r, "--title" if field == "--hook" else field, text, "--force")
            else:
                code = _quiet("archive", name, r)
            after = (root / "MEMORY.md").read_bytes()
            if code != 0:
                assert files(root) == snap
                continue
            expect = _loaded_targets(before) - ({name + ".md"} if kind == "archive" else set())
            if kind != "archive":
                expect.add(name + ".md")
            assert expect <= _loaded_targets(after), (kind, name, before, after)

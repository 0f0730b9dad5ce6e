"""engramory new / update / archive / restore / log / undo, in process and from a copied folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engramory import cli
from engramory.commands import update as update_cmd
from engramory.curate import history, notes
from engramory.doctor import run as doctor
from engramory.store import journal

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = (ROOT / "templates" / "MEMORY.md").read_bytes()


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.relative_to(root).as_posix().startswith(".engramory/")}


def errors(root: Path) -> list[doctor.Finding]:
    _, found = doctor.audit(str(root), doctor.Context(git=False))
    return [f for f in found if f.severity == doctor.ERROR]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def new(capsys: pytest.CaptureFixture[str], root: Path, *extra: str, type_: str = "reference",
        desc: str = "Where the staging error dashboard lives", body: str = "https://grafana.example.com/d/staging") -> tuple[int, str, str]:
    args = ["new", str(root), "--type", type_, "--description", desc, "--body", body, *extra]
    if type_ in ("feedback", "project") and "--why" not in extra:
        args += ["--why", "it was asked for", "--how", "do it every time"]
    return run(capsys, *args)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    root.mkdir()
    return root


# -- new -----------------------------------------------------------------------------------------------

def test_new_writes_note_and_pointer_with_receipt(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = new(capsys, store, "--json")
    assert code == 0, err
    r = json.loads(out)
    note = store / r["path"]
    assert r["path"] == "where-staging-error-dashboard-lives.md"
    assert journal.sha256(note.read_bytes()) == r["sha256"] and r["bytes"] == len(note.read_bytes())
    index = (store / "MEMORY.md").read_text().split("\n")
    assert index[r["index"]["line"] - 1] == (
        "- [Where the staging error dashboard lives](where-staging-error-dashboard-lives.md)")
    assert "## reference" in list(index[: r["index"]["line"]])
    text = note.read_text()
    today = notes.today()
    assert text.startswith("---\nname: where-staging-error-dashboard-lives\ndescription: Where the staging "
                           "error dashboard lives\ntype: reference\ncreated: %s\nupdated: %s\n---\n" % (today, today))
    assert r["entry"] == 1 and journal.entries(str(store))[0].command == "new"
    assert errors(store) == []


def test_new_text_receipt_names_path_sha_and_line(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = new(capsys, store, "--name", "staging-errors")
    assert code == 0
    sha = journal.sha256((store / "staging-errors.md").read_bytes()) or ""
    assert "saved %s" % (store / "staging-errors.md") in out and sha in out
    assert 'pointer: MEMORY.md:4 under "## reference"' in out
    assert "engramory undo 1" in out


def test_pointer_goes_under_the_types_heading(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (store / "MEMORY.md").write_bytes(TEMPLATE)
    code, out, err = new(capsys, store, "--json", "--hook", "rerun with --retry", type_="feedback",
                         desc="Flaky login test needs a retry flag")
    assert code == 0, err
    lines = (store / "MEMORY.md").read_text().split("\n")
    at = json.loads(out)["index"]["line"] - 1
    assert lines[at].startswith("- [Flaky login test needs a retry flag](flaky-login-test-needs-retry-flag.md) \u2014 rerun")
    assert lines[at - 1].startswith("- [Show the proof")  # end of the feedback section
    assert lines[at + 1] == "" and lines[at + 2] == "## project"
    # everything else is byte-identical
    rest = "\n".join(lines[:at] + lines[at + 1:]).encode()
    assert rest == TEMPLATE


def test_new_heading_added_when_missing_and_crlf_bom_kept(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (store / "MEMORY.md").write_bytes(b"\xef\xbb\xbf# Memory Index\r\n\r\n## user\r\n- [A](a.md)")
    (store / "a.md").write_bytes(b"---\nname: a\ndescription: a user fact about the role\ntype: user\n"
                                 b"created: 2026-01-01\nupdated: 2026-01-01\n---\nThe user is a backend lead.\n")
    code, _, err = new(capsys, store, "--name", "logs")
    assert code == 0, err
    assert (store / "MEMORY.md").read_bytes() == (
        b"\xef\xbb\xbf# Memory Index\r\n\r\n## user\r\n- [A](a.md)\r\n\r\n## reference\r\n"
        b"- [Where the staging error dashboard lives](logs.md)\r\n")


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", "a\\b", "~x", "Upper", "with space", "under_score",
                                  "x.md", "-lead", "trail-", "double--hyphen", "caf\u00e9", "a" * 81])
def test_bad_names_refused_not_sanitized(store: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, _, err = new(capsys, store, "--name=" + name)
    assert code == 1
    assert "name" in err
    assert files(store) == {} and journal.entries(str(store)) == []


def test_refusals_change_nothing(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (store / "MEMORY.md").write_bytes(TEMPLATE)
    before = files(store)
    cases = [
        (["new", str(store), "--type", "feedback", "--description", "Always squash merge commits", "--body", "x"],
         "needs a Why: line"),
        (["new", str(store), "--type", "project", "--description", "Payments freeze for the audit", "--body",
          "No merges until next Thursday", "--why", "audit", "--how", "wait"], "absolute dates"),
        (["new", str(store), "--type", "reference", "--description", "The deploy token", "--body",
          "token ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"], "secret"),
        (["new", str(store), "--type", "reference", "--description", "", "--body", "x"], "description is empty"),
        (["new", str(store), "--type", "reference", "--description", "\u65e5\u672c\u8a9e\u306e\u30e1\u30e2",
          "--body", "x"], "give --name"),
        (["new", str(store), "--type", "reference", "--description", "dashboard", "--body", " "], "no body"),
    ]
    for argv, needle in cases:
        code, out, err = run(capsys, *argv)
        assert code == 1, (argv, out, err)
        assert needle in err, (needle, err)
        assert files(store) == before
    assert journal.entries(str(store)) == []


def test_cjk_description_with_name(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = new(capsys, store, "--name", "deploy-ja", desc="\u30c7\u30d7\u30ed\u30a4\u624b\u9806\u306f\u6bce\u9031\u6728\u66dc\u65e5")
    assert code == 0, err
    assert errors(store) == []


def test_note_size_cap_refused_with_numbers(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (store / ".engramory.json").write_text('{"version": 1, "noteMaxBytes": 300}')
    code, _, err = new(capsys, store, body="x" * 400)
    assert code == 1
    assert "over the 300-byte cap per note" in err and "trim the body by" in err
    assert not (store / "MEMORY.md").exists()


def test_index_hard_cap_refused_with_numbers_and_steps(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = ["# Memory Index", "", "## reference"] + ["- [n%d](n%d.md)" % (i, i) for i in range(197)]
    (store / "MEMORY.md").write_text("\n".join(lines) + "\n")
    before = files(store)
    code, _, err = new(capsys, store)
    assert code == 1
    assert "from 200 to 201 lines (hard cap 200: 1 over)" in err
    assert "Compact first" in err and "Nothing was written" in err
    assert files(store) == before


def test_index_warn_zone_passes_with_warning(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = ["# Memory Index", "", "## reference"] + ["- [n%d](n%d.md)" % (i, i) for i in range(150)]
    (store / "MEMORY.md").write_text("\n".join(lines) + "\n")
    code, out, _ = new(capsys, store)
    assert code == 0
    assert "warning: engramory: MEMORY.md will be" in out and "past the warn cap" in out


def test_index_caps_from_store_config(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (store / ".engramory.json").write_text('{"version": 1, "warnLines": 3, "hardLines": 4}')
    assert new(capsys, store, "--name", "one")[0] == 0  # 4 lines
    code, _, err = new(capsys, store, "--name", "two", desc="A second and different reference entry")
    assert code == 1 and "hard cap 4" in err


def test_near_duplicate_refused_naming_it_unless_force(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert new(capsys, store, "--name", "staging-errors")[0] == 0
    code, _, err = new(capsys, store, desc="where the Staging error-dashboard lives!")
    assert code == 1 and "staging-errors.md already says nearly the same" in err
    assert "engramory update staging-errors" in err
    # another type is not a duplicate
    assert new(capsys, store, type_="project", desc="Where the staging error dashboard lives")[0] == 0
    code, out, _ = new(capsys, store, "--force", "--json", desc="where the Staging error-dashboard lives!")
    assert code == 0 and json.loads(out)["path"] == "where-staging-error-dashboard-lives-2.md"
    assert errors(store) == []


def test_name_taken_explicit_refused_derived_suffixed(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert new(capsys, store, "--name", "logs")[0] == 0
    code, _, err = new(capsys, store, "--name", "logs", desc="Completely other words here")
    assert code == 1 and "already exists" in err and "engramory update logs" in err
    # a derived name never repeats the whole description (the doctor would call it weak), so
    # "Alpha beta gamma delta" derives alpha-beta-gamma, which is taken: it gets a suffix
    assert new(capsys, store, "--name", "alpha-beta-gamma", desc="one two three")[0] == 0
    code, out, _ = new(capsys, store, "--json", desc="Alpha beta gamma delta", body="other body entirely")
    assert code == 0 and json.loads(out)["path"] == "alpha-beta-gamma-2.md"


def test_read_only_index_refused(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (store / ".engramory.json").write_text('{"version": 1, "readOnly": ["MEMORY.md"]}')
    code, _, err = new(capsys, store)
    assert code == 1 and "read-only" in err


def test_body_from_stdin(store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    class Stdin(io.TextIOWrapper):
        def isatty(self) -> bool:
            return False

    monkeypatch.setattr(sys, "stdin", Stdin(io.BytesIO("Body from a pipe \u2713\n".encode())))
    code, _, err = run(capsys, "new", str(store), "--type", "user", "--description", "The user reads pipes", "--name", "pipe")
    assert code == 0, err
    assert (store / "pipe.md").read_text().endswith("---\nBody from a pipe \u2713\n")


def test_dry_run_writes_nothing(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = new(capsys, store, "--dry-run")
    assert code == 0 and "nothing was written" in out
    assert files(store) == {} and not (store / ".engramory" / "journal.jsonl").exists()


def test_dry_run_says_what_it_would_write_and_json_stays_json(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    code, out, _ = new(capsys, store, "--dry-run")
    assert code == 0 and out.startswith("would save ") and "pointer: MEMORY.md:" in out and "UTF-16 units" in out
    code, out, _ = new(capsys, store, "--dry-run", "--json")
    receipt = json.loads(out)  # one JSON document, nothing else on stdout
    assert code == 0 and receipt["dry_run"] is True and receipt["entry"] is None
    assert receipt["index"]["window"]["unit"] == "UTF-16 units" and files(store) == {}
    code, _, err = new(capsys, store)
    assert code == 0, err
    name = next(p.stem for p in store.glob("*.md") if p.name != "MEMORY.md")
    before = files(store)
    for argv in (["update", name, str(store), "--body", "changed", "--dry-run", "--json"],
                 ["archive", "--root", str(store), name, "--dry-run", "--json"]):
        code, out, err = run(capsys, *argv)
        receipt = json.loads(out)
        assert code == 0 and receipt["dry_run"] is True and receipt["entry"] is None, err
        assert files(store) == before
    code, out, _ = run(capsys, "archive", "--root", str(store), name, "--dry-run")
    assert out.startswith("would archive ") and "nothing was written" in out and files(store) == before


def test_missing_root_and_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "new", str(tmp_path / "nope"), "--type", "user", "--description", "d", "--body", "b")
    assert code == 66 and "not a folder" in err
    with pytest.raises(SystemExit) as exc:
        cli.main(["new", str(tmp_path), "--type", "bogus", "--description", "d"])
    assert exc.value.code == 64


def test_default_root_is_the_projects_auto_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    code, out, err = run(capsys, "new", "--type", "user", "--description", "The user likes short answers",
                         "--body", "Keep replies short.", "--json")
    assert code == 0, err
    expected = tmp_path / "cfg" / "projects" / str(project.resolve()).replace("/", "-").replace(".", "-").replace("_", "-") / "memory"
    assert json.loads(out)["root"] == str(expected) and json.loads(out)["default_root"] is True
    assert (expected / "MEMORY.md").is_file()
    code, out, _ = run(capsys, "search", "short answers", "--json")
    assert code == 0 and json.loads(out)["results"][0]["path"] == "user-likes-short-answers.md"


# -- update -------------------------------------------------------------------------------------------

def test_update_bumps_date_and_keeps_pointer_in_step(store: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notes, "today", lambda: "2026-01-01")
    assert new(capsys, store, "--name", "logs")[0] == 0
    assert new(capsys, store, "--name", "squash", type_="feedback", desc="Squash merge every branch")[0] == 0
    monkeypatch.setattr(notes, "today", lambda: "2026-02-02")
    code, out, err = run(capsys, "update", "logs", str(store), "--description", "Staging errors live in Grafana",
                         "--type", "project", "--why", "ops asked", "--how", "link it in reports", "--json")
    assert code == 0, err
    text = (store / "logs.md").read_text()
    assert "description: Staging errors live in Grafana\ntype: project\ncreated: 2026-01-01\nupdated: 2026-02-02\n" in text
    assert "**Why:** ops asked" in text and "**How to apply:** link it in reports" in text
    index = (store / "MEMORY.md").read_text()
    assert "- [Staging errors live in Grafana](logs.md)" in index
    assert index.index("## project") < index.index("(logs.md)")
    assert index.count("logs.md") == 1
    line = json.loads(out)["index"]["line"]
    assert index.split("\n")[line - 1] == "- [Staging errors live in Grafana](logs.md)"
    assert errors(store) == []
    # the Why line is replaced in place, not duplicated
    assert run(capsys, "update", "logs", str(store), "--why", "the on-call rota asked")[0] == 0
    text = (store / "logs.md").read_text()
    assert text.count("**Why:**") == 1 and "**Why:** the on-call rota asked" in text


def test_update_claude_form_note(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (store / "MEMORY.md").write_text("# Memory Index\n\n## user\n- [Role](role.md) \u2014 backend\n")
    (store / "role.md").write_text("---\nname: role\ndescription: Role\nmetadata:\n  type: user\n---\nBackend lead.\n")
    code, _, err = run(capsys, "update", "role.md", str(store), "--type", "reference", "--body", "See the wiki page.")
    assert code == 0, err
    assert (store / "role.md").read_text() == "---\nname: role\ndescription: Role\nmetadata:\n  type: reference\n---\nSee the wiki page.\n"
    assert (store / "MEMORY.md").read_text() == "# Memory Index\n\n## user\n\n## reference\n- [Role](role.md) \u2014 backend\n"
    assert errors(store) == []


def test_update_refusals(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert new(capsys, store, "--name", "logs")[0] == 0
    assert new(capsys, store, "--name", "other", desc="Completely different words entirely")[0] == 0
    before = files(store)
    assert run(capsys, "update", "nope", str(store), "--body", "x")[0] == 1
    code, _, err = run(capsys, "update", "other", str(store), "--description", "where the staging error dashboard lives")
    assert code == 1 and "logs.md already says nearly the same" in err
    code, _, err = run(capsys, "update", "logs", str(store), "--type", "feedback")
    assert code == 1 and "Why:" in err
    assert files(store) == before
    with pytest.raises(SystemExit):
        update_cmd.main(["logs", str(store)])


# -- archive / restore --------------------------------------------------------------------------------

def test_archive_and_restore_round_trip_with_links(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert new(capsys, store, "--name", "logs")[0] == 0
    assert new(capsys, store, "--name", "deploy", desc="How a deploy goes out",
               body="Check [[logs]] after each deploy.")[0] == 0
    start = files(store)
    code, out, err = run(capsys, "archive", "logs", str(store), "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["moved"] == [{"name": "logs", "from": "logs.md", "to": "archive/logs.md", "removed_lines": [4]}]
    assert r["links"] == ["deploy.md:8: [[logs]]"]
    assert (store / "archive" / "logs.md").read_bytes() == start["logs.md"]
    assert "logs.md" not in (store / "MEMORY.md").read_text()
    assert errors(store) == []
    code, out, err = run(capsys, "restore", "logs", str(store))
    assert code == 0, err
    assert "restored archive/logs.md -> logs.md; pointer at MEMORY.md:" in out and "deploy.md:8" in out
    assert {k: v for k, v in files(store).items() if k != "MEMORY.md"} == {k: v for k, v in start.items() if k != "MEMORY.md"}
    assert (store / "logs.md").read_bytes() == start["logs.md"]
    assert errors(store) == []


def test_archive_refusals(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert new(capsys, store, "--name", "logs")[0] == 0
    before = files(store)
    assert run(capsys, "archive", "logs", "nope", str(store))[0] == 1  # one bad name: nothing moves
    assert files(store) == before
    assert run(capsys, "archive", "../logs", str(store))[0] == 1
    assert run(capsys, "restore", "logs", str(store))[0] == 1
    assert run(capsys, "archive", "logs", str(store))[0] == 0
    code, _, err = run(capsys, "archive", "logs", str(store))
    assert code == 1 and "already archived" in err


def test_restore_refused_when_index_full(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert new(capsys, store, "--name", "logs")[0] == 0
    assert run(capsys, "archive", "logs", str(store))[0] == 0
    lines = ["# Memory Index", "", "## reference"] + ["- [n%d](n%d.md)" % (i, i) for i in range(197)]
    (store / "MEMORY.md").write_text("\n".join(lines) + "\n")
    before = files(store)
    code, _, err = run(capsys, "restore", "logs", str(store))
    assert code == 1 and "hard cap 200" in err
    assert files(store) == before


# -- log / undo ---------------------------------------------------------------------------------------

def test_log_json_and_undo_by_id(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert new(capsys, store, "--name", "one", desc="First fact about alpha")[0] == 0
    s1 = files(store)
    assert new(capsys, store, "--name", "two", desc="Second fact about beta")[0] == 0
    code, out, _ = run(capsys, "log", str(store), "--json")
    log = json.loads(out)
    assert [e["id"] for e in log] == [2, 1]
    assert log[0]["command"] == "new" and log[0]["undone"] is False
    assert {c["path"] for c in log[0]["changes"]} == {"two.md", "MEMORY.md"}
    assert all(set(c) >= {"before", "after", "before_size", "after_size"} for c in log[0]["changes"])
    # entry 1 cannot be undone while entry 2 changed MEMORY.md after it
    code, _, err = run(capsys, "undo", "1", str(store))
    assert code == 1 and "undo entry 2" in err
    code, out, _ = run(capsys, "undo", "2", str(store), "--json")
    assert code == 0 and json.loads(out)["entry"]["undoes"] == 2
    assert files(store) == s1
    code, out, _ = run(capsys, "log", str(store))
    assert "3  " in out and "(undoes 2)" in out and "(undone)" in out
    code, out, _ = run(capsys, "undo", str(store), "--dry-run")
    assert code == 0 and "would undo entry 1" in out
    assert files(store) == s1
    assert run(capsys, "undo", str(store))[0] == 0
    assert files(store) == {}
    code, _, err = run(capsys, "undo", str(store))
    assert code == 1 and "nothing to undo" in err


def test_help_documents_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("new", "update", "archive", "restore", "undo", "log", "search"):
        with pytest.raises(SystemExit) as exc:
            cli.main([command, "--help"])
        assert exc.value.code == 0
        out = capsys.readouterr().out
        assert "exit codes:" in " ".join(out.split()), command


def test_commands_run_isolated_from_a_copied_folder(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(ROOT / "engramory", bundle / "engramory", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "tools", bundle / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    store = tmp_path / "store"
    store.mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}

    def cmd(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-I", "-S", str(bundle / "tools" / "engramory.py"), *args],
                              capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)

    r = cmd("new", str(store), "--type", "reference", "--description", "Kibana saved search for 502 errors",
            "--body", "https://kibana.example.com/s/502")
    assert r.returncode == 0, r.stderr
    r = cmd("search", "502 kibana", str(store), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"][0]["path"] == "kibana-saved-search-502-errors.md"
    assert cmd("archive", "kibana-saved-search-502-errors", str(store)).returncode == 0
    assert cmd("log", str(store), "--json").returncode == 0
    assert cmd("undo", str(store)).returncode == 0
    assert cmd("undo", str(store)).returncode == 0
    assert files(store) == {}
    assert "Traceback" not in r.stderr


def test_history_entry_dict_has_id_and_no_format() -> None:
    e = journal.Entry(7, "t", "new", [], [])
    d = history.entry_dict(e)
    assert d["id"] == 7 and "format" not in d and d["undone"] is False


def test_undecodable_arguments_refused_without_traceback(store: Path) -> None:
    def cmd(*args: bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-I", "-S", str(ROOT / "tools" / "engramory.py"), *args],
                              capture_output=True, timeout=60)

    r = cmd(b"new", str(store).encode(), b"--type", b"user", b"--name", b"ok", b"--description", b"fine",
            b"--body", b"bad \xff byte")
    assert r.returncode == 1 and b"Traceback" not in r.stderr and b"not valid UTF-8" in r.stderr
    r = cmd(b"new", str(store).encode(), b"--type", b"user", b"--description", b"bad \xff", b"--body", b"b")
    assert r.returncode == 1 and b"Traceback" not in r.stderr
    (store / "MEMORY.md").write_text("# Memory Index\n")
    r = cmd(b"search", b"q\xff", str(store).encode(), b"--json")
    assert r.returncode == 1 and json.loads(r.stdout)["results"] == []
    assert files(store) == {"MEMORY.md": b"# Memory Index\n"}


def test_store_folder_without_slash_is_root_when_it_holds_an_index(store: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert new(capsys, store, "--name", "logs")[0] == 0
    monkeypatch.chdir(store.parent)
    code, out, _ = run(capsys, "search", "staging dashboard", store.name)
    assert code == 0 and "logs.md" in out
    assert run(capsys, "archive", "logs", store.name)[0] == 0
    assert (store / "archive" / "logs.md").is_file()

"""Issue 11: each gap the doctor had, reproduced, in process and through the real entry
script (`python3 -I -S tools/engramory_doctor.py`). Scan bounds are shown by comparing the
work at two input sizes, never by a wall-clock limit."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import jsonschema
import pytest

from engramory import notices
from engramory.commands.doctor import main
from engramory.doctor import run as doctor
from engramory.doctor import scan
from engramory.doctor.codes import NO_SCHEMA_CODES
from engramory.store import pointers
from engramory.store import reader as store

ROOT = str(Path(__file__).resolve().parents[3])
SCRIPT = os.path.join(ROOT, "tools", "engramory_doctor.py")
import adversarial  # noqa: E402

with open(os.path.join(ROOT, "schemas", "doctor-report.schema.json"), encoding="utf-8") as _f:
    SCHEMA = json.load(_f)
TODAY = datetime.date(2026, 11, 30)
NOTE = "---\nname: {slug}\ndescription: {desc}\nmetadata:\n  type: user\n---\n\n{body}\n"


def note(root: str, rel: str, desc: str = "", body: str = "A fact worth keeping about the build.") -> str:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    slug = os.path.basename(rel)[:-3]
    with open(path, "w", encoding="utf-8") as f:
        f.write(NOTE.format(slug=slug, desc=desc or "the build for %s needs the cache warmed first" % slug, body=body))
    return path


def index(root: str, *lines: str) -> None:
    with open(os.path.join(root, "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))


def make_store(tmp_path, *rels: str) -> str:
    root = os.path.join(str(tmp_path), "store")
    os.makedirs(root, exist_ok=True)
    for rel in rels:
        note(root, rel)
    index(root, *["- [%s](%s) - about %s" % (r, r, r) for r in rels])
    return root


@pytest.fixture(params=["in-process", "entry-script"])
def doctor_run(request, capsys):
    """Run the doctor one way or the other: (exit code, stdout)."""
    def run(*args: str) -> tuple[int, str]:
        if request.param == "in-process":
            code = main(list(args) + ["--skip", "store-in-git"])
            return code, capsys.readouterr().out
        res = subprocess.run([sys.executable, "-I", "-S", SCRIPT, *args, "--skip", "store-in-git"],
                             capture_output=True, text=True, timeout=120)
        assert "Traceback" not in res.stderr, res.stderr
        return res.returncode, res.stdout
    return run


def as_json(out: str) -> dict:
    report = json.loads(out)
    jsonschema.validate(report, SCHEMA)
    return report


def codes(out: str) -> list[str]:
    return [f["code"] for f in as_json(out)["findings"]]


def snapshot(root: str) -> dict[str, tuple[int, int]]:
    out = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            p = os.path.join(folder, name)
            st = os.lstat(p)
            out[p] = (st.st_mtime_ns, st.st_size)
    return out


# -- the graph ----------------------------------------------------------------------------------

def test_an_orphan_note_is_an_error(tmp_path, doctor_run):
    root = make_store(tmp_path, "user-a.md")
    note(root, "user-lonely.md")
    code, out = doctor_run(root, "--json")
    assert code == 1
    found = [f for f in as_json(out)["findings"] if f["code"] == "note-orphan"]
    assert [(f["path"], f["severity"]) for f in found] == [("user-lonely.md", "error")]


def test_templates_and_sub_indexes_are_not_notes(tmp_path, doctor_run):
    root = make_store(tmp_path, "user-a.md")
    for name in os.listdir(os.path.join(ROOT, "templates")):
        with open(os.path.join(ROOT, "templates", name), "rb") as src:
            os.makedirs(os.path.join(root, "templates"), exist_ok=True)
            with open(os.path.join(root, "templates", name), "wb") as dst:
                dst.write(src.read())
    os.makedirs(os.path.join(root, "topic"))
    with open(os.path.join(root, "topic", "MEMORY.md"), "w") as f:
        f.write("# a sub-index\n- [x](x.md)\n")
    code, out = doctor_run(root, "--json")
    assert code == 0, out
    assert as_json(out)["notes"]["live"] == 1


# -- the index ------------------------------------------------------------------------------------

def test_a_symlinked_index_leading_outside_is_refused_and_not_quoted(tmp_path, doctor_run):
    root = make_store(tmp_path, "user-a.md")
    outside = os.path.join(str(tmp_path), "elsewhere.md")
    with open(outside, "w") as f:
        f.write("- [leak](../../etc/SECRET-TARGET.md) " + "LONGLINE" * 50 + "\n")
    os.remove(os.path.join(root, "MEMORY.md"))
    os.symlink(outside, os.path.join(root, "MEMORY.md"))
    code, out = doctor_run(root, "--json")
    assert code == 1
    assert "symlink-escape" in codes(out)
    assert "SECRET-TARGET" not in out and "LONGLINE" not in out
    _, text = doctor_run(root)
    assert "SECRET-TARGET" not in text and "LONGLINE" not in text


@pytest.mark.parametrize("target,code", [
    ("file:///etc/secret.md", "pointer-escapes-root"),
    ("file://localhost/etc/secret.md", "pointer-escapes-root"),
    ("vscode://file/home/x.md", "pointer-broken"),
    ("C:/Users/x/secret.md", "pointer-broken"),  # on Windows this is absolute: escapes
])
def test_only_remote_schemes_are_external(tmp_path, doctor_run, target, code):
    root = make_store(tmp_path, "user-a.md")
    with open(os.path.join(root, "MEMORY.md"), "a") as f:
        f.write("- [x](%s) - hook\n- [web](https://example.com/a.md) - remote\n- [m](mailto:a@b.md)\n"
                "- [g](git+ssh://host/r.md)\n" % target)
    rc, out = doctor_run(root, "--json")
    found = [(f["code"], f["line"]) for f in as_json(out)["findings"] if f["code"].startswith("pointer-")]
    assert found == [(code, 2)] and rc == 1


def test_remote_scheme_table():
    assert all(pointers.is_remote(t) for t in ("http://a", "HTTPS://a", "ftp://a", "ftps://a", "ssh://a",
                                             "mailto:a", "git+ssh://a", "git+https://a"))
    assert not any(pointers.is_remote(t) for t in ("file:///a", "vscode://a", "C:/a", "c:\\a", "a.md", "../a"))


def test_a_non_utf8_byte_is_reported_and_every_pointer_still_checked(tmp_path, doctor_run):
    root = make_store(tmp_path, "user-a.md", "user-b.md")
    with open(os.path.join(root, "MEMORY.md"), "ab") as f:
        f.write(b"- bad byte \xff here\n- [gone](missing.md) - broken\n")
    rc, out = doctor_run(root, "--json")
    found = [(f["code"], f["line"]) for f in as_json(out)["findings"]]
    assert ("file-not-utf8", 3) in found and ("pointer-broken", 4) in found
    assert "note-orphan" not in [c for c, _ in found] and rc == 1


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "device", "folder"])
def test_an_index_that_is_not_a_regular_file_is_never_read(tmp_path, doctor_run, kind):
    root = make_store(tmp_path, "user-a.md")
    path = os.path.join(root, "MEMORY.md")
    os.remove(path)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        os.symlink("/dev/zero", path)
    elif kind == "device":
        inner = os.path.join(root, "null")
        os.symlink("/dev/null", inner)
        os.symlink(inner, path)  # a link inside the store, to a link that leaves it
    else:
        os.mkdir(path)
    before = snapshot(root)
    rc, out = doctor_run(root, "--json")
    assert rc == 1
    assert {"not-a-file", "symlink-escape"} & set(codes(out))
    assert snapshot(root) == before


def test_a_fifo_inside_the_store_as_index_target(tmp_path, doctor_run):
    root = make_store(tmp_path, "user-a.md")
    os.mkfifo(os.path.join(root, "pipe"))
    os.remove(os.path.join(root, "MEMORY.md"))
    os.symlink(os.path.join(root, "pipe"), os.path.join(root, "MEMORY.md"))
    rc, out = doctor_run(root, "--json")
    assert rc == 1 and "not-a-file" in codes(out)


def test_case_insensitive_disk_compares_pointers_without_case(tmp_path, monkeypatch):
    root = make_store(tmp_path, "user-deploy.md")
    index(root, "- [deploy](User-Deploy.md) - how we deploy")
    monkeypatch.setattr(store, "case_insensitive", lambda folder, probe="": True)
    st, found = doctor.audit(root, doctor.Context(TODAY, git=False))
    assert [f.code for f in found] == []
    assert st.pointers[0].rel == "user-deploy.md"
    monkeypatch.setattr(store, "case_insensitive", lambda folder, probe="": False)
    _, found = doctor.audit(root, doctor.Context(TODAY, git=False))
    assert sorted(f.code for f in found) == ["note-orphan", "pointer-broken"]


def test_nfc_and_nfd_names_collide(tmp_path, doctor_run):
    nfc = unicodedata.normalize("NFC", "user-caf\u00e9.md")
    nfd = unicodedata.normalize("NFD", nfc)
    root = make_store(tmp_path, nfc, nfd)
    rc, out = doctor_run(root, "--json")
    dup = [f for f in as_json(out)["findings"] if f["code"] == "slug-duplicate"]
    assert len(dup) == 2 and rc == 1


# -- options ----------------------------------------------------------------------------------------

def test_no_schema_skips_the_frontmatter_and_label_codes(tmp_path, doctor_run, capsys):
    root = make_store(tmp_path, "user-a.md")
    with open(os.path.join(root, "user-a.md"), "w") as f:
        f.write("no frontmatter at all\n")
    rc, out = doctor_run(root, "--json")
    assert rc == 1 and "fm-missing" in codes(out)
    rc, out = doctor_run(root, "--json", "--no-schema")
    assert rc == 0 and not [c for c in codes(out) if c in NO_SCHEMA_CODES]
    with pytest.raises(SystemExit):
        main(["--help"])
    helptext = " ".join(capsys.readouterr().out.split())
    assert "--no-schema" in helptext and "fm-missing" in helptext and "labels-missing" in helptext


# -- bounded output --------------------------------------------------------------------------------

def test_each_code_is_capped_in_text_and_complete_in_json(tmp_path, doctor_run):
    root = make_store(tmp_path, "user-a.md")
    index(root, *["- [a](user-a.md) - the same note again"] * 250)
    rc, out = doctor_run(root)
    lines = out.splitlines()
    assert len([line for line in lines if " pointer-duplicate: " in line]) == doctor.OUTPUT_CAP
    assert "... and 229 more pointer-duplicate findings (249 in all; `--json` lists every one)" in lines
    rc, out = doctor_run(root, "--json")
    assert codes(out).count("pointer-duplicate") == 249  # truncated in text, all in the schema-valid JSON


def test_a_huge_index_is_parsed_only_a_few_times_its_cap(tmp_path, doctor_run):
    root = make_store(tmp_path, "user-a.md")
    line = "- [a](user-a.md) " + "x" * 300 + "\n"
    with open(os.path.join(root, "MEMORY.md"), "w") as f:
        f.write(line * (2_000_000 // len(line)))  # 2 MB of long lines: 7,001 findings before
    rc, out = doctor_run(root, "--json")
    found = codes(out)
    assert found.count("index-parse-limit") == 1
    assert found.count("index-long-line") <= store.PARSE_FACTOR * 200
    rc, text = doctor_run(root)
    assert len(text.splitlines()) < 4 * doctor.OUTPUT_CAP


def test_a_60_mb_index_answers_from_its_head(tmp_path, doctor_run):
    root = make_store(tmp_path, "user-a.md")
    line = b"- [a](user-a.md) same line\n"
    with open(os.path.join(root, "MEMORY.md"), "wb") as f:
        f.write(line * (60_000_000 // len(line)))
    st = store.load(root)
    assert len(st.index_raw or b"") <= store.INDEX_READ_MAX and st.index_size >= 59_000_000
    rc, out = doctor_run(root, "--json")
    assert len(out) < 500_000 and rc == 1  # a million identical findings before
    from engramory.doctor import check
    result = check.check_file(os.path.join(root, "MEMORY.md"))
    assert result["status"] == "OVER" and result["lines"] is None and result["outside_window"]
    res = subprocess.run([sys.executable, "-I", "-S", os.path.join(ROOT, "tools", "engramory_check.py"),
                          os.path.join(root, "MEMORY.md")], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "first entry outside: line 201" in res.stdout, res.stdout


def test_many_empty_notes_print_a_page(tmp_path):
    root = make_store(tmp_path, "user-a.md")
    for i in range(3000):
        open(os.path.join(root, "empty-%05d.md" % i), "w").close()
    res = subprocess.run([sys.executable, "-I", "-S", SCRIPT, root, "--skip", "store-in-git"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 1 and len(res.stdout.splitlines()) < 6 * doctor.OUTPUT_CAP


# -- scans stay linear -------------------------------------------------------------------------------

def _work(text: str) -> float:
    """CPU seconds (best of 3) for one note's every per-note check."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        n = store.parse_note(store.Note("n.md", "n.md", False), text)
        doctor.frontmatter_findings(n, TODAY)
        list(doctor.labels_and_dates(n))
        scan.scan_notes([n])
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize("name", sorted(adversarial.cases(64)))
def test_every_scan_is_linear(name):
    """4x the input costs about 4x (a quadratic scan: 16x). Compared, never timed."""
    small, big = adversarial.cases(1 << 15)[name], adversarial.cases(1 << 17)[name]
    t_small, t_big = _work(small), _work(big)
    assert t_big < max(8 * t_small, 0.02), (t_small, t_big)


# -- SessionStart ------------------------------------------------------------------------------------

def test_session_start_doctor_part_stops_at_its_budget(tmp_path, monkeypatch):
    root = make_store(tmp_path, *["user-%03d.md" % i for i in range(150)])
    note(root, "user-orphan.md")
    reads = []
    real = store._read_note
    monkeypatch.setattr(store, "_read_note", lambda n: reads.append(n.rel) or real(n))
    errors, complete = doctor.quick_errors(root, None, budget=-1.0)
    assert (errors, complete) == (0, False) and reads == []
    errors, complete = doctor.quick_errors(root, None, budget=60.0)
    assert (errors, complete) == (1, True) and len(reads) == 151


def test_session_start_says_the_size_notice_before_the_doctor_part(tmp_path, monkeypatch):
    root = make_store(tmp_path, "user-a.md")
    note(root, "user-orphan.md")
    index(root, *["- [a](user-a.md) - line %d" % i for i in range(180)])
    monkeypatch.setattr(notices, "known_indexes", lambda payload, env: [os.path.join(root, "MEMORY.md")])
    out = json.loads(notices.session_start({"session_id": "s"}, {"HOME": str(tmp_path)}))
    text = out["hookSpecificOutput"]["additionalContext"]
    assert text.index("warn") < text.index("doctor error"), text
    monkeypatch.setattr(notices, "DOCTOR_BUDGET", -1.0)
    monkeypatch.setattr(notices.doctor_lines, "__defaults__", (-1.0,))
    out = json.loads(notices.session_start({"session_id": "s"}, {"HOME": str(tmp_path)}))
    assert "doctor error" not in out["hookSpecificOutput"]["additionalContext"]  # the notice still comes


# -- recall readiness -------------------------------------------------------------------------------

def test_weak_and_colliding_descriptions(tmp_path, doctor_run):
    root = make_store(tmp_path, "user-a.md", "user-b.md", "user-c.md", "user-d.md", "user-e.md")
    note(root, "user-a.md", desc="notes")
    note(root, "user-b.md", desc="deploy")
    note(root, "user-c.md", desc="w " * 200)
    note(root, "user-d.md", desc="The release train leaves on Thursdays at noon")
    note(root, "user-e.md", desc="the release train leaves on thursdays, at noon!")
    rc, out = doctor_run(root, "--json")
    found = sorted((f["code"], f["path"]) for f in as_json(out)["findings"])
    assert found == [("description-weak", "user-a.md"), ("description-weak", "user-b.md"),
                     ("description-weak", "user-c.md"), ("near-duplicate", "user-e.md")]
    with open(os.path.join(root, "user-e.md"), "r+") as f:
        text = f.read().replace("type: user", "type: reference")
        f.seek(0)
        f.write(text)
        f.truncate()
    rc, out = doctor_run(root, "--json")
    assert ("description-collision", "user-e.md") in {(f["code"], f["path"]) for f in as_json(out)["findings"]}


def test_frontmatter_past_the_host_scan_is_unread(tmp_path, doctor_run):
    root = make_store(tmp_path, "user-a.md", "user-b.md")
    with open(os.path.join(root, "user-b.md"), "w") as f:
        f.write("---\nname: user-b\n" + "".join("k%d: v\n" % i for i in range(27))
                + "description: a description the host never sees at all\nmetadata:\n  type: user\n---\nbody\n")
    rc, out = doctor_run(root, "--json")
    assert [(f["code"], f["path"]) for f in as_json(out)["findings"]] == [("recall-fm-unread", "user-b.md")]


def test_notes_indexed_past_the_window_and_not_among_the_newest_are_unreachable(tmp_path, doctor_run):
    rels = ["user-%03d.md" % i for i in range(260)]
    root = make_store(tmp_path, *rels)
    now = time.time()
    for i, rel in enumerate(rels):
        os.utime(os.path.join(root, rel), (now - 10_000 + i, now - 10_000 + i))  # the last 200 newest
    index(root, *["- [%s](%s) - about it" % (r, r) for r in reversed(rels)])  # oldest last: past line 200
    rc, out = doctor_run(root, "--json")
    found = [f["path"] for f in as_json(out)["findings"] if f["code"] == "recall-unreachable"]
    # the 60 oldest are indexed only on lines 201-260 and are not among the 200 newest
    assert sorted(found) == ["user-%03d.md" % i for i in range(60)]


# -- every store on the machine ------------------------------------------------------------------------

def test_all_audits_every_known_store_one_line_each(tmp_path, monkeypatch):
    home = tmp_path / "home"
    cfg = home / ".claude"
    for name in ("-home-u-proj", "-home-u-Proj", "-home-u-other"):
        make_store(cfg / "projects" / name, "user-a.md")
        os.rename(str(cfg / "projects" / name / "store"), str(cfg / "projects" / name / "memory"))
    make_store(cfg / "agent-memory", "user-x.md")
    os.rename(str(cfg / "agent-memory" / "store"), str(cfg / "agent-memory" / "reviewer"))
    note(str(cfg / "projects" / "-home-u-other" / "memory"), "user-orphan.md")
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    res = subprocess.run([sys.executable, "-I", "-S", SCRIPT, "--all"], capture_output=True, text=True,
                         timeout=120, env=env, cwd=str(tmp_path))
    lines = res.stdout.splitlines()
    assert res.returncode == 1, res.stderr
    assert len(lines) == 5 and lines[-1].startswith("4 stores checked")
    other = [line for line in lines if "-home-u-other" in line]
    assert other and "1 error" in other[0] and "note-orphan" in other[0]
    assert any("agent-memory (user)" in line for line in lines)
    res = subprocess.run([sys.executable, "-I", "-S", SCRIPT, "--all", "--json"], capture_output=True,
                         text=True, timeout=120, env=env, cwd=str(tmp_path))
    reports = [json.loads(line) for line in res.stdout.splitlines()]
    for r in reports:
        jsonschema.validate(r, SCHEMA)
    assert sum("store-split" in {f["code"] for f in r["findings"]} for r in reports) == 1


def test_session_start_entry_script_gives_the_notice_then_the_doctor_part(tmp_path):
    cfg = tmp_path / "cfg"
    mem = cfg / "projects" / "proj"
    root = make_store(mem, "user-a.md")
    os.rename(root, str(mem / "memory"))
    root = str(mem / "memory")
    note(root, "user-orphan.md")
    index(root, *["- [a](user-a.md) - line %d" % i for i in range(180)])
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(cfg),
           "CLAUDE_CODE_PROJECT_DIR_NAME": "proj"}
    payload = json.dumps({"session_id": "s", "hook_event_name": "SessionStart", "cwd": str(tmp_path)})
    res = subprocess.run([sys.executable, "-I", "-S", os.path.join(ROOT, "hooks", "engramory_session_start.py")],
                         input=payload, capture_output=True, text=True, timeout=60, env=env)
    assert res.returncode == 0, res.stderr
    text = json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"]
    assert text.index("warn") < text.index("has 1 doctor error"), text


def test_case_sensitivity_is_read_off_the_disk(tmp_path):
    root = make_store(tmp_path, "user-a.md")
    assert store.case_insensitive(root, "MEMORY.md") is False  # this disk (Linux) tells case apart
    os.symlink(os.path.join(root, "MEMORY.md"), os.path.join(root, "memory.md"))
    assert store.case_insensitive(os.path.join(root, ".."), "") is False
    assert store.case_insensitive(root, "MEMORY.md") is True  # both spellings name one file

"""The doctor's output, byte for byte, on generated stores: every fixture store, plain stores of 300 and
1,000 notes and an upstream-shaped one of 300 (bench/bench_doctor.py's generators) and a
store of every hostile note of bench/adversarial.py, each as `doctor` and `doctor --json`
print it, with the exit code. A change that makes the doctor faster must leave these alone:
findings, their order, their text and the exit code (issue 21).

The expected output is tests/unit/doctor/golden_output.json. When a change to what the doctor
says is meant, write it anew with `ENGRAMORY_WRITE_GOLDEN=1 pytest tests/unit/doctor/test_output_unchanged.py`
and review the diff."""

from __future__ import annotations

import datetime
import json
import os
import shutil
from pathlib import Path

import adversarial
import bench_doctor
import pytest

from engramory.commands import doctor as doctor_cmd
from engramory.doctor.codes import Context

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "stores"
GOLDEN = HERE / "golden_output.json"
TODAY = datetime.date(2026, 11, 30)
WRITE = os.environ.get("ENGRAMORY_WRITE_GOLDEN") == "1"
MTIME = 1_767_225_600  # 2026-01-01: every file gets this plus its place in name order


def _fixed_times(root: str, one: bool = False) -> None:
    """Modification times in name order, so the host's newest notes (recall-unreachable) are
    the same on every machine and every copy; with `one`, all the same (ties in name order)."""
    paths = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        paths += [os.path.join(folder, name) for name in files]
    for k, path in enumerate(sorted(paths)):
        if not os.path.islink(path):
            os.utime(path, (MTIME, MTIME) if one else (MTIME + k, MTIME + k))


def _adversarial_store(root: str) -> None:
    """Every hostile note, 16 KiB each, indexed, in one store."""
    os.makedirs(root)
    lines = []
    for name, text in sorted(adversarial.cases(1 << 14).items()):
        with open(os.path.join(root, "project-%s.md" % name), "w", encoding="utf-8") as f:
            f.write(text)
        lines.append("- [%s](project-%s.md) - the hostile note %s\n" % (name, name, name))
    with open(os.path.join(root, "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write("".join(lines))


def _build(name: str, tmp_path: Path) -> str:
    root = str(tmp_path / "store")
    if name == "plain-300-one-mtime":
        bench_doctor.make_plain_store(root, 300)
    elif name.startswith("plain-"):
        bench_doctor.make_plain_store(root, int(name[6:]))
    elif name == "upstream-300":
        bench_doctor.make_store(root, 300)
    elif name == "adversarial":
        _adversarial_store(root)
    else:
        shutil.copytree(str(FIXTURES / name), root, symlinks=True)
    _fixed_times(root, name.endswith("-one-mtime"))
    return root


# plain-1000: its index is longer than the doctor parses (4 x 200 lines), so some 200 notes are
# orphans, more than the text output keeps of one code while it reads (8 x 20 + 8);
# plain-300-one-mtime: which 200 notes are the newest is decided among ties
STORES = sorted(os.listdir(FIXTURES)) + ["plain-300", "plain-300-one-mtime", "plain-1000", "upstream-300",
                                         "adversarial"]


def _run(root: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    code = doctor_cmd.main([root, "--skip", "store-in-git", *extra])
    out = capsys.readouterr()
    text = (out.out + "\x00" + out.err).replace(root, "<ROOT>").replace(str(tmp_path), "<TMP>")
    return {"exit": code, "out": text}


def _golden() -> dict[str, object]:
    if not GOLDEN.exists():
        return {}
    with open(GOLDEN, encoding="utf-8") as f:
        return json.load(f)  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", STORES)
def test_doctor_output_is_unchanged(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    root = _build(name, tmp_path)
    # the date decides fm-future-date and its message: hold it
    monkeypatch.setattr(doctor_cmd, "Context", lambda: Context(TODAY))
    got = {"text": _run(root, tmp_path, capsys), "json": _run(root, tmp_path, capsys, "--json")}
    if WRITE:
        golden = _golden()
        golden[name] = got
        with open(GOLDEN, "w", encoding="utf-8") as f:
            json.dump(dict(sorted(golden.items())), f, indent=1, ensure_ascii=True)
            f.write("\n")
        return
    want = _golden().get(name)
    assert want is not None, "no golden output for %s: run with ENGRAMORY_WRITE_GOLDEN=1" % name
    assert got == want


def test_every_store_has_golden_output() -> None:
    """No store in the golden file that the test no longer builds, and none missing."""
    if WRITE:
        pytest.skip("writing the golden file")
    assert sorted(_golden()) == sorted(STORES)

"""`engramory hosts`: every host of the registry, the version each was verified on, its load
window (in its own unit) and how to install it; text and --json."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from engramory import hosts, size
from engramory.commands import hosts as hostlist
from tests.conftest import ROOT


def test_every_registered_host_declares_the_registry_fields() -> None:
    for name in hosts.names():
        mod = hosts.load(name)
        assert mod.NAME == name
        assert isinstance(mod.TITLE, str) and mod.TITLE
        assert isinstance(mod.VERIFIED, str)
        if not mod.VERIFIED:
            assert isinstance(getattr(mod, "UNVERIFIED_WHY", None), str) and mod.UNVERIFIED_WHY
        window = mod.window()
        assert isinstance(window, size.Window) and window.unit in size.UNITS
        assert callable(mod.respond) and callable(mod.index_paths)
        assert isinstance(mod.INSTALLER, str) and mod.INSTALLER.startswith("engramory.")
        out, err, code = mod.respond(b"not json", {})
        assert isinstance(out, str) and isinstance(err, str) and code in (0,)


def test_json_lists_every_host_with_its_window(capsys: pytest.CaptureFixture[str]) -> None:
    assert hostlist.main(["--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in table] == hosts.names()
    claude = next(r for r in table if r["name"] == "claude")
    assert claude["verified"] == "2.1.332" and claude["title"] == "Claude Code"
    assert claude["window"]["unit"] == size.UTF16 and claude["window"]["lines"] == 200 and claude["window"]["size"] == 25_000
    assert claude["install"] == "engramory install --host claude"
    cursor = next(r for r in table if r["name"] == "cursor")
    assert cursor["verified"] is None and cursor["unverified_why"]


def test_text_has_one_line_per_host_with_version_and_unit(capsys: pytest.CaptureFixture[str]) -> None:
    assert hostlist.main([]) == 0
    out = capsys.readouterr().out
    # the name column is as wide as the longest registered name
    assert re.search(r"^claude +Claude Code: verified on 2\.1\.332; window 200 lines and 25,000 UTF-16 units", out, re.M)
    for name in hosts.names():
        assert any(line.startswith(name) for line in out.splitlines()), name


def test_cli_runs_it_and_rejects_bad_flags() -> None:
    proc = subprocess.run([sys.executable, "-m", "engramory", "hosts", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and json.loads(proc.stdout)
    bad = subprocess.run([sys.executable, "-m", "engramory", "hosts", "--nope"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 64 and "Traceback" not in bad.stderr

"""engramory.install.jsonflow: the install / uninstall / --check flow a host module gets by
declaring a Wiring. Shown with a made-up host whose settings are Claude-shaped JSON with
comments, wired to the Claude guard script (any bundle script would do)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from engramory.install import jsonflow as installer_json
from engramory.install.settings import JsonDoc
from engramory.install.smoke import Smoke
from tests.conftest import index_text


class Demo(installer_json.Wiring):
    host, title = "demo", "Demo CLI"
    comments = True
    restart = "Restart Demo CLI."

    def __init__(self, base: Path) -> None:
        super().__init__(settings=str(base / "settings.json"), bundle_dir=str(base / "engramory"))

    def hooks(self, interpreter: str) -> list[tuple[str, str | None, dict[str, Any]]]:
        return [("PreToolUse", "Write|Edit", self.handler(interpreter, "engramory_index_guard.py", timeout=7))]

    def smoke_cases(self, tmp: str) -> list[installer_json.Smoke]:
        index = os.path.join(tmp, "MEMORY.md")
        payload = {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": tmp,
                   "tool_input": {"file_path": index, "content": index_text(400)}}

        def denied(ran: Smoke) -> str | None:
            out = ran.json()
            ok = isinstance(out, dict) and out.get("hookSpecificOutput", {}).get("permissionDecision") == "deny"
            return None if ok else "not denied (exit %d, %r)" % (ran.rc, ran.stdout[:80])

        return [installer_json.Smoke("PreToolUse", "engramory_index_guard.py", payload, denied)]


USER = b'{\n  // my settings\n  "theme": "dark",\n  "limit": 1e400,\n}\n'


def test_install_check_uninstall(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / ".demo"
    base.mkdir()
    (base / "settings.json").write_bytes(USER)
    os.chmod(base / "settings.json", 0o600)
    w = Demo(base)
    assert installer_json.install(w) == 0
    after = (base / "settings.json").read_bytes()
    assert after.startswith(b'{\n  // my settings\n  "theme": "dark",\n  "limit": 1e400,')
    assert stat.S_IMODE(os.stat(base / "settings.json").st_mode) == 0o600
    tree = JsonDoc.load(str(base / "settings.json"), comments=True).data
    (group,) = tree["hooks"]["PreToolUse"]
    assert group["matcher"] == "Write|Edit" and group["hooks"][0]["timeout"] == 7
    assert (base / "engramory" / "hooks" / "engramory_index_guard.py").is_file()
    assert not (base / "engramory" / "hooks" / "engramory_post_tool.py").exists()  # only what it wires
    capsys.readouterr()
    assert installer_json.install(w) == 0
    assert "already installed: nothing changed" in capsys.readouterr().out
    assert installer_json.check(w) == 0
    assert "a smoke run was answered as it must be" in capsys.readouterr().out
    (base / "engramory" / "engramory" / "guard.py").unlink()
    assert installer_json.check(w) == 1
    assert "engramory/guard.py is missing" in capsys.readouterr().out
    assert installer_json.uninstall(w) == 0
    assert (base / "settings.json").read_bytes() == USER
    assert not (base / "engramory").exists()


def test_refuses_a_missing_script_and_unparseable_settings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    class Broken(Demo):
        def hooks(self, interpreter: str) -> list[tuple[str, str | None, dict[str, Any]]]:
            return [("PreToolUse", None, self.handler(interpreter, "engramory_no_such_hook.py"))]

    base = tmp_path / ".demo"
    assert installer_json.install(Broken(base)) == 1
    assert "hooks/engramory_no_such_hook.py is missing" in capsys.readouterr().err
    assert not base.exists()
    base.mkdir()
    (base / "settings.json").write_text('{"a": 1,, }')
    assert installer_json.install(Demo(base)) == 1
    assert "not valid JSON" in capsys.readouterr().err
    assert (base / "settings.json").read_text() == '{"a": 1,, }'


def test_created_file_goes_on_uninstall(tmp_path: Path) -> None:
    base = tmp_path / ".demo"
    w = Demo(base)
    assert installer_json.install(w) == 0
    assert json.loads((base / "settings.json").read_text())["hooks"]
    assert installer_json.uninstall(w) == 0
    assert not base.exists()

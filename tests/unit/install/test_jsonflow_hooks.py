"""engramory.install.jsonflow's optional hooks, the ones Gemini and Codex use for what is their
own: scopes and the usage error, the scope in the first line, a side file edited beside the
settings (an Extra, recorded in the manifest and taken out again), extra record fields, the
folders uninstall prunes, and a host's own --check."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

from engramory.install import jsonflow as installer_json
from engramory.install.settings import Change, SettingsError, read_regular

SIDE_LINE = "trusted = engramory\n"


class Scoped(installer_json.Wiring):
    host, title = "scoped", "Scoped CLI"
    restart = "Restart Scoped CLI."
    settings_label = "hooks"
    scopes = (("user", "~/.scoped"), ("project", "./.scoped"))
    root = ""  # set by the fixture: where the scopes live
    checked: list[str] = []

    def __init__(self, scope: str) -> None:
        self.base = os.path.join(self.root, scope, ".scoped")
        self.side = os.path.join(self.root, "side.conf")
        super().__init__(settings=os.path.join(self.base, "hooks.json"),
                         bundle_dir=os.path.join(self.base, "skills", "engramory"), scope=scope)

    @classmethod
    def for_scope(cls, scope: str) -> Scoped:
        return cls(scope)

    def hooks(self, interpreter: str) -> list[tuple[str, Optional[str], dict[str, Any]]]:
        return [("PreToolUse", "Write", self.handler(interpreter, "engramory_index_guard.py"))]

    def record_fields(self) -> dict[str, Any]:
        return {"side_existed": os.path.exists(self.side)}

    def leftover_dirs(self, created_base: bool) -> list[str]:
        return [os.path.dirname(self.bundle_dir)] + ([self.base] if created_base else [])

    def _side(self) -> tuple[Optional[bytes], str]:
        raw = read_regular(self.side)
        return raw, (raw or b"").decode()

    def install_extras(self, new_data: dict[str, Any], old_manifest: Optional[dict[str, Any]],
                       dry_run: bool) -> list[installer_json.Extra]:
        raw, text = self._side()
        after = raw if SIDE_LINE in text else (text + SIDE_LINE).encode()
        change = Change(self.side, raw, after)
        return [installer_json.Extra(change, ["side: %s" % self.side], {"side": {"created": raw is None}},
                                     ["side noted last"])]

    def uninstall_extras(self, manifest: Optional[dict[str, Any]], record: Any,
                         dry_run: bool) -> list[installer_json.Extra]:
        raw, text = self._side()
        after: Optional[bytes] = text.replace(SIDE_LINE, "").encode()
        if not after and (manifest or {}).get("side", {}).get("created"):
            after = None
        return [installer_json.Extra(Change(self.side, raw, after), ["side: cleaned"], first=True)]

    def run_check(self, interpreter: Optional[str] = None, out: Any = None) -> int:
        self.checked.append(self.scope or "")
        return 0


@pytest.fixture
def wiring(tmp_path: Path) -> type[Scoped]:
    Scoped.root = str(tmp_path)
    Scoped.checked = []
    return Scoped


def _args(**kw: Any) -> argparse.Namespace:
    return argparse.Namespace(**dict({"scope": "user", "dry_run": False, "link": False, "check": False}, **kw))


def test_a_scope_the_host_does_not_have_is_a_usage_error(wiring: type[Scoped], capsys: pytest.CaptureFixture[str]) -> None:
    assert installer_json.main(wiring, "install", _args(scope="local")) == 64
    err = capsys.readouterr().err
    assert "--scope local is not a Scoped CLI scope; use --scope user (~/.scoped) or --scope project (./.scoped)" in err
    assert installer_json.main(wiring, "uninstall", _args(scope="local")) == 64
    assert capsys.readouterr().err.startswith("engramory uninstall: ")
    assert not os.path.exists(os.path.join(wiring.root, "local"))


def test_check_goes_to_the_hosts_own(wiring: type[Scoped]) -> None:
    assert installer_json.main(wiring, "check", _args(scope="project")) == 0
    assert installer_json.main(wiring, "install", _args(check=True)) == 0
    assert wiring.checked == ["project", "user"]


def test_side_file_is_written_recorded_and_given_back(wiring: type[Scoped], capsys: pytest.CaptureFixture[str]) -> None:
    side = Path(wiring.root) / "side.conf"
    side.write_bytes(b"mine = 1\n")
    assert installer_json.main(wiring, "install", _args(dry_run=True)) == 0
    out = capsys.readouterr().out
    assert out.startswith("engramory install --host scoped (user scope, dry run: nothing is written)\n")
    assert "  side: %s\n" % side in out and "+" + SIDE_LINE in out and "side noted last" not in out
    assert side.read_bytes() == b"mine = 1\n" and not (Path(wiring.root) / "user").exists()

    assert installer_json.main(wiring, "install", _args()) == 0
    out = capsys.readouterr().out
    w = wiring("user")
    assert "  hooks: %s\n" % w.settings in out and out.endswith("  side noted last\n")
    assert "backup of the previous side.conf: " in out
    assert side.read_bytes() == b"mine = 1\n" + SIDE_LINE.encode()
    manifest = json.loads(Path(w.manifest_path()).read_text())
    assert manifest["side"] == {"created": False}
    assert manifest["settings"][w.settings]["side_existed"] is True

    assert installer_json.main(wiring, "install", _args()) == 0  # a second install changes nothing
    assert "already installed: nothing changed." in capsys.readouterr().out

    assert installer_json.main(wiring, "uninstall", _args()) == 0
    out = capsys.readouterr().out
    assert out.startswith("engramory uninstall --host scoped (user scope)\n")
    assert "  hooks: %s: 1 engramory entry removed\n" % w.settings in out and "  side: cleaned\n" in out
    assert "held only engramory's entries and was created by install: removed" in out
    assert side.read_bytes() == b"mine = 1\n"
    assert not Path(w.base).exists()  # the folders install made are pruned


def test_a_side_file_install_created_goes_again(wiring: type[Scoped]) -> None:
    side = Path(wiring.root) / "side.conf"
    assert installer_json.apply_install(wiring("project"), interpreter=sys.executable) == 0
    assert side.read_bytes() == SIDE_LINE.encode()
    assert installer_json.apply_uninstall(wiring("project")) == 0
    assert not side.exists()


def test_apply_install_raises_where_install_reports(wiring: type[Scoped], capsys: pytest.CaptureFixture[str]) -> None:
    w = wiring("user")
    os.makedirs(w.base)
    Path(w.settings).write_text("{not json")
    with pytest.raises(SettingsError):
        installer_json.apply_install(w, interpreter=sys.executable)
    assert installer_json.main(wiring, "install", _args()) == 1
    assert "nothing was changed" in capsys.readouterr().err
    assert not (Path(wiring.root) / "side.conf").exists()


def test_notes_follow_the_report_and_stale_files_are_named_as_they_go(
    wiring: type[Scoped], capsys: pytest.CaptureFixture[str]
) -> None:
    class Noted(wiring):  # type: ignore[valid-type,misc]
        def notes(self) -> list[str]:
            return ["note: the other guard is wired too"]

    assert installer_json.main(Noted, "install", _args()) == 0
    out = capsys.readouterr().out
    assert "    PreToolUse (Write): added\n  note: the other guard is wired too\n  side: " in out
    w = Noted("user")
    manifest = json.loads(Path(w.manifest_path()).read_text())
    manifest["files"].append("tools/engramory_retired.py")  # a file an earlier version copied
    Path(w.manifest_path()).write_text(json.dumps(manifest))
    stale = Path(w.bundle_dir) / "tools" / "engramory_retired.py"
    stale.write_text("old")

    assert installer_json.main(Noted, "install", _args(dry_run=True)) == 0
    assert "    - tools/engramory_retired.py (no longer in the bundle: would remove)\n" in capsys.readouterr().out
    assert stale.exists()
    assert installer_json.main(Noted, "install", _args()) == 0
    assert "    - tools/engramory_retired.py (no longer in the bundle: removed)\n" in capsys.readouterr().out
    assert not stale.exists()
    assert "tools/engramory_retired.py" not in json.loads(Path(w.manifest_path()).read_text())["files"]

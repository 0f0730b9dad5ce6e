"""The OpenClaw session-start notice without the CLI: the plugin's `start` question, and the
config entry the installer writes so OpenClaw calls before_prompt_build at all."""

from __future__ import annotations

import json
from pathlib import Path

from engramory.hosts import openclaw
from engramory.hosts.openclaw import install as install_openclaw


def _home(tmp_path: Path) -> dict[str, str]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / ".openclaw").mkdir()
    (tmp_path / ".openclaw" / "openclaw.json").write_text(json.dumps({"agents": {"defaults": {"workspace": str(ws)}}}))
    return {"HOME": str(tmp_path), "OPENCLAW_HOME": str(tmp_path)}


def test_start_is_silent_on_a_healthy_workspace_and_names_the_window_past_it(tmp_path: Path) -> None:
    env = _home(tmp_path)
    assert openclaw.respond(b'{"event": "start", "sessionId": "s"}', env) == ("{}", "", 0)
    index = tmp_path / "ws" / "MEMORY.md"
    index.write_text("".join("- [n%d](n%d.md) - %s\n" % (i, i, "x" * 140) for i in range(150)))
    out, err, code = openclaw.respond(b'{"event": "start", "sessionId": "s"}', env)
    text = json.loads(out)["context"]
    assert code == 0 and not err
    assert text.startswith("engramory: the memory index %s is over its hard cap" % index)
    assert "20,000 characters" in text and "these entries were not loaded: line" in text


def test_bad_start_questions_are_silent(tmp_path: Path) -> None:
    env = _home(tmp_path)
    for raw in (b'{"event": "start"', b"\xff\xfe", b"[]", b'{"event": "start", "workspace": 5}'):
        assert openclaw.respond(raw, env) == ("{}", "", 0), raw


def test_install_entry_allows_conversation_access_and_uninstall_removes_it() -> None:
    data = {"plugins": {"entries": {"engramory": {"hooks": {"timeoutMs": 20000}}}}}
    merged, created = install_openclaw.merge(data, "/p")
    assert merged["plugins"]["entries"]["engramory"] == {"enabled": True, "hooks": {"timeoutMs": 20000, "allowConversationAccess": True}}
    assert install_openclaw.merge({}, "/p")[0]["plugins"]["entries"]["engramory"]["hooks"] == {"allowConversationAccess": True}
    back, removed = install_openclaw.unmerge(merged, "/p", created)
    assert removed == 2 and "engramory" not in back["plugins"]["entries"]


def test_the_plugin_asks_for_the_start_notice() -> None:
    index = install_openclaw.plugin_files("/usr/bin/python3", "/x/hook.py")["index.mjs"].decode()
    assert 'api.on("before_prompt_build"' in index and 'event: "start"' in index and "prependContext" in index


def test_check_reports_an_entry_without_conversation_access(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = dict(os.environ, **_home(tmp_path))
    env.pop("OPENCLAW_CONFIG_PATH", None)
    root = str(Path(__file__).resolve().parents[3])

    def engramory(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "engramory", *args], cwd=root, env=env, capture_output=True, text=True, timeout=60)

    assert engramory("install", "--host", "openclaw").returncode == 0
    assert engramory("install", "--host", "openclaw", "--check").returncode == 0
    config = tmp_path / ".openclaw" / "openclaw.json"
    data = json.loads(config.read_text())
    del data["plugins"]["entries"]["engramory"]["hooks"]
    config.write_text(json.dumps(data))
    done = engramory("install", "--host", "openclaw", "--check")
    assert done.returncode == 1
    assert "hooks.allowConversationAccess is not true" in done.stdout and "session-start notice is off" in done.stdout

"""Index identity by realpath, not only by name, and `autoMemoryDirectory`: the files the
host loads as an index are guarded whatever they are called."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engramory import automemory, notices
from engramory.hosts import claude
from tests.conftest import index_text


def decide(payload: dict[str, Any], env: dict[str, str]) -> str:
    out = claude.handle(json.dumps(payload).encode(), env)
    if not out:
        return "silent"
    inner = json.loads(out)["hookSpecificOutput"]
    return "deny" if inner.get("permissionDecision") == "deny" else "nudge"


def write(path: Path, content: str, cwd: Path) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": str(cwd),
            "tool_input": {"file_path": str(path), "content": content}}


class User:
    def __init__(self, tmp: Path) -> None:
        self.home = tmp / "home"
        self.home.mkdir()
        (tmp / "proj").mkdir()
        self.project = (tmp / "proj").resolve()
        self.env = {"HOME": str(self.home)}
        self.memory = self.home / ".claude" / "projects" / automemory.sanitize_project_path(str(self.project)) / "memory"
        self.memory.mkdir(parents=True)


def test_target_of_the_index_link_in_its_folder_is_the_index(tmp_path: Path) -> None:
    store = tmp_path / "store"
    store.mkdir()
    (store / "data.md").write_text(index_text(200))
    (store / "MEMORY.md").symlink_to("data.md")  # mv MEMORY.md data.md && ln -s data.md MEMORY.md
    assert decide(write(store / "data.md", index_text(260), tmp_path), {}) == "deny"
    assert decide(write(store / "data.md", index_text(20), tmp_path), {}) == "silent"
    (store / "other.md").write_text("x")
    assert decide(write(store / "other.md", index_text(260), tmp_path), {}) == "silent"


def test_auto_memory_index_linked_into_dotfiles_is_guarded(tmp_path: Path) -> None:
    u = User(tmp_path)
    dot = u.home / "dotfiles" / "agent-memory.md"
    dot.parent.mkdir()
    dot.write_text(index_text(200))
    (u.memory / "MEMORY.md").symlink_to(dot)
    out = claude.handle(json.dumps(write(dot, index_text(260), u.project)).encode(), u.env)
    assert out and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "MEMORY.md" in out and "260" in out
    # A link in the project itself (docs/agent-memory.md) is the same case.
    docs = u.project / "docs" / "agent-memory.md"
    docs.parent.mkdir()
    docs.write_text(index_text(10))
    (u.memory / "MEMORY.md").unlink()
    (u.memory / "MEMORY.md").symlink_to(docs)
    assert decide(write(docs, index_text(201), u.project), u.env) == "deny"
    assert decide(write(u.project / "docs" / "other.md", index_text(201), u.project), u.env) == "silent"


def test_index_path_entries_are_known_by_realpath(tmp_path: Path) -> None:
    real = tmp_path / "real.md"
    real.write_text(index_text(5))
    link = tmp_path / "INDEX.md"
    link.symlink_to(real)
    env = {"ENGRAMORY_INDEX_PATH": str(link)}
    assert decide(write(real, index_text(201), tmp_path), env) == "deny"


def _settings(path: Path, obj: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


def test_auto_memory_directory_from_user_and_local_settings(tmp_path: Path) -> None:
    u = User(tmp_path)
    moved = tmp_path / "moved"
    _settings(u.home / ".claude" / "settings.json", {"autoMemoryDirectory": str(moved)})
    assert automemory.index_for(str(u.project), u.env) == str(moved / "MEMORY.md")
    assert claude.index_paths(str(u.project), u.env)[0] == str(moved / "MEMORY.md")
    # `~/` is HOME; local settings win over user settings; project settings are not read.
    _settings(u.project / ".claude" / "settings.json", {"autoMemoryDirectory": str(tmp_path / "nope")})
    assert automemory.index_for(str(u.project), u.env) == str(moved / "MEMORY.md")
    _settings(u.project / ".claude" / "settings.local.json", {"autoMemoryDirectory": "~/mem/"})
    assert automemory.index_for(str(u.project), u.env) == str(u.home / "mem" / "MEMORY.md")
    # Values the host ignores fall back to the default folder.
    for bad in ("relative/dir", "~/../escape", "/", ""):
        _settings(u.project / ".claude" / "settings.local.json", {"autoMemoryDirectory": bad})
        assert automemory.index_for(str(u.project), u.env) == str(u.memory / "MEMORY.md"), bad


def test_backstop_watches_the_auto_memory_directory(tmp_path: Path) -> None:
    u = User(tmp_path)
    moved = tmp_path / "moved"
    moved.mkdir()
    _settings(u.home / ".claude" / "settings.json", {"autoMemoryDirectory": str(moved)})
    env = dict(u.env, TMPDIR=str(tmp_path))
    payload = {"session_id": "s1", "cwd": str(u.project), "hook_event_name": "PostToolUse", "tool_name": "Bash"}
    assert str(moved / "MEMORY.md") in notices.known_indexes(payload, env)
    notices.session_start(payload, env)
    (moved / "MEMORY.md").write_text(index_text(230))
    out = notices.post_tool(payload, env)
    assert "230 lines" in out and str(moved / "MEMORY.md") in out
    start = notices.session_start(dict(payload, hook_event_name="SessionStart"), env)
    assert "over its hard cap: 230 lines" in start


def test_write_to_the_moved_index_is_guarded(tmp_path: Path) -> None:
    u = User(tmp_path)
    moved = tmp_path / "moved"
    moved.mkdir()
    _settings(u.home / ".claude" / "settings.json", {"autoMemoryDirectory": str(moved)})
    real = tmp_path / "elsewhere.md"
    real.write_text("- a\n")
    (moved / "MEMORY.md").symlink_to(real)
    assert decide(write(real, index_text(201), u.project), u.env) == "deny"


def test_doctor_default_root_is_the_auto_memory_directory(tmp_path: Path) -> None:
    from engramory.doctor import run as doctor

    u = User(tmp_path)
    moved = tmp_path / "moved"
    _settings(u.home / ".claude" / "settings.json", {"autoMemoryDirectory": str(moved)})
    assert doctor.claude_memory_dir(str(u.project), u.env) == str(moved)

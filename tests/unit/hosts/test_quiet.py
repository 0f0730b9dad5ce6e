"""The quiet check (engramory.hosts.quiet, plugin_quiet): the Claude-schema hosts
(claude_entries) and the JS-plugin hosts answer a call that names no guarded file before their
dialect is imported. The check may only ever save work: for every payload, a host answers
exactly what its dialect answers with the check turned off. Held here over generated payloads
(every tool name those hosts know, paths that are an index, a note of a store, a store's config,
another file, relative or absolute, with and without a base folder), on a real store on disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engramory import hosts
from engramory.hosts import claudelike

CLAUDE_SHAPED = ("qwen", "droid", "crush", "windsurf", "kiro", "auggie")
PLUGINS = ("opencode", "kilo", "cline", "openclaw")
FAMILY = CLAUDE_SHAPED + PLUGINS

# every file tool of those hosts and a few they do not judge
TOOL_NAMES = sorted({"write_file", "edit", "Create", "Edit", "ApplyPatch", "write", "multiedit", "pre_write_code",
                     "fs_write", "str_replace", "save-file", "str-replace-editor", "editor", "apply_patch", "read",
                     "Read", "bash", "run_shell_command", "Write", ""})
BIG = "".join("- [n%d](n%d.md)\n" % (i, i) for i in range(260))  # past 200 lines, under Cline's 6,000 units


def _store(tmp: Path) -> Path:
    project = tmp / "project"
    (project / "memory").mkdir(parents=True, exist_ok=True)
    (project / "memory" / "MEMORY.md").write_text("- [a](a.md) - one\n", encoding="utf-8")
    (project / "memory" / "a.md").write_text("---\nname: a\ndescription: one\ntype: user\n---\nbody\n", encoding="utf-8")
    (project / "memory" / ".engramory.json").write_text(json.dumps({"readOnly": ["a.md"]}), encoding="utf-8")
    (project / "src.py").write_text("x = 1\n", encoding="utf-8")
    return project


def _paths(project: Path) -> list[Any]:
    memory = project / "memory"
    return [str(memory / "MEMORY.md"), "memory/MEMORY.md", "MEMORY.md", str(memory / "a.md"), "memory/a.md",
            str(memory / ".engramory.json"), str(project / "src.py"), "src.py", "~/MEMORY.md", "", 7, None,
            str(project / "memory" / "new.md")]


def _payload(tool: str, path: Any, base: Any, content: str, event: str) -> dict[str, Any]:
    """One payload in every spelling these hosts use at once: each host reads its own keys."""
    patch = "*** Begin Patch\n*** Add File: %s\n%s*** End Patch" % (
        path if isinstance(path, str) and path else "x.md", "".join("+" + line + "\n" for line in content.splitlines()))
    args = {"file_path": path, "path": path, "filePath": path, "content": content, "file_content": content,
            "text": content, "old_string": "", "new_string": content, "old_str": "- [a](a.md) - one", "new_str": content,
            "old_text": "- [a](a.md) - one", "new_text": content, "command": "create", "input": patch, "patchText": patch,
            "edits": [{"old_string": "- [a](a.md) - one", "new_string": content}]}
    return {"hook_event_name": "PreToolUse", "event": event, "session_id": "s", "sessionID": "s", "sessionId": "s",
            "tool_name": tool, "toolName": tool, "agent_action_name": tool, "tool": tool,
            "tool_input": args, "toolArgs": args, "tool_info": args, "args": args, "input": args, "params": args,
            "cwd": base, "directory": base, "workspace": base}


def _full(monkeypatch: pytest.MonkeyPatch, module: Any) -> None:
    """Turn the quiet check off: every call goes to the dialect."""
    monkeypatch.setattr(hosts, "quiet", lambda *a, **k: False)
    if hasattr(module, "plugin_quiet"):
        monkeypatch.setattr(module, "plugin_quiet", lambda *a, **k: False)
    if module.NAME == "kilo":
        from engramory.hosts import opencode

        monkeypatch.setattr(opencode, "plugin_quiet", lambda *a, **k: False)


def _own_tools(module: Any) -> list[str]:
    return sorted(set(module.TOOLS) | set(getattr(module, "PATCH_TOOLS", ())) | {getattr(module, "PATCH_TOOL", "")})


@pytest.mark.parametrize("name", FAMILY)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), which=st.integers(0, 12), base=st.integers(0, 4), big=st.booleans(),
       event=st.sampled_from(["before", "before", "read", "after"]))
def test_a_quiet_answer_is_the_dialects_answer(name: str, data: st.DataObject, which: int, base: int, big: bool,
                                               event: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    tmp = tmp_path_factory.getbasetemp() / ("quiet-" + name)
    project = _store(tmp)
    module = hosts.load(name)
    tool = data.draw(st.one_of(st.sampled_from(_own_tools(module)), st.sampled_from(TOOL_NAMES)), label="tool")
    cwd = [str(project), str(project / "memory"), None, "", "sub"][base]
    raw = json.dumps(_payload(tool, _paths(project)[which], cwd, BIG if big else "- [b](b.md) - two\n", event)).encode()
    env = {"HOME": str(tmp), "TMPDIR": str(tmp)}
    fast = module.respond(raw, env)
    with pytest.MonkeyPatch.context() as mp:
        _full(mp, module)
        full = module.respond(raw, env)
    assert fast == full


@pytest.mark.parametrize("name", FAMILY)
def test_the_generated_calls_reach_both_answers(name: str, tmp_path: Path) -> None:
    """The property above is not vacuous: the same payload shape gets a deny for a growing
    write of the index and silence for a write of another file, on every host of the family."""
    project = _store(tmp_path)
    module = hosts.load(name)
    tool = {"qwen": "write_file", "droid": "Create", "crush": "write", "windsurf": "pre_write_code", "kiro": "fs_write",
            "auggie": "save-file", "opencode": "write", "kilo": "write", "cline": "editor", "openclaw": "write"}[name]
    env = {"HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    deny = module.respond(json.dumps(_payload(tool, str(project / "memory" / "MEMORY.md"), str(project), BIG,
                                              "before")).encode(), env)
    other = module.respond(json.dumps(_payload(tool, str(project / "src.py"), str(project), BIG, "before")).encode(), env)
    assert "engramory blocked" in deny[0] + deny[1], deny
    assert other in (("", "", 0), ("{}", "", 0))


def test_quiet_leaves_a_relative_path_without_a_base_to_the_dialect() -> None:
    """A host may join a relative path to a base of its own (OpenClaw's workspace): with no
    absolute base in the payload the check does not guess."""
    assert hosts.quiet("write", {"path": "notes/x.md"}, None, {"write": hosts.WRITE}, ("path",), {}) is False
    assert hosts.quiet("write", {"path": "notes/x.md"}, "rel", {"write": hosts.WRITE}, ("path",), {}) is False
    assert hosts.quiet("write", {"path": "/nowhere/x.py"}, None, {"write": hosts.WRITE}, ("path",), {}) is True
    assert hosts.quiet("apply_patch", {}, None, {"write": hosts.WRITE}, ("path",), {}, ("apply_patch",)) is False
    assert hosts.quiet("bash", {"path": "/a/MEMORY.md"}, None, {"write": hosts.WRITE}, ("path",), {}) is True
    assert hosts.quiet("write", {"path": "/a/MEMORY.md"}, None, {"write": hosts.WRITE}, ("path",), {}) is False
    assert claudelike.WRITE == hosts.WRITE and claudelike.EDIT == hosts.EDIT

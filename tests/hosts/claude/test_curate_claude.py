"""The curation commands inside the real Claude Code CLI: a scripted session saves a note with
`engramory new` through its Bash tool (from the installed skill folder, default ROOT = the
project's auto memory), the next session starts with that note's pointer loaded, and a
session runs `engramory search` and reads the hit it names."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from harness import RunClaude, Text, ToolUse
from test_installed_claude import auto_memory_index, install, request_text

pytestmark = pytest.mark.e2e


def tool(home: Path) -> str:
    """The command line the skill's docs give: python3 and the installed skill's tools/engramory.py."""
    return "%s %s" % (shlex.quote(sys.executable), shlex.quote(str(home / ".claude" / "skills" / "engramory" / "tools"
                                                                   / "engramory.py")))


def last_tool_result(body: Dict[str, Any]) -> str:
    """The text of the newest tool_result in a request."""
    for message in reversed(body.get("messages") or []):
        content = message.get("content")
        if isinstance(content, list):
            for block in reversed(content):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    inner = block.get("content")
                    if isinstance(inner, str):
                        return inner
                    return "".join(b.get("text", "") for b in inner or [] if isinstance(b, dict))
    return ""


def test_new_via_bash_then_next_session_loads_the_pointer(
    claude: RunClaude, e2e_home: Path, e2e_project: Path
) -> None:
    install(e2e_home)
    index = auto_memory_index(e2e_home, e2e_project)
    command = (
        tool(e2e_home) + " new --type feedback --name rerun-flaky-checkout"
        " --description 'Rerun the flaky checkout e2e test once before debugging it'"
        " --body 'It races the payment mock under load.'"
        " --why 'three false alarms in November 2026' --how 'rerun once; debug only a second failure' --json"
    )
    first = claude([ToolUse("Bash", {"command": command, "description": "save a memory"}), Text("saved")],
                   allowed_tools=["Bash"])
    (ran,) = first.tool_results()
    assert not ran.is_error, ran.text
    receipt = json.loads(ran.text)
    note = index.parent / "rerun-flaky-checkout.md"
    assert receipt["file"] == str(note) and receipt["default_root"] is True
    assert receipt["sha256"] == hashlib.sha256(note.read_bytes()).hexdigest()
    pointer = "- [Rerun the flaky checkout e2e test once before debugging it](rerun-flaky-checkout.md)"
    assert index.read_text(encoding="utf-8").split("\n")[receipt["index"]["line"] - 1] == pointer

    second = claude([Text("ok")])
    # 2.1.332 loads the index into the next session as a <system-reminder> in the first user
    # message ("Contents of <index> (user's auto-memory, ...)"), not into the system prompt.
    first_request = json.loads(request_text(second, 0))
    loaded = [r for r in second.system_reminders() if "Contents of %s" % index in r]
    assert loaded, second.describe()
    assert pointer in loaded[0]
    assert pointer not in second.system_prompt()
    assert first_request["messages"][0]["role"] == "user"


def test_search_via_bash_and_read_the_hit(claude: RunClaude, e2e_home: Path, e2e_project: Path) -> None:
    install(e2e_home)
    index = auto_memory_index(e2e_home, e2e_project)
    index.parent.mkdir(parents=True)
    index.write_text("# Memory Index\n", encoding="utf-8")
    (index.parent / "archive").mkdir()
    (index.parent / "archive" / "pg-port.md").write_text(
        "---\nname: pg-port\ndescription: Local Postgres listens on 5433, not 5432\ntype: reference\n"
        "created: 2026-11-01\nupdated: 2026-11-01\n---\nThe compose file maps 5433:5432 so it does not clash.\n",
        encoding="utf-8")
    for i in range(30):
        (index.parent / ("other-%d.md" % i)).write_text(
            "---\nname: other-%d\ndescription: Unrelated fact %d about the billing queue\ntype: reference\n"
            "created: 2026-11-01\nupdated: 2026-11-01\n---\nQueue %d drains nightly.\n" % (i, i, i), encoding="utf-8")
    hits: List[str] = []

    def read_hit(body: Dict[str, Any]) -> ToolUse:
        out = last_tool_result(body)
        m = re.search(r"^   (\S+):(\d+): ", out, re.M)
        assert m, out
        hits.append(out)
        return ToolUse("Read", {"file_path": str(index.parent / m.group(1))})

    result = claude(
        [ToolUse("Bash", {"command": tool(e2e_home) + " search 'connection refused postgres 5432'",
                          "description": "search memory"}),
         read_hit,
         Text("the port is 5433")],
        allowed_tools=["Bash", "Read"],
    )
    searched, read = result.tool_results()
    assert not searched.is_error, searched.text
    assert "1. archive/pg-port.md (reference) [archived]" in searched.text
    assert "archive/pg-port.md:8: The compose file maps 5433:5432" in searched.text
    assert not read.is_error, read.text
    assert "maps 5433:5432" in read.text
    assert hits and "searching %s" % index.parent in hits[0]

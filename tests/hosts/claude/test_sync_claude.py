"""Memory that follows the user, on the real Claude Code: two machines (two homes, each with
engramory installed and `autoMemoryDirectory` pointing into its own clone of one bare
repository). A session on the first saves a memory with `engramory new` through its Bash tool,
`engramory sync` runs there and on the second, and the next session on the second loads the
new pointer from its own clone."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from harness import Text, ToolUse, run_claude
from test_installed_claude import install

from tests.unit.sync.gitkit import Kit

pytestmark = pytest.mark.e2e


def point_at(home: Path, store: Path) -> None:
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text(encoding="utf-8"))
    data["autoMemoryDirectory"] = str(store)
    settings.write_text(json.dumps(data, indent=2), encoding="utf-8")


def tool(home: Path) -> str:
    return "%s %s" % (shlex.quote(sys.executable),
                      shlex.quote(str(home / ".claude" / "skills" / "engramory" / "tools" / "engramory.py")))


def test_a_memory_saved_on_one_machine_loads_on_the_other(claude_cli: Path, tmp_path: Path) -> None:
    kit = Kit(tmp_path)
    bare = kit.remote_with_store()
    laptop, desktop = kit.clone(bare, "laptop-memory"), kit.clone(bare, "desktop-memory")
    homes = {}
    for name, clone in (("laptop", laptop), ("desktop", desktop)):
        home = tmp_path / ("home-" + name)
        home.mkdir()
        install(home)
        point_at(home, clone)
        homes[name] = home
    project = tmp_path / "project"
    project.mkdir()
    command = (tool(homes["laptop"]) + " new --type feedback --name squash-before-merge"
               " --description 'Squash feature branches before merging them to main'"
               " --body 'The history on main stays one commit per feature.'"
               " --why 'the user asked for it in review, November 2026' --how 'git merge --squash' --json")
    first = run_claude([ToolUse("Bash", {"command": command, "description": "save a memory"}), Text("saved")],
                       home=homes["laptop"], cwd=project, cli=claude_cli, allowed_tools=["Bash"])
    (saved,) = first.tool_results()
    assert not saved.is_error, saved.text
    receipt = json.loads(saved.text)
    assert receipt["file"] == str(laptop / "squash-before-merge.md")  # the store autoMemoryDirectory names
    kit.ok("sync", str(laptop))
    kit.ok("sync", str(desktop))
    pointer = "- [Squash feature branches before merging them to main](squash-before-merge.md)"
    assert pointer in (desktop / "MEMORY.md").read_text(encoding="utf-8")
    second = run_claude([Text("ok")], home=homes["desktop"], cwd=project, cli=claude_cli)
    loaded = [r for r in second.system_reminders() if "Contents of %s" % (desktop / "MEMORY.md") in r]
    assert loaded, second.describe()
    assert pointer in loaded[0]
    assert (desktop / "squash-before-merge.md").is_file()

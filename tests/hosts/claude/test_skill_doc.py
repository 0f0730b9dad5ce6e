"""SKILL.md as the real Claude Code CLI shows it to the model: listed with its description,
loaded whole by the Skill tool with ${CLAUDE_SKILL_DIR} filled in, and the commands in it
run exactly as rendered, from a copied skill folder."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any, Dict, List

import pytest
import yaml
from harness import RunClaude, Text, ToolUse

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[3]
# What a user drops into ~/.claude/skills/engramory: the skill and what its commands need.
SKILL_FILES = ("SKILL.md", "tools", "engramory", "templates")
COMMANDS_RE = re.compile(r"```sh\n(python3 [^`]*?)```")


def drop_in_skill(home: Path) -> Path:
    folder = home / ".claude" / "skills" / "engramory"
    folder.mkdir(parents=True)
    for name in SKILL_FILES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.exists():
            shutil.copy2(src, folder / name)
    return folder


def rendered_commands(body: Dict[str, Any]) -> List[str]:
    """The command lines of SKILL.md's command block, as the CLI rendered them for the model."""
    for msg in body["messages"]:
        content = msg.get("content")
        for block in content if isinstance(content, list) else [content]:
            text = block.get("text", "") if isinstance(block, dict) else str(block or "")
            # the block of section 8 (check, doctor); section 7 shows compact's block first
            for m in COMMANDS_RE.finditer(text):
                if "tools/engramory_check.py" in m.group(1):
                    return m.group(1).strip().splitlines()
    raise AssertionError("the skill's command block never reached the model")


def bash_from_skill(which: int, root: Path) -> Any:
    """A scripted turn that runs the skill's `which`-th command on `root`, as shown."""

    def turn(body: Dict[str, Any]) -> ToolUse:
        line = rendered_commands(body)[which]
        command = line.replace("<root>", shlex.quote(str(root)))
        return ToolUse("Bash", {"command": command + '; echo "exit=$?"'})

    return turn


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    template = REPO / "templates"
    if (template / "MEMORY.md").is_file():
        shutil.copytree(template, root)
    else:  # templates/ is written in another issue; a minimal index still exercises check
        root.mkdir()
        (root / "MEMORY.md").write_text("# Memory Index\n", encoding="utf-8")
    return root


def test_skill_is_listed_with_its_description(claude: RunClaude, e2e_home: Path) -> None:
    drop_in_skill(e2e_home)
    result = claude([Text("ok")])
    head = (REPO / "SKILL.md").read_text(encoding="utf-8").split("---\n")[1]
    description = yaml.safe_load(head)["description"]
    assert "- engramory: " + description in result.system_prompt(0)


def test_check_command_runs_as_the_skill_renders_it(claude: RunClaude, e2e_home: Path, store: Path) -> None:
    folder = drop_in_skill(e2e_home)
    result = claude(
        [ToolUse("Skill", {"skill": "engramory"}), bash_from_skill(0, store), Text("done")],
        allowed_tools=["Bash"],
    )
    body = result.turn_requests()[1].body
    assert body is not None
    lines = rendered_commands(body)
    # The host filled in the skill folder: the model sees runnable absolute paths.
    assert lines[0].startswith('python3 "%s/tools/engramory_check.py"' % folder)
    assert "${CLAUDE_SKILL_DIR}" not in json.dumps(body["messages"])
    skill, check = result.tool_results()
    assert not skill.is_error, skill.text
    assert check.text.startswith("OK: "), check.text
    assert check.text.rstrip().endswith("exit=0"), check.text


def test_doctor_command_runs_as_the_skill_renders_it(claude: RunClaude, e2e_home: Path, store: Path) -> None:
    drop_in_skill(e2e_home)
    result = claude(
        [ToolUse("Skill", {"skill": "engramory"}), bash_from_skill(1, store), Text("done")],
        allowed_tools=["Bash"],
    )
    _, doctor = result.tool_results()
    assert doctor.text.rstrip().endswith("exit=0"), doctor.text

"""Where Claude Code 2.1.332 keeps subagent memory (`agent-memory`), measured on the real CLI,
held against `engramory doctor --all` (engramory/store/discovery.py).

Three subagents are defined, one per `memory:` scope, and the scripted model launches each
through the Agent tool. The CLI then creates each agent's folder and shows the `MEMORY.md`
in it to that agent (a marker in the index reaches the subagent's request): user scope under
`<config>/agent-memory/<agent>/`, project and local scope under the folder the session
started in (`.claude/agent-memory/<agent>/`, `.claude/agent-memory-local/<agent>/`), which
for a session started in a subfolder of a git repository is that subfolder, not the root.
`doctor --all` must list exactly the folders the CLI used, and no other agent-memory folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness import RunClaude, Text, ToolUse

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "tools" / "engramory_doctor.py"
NOTE = "---\nname: {slug}\ndescription: how the {slug} agent reviews a change\nmetadata:\n  type: feedback\n---\n\n" \
    "Review the tests first.\n\n**Why:** they say what changed.\n\n**How to apply:** open the test diff first.\n"
AGENTS = {"rev-user": "user", "rev-project": "project", "rev-local": "local"}


def _agent(folder: Path, name: str, scope: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / (name + ".md")).write_text(
        "---\nname: %s\ndescription: %s reviewer for the tests\nmemory: %s\n---\nYou are %s, a reviewer.\n"
        % (name, scope, scope, name), encoding="utf-8")


def _memory(folder: Path, marker: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "review-order.md").write_text(NOTE.format(slug="review-order"), encoding="utf-8")
    (folder / "MEMORY.md").write_text("- [Review order](review-order.md) - %s\n" % marker, encoding="utf-8")


def _script() -> list[Any]:
    def first(body: dict[str, Any]) -> Any:
        system = json.dumps(body.get("system"))
        if "a reviewer." in system:  # a subagent's own first turn
            return Text("reviewed")
        return [ToolUse("Agent", {"description": "review " + name, "prompt": "review the change",
                                  "subagent_type": name}) for name in AGENTS]
    return [first] + [Text("done")] * 6  # the agents run in the background: a turn after each notice


def _listed(home: Path, cwd: Path) -> dict[str, str]:
    """folder -> kind for every agent-memory line `doctor --all` prints from `cwd`."""
    res = subprocess.run([sys.executable, "-I", "-S", str(SCRIPT), "--all"], capture_output=True, text=True,
                         timeout=120, cwd=str(cwd), env={"HOME": str(home), "PATH": os.environ.get("PATH", "")})
    assert res.returncode in (0, 1), res.stderr
    out = {}
    for line in res.stdout.splitlines():
        if ": agent-memory (" in line:
            folder, kind = line.split(": ")[:2]
            out[folder] = kind
    return out


def _subagent_bodies(result: Any) -> str:
    return "\n".join(json.dumps(r.body) for r in result.requests
                     if r.kind == "turn" and "a reviewer." in json.dumps((r.body or {}).get("system")))


def _run(claude: RunClaude, home: Path, project: Path, start: Path) -> Any:
    _agent(project / ".claude" / "agents", "rev-project", "project")
    _agent(project / ".claude" / "agents", "rev-local", "local")
    _agent(home / ".claude" / "agents", "rev-user", "user")
    return claude(_script(), cwd=start)


def test_subagent_memory_folders_are_the_ones_doctor_all_finds(
        claude: RunClaude, e2e_home: Path, e2e_project: Path, tmp_path: Path) -> None:
    user_dir = e2e_home / ".claude" / "agent-memory" / "rev-user"
    project_dir = e2e_project / ".claude" / "agent-memory" / "rev-project"
    local_dir = e2e_project / ".claude" / "agent-memory-local" / "rev-local"
    _memory(user_dir, "USER-MARK-4411")
    _memory(project_dir, "PROJECT-MARK-4412")
    # decoys where the host does not look: the doctor must not list them either
    _memory(e2e_home / ".claude" / "projects" / "agent-memory" / "rev-user", "DECOY-1")
    _memory(e2e_project / "agent-memory" / "rev-project", "DECOY-2")
    result = _run(claude, e2e_home, e2e_project, e2e_project)
    shown = _subagent_bodies(result)
    assert "USER-MARK-4411" in shown and "PROJECT-MARK-4412" in shown, result.describe()
    assert "DECOY" not in shown
    assert local_dir.is_dir() and not any(local_dir.iterdir())  # created by the CLI, empty
    expected = {str(user_dir): "agent-memory (user)", str(project_dir): "agent-memory (project)",
                str(local_dir): "agent-memory (local)"}
    assert _listed(e2e_home, e2e_project) == expected
    # from any other folder: the project's start folder is read off the session transcript
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert _listed(e2e_home, elsewhere) == expected


def test_project_scope_is_the_start_folder_not_the_git_root(
        claude: RunClaude, e2e_home: Path, e2e_project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(e2e_project)], check=True)
    start = e2e_project / "sub"
    start.mkdir()
    root_dir = e2e_project / ".claude" / "agent-memory" / "rev-project"
    _memory(root_dir, "ROOT-MARK-4413")
    result = _run(claude, e2e_home, e2e_project, start)
    assert "ROOT-MARK-4413" not in _subagent_bodies(result)  # the git root's folder is not read
    used = start / ".claude" / "agent-memory" / "rev-project"
    assert used.is_dir()
    listed = _listed(e2e_home, start)
    assert listed.get(str(used)) == "agent-memory (project)"
    assert str(root_dir) not in listed

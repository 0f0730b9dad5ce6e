"""Shell writes to an index on the real Claude Code CLI 2.1.332, offline (issue 22): an install
since issue 22 selects Bash in the PreToolUse matcher, and the guard judges the writes whose
bytes the command fixes (engramory.shellwrite: heredoc, printf, echo) as a Write of those bytes
would be judged. Claude Code's own stale-read check covers its Write tool, not the shell, and
before this a printf append past the cap was only reported after it ran.

Each case asserts the bytes on disk, the tool result the model was sent, and, for the bare
run, that the host itself runs the very same command (so the refusal is the guard's).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import RunClaude, Text, ToolUse
from test_installed_claude import engramory, index_lines, install, request_text

pytestmark = pytest.mark.e2e

POINTER = "- [late](late.md) \u2014 one more"


def calls(project: Path) -> list[ToolUse]:
    return [
        ToolUse("Bash", {"command": "printf '%%s\\n' '%s' >> full/MEMORY.md" % POINTER, "description": "append"}),
        ToolUse("Bash", {"command": "echo '%s' >> small/MEMORY.md" % POINTER, "description": "append"}),
        ToolUse("Bash", {"command": "cat > over/MEMORY.md <<'EOF'\n%sEOF" % index_lines(120), "description": "rewrite"}),
        ToolUse("Bash", {"command": "ls full small over > listing.txt", "description": "list"}),
    ]


def stores(project: Path) -> dict[str, Path]:
    out = {}
    for name, lines in (("full", 200), ("small", 10), ("over", 210)):
        index = project / name / "MEMORY.md"
        index.parent.mkdir()
        index.write_text(index_lines(lines), encoding="utf-8")
        out[name] = index
    return out


@pytest.mark.parametrize("guard", [False, True], ids=["bare", "guarded"])
def test_a_shell_append_past_the_cap_is_refused_before_it_runs(claude: RunClaude, e2e_home: Path, e2e_project: Path,
                                                               guard: bool) -> None:
    if guard:
        install(e2e_home)
    index = stores(e2e_project)
    full_before = index["full"].read_bytes()
    result = claude(calls(e2e_project) + [Text("done")], allowed_tools=["Bash"])
    append, small, rewrite, listing = result.tool_results()

    # the small append and the shrinking rewrite run either way, the unrelated command too
    assert not small.is_error, small.text
    assert index["small"].read_text(encoding="utf-8") == index_lines(10) + POINTER + "\n"
    assert not rewrite.is_error, rewrite.text
    assert index["over"].read_text(encoding="utf-8") == index_lines(120)
    assert not listing.is_error, listing.text
    assert (e2e_project / "listing.txt").read_text(encoding="utf-8").count("MEMORY.md") == 3
    if not guard:
        # the host runs it: line 201, outside the window Claude Code loads
        assert not append.is_error, append.text
        assert index["full"].read_bytes() == full_before + (POINTER + "\n").encode("utf-8")
        return
    assert append.is_error, append.text
    assert "engramory blocked this Bash write (heredoc, printf or echo)" in append.text, append.text
    assert "would grow from 200 to 201 lines (hard cap 200: 1 over)" in append.text
    assert "engramory blocked this Bash write" in request_text(result, 1)  # the reason reached the model
    assert index["full"].read_bytes() == full_before


def test_check_passes_an_install_whose_matcher_has_no_bash_and_a_reinstall_adds_it(e2e_home: Path,
                                                                                  e2e_project: Path) -> None:
    install(e2e_home)
    settings = e2e_home / ".claude" / "settings.json"
    data = json.loads(settings.read_text(encoding="utf-8"))
    group = data["hooks"]["PreToolUse"][0]
    assert group["matcher"] == "Edit|Write|MultiEdit|Bash"
    group["matcher"] = "Edit|Write|MultiEdit"  # what installs before issue 22 wrote
    settings.write_text(json.dumps(data, indent=2), encoding="utf-8")
    done = engramory(e2e_home, "install", "--check", cwd=e2e_project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "leaves out Bash" in done.stdout + done.stderr
    install(e2e_home)
    data = json.loads(settings.read_text(encoding="utf-8"))
    assert [g["matcher"] for g in data["hooks"]["PreToolUse"]] == ["Edit|Write|MultiEdit|Bash"]
    done = engramory(e2e_home, "install", "--check", cwd=e2e_project)
    assert done.returncode == 0 and "leaves out Bash" not in done.stdout + done.stderr, done.stdout

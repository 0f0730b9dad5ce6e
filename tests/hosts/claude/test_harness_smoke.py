"""The harness drives the real Claude Code CLI: files change, hooks fire, and the
model's requests show what the CLI told it."""

from __future__ import annotations

import json
import re
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Dict

import pytest
from harness import ClaudeRunError, RunClaude, Text, ToolUse, pretooluse_hook_settings, write_json

pytestmark = pytest.mark.e2e

# A PreToolUse hook that refuses writes to any file named BLOCKED.md with the
# JSON deny contract (exit 0, one object on stdout) and logs what it received.
DENY_HOOK = textwrap.dedent(
    """\
    import json, os, sys
    payload = json.load(sys.stdin)
    with open(os.environ["E2E_HOOK_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(payload) + "\\n")
    path = payload.get("tool_input", {}).get("file_path", "")
    if os.path.basename(path) == "BLOCKED.md":
        print(json.dumps({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "BLOCKED.md is frozen in this test",
        }}))
    """
)


def test_write_creates_file_with_exact_bytes(claude: RunClaude, e2e_project: Path) -> None:
    target = e2e_project / "docs" / "out.md"
    content = "line one\r\nzwei \u2014 drei\tvier\n\n  trailing spaces  \nno newline at end"
    result = claude([ToolUse("Write", {"file_path": str(target), "content": content}), Text("done")])

    assert target.read_bytes() == content.encode("utf-8")
    (written,) = result.tool_results()
    assert written.tool_name == "Write"
    assert not written.is_error, written.text
    assert result.output is not None and result.output["result"] == "done"
    # Two scripted turns, each answered from one request that offered tools.
    assert [r.turn_index for r in result.turn_requests()] == [0, 1]
    assert "Write" in result.turn_requests()[0].tool_names


def test_pretooluse_deny_stops_write_and_reaches_model(
    claude: RunClaude, e2e_project: Path, tmp_path: Path
) -> None:
    hook = e2e_project / ".claude" / "hooks" / "deny_blocked.py"
    hook.parent.mkdir(parents=True)
    hook.write_text(DENY_HOOK, encoding="utf-8")
    command = f'"{sys.executable}" "$CLAUDE_PROJECT_DIR/.claude/hooks/deny_blocked.py"'
    write_json(e2e_project / ".claude" / "settings.json", pretooluse_hook_settings(command))
    log = tmp_path / "hook-log.jsonl"

    blocked, allowed = e2e_project / "BLOCKED.md", e2e_project / "allowed.md"
    result = claude(
        [
            ToolUse("Write", {"file_path": str(blocked), "content": "nope\n"}),
            ToolUse("Write", {"file_path": str(allowed), "content": "yes\n"}),
            Text("done"),
        ],
        env={"E2E_HOOK_LOG": str(log)},
    )

    assert not blocked.exists()
    assert allowed.read_bytes() == b"yes\n"  # the hook is selective, not broken
    denied, passed = result.tool_results()
    assert denied.is_error is True
    assert denied.text == "PreToolUse:Write hook error: BLOCKED.md is frozen in this test"
    assert not passed.is_error, passed.text
    # The refusal is in the very next request the model received.
    next_request = json.dumps(result.turn_requests()[1].body)
    assert "PreToolUse:Write hook error: BLOCKED.md is frozen in this test" in next_request

    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [c["hook_event_name"] for c in calls] == ["PreToolUse", "PreToolUse"]
    assert [c["tool_input"]["file_path"] for c in calls] == [str(blocked), str(allowed)]
    assert calls[0]["tool_name"] == "Write" and calls[0]["tool_input"]["content"] == "nope\n"


def test_edit_replaces_text(claude: RunClaude, e2e_project: Path) -> None:
    notes = e2e_project / "notes.md"
    notes.write_bytes(b"alpha\nbeta\ngamma\n")
    result = claude(
        [
            ToolUse("Edit", {"file_path": str(notes), "old_string": "beta", "new_string": "BETA\nbeta2"}),
            Text("done"),
        ]
    )

    assert notes.read_bytes() == b"alpha\nBETA\nbeta2\ngamma\n"
    (edit,) = result.tool_results()
    assert edit.tool_name == "Edit" and not edit.is_error, edit.text


def test_bash_runs_only_when_allowed(claude: RunClaude, e2e_project: Path) -> None:
    # python3 is not auto-approved (unlike echo or a redirect inside the
    # project), so this also shows that --allowedTools is what lets it through.
    command = "python3 -c \"open('ran.txt', 'w').write('bash ran')\" && echo wrote"
    script = [ToolUse("Bash", {"command": command, "description": "write ran.txt"}), Text("done")]

    refused = claude(script)
    (denied,) = refused.tool_results()
    assert denied.is_error and "requires approval" in denied.text, denied.text
    assert not (e2e_project / "ran.txt").exists()

    result = claude(script, allowed_tools=["Bash"])
    (ran,) = result.tool_results()
    assert not ran.is_error, ran.text
    assert ran.text.strip() == "wrote"
    assert (e2e_project / "ran.txt").read_text(encoding="utf-8") == "bash ran"


def test_system_prompt_names_memory_dir_and_skills(
    claude: RunClaude, e2e_home: Path, e2e_project: Path
) -> None:
    skill = e2e_home / ".claude" / "skills" / "e2e-probe" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: e2e-probe\ndescription: Probe skill for the e2e harness.\n---\nBody.\n",
        encoding="utf-8",
    )
    result = claude([Text("done")])

    # Measured rule: every character of the real path that is not an ASCII
    # letter or digit becomes "-" (paths over 200 characters also get a hash).
    sanitized = re.sub(r"[^A-Za-z0-9]", "-", str(e2e_project.resolve()))
    memory_dir = e2e_home / ".claude" / "projects" / sanitized / "memory"
    assert f"persistent file-based memory at `{memory_dir}/`" in result.all_text_shown()
    assert memory_dir.is_dir()
    assert "- e2e-probe: Probe skill for the e2e harness." in result.system_prompt()


def test_timeout_kills_the_run_and_reports_it(claude: RunClaude, e2e_project: Path) -> None:
    # The Bash tool puts its command in a process group of its own; the harness
    # must still end it, or a hung test would leave it running.
    marker = e2e_project / "still-running"
    command = f'python3 -c \'import time; time.sleep(3); open("{marker.name}", "w")\''
    script = [ToolUse("Bash", {"command": command, "description": "hang"}), Text("done")]
    result = claude(script, allowed_tools=["Bash"], timeout=1.5, check=False)

    assert result.timed_out and result.returncode is None
    with pytest.raises(ClaudeRunError, match="the CLI timed out"):
        result.check()
    time.sleep(2.5)  # long enough for an orphaned command to have finished
    assert not marker.exists()


def test_failure_report_names_the_cause(claude: RunClaude) -> None:
    def broken(body: Dict[str, Any]) -> Text:
        raise RuntimeError("script bug")

    with pytest.raises(ClaudeRunError) as info:
        claude([broken])
    report = str(info.value)
    assert "the fake model raised" in report
    assert "RuntimeError: script bug" in report
    assert "POST /v1/messages [turn turn=0]" in report


def test_additional_context_reaches_the_model(claude: RunClaude, e2e_project: Path) -> None:
    # 2.1.332 delivers it as a `role: system` message after the tool result,
    # not inside a <system-reminder>; all_text_shown() covers both.
    hook = e2e_project / ".claude" / "hooks" / "nudge.py"
    hook.parent.mkdir(parents=True)
    hook.write_text(
        "import json, sys\njson.load(sys.stdin)\n"
        'print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse",'
        ' "additionalContext": "index at 190 of 200 lines"}}))\n',
        encoding="utf-8",
    )
    command = f'"{sys.executable}" "$CLAUDE_PROJECT_DIR/.claude/hooks/nudge.py"'
    write_json(e2e_project / ".claude" / "settings.json", pretooluse_hook_settings(command))
    target = e2e_project / "a.md"
    result = claude([ToolUse("Write", {"file_path": str(target), "content": "x"}), Text("done")])

    assert target.read_bytes() == b"x"
    shown = result.all_text_shown()
    assert "PreToolUse:Write hook additional context: index at 190 of 200 lines" in shown
    assert not any("index at 190" in r for r in result.system_reminders())

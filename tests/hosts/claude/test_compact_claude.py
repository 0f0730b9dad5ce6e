"""`engramory compact` and `engramory review` inside the real Claude Code CLI: over an over-cap
index the guard denies an Edit and says to compact; the scripted model runs the plan and then
`--apply -` through its Bash tool (from the installed skill folder); the retried Edit goes
through; the next session loads every entry of the new index. A note removed with `rm` through
Bash is caught by the backstop, listed by `engramory review` and brought back by `undo`."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path
from typing import Any, Dict

import pytest
from harness import RunClaude, Text, ToolUse
from test_curate_claude import last_tool_result
from test_installed_claude import auto_memory_index, install, request_text

from engramory.compact import apply as compact
from engramory.store import journal

pytestmark = pytest.mark.e2e


def tool(home: Path) -> str:
    """The command line SKILL.md gives: python3 and the installed skill's tools/engramory.py."""
    return "%s %s" % (shlex.quote(sys.executable),
                      shlex.quote(str(home / ".claude" / "skills" / "engramory" / "tools" / "engramory.py")))


def note(root: Path, slug: str, type_: str, updated: str, body: str) -> None:
    extra = "\n\n**Why:** it bit us once.\n\n**How to apply:** check it first." if type_ in ("feedback", "project") else ""
    (root / (slug + ".md")).write_text(
        "---\nname: %s\ndescription: About %s\ntype: %s\ncreated: 2025-01-01\nupdated: %s\n---\n\n%s%s\n"
        % (slug, slug, type_, updated, body, extra), encoding="utf-8")


def over_cap_store(root: Path) -> str:
    """230 pointer lines (hard cap 200): long lines, a duplicate, a dead pointer, two identical
    notes, and 220 notes of every type and age. Returns the index text."""
    root.mkdir(parents=True)
    types = ("user", "feedback", "project", "reference")
    lines = ["# Memory Index", ""]
    for i in range(222):
        t = types[i % 4]
        slug = "%s-fact-%03d" % (t, i)
        body = "Fact %d about the %s side of the build, in caf\u00e9 words." % (i, t)
        if i == 221:
            body = "Fact 220 about the %s side of the build, in caf\u00e9 words." % types[220 % 4]
            slug = "%s-fact-%03d" % (types[220 % 4], i)
        note(root, slug, slug.split("-")[0], "2026-%02d-%02d" % (i % 12 + 1, i % 28 + 1), body)
        hook = "hook %d" % i
        if i % 50 == 0:
            hook = ("the whole story of fact %d told in the index instead of in its note " % i) * 3
        lines.append("- [Fact %d](%s.md) \u2014 %s" % (i, slug, hook.strip()))
    lines.append("- [Fact 7 again](reference-fact-007.md) \u2014 hook 7")
    lines.append("- [Gone](gone-long-ago.md) \u2014 a note deleted by hand")
    lines += ["- [Fact %d, second line](%s-fact-%03d.md) \u2014 more" % (i, types[i % 4], i) for i in range(230 - 224)]
    text = "\n".join(lines) + "\n"
    (root / "MEMORY.md").write_text(text, encoding="utf-8")
    return text


def test_denied_edit_compact_apply_retry_and_next_session_loads_the_index(
    claude: RunClaude, e2e_home: Path, e2e_project: Path
) -> None:
    install(e2e_home)
    index = auto_memory_index(e2e_home, e2e_project)
    root = index.parent
    over_cap_store(root)
    assert index.read_bytes().count(b"\n") == 232
    in_process = compact.plan_for(str(root), None, None)
    expected = compact.render_text(in_process, str(root), "Claude Code")
    new_line = "- [Deploys wait for review](feedback-deploy-review.md) \u2014 no merge before a review\n"
    edit = {"file_path": str(index), "old_string": "# Memory Index\n", "new_string": "# Memory Index\n" + new_line}
    plan = tool(e2e_home) + " compact " + shlex.quote(str(root)) + '; echo "exit=$?"'
    apply = tool(e2e_home) + " compact " + shlex.quote(str(root)) + ' --apply -; echo "exit=$?"'
    saved: list[str] = []

    def read_full_plan(body: Dict[str, Any]) -> ToolUse:
        # 2.1.332 keeps a long Bash output in a file and shows the model its first 2 KB: the
        # plan's summary comes first for that reason; the agent reads the rest from the file
        out = last_tool_result(body)
        m = re.search(r"Full output saved to: (\S+)", out)
        assert m, out[:3000]
        saved.append(m.group(1))
        return ToolUse("Read", {"file_path": m.group(1)})

    result = claude(
        [
            ToolUse("Write", {"file_path": str(root / "feedback-deploy-review.md"), "content":
                              "---\nname: feedback-deploy-review\ndescription: Deploys wait for a review\n"
                              "type: feedback\ncreated: 2026-11-30\nupdated: 2026-11-30\n---\n\nNo merge before "
                              "a review.\n\n**Why:** a bad deploy in November.\n\n**How to apply:** ask first.\n"}),
            ToolUse("Edit", edit),
            ToolUse("Bash", {"command": plan, "description": "plan a compaction"}),
            read_full_plan,
            ToolUse("Bash", {"command": apply, "description": "apply the compaction"}),
            ToolUse("Edit", edit),
            Text("saved"),
        ],
        allowed_tools=["Bash", "Edit", "Write", "Read"],
    )
    wrote, denied, planned, full, applied, retried = result.tool_results()
    assert not wrote.is_error, wrote.text
    # the guard denies with the numbers and says to run the compaction command
    assert denied.is_error and "engramory blocked this Edit" in denied.text, denied.text
    assert "`engramory compact ROOT`" in denied.text and "--apply -" in denied.text
    # the plan: its summary in the preview the model sees, the rest in the file it reads
    preview = planned.text
    assert "Plan: 87 operations (5 pointerify, 7 drop-duplicate-pointer, 1 drop-dead-pointer, 1 merge-identical, " \
        "73 archive-cold); %d files change." % len(in_process.changes) in preview, preview
    assert expected.splitlines()[1] in preview  # the same plan as in this process
    assert "Invariants: reachable ok; no-text-lost ok; host-loads ok; within-hard-caps ok." in preview
    assert "Next: show this plan to the user" in preview
    assert not full.is_error and "--- a/MEMORY.md" in full.text and "exit=1" in full.text, full.text[-2000:]
    assert "rename to archive/" in full.text
    # applied as one journal entry
    m = re.search(r"Applied %d file changes as journal entry (\d+)" % len(in_process.changes), applied.text)
    assert m, applied.text[:3000]
    (entry,) = [e for e in journal.entries(str(root)) if e.id == int(m.group(1))]
    paths = sorted({c.path for c in in_process.changes} | {c.to for c in in_process.changes if c.to})
    assert entry.command == "compact" and sorted(entry.paths) == paths
    # the retried Edit is allowed and lands
    assert not retried.is_error, retried.text
    text = index.read_text(encoding="utf-8")
    assert new_line in text
    assert text.count("\n") <= 151 and "(archive/" not in text
    assert (root / "archive").is_dir()

    second = claude([Text("ok")])
    loaded = [r for r in second.system_reminders() if "Contents of %s" % index in r]
    assert loaded, second.describe()
    for entry in text.splitlines():
        if entry.strip():
            assert entry in loaded[0], entry  # every entry of the new index is in the window
    assert "over its hard cap" not in request_text(second, 0)


def test_rm_via_bash_is_reviewed_and_undone(claude: RunClaude, e2e_home: Path, e2e_project: Path) -> None:
    install(e2e_home)
    index = auto_memory_index(e2e_home, e2e_project)
    root = index.parent
    root.mkdir(parents=True)
    for t in ("user", "feedback", "project"):
        note(root, "%s-kept" % t, t, "2026-11-01", "A %s fact worth keeping." % t)
    index.write_text("".join("- [%s](%s-kept.md) \u2014 kept\n" % (t, t) for t in ("user", "feedback", "project")),
                     encoding="utf-8")
    victim = root / "feedback-kept.md"
    original = victim.read_bytes()

    # session 1: the start takes the manifest; a Bash rm is caught by the backstop right away
    first = claude([ToolUse("Bash", {"command": "rm " + shlex.quote(str(victim)), "description": "consolidate"}),
                    Text("done")], allowed_tools=["Bash"])
    (removed,) = first.tool_results()
    assert not removed.is_error, removed.text
    assert not victim.exists()
    caught = request_text(first, 1)
    assert "this call deleted 1 note from the memory store" in caught and "feedback-kept.md" in caught, caught[-3000:]

    # session 2 starts with one line about it; the model reviews and undoes
    ids: list[str] = []

    def undo(body: Dict[str, Any]) -> ToolUse:
        out = last_tool_result(body)
        m = re.search(r"entry (\d+) .* deleted +feedback-kept\.md", out)
        assert m, out
        ids.append(m.group(1))
        return ToolUse("Bash", {"command": tool(e2e_home) + " undo " + m.group(1) + " " + shlex.quote(str(root)),
                                "description": "bring the note back"})

    second = claude([ToolUse("Bash", {"command": tool(e2e_home) + " review " + shlex.quote(str(root)) + "; true",
                                      "description": "review memory changes"}),
                     undo, Text("restored")], allowed_tools=["Bash"])
    start = request_text(second, 0)
    assert "1 note deleted outside engramory in the memory store %s" % root in start, start[-3000:]
    reviewed, undone = second.tool_results()
    assert "deleted" in reviewed.text and "feedback-kept.md" in reviewed.text, reviewed.text
    assert not undone.is_error, undone.text
    assert victim.read_bytes() == original

    # session 3: nothing left to report
    third = claude([Text("ok")])
    assert "deleted outside engramory" not in request_text(third, 0)

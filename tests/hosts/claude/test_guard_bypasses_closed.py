"""Real-CLI end-to-end tests for the findings of issue 9, on Claude Code 2.1.332 with
engramory installed the way a user installs it: every way around the guard that was found is
closed, and the window is the host's own.

- a symlinked auto-memory index: its target inside the project, in a dotfiles folder, and a
  link the agent makes itself with one Bash call: growth of the target is denied;
- old_string spelled with \\uXXXX escapes for control characters and in mixed-case hex (the
  host does not swap these before PreToolUse, and applies the edit): growth is denied;
- a Japanese index of 29,660 bytes that the host loads whole: a new entry is allowed, up to
  the host's real window of 25,000 UTF-16 units;
- autoMemoryDirectory: a Bash append to the moved index is reported, the SessionStart notice
  names it, and `engramory doctor` with no root audits that folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness import RunClaude, Text, ToolUse
from test_installed_claude import auto_memory_index, engramory, index_lines, install, line, request_text

pytestmark = pytest.mark.e2e


def lines_of(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def _symlinked_index_case(claude: RunClaude, home: Path, project: Path, target: Path) -> None:
    install(home)
    index = auto_memory_index(home, project)
    index.parent.mkdir(parents=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(index_lines(200), encoding="utf-8")
    index.symlink_to(target)
    result = claude(
        [
            ToolUse("Read", {"file_path": str(target)}),
            ToolUse("Edit", {"file_path": str(index), "old_string": line(5), "new_string": line(5) + index_lines(60, 300)}),
            # What the host tells the model to do instead: edit the link's target.
            ToolUse("Edit", {"file_path": str(target), "old_string": line(5), "new_string": line(5) + index_lines(60, 300)}),
            ToolUse("Write", {"file_path": str(target), "content": index_lines(260)}),
            ToolUse("Edit", {"file_path": str(target), "old_string": line(7), "new_string": ""}),
            Text("done"),
        ],
        allowed_tools=["Read", "Edit", "Write"],
    )
    read, via_link, grow, write, shrink = result.tool_results()
    assert not read.is_error, read.text
    # The host refuses the link itself (a link, or not read: either way nothing is written).
    assert via_link.is_error, via_link.text
    assert grow.is_error and grow.text.startswith("PreToolUse:Edit hook error: engramory blocked"), grow.text
    assert "grow from 200 to 260 lines" in grow.text
    assert write.is_error and "grow from 200 to 260 lines" in write.text, write.text
    assert not shrink.is_error, shrink.text
    assert lines_of(target) == 199 and index.is_symlink()


def test_symlinked_index_target_inside_the_project(claude: RunClaude, e2e_home: Path, e2e_project: Path) -> None:
    _symlinked_index_case(claude, e2e_home, e2e_project, e2e_project / "docs" / "agent-memory.md")


def test_symlinked_index_target_in_a_dotfiles_folder(claude: RunClaude, e2e_home: Path, e2e_project: Path) -> None:
    _symlinked_index_case(claude, e2e_home, e2e_project, e2e_home / "dotfiles" / "claude-memory.md")


def test_symlinked_index_made_by_the_agent(claude: RunClaude, e2e_home: Path, e2e_project: Path) -> None:
    install(e2e_home)
    index = auto_memory_index(e2e_home, e2e_project)
    index.parent.mkdir(parents=True)
    index.write_text(index_lines(200), encoding="utf-8")
    data = index.parent / "data.md"
    result = claude(
        [
            ToolUse("Bash", {"command": f'cd "{index.parent}" && mv MEMORY.md data.md && ln -s data.md MEMORY.md',
                             "description": "move the index behind a link"}),
            ToolUse("Edit", {"file_path": str(data), "old_string": line(5), "new_string": line(5) + index_lines(60, 300)}),
            ToolUse("Read", {"file_path": str(data)}),
            ToolUse("Write", {"file_path": str(data), "content": index_lines(201)}),
            Text("done"),
        ],
        allowed_tools=["Bash"],
    )
    moved, grow, _, write = result.tool_results()
    assert not moved.is_error, moved.text
    assert index.is_symlink() and data.is_file()
    assert grow.is_error and "grow from 200 to 260 lines" in grow.text, grow.text
    assert write.is_error and "grow from 200 to 201 lines" in write.text, write.text
    assert lines_of(data) == 200


@pytest.mark.parametrize(
    ("stored", "spelled"),
    [
        pytest.param("- [bell](bell.md) \u2014 rings \x07 twice\n", "rings \\u0007 twice\n", id="C0-control"),
        pytest.param("- [del](del.md) \u2014 erase \x7f key\n", "erase \\u007f key\n", id="DEL"),
        pytest.param("- [nel](nel.md) \u2014 next \u0085 line\n", "next \\u0085 line\n", id="U+0085"),
        pytest.param("- [c1](c1.md) \u2014 csi \u009b seq\n", "csi \\u009b seq\n", id="C1-control"),
        pytest.param("- [tm](tm.md) \u2014 brand\u00ae name\n", "brand\\u00Ae name\n", id="mixed-case-hex"),
    ],
)
def test_escape_spelled_old_string_is_guarded(
    claude: RunClaude, e2e_home: Path, e2e_project: Path, stored: str, spelled: str
) -> None:
    install(e2e_home)
    index = auto_memory_index(e2e_home, e2e_project)
    index.parent.mkdir(parents=True)
    index.write_text(stored + index_lines(199), encoding="utf-8")
    before = index.read_bytes()
    result = claude(
        [
            ToolUse("Edit", {"file_path": str(index), "old_string": spelled, "new_string": spelled + index_lines(50, 400)}),
            ToolUse("Edit", {"file_path": str(index), "old_string": spelled, "new_string": spelled + index_lines(50, 500)}),
            Text("done"),
        ]
    )
    first, second = result.tool_results()
    assert first.is_error and "engramory blocked this Edit" in first.text, first.text
    assert "250 lines" in first.text
    assert second.is_error, second.text
    assert index.read_bytes() == before


def japanese_index(lines: int) -> str:
    body = "\u8a18\u61b6\u306e\u30e1\u30e2\u3068\u79fb\u884c\u306e\u8a18\u9332" * 6  # 72 characters
    return "".join("- [\u30e1\u30e2%03d](m%03d.md) \u2014 %s\n" % (i, i, body[: 72 - len(str(i))]) for i in range(lines))


def test_japanese_index_is_judged_in_utf16_units(claude: RunClaude, e2e_home: Path, e2e_project: Path) -> None:
    install(e2e_home)
    index = auto_memory_index(e2e_home, e2e_project)
    index.parent.mkdir(parents=True)
    text = japanese_index(120)
    index.write_text(text, encoding="utf-8")
    size = len(text.encode("utf-8"))
    assert size > 25_000 and len(text) < 25_000  # ~29,600 bytes, ~11,600 characters
    extra = japanese_index(121)[len(text):]
    # Up to the real window: as many entries as fit in 25,000 UTF-16 units (and 200 lines).
    fill = "".join("- [\u8ffd\u52a0%03d](a%03d.md) \u2014 %s\n" % (i, i, "\u6f22" * 50) for i in range(75))
    over = "- [x](x.md) \u2014 " + "\u6f22" * 9000 + "\n"
    result = claude(
        [
            ToolUse("Edit", {"file_path": str(index), "old_string": line_of(text, 3), "new_string": line_of(text, 3) + extra}),
            ToolUse("Edit", {"file_path": str(index), "old_string": line_of(text, 4), "new_string": line_of(text, 4) + fill}),
            ToolUse("Edit", {"file_path": str(index), "old_string": line_of(text, 5), "new_string": line_of(text, 5) + over}),
            Text("done"),
        ]
    )
    one, many, too_much = result.tool_results()
    assert not one.is_error, one.text
    assert not many.is_error, many.text
    shown = request_text(result, 1) + request_text(result, 2)
    assert "entries were lost" not in shown and "never be recalled" not in shown
    assert too_much.is_error and "UTF-16 units (hard cap 25,000" in too_much.text, too_much.text
    assert lines_of(index) == 196


def line_of(text: str, i: int) -> str:
    return text.splitlines(keepends=True)[i]


def test_auto_memory_directory_is_watched(claude: RunClaude, e2e_home: Path, e2e_project: Path, tmp_path: Path) -> None:
    install(e2e_home)
    moved = tmp_path / "moved-memory"
    moved.mkdir()
    settings = e2e_home / ".claude" / "settings.json"
    data = json.loads(settings.read_text(encoding="utf-8"))
    data["autoMemoryDirectory"] = str(moved)
    settings.write_text(json.dumps(data, indent=2), encoding="utf-8")
    index = moved / "MEMORY.md"
    index.write_text(index_lines(210), encoding="utf-8")
    (moved / "note-1.md").write_text("---\nname: n\ndescription: d\nmetadata:\n  type: user\n---\nx\n", encoding="utf-8")
    append = f'for i in $(seq 1 5); do echo "- [extra $i](extra-$i.md) \u2014 appended" >> "{index}"; done'
    result = claude(
        [ToolUse("Bash", {"command": append, "description": "append five lines"}), Text("done")],
        allowed_tools=["Bash"],
    )
    # The host itself loads the moved index.
    assert f"Contents of {index}" in result.all_text_shown()
    assert f"engramory: the memory index {index} is over its hard cap: 210 lines" in request_text(result, 0)
    assert f"engramory: after this Bash call, the memory index {index} is over its hard cap: 215 lines" in request_text(result, 1)
    # doctor with no root audits that folder, not the default one.
    done = engramory(e2e_home, "doctor", "--json", cwd=e2e_project)
    report = json.loads(done.stdout)
    assert report["root"] == str(moved), done.stdout[:500]
    codes = {f["code"] for f in report["findings"]}
    assert "index-missing" not in codes and "index-over-cap" in codes

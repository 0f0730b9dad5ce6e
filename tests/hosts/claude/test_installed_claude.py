"""engramory installed into the real Claude Code CLI the way a user does it, then driven
end to end: what the guard refuses or lets through, what the model is told, the backstop
after shell commands, the plugin, and an uninstall that gives the settings back.

Install runs `python3 -m engramory install --scope user` in a subprocess with HOME set to
the test's home (never hand-written settings). The guard's predictions are traced through
ENGRAMORY_TRACE_FILE, which the CLI passes on to its hooks, to count how often it ran.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from harness import Result, RunClaude, Text, ToolUse, claude_env, run_claude

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[3]


# -- helpers ---------------------------------------------------------------------------


def engramory(
    home: Path, *args: str, cwd: Path = ROOT, extra: Dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python3 -m engramory ARGS` from the checkout, with HOME = the test's home and no
    CLAUDE_CONFIG_DIR (unless in `extra`), so the user scope is `<home>/.claude`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ENGRAMORY_", "PYTHON"))}
    env.update(HOME=str(home), PYTHONPATH=str(ROOT), **(extra or {}))
    return subprocess.run(
        [sys.executable, "-m", "engramory", *args],
        cwd=str(cwd),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def install(home: Path) -> subprocess.CompletedProcess[str]:
    done = engramory(home, "install", "--scope", "user")
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def index_lines(count: int, start: int = 0) -> str:
    return "".join(f"- [note {i}](note-{i}.md) \u2014 hook {i}\n" for i in range(start, start + count))


def line(i: int) -> str:
    return index_lines(1, i)


def _utf16_units(text: str) -> List[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def _base36(n: int) -> str:
    digits = ""
    while True:
        n, r = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
        if n == 0:
            return digits


def sanitized(project: Path) -> str:
    """The folder name Claude Code 2.1.332 keeps a project's data under (measured): the
    real path with every UTF-16 unit that is not an ASCII letter or digit turned into '-';
    past 200 units, the first 200 plus '-' and the base-36 absolute value of the path's
    Java-style 32-bit string hash (h = 31 * h + unit)."""
    path = str(project.resolve())
    units = _utf16_units(path)
    name = "".join(chr(u) if chr(u).isascii() and chr(u).isalnum() else "-" for u in units)
    if len(name) <= 200:
        return name
    h = 0
    for u in units:
        h = (31 * h + u) & 0xFFFFFFFF
    if h >= 1 << 31:
        h -= 1 << 32
    return name[:200] + "-" + _base36(abs(h))


def auto_memory_index(home: Path, project: Path) -> Path:
    return home / ".claude" / "projects" / sanitized(project) / "memory" / "MEMORY.md"


def request_text(result: Result, index: int) -> str:
    """Everything in the request that asked for script turn `index`, as JSON text
    (non-ASCII kept), for `in` checks. Picked by turn number, so a retried request cannot
    shift what the assertions look at."""
    asked = [r for r in result.turn_requests() if r.turn_index == index]
    assert asked, f"no request for turn {index}\n{result.describe()}"
    return json.dumps(asked[-1].body, ensure_ascii=False)


def traced(trace: Path) -> Dict[str, List[Dict[str, Any]]]:
    out: Dict[str, List[Dict[str, Any]]] = {}
    if trace.exists():
        for raw in trace.read_bytes().decode("utf-8").split("\n"):
            if not raw:
                continue
            entry = json.loads(raw)
            out.setdefault(entry["path"], []).append(entry)
    return out


def count_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")


# -- the guard, installed --------------------------------------------------------------


def test_install_guards_an_index_in_the_project(
    claude: RunClaude, e2e_home: Path, e2e_project: Path, tmp_path: Path
) -> None:
    install(e2e_home)
    trace = tmp_path / "trace.jsonl"
    notes = e2e_project / "notes" / "MEMORY.md"
    notes.parent.mkdir()
    notes.write_text(index_lines(100), encoding="utf-8")
    over = e2e_project / "over" / "MEMORY.md"
    over.parent.mkdir()
    over.write_text(index_lines(210), encoding="utf-8")
    over_before = over.read_bytes()
    dropped = "".join(line(i) for i in range(10, 25))
    wide = "".join(f"- [n{i}](n{i}.md) {'x' * 230}\n" for i in range(120))  # 120 lines, ~30 KB

    result = claude(
        [
            ToolUse("Write", {"file_path": str(notes), "content": index_lines(300)}),
            ToolUse("Write", {"file_path": str(notes), "content": index_lines(160)}),
            ToolUse("Edit", {"file_path": str(over), "old_string": line(5), "new_string": line(5) + "- [x](x.md) \u2014 one more\n"}),
            ToolUse("Edit", {"file_path": str(over), "old_string": dropped, "new_string": ""}),
            ToolUse("Write", {"file_path": str(notes), "content": wide}),
            Text("done"),
        ],
        env={"ENGRAMORY_TRACE_FILE": str(trace)},
    )
    big_write, warn_write, grow, shrink, wide_write = result.tool_results()

    # The skill is listed to the model; no index is past a cap, so the session starts quietly.
    assert "- engramory: Curated long-term memory" in result.system_prompt()
    assert "engramory: the memory index" not in request_text(result, 0)

    # 300 lines: refused with the numbers, file untouched.
    assert big_write.is_error
    assert big_write.text.startswith("PreToolUse:Write hook error: engramory blocked this Write"), big_write.text
    assert "grow from 100 to 300 lines (hard cap 200: 100 over)" in big_write.text
    assert "line 201 " in big_write.text  # names what would fall outside the window
    # 160 lines: written, and the warn-zone nudge is in the model's next request.
    assert not warn_write.is_error, warn_write.text
    assert notes.read_text(encoding="utf-8") == index_lines(160)
    nudge = "PreToolUse:Write hook additional context: engramory: MEMORY.md will be 160 lines"
    assert nudge not in request_text(result, 1)
    assert nudge in request_text(result, 2)
    assert "past the warn cap of 150 lines" in request_text(result, 2)

    # Over the cap already: growing is refused, shrinking goes through.
    assert grow.is_error and grow.text.startswith("PreToolUse:Edit hook error: engramory blocked this Edit"), grow.text
    assert "grow from 210 to 211 lines" in grow.text
    assert not shrink.is_error, shrink.text
    assert over.read_bytes() == over_before.replace(dropped.encode("utf-8"), b"")
    assert count_lines(over) == 195
    assert "PreToolUse:Edit hook additional context: engramory: MEMORY.md will be 195 lines" in request_text(result, 4)

    # Fewer lines but past the size cap: refused on size, with both counts, in the host's
    # unit (UTF-16 units of the trimmed text: an em dash is one, the final newline none).
    assert wide_write.is_error, wide_write.text
    size = f"{len(wide.rstrip()):,}"
    assert f"be 120 lines (now 160, hard cap 200) and grow from {len(index_lines(160).rstrip()):,} to {size} UTF-16 units (hard cap 25,000: " in wide_write.text
    assert notes.read_text(encoding="utf-8") == index_lines(160)

    # One guard per edit: the installed skill folder is not also loaded as a plugin.
    runs = traced(trace)
    assert [len(runs[str(notes)]), len(runs[str(over)])] == [3, 2]


def test_install_guards_the_auto_memory_index(
    claude: RunClaude, e2e_home: Path, e2e_project: Path, tmp_path: Path
) -> None:
    install(e2e_home)
    trace = tmp_path / "trace.jsonl"
    index = auto_memory_index(e2e_home, e2e_project)
    index.parent.mkdir(parents=True)
    index.write_text(index_lines(210), encoding="utf-8")
    before = index.read_bytes()
    dropped = "".join(line(i) for i in range(100, 115))

    result = claude(
        [
            ToolUse("Edit", {"file_path": str(index), "old_string": line(3), "new_string": line(3) + line(500)}),
            ToolUse("Write", {"file_path": str(index), "content": index_lines(300)}),
            ToolUse("Edit", {"file_path": str(index), "old_string": dropped, "new_string": ""}),
            ToolUse("Write", {"file_path": str(index), "content": index_lines(160)}),
            Text("done"),
        ],
        env={"ENGRAMORY_TRACE_FILE": str(trace)},
    )
    grow, big_write, shrink, warn_write = result.tool_results()

    # The CLI's own memory prompt points at the folder we computed.
    assert f"persistent file-based memory at `{index.parent}/`" in result.all_text_shown()
    # The session starts with the backstop's notice about the over-cap index.
    assert f"engramory: the memory index {index} is over its hard cap: 210 lines" in request_text(result, 0)

    assert grow.is_error and "grow from 210 to 211 lines" in grow.text, grow.text
    assert big_write.is_error and "grow from 210 to 300 lines (hard cap 200: 100 over)" in big_write.text
    assert big_write.text.startswith("PreToolUse:Write hook error: "), big_write.text
    assert not shrink.is_error, shrink.text
    assert "MEMORY.md will be 195 lines" in request_text(result, 3)
    assert not warn_write.is_error, warn_write.text
    assert index.read_text(encoding="utf-8") == index_lines(160)
    assert "MEMORY.md will be 160 lines" in request_text(result, 4)
    assert "past the warn cap" in request_text(result, 4)
    assert [e["refused"] for e in traced(trace)[str(index)]] == [False] * 4
    assert before != index.read_bytes()


# Where the session runs, relative to the test's tmp folder, and where its git root is.
LAYOUTS = [
    pytest.param("project", None, id="plain"),
    pytest.param("repo/sub", "repo", id="git-subfolder"),
    # Each UTF-16 unit becomes one '-': two for the emoji.
    pytest.param("proj \u00e9 \U0001f9e0.x_y", None, id="astral-char"),
    # Past 200 units the folder name gets a hash suffix.
    pytest.param("a" * 120 + "/" + "b.c" * 40, None, id="over-200"),
]


@pytest.mark.parametrize(("where", "git_root"), LAYOUTS)
def test_backstop_reports_a_shell_append_past_the_cap(
    claude_cli: Path, e2e_home: Path, tmp_path: Path, where: str, git_root: str | None
) -> None:
    cwd = tmp_path / where
    cwd.mkdir(parents=True)
    project = cwd
    if git_root is not None:
        project = tmp_path / git_root
        subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    install(e2e_home)
    index = auto_memory_index(e2e_home, project)
    index.parent.mkdir(parents=True)
    index.write_text(index_lines(195), encoding="utf-8")
    append = (
        f'for i in $(seq 1 10); do echo "- [extra $i](extra-$i.md) \u2014 appended" >> "{index}"; done'
    )

    result = run_claude(
        [
            ToolUse("Bash", {"command": append, "description": "append ten lines"}),
            ToolUse("Bash", {"command": "echo unrelated", "description": "an unrelated command"}),
            Text("done"),
        ],
        home=e2e_home,
        cwd=cwd,
        cli=claude_cli,
        allowed_tools=["Bash"],
    )
    # The CLI keys its memory under the folder computed here (git root included).
    assert f"persistent file-based memory at `{index.parent}/`" in result.all_text_shown()
    appended, unrelated = result.tool_results()
    assert not appended.is_error and not unrelated.is_error, (appended.text, unrelated.text)
    assert count_lines(index) == 205  # nothing can stop a shell write; the backstop reports it

    assert f"engramory: the memory index {index} is past its warn cap: 195 lines" in request_text(result, 0)
    report = f"engramory: after this Bash call, the memory index {index} is over its hard cap: 205 lines"
    assert report not in request_text(result, 0)
    after_append = request_text(result, 1)
    assert after_append.count(report) == 1
    assert "now outside the window: line 201 " in after_append
    assert "Compact it now" in after_append
    # Reported once: the unrelated command that follows adds nothing.
    assert request_text(result, 2).count("after this Bash call") == 1


def test_backstop_watches_an_index_named_in_the_environment(
    claude: RunClaude, e2e_home: Path, e2e_project: Path
) -> None:
    install(e2e_home)
    index = e2e_project / "notes" / "MEMORY.md"
    index.parent.mkdir()
    index.write_text(index_lines(200), encoding="utf-8")
    result = claude(
        [
            ToolUse("Bash", {"command": "sed -i '$a - [late](late.md) \u2014 one too many' notes/MEMORY.md", "description": "append"}),
            Text("done"),
        ],
        allowed_tools=["Bash"],
        env={"ENGRAMORY_INDEX_PATH": str(index)},
    )
    assert count_lines(index) == 201
    report = f"engramory: after this Bash call, the memory index {index} is over its hard cap: 201 lines"
    assert request_text(result, 1).count(report) == 1
    assert re.search(r"now outside the window: line 201 \W*- \[late\]\(late\.md\)", result.all_text_shown())


# A minimal MCP server on stdio (newline-delimited JSON-RPC) with one tool that appends
# text to a file: the kind of write no PreToolUse guard on Edit/Write can see.
MCP_SERVER = """\
import json, sys
TOOL = {"name": "append", "description": "Append text to a file.",
        "inputSchema": {"type": "object", "required": ["path", "text"],
                        "properties": {"path": {"type": "string"}, "text": {"type": "string"}}}}
for raw in sys.stdin:
    msg = json.loads(raw)
    if "id" not in msg:
        continue  # a notification
    method, params = msg.get("method"), msg.get("params") or {}
    reply = {"jsonrpc": "2.0", "id": msg["id"]}
    if method == "initialize":
        reply["result"] = {"protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}},
                           "serverInfo": {"name": "e2e", "version": "1"}}
    elif method == "tools/list":
        reply["result"] = {"tools": [TOOL]}
    elif method == "tools/call":
        with open(params["arguments"]["path"], "a", encoding="utf-8") as f:
            f.write(params["arguments"]["text"])
        reply["result"] = {"content": [{"type": "text", "text": "appended"}]}
    elif method == "ping":
        reply["result"] = {}
    else:
        reply["error"] = {"code": -32601, "message": "method not found"}
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""


def test_backstop_reports_an_mcp_write_past_the_cap(
    claude: RunClaude, e2e_home: Path, e2e_project: Path, tmp_path: Path
) -> None:
    install(e2e_home)
    index = auto_memory_index(e2e_home, e2e_project)
    index.parent.mkdir(parents=True)
    index.write_text(index_lines(198), encoding="utf-8")
    server = tmp_path / "mcp_server.py"
    server.write_text(MCP_SERVER, encoding="utf-8")
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps({"mcpServers": {"e2e": {"command": sys.executable, "args": ["-I", "-S", str(server)]}}}),
        encoding="utf-8",
    )

    result = claude(
        [
            ToolUse("mcp__e2e__append", {"path": str(index), "text": index_lines(4, 900)}),
            Text("done"),
        ],
        allowed_tools=["mcp__e2e__append"],
        extra_args=["--mcp-config", str(config), "--strict-mcp-config"],
    )
    (appended,) = result.tool_results()
    assert not appended.is_error and appended.text == "appended", appended.text
    assert count_lines(index) == 202
    report = f"engramory: after this mcp__e2e__append call, the memory index {index} is over its hard cap: 202 lines"
    assert report not in request_text(result, 0)
    assert request_text(result, 1).count(report) == 1
    assert "now outside the window: line 201 " in request_text(result, 1)


@pytest.mark.parametrize("variant", ["project", "local", "user-link", "config-dir"])
def test_every_install_variant_guards_and_lists_the_skill(
    claude: RunClaude, e2e_home: Path, e2e_project: Path, tmp_path: Path, variant: str
) -> None:
    cli_env: Dict[str, str] = {}
    if variant in ("project", "local"):
        done = engramory(e2e_home, "install", "--scope", variant, cwd=e2e_project)
        settings = e2e_project / ".claude" / ("settings.json" if variant == "project" else "settings.local.json")
        skill = e2e_project / ".claude" / "skills" / "engramory"
    elif variant == "user-link":
        done = engramory(e2e_home, "install", "--link")
        settings = e2e_home / ".claude" / "settings.json"
        skill = e2e_home / ".claude" / "skills" / "engramory"
        assert (skill / "SKILL.md").is_symlink()
    else:
        config_dir = tmp_path / "claude-config"
        cli_env["CLAUDE_CONFIG_DIR"] = str(config_dir)
        done = engramory(e2e_home, "install", extra=cli_env)
        settings = config_dir / "settings.json"
        skill = config_dir / "skills" / "engramory"
        assert not (e2e_home / ".claude").exists()
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'engramory_hook.py\\" claude PreToolUse' in settings.read_text(encoding="utf-8")  # the generic entry
    assert (skill / "SKILL.md").is_file()

    trace = tmp_path / "trace.jsonl"
    notes = e2e_project / "MEMORY.md"
    notes.write_text(index_lines(150), encoding="utf-8")
    append = f"echo '- [late](late.md) \u2014 shell' >> {notes.name}"
    result = claude(
        [
            ToolUse("Write", {"file_path": str(notes), "content": index_lines(300)}),
            ToolUse("Bash", {"command": append, "description": "append"}),
            Text("done"),
        ],
        allowed_tools=["Bash"],
        env={**cli_env, "ENGRAMORY_INDEX_PATH": str(notes), "ENGRAMORY_TRACE_FILE": str(trace)},
    )
    denied, appended = result.tool_results()
    # Exactly one guard ran: a linked skill folder also holds hooks/hooks.json, which must
    # not make the CLI load it as a second copy of the plugin.
    assert len(traced(trace)[str(notes)]) == 1
    assert "- engramory: Curated long-term memory" in result.system_prompt()
    assert denied.is_error and "grow from 150 to 300 lines" in denied.text, denied.text
    assert not appended.is_error, appended.text
    assert count_lines(notes) == 151
    # Under the hard cap after the shell write: the backstop stays silent.
    assert "after this Bash call" not in request_text(result, 2)
    if variant == "config-dir":
        # The CLI keeps auto memory under CLAUDE_CONFIG_DIR too, where the backstop looks.
        memory = config_dir / "projects" / sanitized(e2e_project) / "memory"
        assert f"persistent file-based memory at `{memory}/`" in result.all_text_shown()


# Without a base URL, `claude plugin ...` spends ~17 s resolving the real API host; a closed
# loopback port makes it give up at once.
OFFLINE_BASE_URL = "http://127.0.0.1:9"


def plugin_cli(cli: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`claude plugin ARGS` with the test's HOME, offline; fails unless it exits 0."""
    done = subprocess.run(
        [str(cli), "plugin", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env=claude_env(home, base_url=OFFLINE_BASE_URL),
    )
    assert done.returncode == 0, f"claude plugin {' '.join(args)}:\n{done.stdout}{done.stderr}"
    return done


# -- the plugin ------------------------------------------------------------------------


def test_plugin_validates_and_loads_with_plugin_dir(
    claude: RunClaude, claude_cli: Path, e2e_home: Path, e2e_project: Path, tmp_path: Path
) -> None:
    # --strict: a warning (an unknown manifest field, say) fails too.
    validate = plugin_cli(claude_cli, e2e_home, "validate", "--strict", str(ROOT))
    assert "Validation passed" in validate.stdout
    for provided in ("PreToolUse Edit|Write|MultiEdit|Bash", "PostToolUse ^(Bash|PowerShell|Monitor|Read|mcp__.*)$", "SessionStart"):
        assert f"hooks: {provided}" in validate.stdout

    # No install: only --plugin-dir wires the hooks, and the guard refuses the big write.
    assert not (e2e_home / ".claude" / "settings.json").exists()
    trace = tmp_path / "trace.jsonl"
    notes = e2e_project / "MEMORY.md"
    notes.write_text(index_lines(10), encoding="utf-8")
    result = claude(
        [ToolUse("Write", {"file_path": str(notes), "content": index_lines(300)}), Text("done")],
        extra_args=["--plugin-dir", str(ROOT)],
        env={"ENGRAMORY_TRACE_FILE": str(trace)},
    )
    (denied,) = result.tool_results()
    assert denied.is_error, denied.text
    assert denied.text.startswith("PreToolUse:Write hook error: engramory blocked this Write")
    assert "grow from 10 to 300 lines" in denied.text
    assert notes.read_text(encoding="utf-8") == index_lines(10)
    assert len(traced(trace)[str(notes)]) == 1
    # The root SKILL.md comes with the plugin, listed under the plugin's namespace.
    assert "- engramory:engramory: Curated long-term memory" in result.system_prompt()


# A local marketplace install copies the whole folder (it ignores .gitignore), so the test
# installs from a copy without the CLI itself, virtualenvs and caches.
CHECKOUT_JUNK = ("node_modules", ".venv*", ".git", "__pycache__", ".*_cache", ".hypothesis", ".benchmarks")


def test_marketplace_install_wires_the_guard_and_the_backstop(
    claude: RunClaude, claude_cli: Path, e2e_home: Path, e2e_project: Path, tmp_path: Path
) -> None:
    import shutil

    checkout = tmp_path / "engramory-checkout"
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(*CHECKOUT_JUNK))
    plugin_cli(claude_cli, e2e_home, "marketplace", "add", str(checkout))
    plugin_cli(claude_cli, e2e_home, "install", "engramory@engramory-marketplace")
    assert "engramory@engramory-marketplace" in plugin_cli(claude_cli, e2e_home, "list").stdout

    index = auto_memory_index(e2e_home, e2e_project)
    index.parent.mkdir(parents=True)
    index.write_text(index_lines(195), encoding="utf-8")
    append = f'for i in 1 2 3 4 5 6; do echo "- [m$i](m$i.md)" >> "{index}"; done'
    script = [
        ToolUse("Write", {"file_path": str(index), "content": index_lines(300)}),
        ToolUse("Bash", {"command": append, "description": "append six lines"}),
        Text("done"),
    ]
    result = claude(script, allowed_tools=["Bash"])
    denied, appended = result.tool_results()
    assert "- engramory:engramory: Curated long-term memory" in result.system_prompt()
    assert f"engramory: the memory index {index} is past its warn cap: 195 lines" in request_text(result, 0)
    assert denied.is_error and "grow from 195 to 300 lines" in denied.text, denied.text
    assert not appended.is_error, appended.text
    assert count_lines(index) == 201
    assert f"the memory index {index} is over its hard cap: 201 lines" in request_text(result, 2)

    plugin_cli(claude_cli, e2e_home, "uninstall", "engramory@engramory-marketplace")
    index.write_text(index_lines(195), encoding="utf-8")
    after = claude(script[:1] + [Text("done")])
    (written,) = after.tool_results()
    assert not written.is_error, written.text
    assert count_lines(index) == 300


# -- uninstall -------------------------------------------------------------------------


def test_uninstall_gives_back_the_settings_byte_for_byte(
    claude: RunClaude, e2e_home: Path, e2e_project: Path, tmp_path: Path
) -> None:
    log = tmp_path / "foreign-hook.log"
    foreign_hook = f"\"{sys.executable}\" -I -S -c \"import sys; open(sys.argv[1], 'a').write('fired\\n')\" \"{log}\""
    foreign = {
        "permissions": {"allow": ["Read"], "deny": []},
        "env": {"E2E_FOREIGN": "gr\u00fc\u00df"},
        "hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": foreign_hook}]}]},
        "includeCoAuthoredBy": False,
    }
    settings = e2e_home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    # An unusual layout (4-space indent, raw UTF-8, no final newline) that a re-serialiser
    # would not reproduce.
    settings.write_text(json.dumps(foreign, indent=4, ensure_ascii=False), encoding="utf-8")
    original = settings.read_bytes()

    install(e2e_home)
    once = settings.read_bytes()
    install(e2e_home)
    assert settings.read_bytes() == once  # a second install changes nothing
    installed = json.loads(once)
    assert installed["env"] == foreign["env"] and installed["permissions"] == foreign["permissions"]
    check = engramory(e2e_home, "install", "--check")
    assert check.returncode == 0, check.stdout + check.stderr

    notes = e2e_project / "MEMORY.md"
    notes.write_text(index_lines(10), encoding="utf-8")
    script = [ToolUse("Write", {"file_path": str(notes), "content": index_lines(300)}), Text("done")]
    guarded = claude(script)
    (denied,) = guarded.tool_results()
    assert denied.is_error and "grow from 10 to 300 lines" in denied.text, denied.text
    assert log.read_text() == "fired\n"  # the user's own hook still runs beside ours

    done = engramory(e2e_home, "uninstall")
    assert done.returncode == 0, done.stdout + done.stderr
    assert settings.read_bytes() == original
    assert not (e2e_home / ".claude" / "skills" / "engramory").exists()

    unguarded = claude(script)
    (written,) = unguarded.tool_results()
    assert not written.is_error, written.text
    assert notes.read_text(encoding="utf-8") == index_lines(300)
    assert "engramory" not in unguarded.system_prompt()
    assert log.read_text() == "fired\nfired\n"

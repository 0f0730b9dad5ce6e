"""engramory.hosts.hermes without Hermes: the callback's contract, Hermes's write rules,
replace mode, Hermes's V4A dialect, path resolution, Hermes's own memories, and the shell
hook run as a real subprocess. (tests/hosts/hermes/ drives the real hermes-agent package.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engramory import edits
from engramory.hosts import hermes
from engramory.hosts.hermes import plugin
from engramory.hosts.hermes import v4a as hermes_v4a

ROOT = str(Path(__file__).resolve().parents[3])
# the shell hook as PORTING has a `hooks:` entry run it: the generic entry with the host name after it
SHELL_HOOK = os.path.join(ROOT, "hooks", "engramory_hook.py")
LEGACY_SHELL_HOOK = os.path.join(ROOT, "hooks", "engramory_hermes_shell_hook.py")  # what earlier entries name


def lines(n: int, prefix: str = "- entry") -> str:
    return "".join("%s %d\n" % (prefix, i) for i in range(n))


@pytest.fixture
def work(tmp_path, monkeypatch):
    for key in list(os.environ):
        if key.startswith("ENGRAMORY_"):
            monkeypatch.delenv(key)
    home = tmp_path / "hermes_home"
    (home / "memories").mkdir(parents=True)
    monkeypatch.setenv("HERMES_HOME", str(home))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("TERMINAL_CWD", str(work))
    monkeypatch.chdir(tmp_path)
    return work


def block(result):
    assert isinstance(result, dict) and result["action"] == "block", result
    assert isinstance(result["message"], str) and result["message"]
    return result["message"]


# -- write_file ---------------------------------------------------------------------------------


def test_write_growing_an_over_cap_index_is_blocked_with_numbers(work):
    (work / "MEMORY.md").write_text(lines(210))
    msg = block(plugin.pre_tool_call("write_file", {"path": "MEMORY.md", "content": lines(230)}, task_id="t"))
    assert "from 210 to 230 lines" in msg and "hard cap 200" in msg
    assert str(work / "MEMORY.md") in msg


def test_write_that_shrinks_or_fits_passes(work):
    (work / "MEMORY.md").write_text(lines(260))
    assert plugin.pre_tool_call("write_file", {"path": "MEMORY.md", "content": lines(240)}) is None
    assert plugin.pre_tool_call("write_file", {"path": "MEMORY.md", "content": lines(20)}) is None


def test_write_to_an_unrelated_file_is_ignored(work):
    assert plugin.pre_tool_call("write_file", {"path": "notes.md", "content": lines(5000)}) is None


def test_write_creating_an_oversized_index_is_blocked(work):
    msg = block(plugin.pre_tool_call("write_file", {"path": "sub/MEMORY.md", "content": "x" * 26000}))
    assert "26,000 bytes" in msg


def test_hermes_own_memory_files_are_never_judged(work, tmp_path):
    own = tmp_path / "hermes_home" / "memories" / "MEMORY.md"
    assert plugin.pre_tool_call("write_file", {"path": str(own), "content": lines(400)}) is None
    profile = tmp_path / "hermes_home" / "profiles" / "coder" / "memories"
    profile.mkdir(parents=True)
    assert plugin.pre_tool_call("write_file", {"path": str(profile / "MEMORY.md"), "content": lines(400)}) is None
    # ...but an index elsewhere under the Hermes home is still guarded
    block(plugin.pre_tool_call("write_file", {"path": str(tmp_path / "hermes_home" / "x" / "MEMORY.md"), "content": lines(400)}))


def test_memories_of_a_profile_home_and_its_root_are_skipped(tmp_path):
    root = tmp_path / "root"
    env = {"HERMES_HOME": str(root / "profiles" / "coder")}
    assert hermes.is_hermes_memory(str(root / "profiles" / "coder" / "memories" / "MEMORY.md"), env)
    assert hermes.is_hermes_memory(str(root / "memories" / "MEMORY.md"), env)
    assert hermes.is_hermes_memory(str(root / "profiles" / "other" / "memories" / "USER.md"), env)
    assert not hermes.is_hermes_memory(str(root / "profiles" / "coder" / "notes" / "MEMORY.md"), env)


def test_index_path_and_name_follow_the_claude_hook_configuration(work, monkeypatch):
    (work / "INDEX.md").write_text(lines(210))
    monkeypatch.setenv("ENGRAMORY_INDEX_NAME", "INDEX.md")
    block(plugin.pre_tool_call("write_file", {"path": "INDEX.md", "content": lines(230)}))
    assert plugin.pre_tool_call("write_file", {"path": "MEMORY.md", "content": lines(230)}) is None
    monkeypatch.delenv("ENGRAMORY_INDEX_NAME")
    other = work / "elsewhere" / "MEMORY.md"
    monkeypatch.setenv("ENGRAMORY_INDEX_PATH", str(other))
    assert plugin.pre_tool_call("write_file", {"path": "MEMORY.md", "content": lines(230)}) is None
    block(plugin.pre_tool_call("write_file", {"path": str(other), "content": lines(230)}))


def test_store_config_caps_apply(work):
    (work / ".engramory.json").write_text(json.dumps({"version": 1, "hardLines": 50}))
    (work / "MEMORY.md").write_text(lines(40))
    msg = block(plugin.pre_tool_call("write_file", {"path": "MEMORY.md", "content": lines(60)}))
    assert "hard cap 50" in msg


def test_relative_paths_resolve_against_terminal_cwd_then_the_process_cwd(work, tmp_path, monkeypatch):
    (work / "MEMORY.md").write_text(lines(210))
    assert hermes.base_dirs({"TERMINAL_CWD": str(work)})[0] == str(work)
    for sentinel in ("", ".", "auto", "cwd", "relative/dir"):
        assert hermes.base_dirs({"TERMINAL_CWD": sentinel}) == [os.getcwd()]
    assert hermes.base_dirs({}, payload_cwd="/payload")[0] == "/payload"
    monkeypatch.setenv("TERMINAL_CWD", "auto")
    monkeypatch.chdir(work)
    block(plugin.pre_tool_call("write_file", {"path": "MEMORY.md", "content": lines(230)}))


@pytest.mark.parametrize(
    "before, content, after",
    [
        (None, "a\nb\n", b"a\nb\n"),
        (b"x\n", "a\nb\n", b"a\nb\n"),
        (b"x\r\ny\r\n", "a\nb\r\nc\rd", b"a\r\nb\r\nc\r\nd"),
        (b"\xef\xbb\xbfx\n", "a\n", b"\xef\xbb\xbfa\n"),
        (b"\xef\xbb\xbfx\n", "\ufeffa\n", b"\xef\xbb\xbfa\n"),
        (b"x\ny\n" + b"z" * 5000 + b"\r\n", "a\n", b"a\n"),  # CRLF past the first 4 KB: ignored
    ],
)
def test_write_bytes_follow_hermes_line_ending_and_bom_rules(before, content, after):
    assert hermes.write_bytes(before, content) == after
    # and the request handed to the guard predicts exactly those bytes
    req = hermes.write_request("write_file", "/x/MEMORY.md", after)
    assert edits.predict(req, before) == after


def test_a_crlf_index_is_sized_as_hermes_writes_it(work):
    # 200 LF lines fit exactly, but Hermes turns them into CRLF over a CRLF file: 400 more bytes.
    (work / "MEMORY.md").write_bytes(b"x\r\n" * 10)
    body = "y" * 123 + "\n"
    content = body * 200  # 24,800 bytes as LF; 25,000 as CRLF: at the cap, not over
    assert plugin.pre_tool_call("write_file", {"path": "MEMORY.md", "content": content}) is None
    content = body * 199 + "y" * 124 + "\n"  # 24,801 bytes as LF, 25,001 as CRLF
    block(plugin.pre_tool_call("write_file", {"path": "MEMORY.md", "content": content}))


# -- patch, replace mode --------------------------------------------------------------------------


def test_replace_that_grows_an_over_cap_index_is_blocked(work):
    (work / "MEMORY.md").write_text(lines(210))
    msg = block(plugin.pre_tool_call("patch", {"path": "MEMORY.md", "old_string": "- entry 7\n", "new_string": "- entry 7\n- new one\n"}))
    assert "from 210 to 211 lines" in msg
    assert "Estimated" not in msg


def test_replace_that_shrinks_passes(work):
    (work / "MEMORY.md").write_text(lines(210))
    args = {"path": "MEMORY.md", "old_string": "- entry 7\n- entry 8\n", "new_string": "- entry 7\n"}
    assert plugin.pre_tool_call("patch", args) is None


def test_replace_hermes_would_refuse_says_nothing(work):
    (work / "MEMORY.md").write_text(lines(210))
    for args in (
        {"old_string": "", "new_string": lines(50)},  # empty old_string
        {"old_string": "- entry 7\n", "new_string": "- entry 7\n"},  # identical
        {"old_string": "entry 1", "new_string": "entry 1\n" + lines(50)},  # 100+ exact matches
    ):
        args["path"] = "MEMORY.md"
        assert plugin.pre_tool_call("patch", args) is None, args
    assert plugin.pre_tool_call("patch", {"path": "missing/MEMORY.md", "old_string": "a", "new_string": "b" * 30000}) is None


@pytest.mark.parametrize("flag", [True, "true", " TRUE ", 1])
def test_replace_all_counts_every_match_and_accepts_hermes_spellings(work, flag):
    (work / "MEMORY.md").write_text("- tag\n" * 150)
    args = {"path": "MEMORY.md", "old_string": "- tag\n", "new_string": "- tag\n- tag2\n", "replace_all": flag}
    msg = block(plugin.pre_tool_call("patch", args))
    assert "from 150 to 300 lines" in msg


def test_replace_all_false_string_means_false(work):
    (work / "MEMORY.md").write_text("- tag\n" * 150)
    args = {"path": "MEMORY.md", "old_string": "- tag\n", "new_string": "- tag\n- tag2\n", "replace_all": "false"}
    assert plugin.pre_tool_call("patch", args) is None  # Hermes refuses: 150 matches


def test_replace_keeps_crlf_and_bom(work):
    (work / "MEMORY.md").write_bytes(b"\xef\xbb\xbf" + b"- a\r\n" * 3)
    after, estimated = hermes.predict_replace((work / "MEMORY.md").read_bytes(), "- a\r\n- a\r\n- a", "- b\n- c", False, None)
    assert after == b"\xef\xbb\xbf- b\r\n- c\r\n" and not estimated


def test_replace_unescapes_tabs_like_hermes():
    assert hermes.replace_exact("a\tb\n", "a\tb", "a\\tc", False) == "a\tc\n"
    assert hermes.replace_exact("a\\tb\n", "a\\tb", "a\\tc", False) == "a\\tc\n"


def test_replace_only_a_fuzzy_match_could_apply_is_judged_by_size(work):
    (work / "MEMORY.md").write_text(lines(210))
    args = {"path": "MEMORY.md", "old_string": "  - entry 9  \n", "new_string": "- entry 9\n" + lines(5, "- extra")}
    msg = block(plugin.pre_tool_call("patch", args))
    assert "Estimated" in msg and "215" in msg
    shrink = {"path": "MEMORY.md", "old_string": "  - entry 9\n  - entry 10\n", "new_string": "- entry 9\n"}
    assert plugin.pre_tool_call("patch", shrink) is None


# -- patch, V4A mode ---------------------------------------------------------------------------


def v4a(*body: str, markers: bool = True) -> str:
    text = "\n".join(body)
    return "*** Begin Patch\n%s\n*** End Patch" % text if markers else text


def test_v4a_update_growing_an_index_is_blocked(work):
    (work / "MEMORY.md").write_text(lines(210))
    patch = v4a("*** Update File: MEMORY.md", "@@", " - entry 209", "+- added")
    msg = block(plugin.pre_tool_call("patch", {"mode": "patch", "patch": patch}))
    assert "from 210 to 211 lines" in msg


def test_v4a_without_markers_and_with_empty_lines_is_read_like_hermes(work):
    (work / "MEMORY.md").write_text(lines(210, "entry"))
    patch = v4a("*** Update File: MEMORY.md", "", "entry 209", "+entry added", "", markers=False)
    block(plugin.pre_tool_call("patch", {"mode": "patch", "patch": patch}))


def test_v4a_shrink_passes_and_unrelated_files_are_ignored(work):
    (work / "MEMORY.md").write_text(lines(210))
    shrink = v4a("*** Update File: MEMORY.md", "@@", "-- entry 209")
    assert plugin.pre_tool_call("patch", {"mode": "patch", "patch": shrink}) is None
    other = v4a("*** Add File: notes.md", *["+x"] * 500)
    assert plugin.pre_tool_call("patch", {"mode": "patch", "patch": other}) is None


def test_v4a_add_file_and_move_onto_an_index_are_blocked(work):
    add = v4a("*** Add File: new/MEMORY.md", *["+line %d" % i for i in range(201)])
    msg = block(plugin.pre_tool_call("patch", {"mode": "patch", "patch": add}))
    assert "from 0 to 201 lines" in msg  # Hermes adds no final newline: 201 lines, not 202
    (work / "big.md").write_text(lines(300))
    move = v4a("*** Move File: big.md -> store/MEMORY.md")
    # Hermes moves with a plain mv: into a folder that does not exist the move fails
    assert plugin.pre_tool_call("patch", {"mode": "patch", "patch": move}) is None
    (work / "store").mkdir()
    msg = block(plugin.pre_tool_call("patch", {"mode": "patch", "patch": move}))
    assert "from 0 to 300 lines" in msg
    # ...and an earlier Add File in the same patch makes the folder
    both = v4a("*** Add File: made/x.md", "+x", "*** Move File: big.md -> made/MEMORY.md")
    block(plugin.pre_tool_call("patch", {"mode": "patch", "patch": both}))


def test_v4a_hermes_would_refuse_says_nothing(work):
    (work / "MEMORY.md").write_text(lines(210))
    (work / "big.md").write_text(lines(300))
    for patch in (
        v4a("*** Update File: MEMORY.md", "@@", " - entry 1", "+- x"),  # ambiguous: entry 1, 10, 100...
        v4a("*** Move File: big.md -> MEMORY.md"),  # destination exists
        v4a("*** Update File: MEMORY.md", "@@ nowhere @@", "+- x"),  # hint not found
        v4a("*** Update File: MEMORY.md"),  # no hunks: a parse error
        v4a("*** Update File: MEMORY.md", "@@", " - entry 209"),  # context only: no changes
        v4a("*** Add File: MEMORY2.md", "+x", "*** Delete File: nope/MEMORY.md"),
    ):
        assert plugin.pre_tool_call("patch", {"mode": "patch", "patch": patch}) is None, patch


def test_v4a_addition_only_hunks_follow_hermes(work):
    text = "# head\n- a\n"
    op = hermes_v4a.parse_v4a(v4a("*** Update File: m", "@@ # head @@", "+- new"))[0]
    assert hermes_v4a.apply_update(hermes, text, op) == ("# head\n- new\n- a\n", False)
    op = hermes_v4a.parse_v4a(v4a("*** Update File: m", "@@", "+- new"))[0]
    assert hermes_v4a.apply_update(hermes, text + "\n\n", op) == ("# head\n- a\n- new\n", False)


def test_v4a_delete_of_an_index_passes(work):
    (work / "MEMORY.md").write_text(lines(300))
    patch = v4a("*** Delete File: MEMORY.md")
    assert plugin.pre_tool_call("patch", {"mode": "patch", "patch": patch}) is None


def test_v4a_fuzzy_hunk_is_estimated(work):
    (work / "MEMORY.md").write_text(lines(210))
    patch = v4a("*** Update File: MEMORY.md", "@@", "-  - entry 209  ", "+- entry 209", "+- more", "+- more 2")
    msg = block(plugin.pre_tool_call("patch", {"mode": "patch", "patch": patch}))
    assert "Estimated" in msg


def test_parse_v4a_matches_hermes_dialect():
    ops = hermes_v4a.parse_v4a(
        "junk before\n*** Begin Patch\n*** Update File: a.md\n@@ hint @@\n ctx\nbare ctx\n-old\n+new\n\n"
        "*** Add File: b.md\n+l1\n ctx ignored\n+l2\n*** Move File: c.md -> d.md\n*** Delete File: e.md\n"
        "*** End Patch\n*** Add File: after-end.md\n+x"
    )
    assert [(o.kind, o.path, o.move_to) for o in ops] == [
        ("update", "a.md", None), ("add", "b.md", None), ("update", "c.md", "d.md"), ("delete", "e.md", None),
    ]
    hunk = ops[0].hunks[0]
    assert hunk.context == "hint" and hunk.old == ["ctx", "bare ctx", "old"] and hunk.new == ["ctx", "bare ctx", "new"]
    assert ops[1].content == "l1\nl2"


# -- the callback contract ------------------------------------------------------------------------


def test_callback_accepts_unknown_kwargs_and_odd_input(work):
    kw = {"task_id": "t", "session_id": "s", "tool_call_id": "c", "turn_id": "", "api_request_id": "",
          "middleware_trace": [], "telemetry_schema_version": "hermes.observer.v1", "brand_new": object()}
    assert plugin.pre_tool_call("write_file", {"path": "x.md", "content": "a"}, **kw) is None
    for tool, args in (
        (None, None), ("write_file", None), ("write_file", "not a dict"), ("write_file", {"path": 5}),
        ("write_file", {"path": "MEMORY.md"}), ("patch", {"mode": "weird", "path": "MEMORY.md"}),
        ("patch", {"mode": "patch", "patch": 7}), ("terminal", {"command": "rm -rf /"}),
        ("write_file", {"path": "a\x00/MEMORY.md", "content": "x"}),
    ):
        assert plugin.pre_tool_call(tool, args) is None
    assert plugin.pre_tool_call() is None


def test_callback_swallows_its_own_errors(work, monkeypatch, capsys):
    (work / "MEMORY.md").write_text(lines(210))

    def boom(*a, **k):
        raise RuntimeError("deliberate")

    monkeypatch.setattr(plugin, "decide", boom)
    assert plugin.pre_tool_call("write_file", {"path": "MEMORY.md", "content": lines(300)}) is None
    assert "internal error, tool allowed" in capsys.readouterr().err
    monkeypatch.setattr(plugin, "decide", lambda *a, **k: (_ for _ in ()).throw(RecursionError()))
    assert plugin.pre_tool_call("write_file", {"path": "MEMORY.md", "content": "x"}) is None


def test_warn_zone_nudge_reaches_the_result(work):
    (work / "MEMORY.md").write_text(lines(10))
    assert plugin.pre_tool_call("write_file", {"path": "MEMORY.md", "content": lines(160)}, tool_call_id="c1") is None
    out = plugin.transform_tool_result("write_file", result='{"bytes_written": 5}', tool_call_id="c1")
    assert "warn cap" in json.loads(out)["engramory"]
    assert plugin.transform_tool_result("write_file", result='{"bytes_written": 5}', tool_call_id="c1") is None
    plugin.pre_tool_call("write_file", {"path": "MEMORY.md", "content": lines(160)}, tool_call_id="c2")
    assert plugin.transform_tool_result("write_file", result='{"error": "x"}', tool_call_id="c2") is None
    assert plugin.transform_tool_result(result=None) is None


def test_register_hooks_both_callbacks():
    seen = {}

    class Ctx:
        def register_hook(self, name, fn):
            seen[name] = fn

    plugin.register(Ctx())
    assert seen == {"pre_tool_call": plugin.pre_tool_call, "post_tool_call": plugin.post_tool_call,
                    "transform_tool_result": plugin.transform_tool_result}


def test_read_file_records_and_a_stale_write_is_blocked_per_session_and_task(work):
    index = work / "MEMORY.md"
    index.write_text(lines(5), encoding="utf-8")
    read = json.dumps({"content": "...", "total_lines": 5})
    plugin.post_tool_call("read_file", {"path": "MEMORY.md"}, read, task_id="t1", session_id="s1")
    plugin.post_tool_call("read_file", {"path": "MEMORY.md"}, '{"error": "x"}', task_id="t2", session_id="s1")
    with index.open("a", encoding="utf-8") as f:
        f.write("- foreign line\n")
    stale_write = {"path": "MEMORY.md", "content": lines(5) + "- mine\n"}
    result = plugin.pre_tool_call("write_file", stale_write, task_id="t1", session_id="s1")
    assert result is not None and result["action"] == "block"
    assert "another writer added 1 line" in result["message"] and "- foreign line" in result["message"]
    # no record: another task of that session (its read failed), another session, no session id
    assert plugin.pre_tool_call("write_file", stale_write, task_id="t2", session_id="s1") is None
    assert plugin.pre_tool_call("write_file", stale_write, task_id="t1", session_id="s2") is None
    assert plugin.pre_tool_call("write_file", stale_write, task_id="t1") is None
    # after one more read the same write goes through
    plugin.post_tool_call("read_file", {"path": str(index)}, read, task_id="t1", session_id="s1")
    assert plugin.pre_tool_call("write_file", stale_write, task_id="t1", session_id="s1") is None


def test_post_tool_call_ignores_other_tools_and_files_and_never_raises(work):
    (work / "notes.md").write_text("x\n", encoding="utf-8")
    assert plugin.post_tool_call("read_file", {"path": "notes.md"}, "{}", session_id="s") is None
    assert plugin.post_tool_call("terminal", {"command": "cat MEMORY.md"}, "{}", session_id="s") is None
    assert plugin.post_tool_call("read_file", None, None) is None
    assert plugin.post_tool_call("read_file", {"path": "MEMORY.md"}, object(), session_id="s") is None
    assert not (work / ".engramory").exists()


def test_no_hermes_internals_outside_hermes():
    assert "hermes_cli" not in sys.modules
    assert hermes.hermes_internals() is None


def test_plugin_init_has_no_memory_provider_words():
    with open(os.path.join(ROOT, "hermes", "engramory", "__init__.py"), encoding="utf-8") as f:
        text = f.read()
    assert "MemoryProvider" not in text and "register_memory_provider" not in text


# -- the shell hook, as Hermes runs it --------------------------------------------------------------


def run_hook(payload, env_extra, cwd):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAMORY_", "TERMINAL_CWD"))}
    env.update(env_extra)
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run([sys.executable, "-I", "-S", SHELL_HOOK, "hermes"], input=data, capture_output=True, env=env, cwd=cwd, timeout=30)


def shell_payload(tool, args, cwd):
    return {"hook_event_name": "pre_tool_call", "tool_name": tool, "tool_input": args, "session_id": "s",
            "cwd": cwd, "extra": {"task_id": "t", "tool_call_id": "c"}}


def test_shell_hook_blocks_on_stdout_and_exits_0(work, tmp_path):
    (work / "MEMORY.md").write_text(lines(210))
    payload = shell_payload("write_file", {"path": "MEMORY.md", "content": lines(230)}, str(work))
    proc = run_hook(payload, {"HERMES_HOME": str(tmp_path / "hermes_home")}, str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["action"] == "block" and "from 210 to 230 lines" in out["message"]


def test_shell_hook_prints_nothing_on_allow_and_fails_open(work, tmp_path):
    env = {"HERMES_HOME": str(tmp_path / "hermes_home")}
    (work / "MEMORY.md").write_text(lines(210))
    shrink = shell_payload("write_file", {"path": "MEMORY.md", "content": lines(20)}, str(work))
    for payload in (shrink, b"not json", b"", b"[1]", shell_payload("terminal", {"command": "x"}, str(work))):
        proc = run_hook(payload, env, str(tmp_path))
        assert proc.returncode == 0 and proc.stdout == b"", (payload, proc.stdout, proc.stderr)


def test_shell_hook_accepts_the_hooks_test_payload_shape(work, tmp_path):
    payload = {"args": {"path": str(work / "MEMORY.md"), "content": lines(230)}, "tool_name": "write_file"}
    proc = run_hook(payload, {"HERMES_HOME": str(tmp_path / "hermes_home")}, str(tmp_path))
    assert json.loads(proc.stdout)["action"] == "block"


def test_shell_hook_from_a_broken_copy_allows(tmp_path):
    hooks = tmp_path / "copy" / "hooks"
    hooks.mkdir(parents=True)
    with open(LEGACY_SHELL_HOOK, "rb") as f:
        (hooks / "engramory_hermes_shell_hook.py").write_bytes(f.read())
    proc = subprocess.run([sys.executable, "-I", "-S", str(hooks / "engramory_hermes_shell_hook.py")],
                          input=b"{}", capture_output=True, timeout=30)
    assert proc.returncode == 0 and proc.stdout == b"" and b"cannot load the bundle" in proc.stderr

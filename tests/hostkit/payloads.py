"""Each host's hook payloads, in its own dialect: a call the guard leaves at once (the ignored
path) and a growing edit of an index (a deny), per event the host wires. For the hook bench
(bench/bench_hooks.py) and the test of which modules a hook loads (tests/test_hook_modules.py).
A host whose installer smoke-runs a payload of its documented shape (settingshooks.Spec.
smoke_deny) needs no row: that shape is used. The index is a 199-line MEMORY.md in `cwd`
(the deny adds five lines to it); `other` is a file no host guards.
"""

from __future__ import annotations

import importlib
import json
import os
from typing import Callable, Dict, List, Optional, Tuple

from engramory import hosts
from engramory.install import settingshooks

OLD = "- [n5](n5.md) - hook\n"
GROW = "".join("- [g%d](g%d.md) - more\n" % (i, i) for i in range(5))
INDEX = "".join("- [n%d](n%d.md) - hook\n" % (i, i) for i in range(199))


def _claude(event: str, tool: str, args: Dict[str, object], cwd: str) -> bytes:
    return json.dumps({"session_id": "bench", "hook_event_name": event, "tool_name": tool, "tool_input": args,
                       "cwd": cwd, "source": "startup", "prompt": "go",
                       "tool_response": {"stdout": "a\n", "stderr": ""}}).encode()


# What each JS plugin asks its Python hook, by the plugin's own event (engramory/hosts/<host>/
# install.py): `before` only for a guarded tool (so its ignored call is an edit of another file),
# `read` after a read tool, `after` after a shell tool, `start` once a session.
PLUGIN_EVENTS: Dict[str, Tuple[str, ...]] = {
    "opencode": ("before", "read", "after", "start"),
    "kilo": ("before", "read", "after", "start"),
    "cline": ("before", "after", "start"),
    "openclaw": ("before", "read", "start"),
}


def plugin_payloads(host: str, event: str, index: str, other: str, cwd: str) -> Tuple[bytes, Optional[bytes]]:
    """(the ignored call, the deny or None) a JS plugin of `host` sends for its `event`."""
    edit = {"filePath": other, "oldString": "x = 1\n", "newString": "x = 2\n"}
    deny = payloads(host, "", index, other, cwd)[1] if event == "before" else None
    if host == "cline":
        base: Dict[str, object] = {"event": event, "cwd": cwd}
        shaped = {"before": dict(tool="editor", input={"path": other, "old_text": "x = 1\n", "new_text": "x = 2\n"}),
                  "after": dict(tool="run_commands")}
    elif host == "openclaw":
        base = {"event": event, "sessionId": "bench"}
        shaped = {"before": dict(tool="edit", params={"path": other, "edits": [{"oldText": "x = 1\n", "newText": "x = 2\n"}]}),
                  "read": dict(tool="read", params={"path": other})}
    else:
        base = {"event": event, "directory": cwd, "sessionID": "bench"}
        shaped = {"before": dict(tool="edit", args=edit), "read": dict(tool="read", args={"filePath": other}),
                  "after": dict(tool="bash")}
    return json.dumps(dict(base, **shaped.get(event, {}))).encode(), deny


def payloads(host: str, event: str, index: str, other: str, cwd: str) -> Tuple[bytes, Optional[bytes]]:
    """(the ignored call, the deny or None when the event has no deny) in `host`'s dialect."""
    edit = {"file_path": index, "old_string": OLD, "new_string": OLD + GROW}
    plugin = {"event": "before", "directory": cwd, "cwd": cwd, "sessionID": "bench"}
    added = "".join("+" + line for line in (OLD + GROW).splitlines(True))
    patch = "*** Begin Patch\n*** Update File: MEMORY.md\n@@\n-%s%s*** End Patch\n" % (OLD, added)
    table: Dict[str, Callable[[], Tuple[bytes, Optional[bytes]]]] = {
        "claude": lambda: (_claude(event or "PreToolUse", "Bash", {"file_path": other, "command": "ls -la"}, cwd),
                           _claude("PreToolUse", "Edit", edit, cwd) if event == "PreToolUse" else None),
        "cursor": lambda: (json.dumps({"hook_event_name": "preToolUse", "cwd": cwd, "tool_name": "Read", "tool_input": {"file_path": other}}).encode(),
                           json.dumps({"hook_event_name": "preToolUse", "cwd": cwd, "tool_name": "StrReplace",
                                       "tool_input": {"path": index, "old_string": OLD, "new_string": OLD + GROW}}).encode()),
        "codex": lambda: (_claude(event, "Bash", {"command": "ls -la"}, cwd),
                          _claude("PreToolUse", "apply_patch", {"command": patch}, cwd) if event == "PreToolUse" else None),
        "gemini": lambda: (_claude(event, "read_file" if event == "BeforeTool" else "run_shell_command", {"file_path": other, "command": "ls"}, cwd),
                           _claude("BeforeTool", "replace", {"file_path": index, "old_string": OLD, "new_string": OLD + GROW}, cwd)
                           if event == "BeforeTool" else None),
        "qwen": lambda: (_claude(event, "read_file" if event == "PreToolUse" else "run_shell_command", {"file_path": other, "command": "ls"}, cwd),
                         _claude("PreToolUse", "edit", edit, cwd) if event == "PreToolUse" else None),
        "droid": lambda: (_claude(event, "Read" if event == "PreToolUse" else "Execute", {"file_path": other, "command": "ls"}, cwd),
                          _claude("PreToolUse", "Edit", {"file_path": index, "old_str": OLD, "new_str": OLD + GROW}, cwd)
                          if event == "PreToolUse" else None),
        "copilot": lambda: (json.dumps({"cwd": cwd, "sessionId": "bench", "toolName": "bash", "toolArgs": {"command": "ls"},
                                        "toolResult": {"resultType": "success", "textResultForLlm": "a\n"}, "source": "new"}).encode(),
                            json.dumps({"cwd": cwd, "toolName": "edit", "toolArgs": {"path": index, "old_str": OLD, "new_str": OLD + GROW}}).encode()
                            if event == "preToolUse" else None),
        "opencode": lambda: (json.dumps(dict(plugin, tool="read", args={"filePath": other})).encode(),
                             json.dumps(dict(plugin, tool="edit", args={"filePath": index, "oldString": OLD, "newString": OLD + GROW})).encode()),
        "cline": lambda: (json.dumps(dict(plugin, tool="read_files", input={"paths": [other]})).encode(),
                          json.dumps(dict(plugin, tool="editor", input={"path": index, "old_text": OLD, "new_text": OLD + GROW})).encode()),
        "openclaw": lambda: (json.dumps({"event": "before", "tool": "read", "params": {"path": other}}).encode(),
                             json.dumps({"event": "before", "tool": "edit", "params": {"path": index, "edits": [{"oldText": OLD, "newText": OLD + GROW}]}}).encode()),
    }
    table["kilo"] = table["opencode"]
    table["hermes"] = lambda: (
        json.dumps({"hook_event_name": "pre_tool_call", "cwd": cwd, "tool_name": "read_file", "tool_input": {"path": other}}).encode(),
        json.dumps({"hook_event_name": "pre_tool_call", "cwd": cwd, "tool_name": "patch",
                    "tool_input": {"mode": "replace", "path": index, "old_string": OLD, "new_string": OLD + GROW}}).encode())
    spec = getattr(importlib.import_module(hosts.load(host).INSTALLER), "SPEC", None)
    if host not in table and getattr(spec, "smoke_deny", None) is not None:
        # a host whose installer smoke-runs a payload of its own documented shape: that shape
        smoke = os.path.join(cwd, "smoke-" + host)
        os.makedirs(smoke, exist_ok=True)
        full, content = settingshooks.smoke_index(smoke)
        return (json.dumps(spec.smoke_deny(cwd, other, "x\n" * 50)).encode(),
                json.dumps(spec.smoke_deny(cwd, full, content)).encode())
    if host not in table:
        raise LookupError("no payloads for host %r: add its row to tests/hostkit/payloads.py" % host)
    return table[host]()


def extra_payloads(host: str, event: str, index: str, other: str, cwd: str) -> List[Tuple[str, bytes, bool]]:
    """(what the call is, the payload, whether it is denied) for calls of `event` the two rows
    of payloads() do not cover: Claude Code's Bash writes the guard judges before they run (a
    heredoc append that grows the index), and its PostToolUse on Read (installs since issue 22),
    which every Read pays, of another file and of the index (then it records what was shown);
    Hermes's shell hook on a write_file of another file (its matcher passes no read)."""
    if host == "hermes" and event == "pre_tool_call":  # its matcher is write_file|patch: a write of another file
        return [("write_file other", json.dumps({"hook_event_name": event, "cwd": cwd, "tool_name": "write_file",
                                                 "tool_input": {"path": other, "content": "x = 2\n"}}).encode(), False)]
    if host != "claude":
        return []
    if event == "PreToolUse":
        heredoc = "cat >> %s <<'EOF'\n%sEOF\n" % (index, GROW)
        return [("Bash write", _claude(event, "Bash", {"command": heredoc}, cwd), True),
                ("Bash other", _claude(event, "Bash", {"command": "cat > %s <<'EOF'\nx = 3\nEOF\n" % other}, cwd), False)]
    if event == "PostToolUse":
        return [("Read", _read(other, cwd), False), ("Read index", _read(index, cwd), False)]
    return []


def _read(path: str, cwd: str) -> bytes:
    """Claude Code's PostToolUse of a Read: its tool_response carries the whole text it read
    (`file.content`, with the line counts), so the hook must not parse what it does not need."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        text = ""
    lines = text.count("\n")
    payload = json.loads(_claude("PostToolUse", "Read", {"file_path": path}, cwd))
    payload["tool_response"] = {"type": "text", "file": {"filePath": path, "content": text, "numLines": lines,
                                                         "startLine": 1, "totalLines": lines}}
    return json.dumps(payload).encode()


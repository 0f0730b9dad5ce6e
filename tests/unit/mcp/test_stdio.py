"""Stdout purity and robustness of the real server process (tools/engramory.py under -I -S):
1,000 requests, a third of them malformed (bad JSON, non-UTF-8, unknown methods, wrong params,
huge strings, bad ids, batches), are each answered, every stdout byte is a JSON-RPC response,
and the process keeps running to the end of its input. A print, a raw write to fd 1 or a
warning from anything in the process goes to stderr, never into the protocol stream. The
runtime never imports the `mcp` SDK."""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any, List, Optional, Tuple

from engramory.mcp import protocol
from tests.conftest import ROOT
from tests.unit.mcp.mcpkit import ENTRY, init, make_store, msg, note_text, serve

HUGE = "h" * (2 << 20)


def valid(rng: random.Random, i: int) -> Tuple[bytes, Optional[int]]:
    kind = rng.randrange(6)
    if kind == 0:
        return msg(i, "ping"), i
    if kind == 1:
        return msg(i, "tools/list"), i
    if kind == 2:
        return msg(i, "tools/call", {"name": "memory_view", "arguments": {"path": rng.choice(
            ["/memories", "/memories/MEMORY.md", "/memories/ref-001.md", "/memories/nope.md"])}}), i
    if kind == 3:
        return msg(i, "tools/call", {"name": "memory_search", "arguments": {"query": rng.choice(
            ["dashboard", "alpha", "\u65e5\u672c", "zzz"])}}), i
    name = "n%d" % i
    return msg(i, "tools/call", {"name": "memory_edit", "arguments": {
        "command": "create", "path": "/memories/%s.md" % name,
        "file_text": note_text(name, "Fact number %d about the %s service" % (i, rng.choice(["billing", "search"])),
                               "user")}}), i


def malformed(rng: random.Random, i: int) -> Tuple[bytes, Optional[int]]:
    """(a line, the id its answer carries: None for an id-less error, -1 for no answer)."""
    kind = rng.randrange(10)
    if kind == 0:
        return b'{"jsonrpc":"2.0","id":%d,"method":' % i, None
    if kind == 1:
        return b"\xff\xfe\x80 not utf-8 \xc3\x28", None
    if kind == 2:
        return msg(i, "no/such/method"), i
    if kind == 3:
        return msg(i, "tools/call", {"name": "memory_view", "arguments": "not an object"}), i
    if kind == 4:
        return msg(i, "tools/call", {"name": "memory_search", "arguments": {"query": HUGE}}), i
    if kind == 5:
        return msg(i, "tools/call", {"name": "memory_edit", "arguments": {
            "command": "create", "path": "/memories/huge-%d.md" % i, "file_text": HUGE}}), i
    if kind == 6:
        return b'{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}', None
    if kind == 7:
        return b'[{"jsonrpc":"2.0","id":%d,"method":"ping"}]' % i, None
    if kind == 8:
        return msg(i, "tools/call", {"name": "unknown_tool", "arguments": {}}), i
    return b'"just a string"', None


def test_a_thousand_requests_a_third_malformed_each_answered_with_json_rpc(tmp_path: Path) -> None:
    root = make_store(tmp_path / "store")
    rng = random.Random(25)
    lines, expect = list(init()), [0]
    for i in range(1, 1001):
        line, answer_id = (malformed if i % 3 == 0 else valid)(rng, i)
        lines.append(line.rstrip(b"\n") + b"\n")
        expect.append(answer_id if answer_id is not None else -2)  # -2: an error with id null
    lines.append(b"x" * (protocol.MESSAGE_MAX + 100) + b"\n")  # over the message limit, read in pieces
    expect.append(-2)
    lines.append(msg(2000, "ping"))
    expect.append(2000)
    done = serve(root, lines, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert out.endswith(b"\n")
    answers: List[Any] = []
    for raw in out.split(b"\n")[:-1]:
        obj = json.loads(raw.decode("utf-8"))  # every byte is UTF-8 JSON, one message a line
        assert isinstance(obj, dict) and obj.get("jsonrpc") == "2.0" and ("result" in obj) != ("error" in obj)
        answers.append(obj)
    assert len(answers) == len(expect)
    for obj, want in zip(answers, expect):
        assert obj["id"] == (None if want == -2 else want), obj
    assert answers[-1] == {"jsonrpc": "2.0", "id": 2000, "result": {}}
    assert b"Traceback" not in done.stderr


def test_nothing_else_in_the_process_reaches_the_protocol_stream(tmp_path: Path) -> None:
    code = ("import os, sys, warnings\n"
            "sys.path.insert(0, %r)\n"
            "from engramory.commands.mcp import protocol_stdout\n"
            "out = protocol_stdout()\n"
            "print('a print'); sys.stdout.write('a write\\n'); os.write(1, b'a raw write\\n')\n"
            "warnings.warn('a warning')\n"
            "out.write(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\\n')\n" % str(ROOT))
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'
    for noise in (b"a print", b"a write", b"a raw write", b"a warning"):
        assert noise in done.stderr


def test_the_server_refuses_a_root_that_is_missing_or_relative(tmp_path: Path) -> None:
    for root, code in ((str(tmp_path / "missing"), 66), ("relative/store", 64)):
        done = subprocess.run(ENTRY + ["--root", root], input=b"", capture_output=True, timeout=60)
        assert done.returncode == code and done.stdout == b"", done.stderr
        assert b"engramory mcp:" in done.stderr and b"Traceback" not in done.stderr


def test_the_runtime_never_imports_the_sdk(tmp_path: Path) -> None:
    for path in sorted((ROOT / "engramory").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            assert not any(n == "mcp" or n.startswith("mcp.") for n in names), path
    root = make_store(tmp_path / "store")
    code = ("import sys, runpy\nsys.argv = ['engramory', 'mcp', '--root', %r]\nsys.path.insert(0, %r)\n"
            "from engramory.commands import mcp\ntry:\n    mcp.main(sys.argv[2:])\nfinally:\n"
            "    sys.stderr.write('MODULES ' + ' '.join(sorted(m for m in sys.modules if m == 'mcp' or "
            "m.startswith(('mcp.', 'pydantic', 'anyio')))) + '\\n')\n" % (str(root), str(ROOT)))
    lines = init() + [msg(1, "tools/call", {"name": "memory_search", "arguments": {"query": "alpha"}})]
    done = subprocess.run([sys.executable, "-I", "-c", code], input=b"".join(lines), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert b"MODULES \n" in done.stderr, done.stderr

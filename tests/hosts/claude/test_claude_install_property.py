"""Install then uninstall, on generated settings files: the user's bytes and mode come back
exactly, and after install the host can still parse the file.

The files are generated as text, so that what matters survives into the test: numbers at the
float edges written as a user wrote them (`1e400`, `5e-324`, `-0`, 30-digit integers), unicode
escapes (`\\u00e9`, surrogate pairs, a lone surrogate), BOM, CRLF, tabs or no indent at all,
foreign hooks, modes 0600/0640/0644, and settings.json kept as a symlink into a dotfiles
folder. "The host can parse it" is checked with a parser as strict as Claude Code's
JSON.parse: node's own JSON.parse when node is on PATH, and always Python's json with NaN and
Infinity refused; then every foreign key must mean what it meant before.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engramory.hosts.claude import install
from engramory.install import bundle as installer_bundle
from engramory.install import jsonedit

NUMBERS = ["1e400", "-1e400", "5e-324", "4.9e-324", "2.5e-400", "1.7976931348623157e308", "0.1", "1E+2",
           "-0", "-0.0", "123456789012345678901234567890", "9007199254740993", "0", "10"]
NODE = shutil.which("node")


def _escape(ch: str, style: int) -> str:
    if ch in '"\\':
        return "\\" + ch
    if ord(ch) < 0x20:
        return "\\u%04x" % ord(ch)
    if style == 0 or ord(ch) < 0x80 and style == 1:
        return ch
    if ord(ch) > 0xFFFF:
        code = ord(ch) - 0x10000
        return "\\u%04x\\u%04X" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))
    return "\\u%04x" % ord(ch)


@st.composite
def json_strings(draw: Any) -> str:
    text = draw(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8))
    style = draw(st.integers(0, 2))
    body = "".join(_escape(c, style) for c in text)
    if draw(st.integers(0, 9)) == 0:
        body += "\\ud800"  # a lone surrogate: JSON.parse reads it
    return '"%s"' % body


@st.composite
def values(draw: Any, depth: int = 0) -> str:
    kind = draw(st.integers(0, 5 if depth < 2 else 2))
    if kind == 0:
        return draw(st.sampled_from(NUMBERS))
    if kind == 1:
        return draw(json_strings())
    if kind == 2:
        return draw(st.sampled_from(["true", "false", "null"]))
    if kind == 3:
        items = draw(st.lists(values(depth + 1), max_size=3))
        return "[" + ", ".join(items) + "]"
    return draw(objects(depth + 1))


@st.composite
def objects(draw: Any, depth: int = 0) -> str:
    keys = draw(st.lists(json_strings(), max_size=3, unique_by=lambda k: json.loads(k)))
    return "{" + ", ".join("%s: %s" % (k, draw(values(depth + 1))) for k in keys) + "}"


FOREIGN_HOOKS = '"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/x", "timeout": 1e1}]}]}'


@st.composite
def settings_files(draw: Any) -> bytes:
    keys = draw(st.lists(json_strings(), max_size=5, unique_by=lambda k: json.loads(k)))
    keys = [k for k in keys if json.loads(k) != "hooks"]
    members = ["%s: %s" % (k, draw(values())) for k in keys]
    if draw(st.booleans()):
        members.insert(draw(st.integers(0, len(members))), FOREIGN_HOOKS)
    indent = draw(st.sampled_from([None, "", "  ", "    ", "\t"]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    if indent is None:
        text = "{" + ", ".join(members) + "}"
    elif not members:
        text = draw(st.sampled_from(["{}", "{" + newline + "}", "{ }"]))
    else:
        text = "{" + newline + ("," + newline).join(indent + m for m in members) + newline + "}"
    if draw(st.booleans()):
        text += newline
    raw = text.encode("utf-8", "surrogatepass")
    return (b"\xef\xbb\xbf" + raw) if draw(st.booleans()) else raw


def host_parses(raw: bytes) -> Any:
    body = raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw

    def refuse(name: str) -> Any:
        raise ValueError("%s is not JSON" % name)

    data = json.loads(body.decode("utf-8"), parse_constant=refuse)
    if NODE is not None:
        proc = subprocess.run([NODE, "-e", "JSON.parse(require('fs').readFileSync(0, 'utf8'))"], input=body,
                              capture_output=True, timeout=60)
        assert proc.returncode == 0, proc.stderr.decode()
    return data


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(raw=settings_files(), mode=st.sampled_from([0o600, 0o640, 0o644]), linked=st.booleans())
def test_install_uninstall_restores_bytes_and_mode(
    raw: bytes, mode: int, linked: bool, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bytecode of the copied bundle has nothing to do with the settings file: skip that cost.
    monkeypatch.setattr(installer_bundle, "precompile", lambda folder: None)
    tmp = tmp_path_factory.mktemp("prop")
    config = tmp / "config"
    config.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    monkeypatch.setenv("HOME", str(tmp))
    settings_path = config / "settings.json"
    real = settings_path
    if linked:
        real = tmp / "dotfiles" / "settings.json"
        real.parent.mkdir()
        settings_path.symlink_to(real)
    real.write_bytes(raw)
    os.chmod(real, mode)
    before = jsonedit.parse((raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw).decode("utf-8", "surrogatepass")).value

    assert install.install(install.Target("user")) == 0
    after = real.read_bytes()
    assert stat.S_IMODE(os.stat(real).st_mode) == mode
    assert settings_path.is_symlink() == linked
    host_parses(after)
    edited = jsonedit.parse((after[3:] if after.startswith(b"\xef\xbb\xbf") else after).decode("utf-8", "surrogatepass")).value
    for key, value in before.items():
        if key != "hooks":
            assert jsonedit.canonical(edited[key]) == jsonedit.canonical(value)
    for number in NUMBERS:
        assert after.count(number.encode()) >= raw.count(number.encode())  # numbers as written
    for backup in install.backups_of(str(settings_path)):
        assert stat.S_IMODE(os.stat(backup).st_mode) == mode  # a 0600 file's backup is 0600
        assert Path(backup).read_bytes() == raw

    assert install.uninstall(install.Target("user")) == 0
    assert real.read_bytes() == raw
    assert stat.S_IMODE(os.stat(real).st_mode) == mode
    assert settings_path.is_symlink() == linked

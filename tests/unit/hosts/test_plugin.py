"""The JS-plugin dialect held once (engramory.hosts.plugin): what every plugin host answers the
same way, the names it spells so that a host's tool table costs no import, and the session a
write is judged with (judge.session_for)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engramory import judge, stale
from engramory.hosts import claudelike, copilot, plugin
from engramory.store import metadir
from tests.conftest import ROOT, index_text

PLUGIN_HOSTS = ("opencode", "kilo", "cline", "openclaw")


def test_the_spelled_names_are_the_ones_they_stand_for() -> None:
    assert (plugin.WRITE, plugin.EDIT, plugin.POST, plugin.START) == (
        claudelike.WRITE, claudelike.EDIT, claudelike.POST, claudelike.START)
    assert (copilot.WRITE, copilot.EDIT) == (claudelike.WRITE, claudelike.EDIT)
    assert copilot.EVENTS == {copilot.PRE: claudelike.PRE, copilot.POST: claudelike.POST, copilot.START: claudelike.START}
    assert judge.SEEN_DIR == stale.SEEN_DIR == (metadir.DIR, metadir.SEEN)


def _ask(host: str, payload: object, cwd: Path) -> tuple[str, list[str]]:
    code = ("import sys; sys.path.insert(0, %r); import engramory.hosts.%s as m; before = set(sys.modules); "
            "print(m.respond(sys.stdin.buffer.read(), {'HOME': %r, 'TMPDIR': %r})[0]); "
            "print(sorted(set(sys.modules) - before))" % (str(ROOT), host, str(cwd), str(cwd)))
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], input=raw, capture_output=True, check=True, cwd=cwd)
    out, modules = done.stdout.decode().splitlines()
    return out, eval(modules)  # noqa: S307 - our own printout of a list of names


@pytest.mark.parametrize("host", PLUGIN_HOSTS)
@pytest.mark.parametrize("payload", [b"not json", b"[1]", {"event": "nope"}, {"event": "after", "tool": "edit"},
                                     {"event": "before", "tool": "edit", "args": "x", "params": "x", "input": "x"}])
def test_what_no_plugin_host_judges_is_go_on_and_imports_nothing(host: str, payload: object, tmp_path: Path) -> None:
    out, modules = _ask(host, payload, tmp_path)
    # nothing but the JSON reader and the path rules, which every hook loads
    assert out == "{}" and set(modules) <= {"engramory.jsonlite", "engramory.scope"}, (out, modules)


def test_render_is_the_plugins_verdict() -> None:
    assert plugin.render(None) == "{}"
    deny, nudge = judge.Decision(judge.DENY, "no", "/p"), judge.Decision(judge.NUDGE, "careful", "/p")
    assert json.loads(plugin.render(deny)) == {"deny": "no"} and json.loads(plugin.render(nudge)) == {"note": "careful"}


def test_a_session_is_passed_only_for_a_store_that_keeps_records(tmp_path: Path) -> None:
    index = tmp_path / "MEMORY.md"
    index.write_text(index_text(3))
    assert judge.session_for("opencode", "s1", str(index)) is None  # no record folder: no stale import
    assert judge.session_for("opencode", "", str(index)) is None
    stale.note_read(str(index), stale.Session("opencode", "s1"))
    who = judge.session_for("opencode", "s1", str(index))
    assert isinstance(who, stale.Session) and (who.host, who.id) == ("opencode", "s1")
    assert plugin.session("opencode", None, str(index)) is None

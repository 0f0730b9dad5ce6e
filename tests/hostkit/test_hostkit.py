"""The shared scaffolding of the real-CLI suites, without a CLI: the differential judge fails on
every kind of wrong byte, a missing host fails under ENGRAMORY_REQUIRE_E2E and skips without it,
and the loopback models answer as the CLIs expect."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import differential
import hostbase
import pytest
from mock_openai import MockModel
from mock_responses import ResponsesModel, patch_call


def _trace(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _edit(tmp_path: Path, name: str, seed: bytes | None, now: bytes | None, bound: int = 0) -> differential.Edit:
    path = tmp_path / name / "MEMORY.md"
    path.parent.mkdir()
    if now is not None:
        path.write_bytes(now)
    return differential.Edit(path, seed, ("write", {}), bound)


def test_judge_counts_what_held(tmp_path: Path) -> None:
    exact = _edit(tmp_path, "a", b"x\n", b"y\n")
    refused = _edit(tmp_path, "b", b"x\n", b"x\n")
    absent = _edit(tmp_path, "c", None, None)
    bounded = _edit(tmp_path, "d", b"x\n", b"yy\n", bound=2)
    trace = _trace(tmp_path / "t.jsonl", [
        {"path": str(exact.path), "refused": False, "after": b"y\n".hex()},
        {"path": str(refused.path), "refused": True},
        {"path": str(absent.path), "refused": True},
        {"path": str(bounded.path), "refused": False, "after": b"y\n".hex()},
    ])
    outcome = differential.judge([exact, refused, absent, bounded], trace, "Host")
    assert (outcome.exact, outcome.refused, outcome.changed) == (1, 2, 2)


@pytest.mark.parametrize("seed, now, record, bound, says", [
    (b"x\n", b"z\n", {"refused": False, "after": b"y\n".hex()}, 0, "predicted b'y\\n', Host wrote b'z\\n'"),
    (b"x\n", b"y\n", {"refused": True}, 0, "predicted a refusal, Host wrote b'y\\n'"),
    (None, b"y\n", {"refused": True}, 0, "predicted a refusal, Host wrote b'y\\n'"),
    (None, None, {"refused": False, "after": b"y\n".hex()}, 0, "Host wrote nothing"),
    (b"x\n", b"y\ny\n", {"refused": False, "after": b"yy\n".hex()}, 5, "(bound 5 bytes)"),  # a line too many
    (b"x\n", b"y" * 9 + b"\n", {"refused": False, "after": b"y\n".hex()}, 5, "(bound 5 bytes)"),  # past the bound
])
def test_judge_fails_on_every_wrong_byte(tmp_path: Path, seed: bytes | None, now: bytes | None,
                                         record: dict[str, object], bound: int, says: str) -> None:
    edit = _edit(tmp_path, "a", seed, now, bound)
    trace = _trace(tmp_path / "t.jsonl", [dict(record, path=str(edit.path))])
    with pytest.raises(AssertionError) as failed:
        differential.judge([edit], trace, "Host")
    assert says in str(failed.value)


def test_judge_fails_when_the_guard_did_not_see_every_edit(tmp_path: Path) -> None:
    a, b = _edit(tmp_path, "a", b"x\n", b"x\n"), _edit(tmp_path, "b", b"x\n", b"x\n")
    trace = _trace(tmp_path / "t.jsonl", [{"path": str(a.path), "refused": True}])
    with pytest.raises(AssertionError, match="the guard saw 1 of 2 edits"):
        differential.judge([a, b], trace, "Host")
    trace = _trace(tmp_path / "t.jsonl", [{"path": str(p), "refused": True} for p in (a.path, b.path, tmp_path / "c")])
    with pytest.raises(AssertionError, match="and 1 other paths"):
        differential.judge([a, b], trace, "Host")


def test_patches_alternate_a_swap_and_an_addition(tmp_path: Path) -> None:
    made = differential.patches(tmp_path, 4)
    assert [p for p, _, _ in made] == [tmp_path / n / "MEMORY.md" for n in sorted(p.parent.name for p, _, _ in made)]
    assert all(t.startswith("*** Begin Patch\n*** Update File: %s\n@@\n" % p) for p, _, t in made)
    assert ["+- [swap](s.md) x" in t for _, _, t in made] == [True, False, True, False]
    assert ["+- [added](added.md) by patch" in t for _, _, t in made] == [False, True, False, True]


class Absent(hostbase.Host):
    name = "absent"
    title = "Absent CLI"
    here = Path(__file__).resolve().parent
    package = "absent"
    required = ("node_modules/absent/bin/absent",)


def test_a_missing_host_fails_under_require_e2e_and_skips_without(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Absent.missing() == "Absent CLI is not installed in tests/hostkit: run `bash tests/hostkit/ci-install.sh`"
    monkeypatch.setenv("ENGRAMORY_REQUIRE_E2E", "1")
    with pytest.raises(pytest.fail.Exception, match="ENGRAMORY_REQUIRE_E2E is set but Absent CLI is not installed"):
        hostbase.require_cli(Absent)
    monkeypatch.setenv("ENGRAMORY_REQUIRE_E2E", "0")
    with pytest.raises(pytest.skip.Exception):
        hostbase.require_cli(Absent)


def _post(url: str, body: dict[str, object]) -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, data=json.dumps(body).encode()), timeout=10) as r:
        return bytes(r.read())


def test_the_chat_model_answers_turns_by_the_assistant_messages_so_far() -> None:
    with MockModel([[("write", {"path": "a"})], "second"]) as model:
        first = _post(model.base_url + "/chat/completions", {"tools": [{}], "messages": []})
        second = _post(model.base_url + "/chat/completions", {"tools": [{}], "messages": [{"role": "assistant"}]})
        side = _post(model.base_url + "/chat/completions", {"messages": []})
        streamed = _post(model.base_url + "/chat/completions", {"tools": [{}], "stream": True, "messages": [{"role": "assistant"}]})
    assert json.loads(first)["choices"][0]["message"]["tool_calls"][0]["function"] == {"name": "write", "arguments": '{"path": "a"}'}
    assert json.loads(second)["choices"][0]["message"]["content"] == "second"
    assert json.loads(side)["choices"][0]["message"]["content"] == "Scripted session"
    assert b'"delta": {"content": "second"}' in streamed and streamed.endswith(b"data: [DONE]\n\n")
    assert len(model.turn_requests) == 3 and len(model.requests) == 4 and not model.errors


def test_the_responses_model_streams_a_freeform_patch_call() -> None:
    with ResponsesModel([[patch_call("*** Begin Patch\n*** End Patch")]]) as model:
        out = _post(model.base_url + "/responses", {"tools": [{}]}).decode()
    assert "event: response.custom_tool_call_input.done" in out and "event: response.completed" in out
    assert '"input": "*** Begin Patch\\n*** End Patch"' in out and not model.errors


def test_base_env_drops_what_every_registry_host_inherits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import common

    from engramory import hosts

    planted = ["%s_PLANTED" % name.upper().replace("-", "_") for name in hosts.names()] + ["FACTORY_API_KEY", "GH_TOKEN"]
    for key in planted:
        monkeypatch.setenv(key, "a real account")
    monkeypatch.setenv("ENGRAMORY_KEEP_ME_NOT", "1")
    env = common.base_env(tmp_path, KILO_KEPT="given")
    assert [k for k in planted if k in env] == [] and "ENGRAMORY_KEEP_ME_NOT" not in env
    assert env["KILO_KEPT"] == "given" and env["HOME"] == str(tmp_path)

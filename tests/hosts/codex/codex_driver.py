"""Run one headless Codex CLI session offline: a temporary HOME and CODEX_HOME, a provider
pointing at a ScriptedModel on loopback, and `codex exec --json`. Returns what the model was
shown (every turn request), the JSONL events and the process's output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from codex_model import ScriptedModel

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
VERSION = "0.171.0"
MODEL = "gpt-5.5"  # a bundled slug: with unknown ones Codex offers no apply_patch tool


def codex_binary() -> Path | None:
    configured = os.environ.get("ENGRAMORY_CODEX_BIN", "").strip()
    path = Path(configured) if configured else HERE / "node_modules" / ".bin" / "codex"
    return path if path.exists() else None


def provider_overrides(base_url: str) -> list[str]:
    """`-c` overrides that point Codex at the scripted model, so the user's config.toml holds
    only what the test (or engramory's installer) put there."""
    provider = (
        '{name="scripted",base_url="%s",wire_api="responses",env_key="SCRIPTED_API_KEY",'
        "request_max_retries=0,stream_max_retries=0}" % base_url
    )
    pairs = [
        ('model', '"%s"' % MODEL),
        ("model_provider", '"scripted"'),
        ("model_providers.scripted", provider),
        ("check_for_update_on_startup", "false"),
        ("approval_policy", '"never"'),
        ("sandbox_mode", '"danger-full-access"'),
        ("analytics.enabled", "false"),
        ("feedback.enabled", "false"),
    ]
    out: list[str] = []
    for key, value in pairs:
        out += ["-c", "%s=%s" % (key, value)]
    return out


class Home:
    """An isolated user: HOME, CODEX_HOME (with config.toml) and a work folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.codex_home = self.home / ".codex"
        self.work = root / "work"
        self.codex_home.mkdir(parents=True, exist_ok=True)
        self.work.mkdir(parents=True, exist_ok=True)
        self.config = self.codex_home / "config.toml"

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {
            k: v for k, v in os.environ.items()
            if not k.startswith(("ENGRAMORY_", "CODEX_", "OPENAI_")) and k not in ("HOME",)
        }
        env.update(HOME=str(self.home), CODEX_HOME=str(self.codex_home), SCRIPTED_API_KEY="x", NO_COLOR="1")
        if extra:
            env.update(extra)
        return env


class Result:
    def __init__(self, model: ScriptedModel, proc: subprocess.CompletedProcess[str]) -> None:
        self.requests = model.requests
        self.other_requests = model.other_requests
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.returncode = proc.returncode
        self.events: list[dict[str, Any]] = []
        for line in proc.stdout.splitlines():
            try:
                self.events.append(json.loads(line))
            except ValueError:
                pass

    def tool_outputs(self) -> list[str]:
        """Every tool output the model was shown, in order (each appears once)."""
        seen: dict[str, str] = {}
        for body in self.requests:
            for item in body.get("input", []):
                if item.get("type") in ("custom_tool_call_output", "function_call_output"):
                    out = item.get("output")
                    if isinstance(out, list):
                        out = "".join(p.get("text", "") for p in out if isinstance(p, dict))
                    seen.setdefault(item.get("call_id", str(len(seen))), str(out))
        return list(seen.values())

    def developer_texts(self, request: int = -1) -> list[str]:
        """The developer (and user) message texts of one request (default: the last)."""
        texts = []
        for item in self.requests[request].get("input", []):
            if item.get("type") == "message" and item.get("role") in ("developer", "user"):
                for part in item.get("content", []):
                    if isinstance(part, dict) and isinstance(part.get("text"), str):
                        texts.append(part["text"])
        return texts

    def all_text(self) -> str:
        return json.dumps(self.requests)


def run(
    home: Home,
    steps: list[list[dict[str, Any]]],
    prompt: str = "go",
    extra_args: list[str] | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 180,
    cwd: Path | None = None,
) -> Result:
    binary = codex_binary()
    assert binary is not None, "the Codex CLI is not installed (tests/hosts/codex/ci-install.sh)"
    with ScriptedModel(steps) as model:
        cmd = [str(binary), "exec", "--json", "--skip-git-repo-check", "-C", str(cwd or home.work)]
        cmd += provider_overrides(model.base_url) + (extra_args or [])
        cmd.append(prompt)
        proc = subprocess.run(
            cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, env=home.env(env),
        )
        return Result(model, proc)


def engramory(home: Home, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
              python: str | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m engramory ...` from this checkout, as the user of `home` would run it."""
    run_env = home.env(env)
    run_env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [python or sys.executable, "-m", "engramory", *args], capture_output=True, text=True, timeout=120,
        env=run_env, cwd=str(cwd or home.work),
    )


def hooks_list(home: Home, cwd: Path | None = None, timeout: float = 60) -> list[dict[str, Any]]:
    """Codex's own view of every hook (`codex app-server`, JSON-RPC `hooks/list`): key,
    currentHash, trustStatus (untrusted / trusted / modified / managed), source."""
    binary = codex_binary()
    assert binary is not None
    proc = subprocess.Popen(
        [str(binary), "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env=home.env(), text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        def send(msg: dict[str, Any]) -> None:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(msg) + "\n")
            proc.stdin.flush()

        send({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "engramory-tests", "version": "1"}}})
        deadline = time.monotonic() + timeout
        sent = False
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("id") == 1 and not sent:
                send({"method": "initialized"})
                send({"id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd or home.work)]}})
                sent = True
            elif msg.get("id") == 2:
                if "error" in msg:
                    raise AssertionError("hooks/list failed: %r" % msg["error"])
                result = msg["result"]
                hooks: list[dict[str, Any]] = []
                for entry in result.get("data", result.get("entries", [])):
                    hooks.extend(entry.get("hooks", []) if isinstance(entry, dict) else [])
                return hooks if hooks else [result]
        raise AssertionError("codex app-server gave no hooks/list answer")
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()

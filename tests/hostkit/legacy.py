"""Installs from before the generic hook entry (issue 20), for the JS-plugin hosts: a fresh
install turned into the one the earlier installer left, and the checks that a reinstall over it
leaves only today's form.

The earlier installers' plugin templates are kept byte for byte in
tests/fixtures/plugins-before-generic/ (as each host's installer held them on the commit before
its move), and filled in the way those installers filled them: the interpreter and the entry
script's path, JSON-encoded, in place of "__PYTHON__" and "__SCRIPT__". Their plugin spawned
`python -I -S -c LAUNCHER <bundle>/hooks/<the host's own script>` with nothing after it, and
their bundle's hooks/ held that script alone. Standard library only."""

from __future__ import annotations

import json
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "engramory" / "__init__.py").is_file())
FIXTURES = ROOT / "tests" / "fixtures" / "plugins-before-generic"
ENTRY = "engramory_hook.py"
MANIFEST = ".engramory-install.json"


def old_text(fixture: str, python: str, script: str) -> str:
    """The plugin file the earlier installer wrote for `python` and `script`."""
    template = (FIXTURES / fixture).read_text(encoding="utf-8")
    return template.replace('"__PYTHON__"', json.dumps(python)).replace('"__SCRIPT__"', json.dumps(script))


def consts(text: str) -> List[str]:
    """[PYTHON, SCRIPT] as a plugin file names them."""
    return [json.loads(text.split("const %s = " % name, 1)[1].split(";", 1)[0]) for name in ("PYTHON", "SCRIPT")]


def spawned(text: str) -> List[str]:
    """The argv a plugin file spawns: `PYTHON -I -S -c LAUNCHER SCRIPT`, then HOST when the
    spawn passes it."""
    python, script = consts(text)
    launcher = json.loads(text.split("const LAUNCHER = ", 1)[1].split(";\n", 1)[0])
    argv = [python, "-I", "-S", "-c", launcher, script]
    if '["-I", "-S", "-c", LAUNCHER, SCRIPT, HOST]' in text:
        return argv + [json.loads(text.split("\nconst HOST = ", 1)[1].split(";", 1)[0])]
    assert '["-I", "-S", "-c", LAUNCHER, SCRIPT]' in text, "a plugin file that spawns neither form"
    return argv


def answer(text: str, question: bytes, cwd: Path, env: Dict[str, str]) -> Dict[str, object]:
    """What the Python side of the plugin in `text` answers `question`, run as the plugin runs it."""
    done = subprocess.run(spawned(text), input=question, capture_output=True, cwd=str(cwd), env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout or b"{}")
    assert isinstance(said, dict)
    return said


def engramory(args: List[str], cwd: Path, env: Dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`python -m engramory ARGS` from this checkout, as a user runs it in `cwd`."""
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run([sys.executable, "-m", "engramory", *args], cwd=str(cwd), capture_output=True, text=True,
                          env=dict(env, PYTHONPATH=str(ROOT)), timeout=120)


def make_old(plugin: Path, bundle: Path, fixture: str, script: str) -> str:
    """Turn the fresh install whose plugin file is `plugin` (and bundle `bundle`) into the one the
    earlier installer left: its plugin text running hooks/`script`, the bundle's hooks/ holding
    that script alone (compiled, as install precompiles), the manifest listing it. The text."""
    python = consts(plugin.read_text(encoding="utf-8"))[0]
    hooks = bundle / "hooks"
    shutil.rmtree(hooks)
    hooks.mkdir()
    shutil.copy2(ROOT / "hooks" / script, hooks / script)
    py_compile.compile(str(hooks / script), doraise=True)
    text = old_text(fixture, python, str(hooks / script))
    plugin.write_text(text, encoding="utf-8")
    path = bundle / MANIFEST
    manifest = json.loads(path.read_text(encoding="utf-8"))
    manifest["files"] = sorted([f for f in manifest["files"] if not f.startswith("hooks/")] + ["hooks/" + script])
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return text


def assert_moved(plugin: Path, bundle: Path, script: str, host: str) -> None:
    """After a reinstall over an old install: the plugin spawns the generic entry with `host`,
    nothing of the old script is left in the bundle (its bytecode included) nor in its
    manifest, and the generic entry is there."""
    text = plugin.read_text(encoding="utf-8")
    assert consts(text)[1] == str(bundle / "hooks" / ENTRY)
    assert 'const HOST = "%s";' % host in text and "LAUNCHER, SCRIPT, HOST]" in text
    assert script not in text and "LAUNCHER, SCRIPT]" not in text
    stem = script[:-3]
    assert [str(p) for p in bundle.rglob("*") if stem in p.name] == []
    assert (bundle / "hooks" / ENTRY).is_file()
    manifest = json.loads((bundle / MANIFEST).read_text(encoding="utf-8"))
    assert [f for f in manifest["files"] if f.startswith("hooks/")] == ["hooks/" + ENTRY]

"""`engramory install --host hermes`: the plugin copy, the minimal config.yaml edit (held
to PyYAML round-trips), idempotence, backups, refusals, dry runs and uninstall."""

from __future__ import annotations

import json
import os

import pytest
import yaml

from engramory.commands import install as install_cmd
from engramory.commands import uninstall as uninstall_cmd
from engramory.hosts.claude import install
from engramory.hosts.hermes import install as install_hermes
from engramory.hosts.hermes.install import ConfigText, SettingsError, disable_text, enable_text


@pytest.fixture
def home(tmp_path, monkeypatch):
    h = tmp_path / "hermes home"
    monkeypatch.setenv("HERMES_HOME", str(h))
    return h


def run(*argv):
    return install_cmd.main(["--host", "hermes", *argv])


def snapshot(folder):
    out = {}
    for dirpath, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(dirpath, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, folder)] = f.read()
    return out


def enabled(config_path):
    with open(config_path, encoding="utf-8-sig") as f:
        data = yaml.safe_load(f) or {}
    return (data.get("plugins") or {}).get("enabled")


def test_install_copies_the_plugin_and_enables_it(home, capsys):
    assert run() == 0
    plugin = home / "plugins" / "engramory"
    for rel in ("plugin.yaml", "__init__.py", "engramory/hosts/hermes/__init__.py", "engramory/guard.py",
                "hooks/engramory_hook.py", "hooks/engramory_hermes_shell_hook.py", ".engramory-install.json"):
        assert (plugin / rel).is_file(), rel
    assert enabled(home / "config.yaml") == ["engramory"]
    assert "Hermes loads plugins when a session starts" in capsys.readouterr().out


def test_second_install_changes_nothing(home, capsys):
    (home).mkdir()
    (home / "config.yaml").write_text("model:\n  default: m  # mine\n")
    assert run() == 0
    before = snapshot(home)
    capsys.readouterr()
    assert run() == 0
    assert snapshot(home) == before
    assert "already installed: nothing changed" in capsys.readouterr().out


def test_existing_config_keeps_every_other_byte_and_is_backed_up(home):
    home.mkdir()
    original = "# top comment\nmodel:\n  default: m   # keep me\n\nplugins:\n  enabled:\n    - other  # theirs\n  entries: {}\n"
    (home / "config.yaml").write_text(original)
    assert run() == 0
    text = (home / "config.yaml").read_text()
    assert text == original.replace("    - other  # theirs\n", "    - other  # theirs\n    - engramory\n")
    backups = [n for n in os.listdir(home) if n.startswith("config.yaml.engramory-backup-")]
    assert len(backups) == 1 and (home / backups[0]).read_text() == original


def test_dry_run_shows_a_diff_and_writes_nothing(home, capsys):
    home.mkdir()
    (home / "config.yaml").write_text("model: {}\n")
    before = snapshot(home)
    assert run("--dry-run") == 0
    out = capsys.readouterr().out
    assert "+plugins:" in out and "+  - engramory" in out and "would copy" in out
    assert snapshot(home) == before


@pytest.mark.parametrize(
    "text",
    [
        "plugins: [a, b\n",  # unterminated flow list
        "plugins:\n\tenabled: []\n",  # tab indentation
        "- just\n- a list\n",  # top level is not a mapping
        "plugins:\n  enabled: engramory\n",  # a scalar, not a list
        "plugins:\n  enabled:\n  - a\n  enabled:\n  - b\n",  # duplicate key
        "plugins: {}\nplugins: {}\n",
        "a: 1\n---\nb: 2\n",  # two documents
        "plugins: &p\n  enabled: []\n",  # an anchor on the block
        "plugins:\n  enabled: [a, [b]]\n",
        "model: [unclosed\n",  # not YAML at all (PyYAML catches what the line edit cannot)
        "plugins:\n  enabled:\n  - \"multi\n    line\"\n",
    ],
)
def test_malformed_or_unusual_config_is_refused_untouched(home, capsys, text):
    home.mkdir()
    (home / "config.yaml").write_text(text)
    assert run() == 1
    err = capsys.readouterr().err
    assert "config.yaml" in err and "nothing was changed" in err
    assert (home / "config.yaml").read_text() == text
    assert not (home / "plugins").exists()


def test_not_utf8_config_is_refused(home, capsys):
    home.mkdir()
    (home / "config.yaml").write_bytes(b"model: caf\xe9\n")
    assert run() == 1
    assert "not UTF-8" in capsys.readouterr().err


# Every shape the line edit accepts must mean, to PyYAML, exactly "the same config with
# engramory enabled" -- and uninstall must give the same data back.
SHAPES = [
    "",
    "# only a comment\n",
    "model:\n  provider: custom\n",
    "model:\n  provider: custom",  # no final newline
    "plugins:\n",
    "plugins: {}\n",
    "plugins: {}  # none yet\n",
    "plugins: null\n",
    "plugins:\n  enabled:\n",
    "plugins:\n  enabled: null\n",
    "plugins:\n  enabled: []\n",
    "plugins:\n  enabled: [a, 'b']  # c\n",
    "plugins:\n  enabled:\n  - a\n  - \"b\"\n",
    "plugins:\n    enabled:\n        - a  # first\n\n        - b\nnext: 1\n",
    "plugins:\n  disabled:\n  - engramory\n  - x\n",
    "plugins:\n  enabled: [x]\n  disabled: [engramory]\n",
    "plugins:\n  entries:\n    other:\n      allow_tool_override: false\n  enabled:\n  - other\nhooks_auto_accept: false\n",
    "a: 1\r\nplugins:\r\n  enabled:\r\n  - q\r\n",
    "\ufeffmodel: x\n",
    "---\nmodel: x\n",
    "plugins:\n  enabled:\n  - engramory\n",
]


@pytest.mark.parametrize("text", SHAPES)
def test_line_edit_round_trips_through_pyyaml(text):
    raw = text.encode("utf-8")
    before = yaml.safe_load(text.lstrip("\ufeff")) or {}
    cfg = ConfigText("c.yaml", raw)
    enable_text(cfg)
    after_raw = cfg.render()
    after = yaml.safe_load(after_raw.decode("utf-8-sig")) or {}
    plugins = after["plugins"]
    assert "engramory" in plugins["enabled"]
    assert "engramory" not in (plugins.get("disabled") or [])
    for key, value in before.items():
        if key != "plugins":
            assert after[key] == value
    assert set(after) - {"plugins"} == set(before) - {"plugins"}
    old_plugins = before.get("plugins") or {}
    for key, value in old_plugins.items():
        if key not in ("enabled", "disabled"):
            assert plugins[key] == value
    old_enabled = [x for x in (old_plugins.get("enabled") or [])]
    assert [x for x in plugins["enabled"] if x != "engramory"] == [x for x in old_enabled if x != "engramory"]
    assert ("\r\n" in text) == (b"\r\n" in after_raw)
    assert after_raw.startswith(b"\xef\xbb\xbf") == text.startswith("\ufeff")
    # idempotent
    again = ConfigText("c.yaml", after_raw)
    assert enable_text(again) == [] and again.render() == after_raw
    # and taking it out leaves the rest as it was
    out = ConfigText("c.yaml", after_raw)
    disable_text(out)
    final = yaml.safe_load(out.render().decode("utf-8-sig")) or {}
    assert "engramory" not in ((final.get("plugins") or {}).get("enabled") or [])
    assert {k: v for k, v in final.items() if k != "plugins"} == {k: v for k, v in before.items() if k != "plugins"}


def test_uninstall_takes_out_exactly_what_install_put_in(home, capsys):
    home.mkdir()
    original = "# mine\nmodel:\n  default: m\n"
    (home / "config.yaml").write_text(original)
    (home / "plugins" / "other").mkdir(parents=True)
    (home / "plugins" / "other" / "keep.txt").write_text("x")
    assert run() == 0
    assert uninstall_cmd.main(["--host", "hermes"]) == 0
    assert (home / "config.yaml").read_text() == original
    assert not (home / "plugins" / "engramory").exists()
    assert (home / "plugins" / "other" / "keep.txt").read_text() == "x"


def test_uninstall_of_a_config_install_created_removes_it(home):
    assert run() == 0
    assert uninstall_cmd.main(["--host", "hermes"]) == 0
    assert not (home / "config.yaml").exists()


def test_uninstall_keeps_a_user_made_plugins_block(home):
    home.mkdir()
    original = "plugins:\n  enabled:\n  - other\n"
    (home / "config.yaml").write_text(original)
    assert run() == 0
    assert uninstall_cmd.main(["--host", "hermes"]) == 0
    assert (home / "config.yaml").read_text() == original


def test_uninstall_dry_run_writes_nothing(home, capsys):
    assert run() == 0
    before = snapshot(home)
    assert uninstall_cmd.main(["--host", "hermes", "--dry-run"]) == 0
    assert "would remove" in capsys.readouterr().out
    assert snapshot(home) == before


def test_a_foreign_plugin_folder_is_refused(home, capsys):
    (home / "plugins" / "engramory").mkdir(parents=True)
    (home / "plugins" / "engramory" / "mine.py").write_text("x")
    assert run() == 1
    assert "not installed by engramory" in capsys.readouterr().err
    assert not (home / "config.yaml").exists()


def test_scope_and_link_do_not_apply(home, capsys):
    assert run("--scope", "project") == 64
    assert run("--link") == 64
    assert not home.exists()


def test_check_reports_missing_and_healthy(home, capsys):
    assert run("--check") == 1
    assert "problem" in capsys.readouterr().out
    assert run() == 0
    assert run("--check") == 0
    out = capsys.readouterr().out
    assert "blocked a smoke write_file of a 400-line MEMORY.md" in out
    assert "shell hook" in out and "-I -S" in out
    os.unlink(home / "plugins" / "engramory" / "engramory" / "guard.py")
    assert run("--check") == 1
    out = capsys.readouterr().out
    assert "1 plugin files are missing (engramory/guard.py)" in out, out


def _check_json(capsys):
    rc = run("--check", "--json")
    report = json.loads(capsys.readouterr().out)
    assert rc == (0 if report["healthy"] else 1)
    return report


def _reasons(report):
    return " ".join(p["reason"] for p in report["problems"])


def test_check_a_module_that_does_not_import_is_a_problem(home, capsys):
    # The file is there (the manifest is satisfied) but broken: the plugin's callback fails
    # open, so only importing it the way Hermes does shows the guard is off.
    assert run() == 0
    capsys.readouterr()
    (home / "plugins" / "engramory" / "engramory" / "edits.py").write_text("raise ImportError('broken copy')\n")
    report = _check_json(capsys)
    assert not report["healthy"]
    assert "engramory.edits" in _reasons(report) and "does not import with Hermes's Python" in _reasons(report), report
    assert all(p["fix"] for p in report["problems"])


def test_check_a_disabled_plugin_is_a_problem(home, capsys):
    assert run() == 0
    capsys.readouterr()
    (home / "config.yaml").write_text("plugins:\n  enabled: []\n  disabled:\n    - engramory\n")
    report = _check_json(capsys)
    assert "not enabled" in _reasons(report) and "plugins.disabled" in _reasons(report), report


def test_check_a_broken_plugin_loader_is_a_problem(home, capsys):
    assert run() == 0
    capsys.readouterr()
    (home / "plugins" / "engramory" / "__init__.py").write_text("def register(ctx):\n    raise ImportError('nope')\n")
    report = _check_json(capsys)
    assert "Hermes could not load the plugin" in _reasons(report), report


def test_check_env_that_lets_the_write_through_is_a_problem(home, capsys, monkeypatch):
    assert run() == 0
    capsys.readouterr()
    monkeypatch.setenv("ENGRAMORY_HARD", "100000")
    assert _check_json(capsys)["healthy"]  # the byte cap still stops a 400-line, 34 kB write
    monkeypatch.setenv("ENGRAMORY_HARD_BYTES", "100000000")
    report = _check_json(capsys)
    assert "would not act" in _reasons(report) and "ENGRAMORY_HARD, ENGRAMORY_HARD_BYTES" in _reasons(report), report
    assert "the shell hook" in _reasons(report)


def test_check_safe_mode_is_a_problem(home, capsys, monkeypatch):
    assert run() == 0
    capsys.readouterr()
    monkeypatch.setenv("HERMES_SAFE_MODE", "1")
    assert "HERMES_SAFE_MODE" in _reasons(_check_json(capsys))


def _executable(path, text=""):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_hermes_python_from_env_or_the_hermes_command(tmp_path):
    python = _executable(tmp_path / "venv" / "bin" / "python", "#!/bin/sh\n")
    command = _executable(python.parent / "hermes", "#!%s\n# -*- coding: utf-8 -*-\nimport sys\n" % python)
    assert install_hermes.hermes_python({"PATH": str(python.parent)}) == (str(python), "the `hermes` command (%s)" % command)
    assert install_hermes.hermes_python({"ENGRAMORY_HERMES_PYTHON": str(python), "PATH": ""})[0] == str(python)
    assert install_hermes.hermes_python({"ENGRAMORY_HERMES_PYTHON": str(tmp_path / "no"), "PATH": ""})[0] is None
    assert install_hermes.hermes_python({"PATH": str(tmp_path)})[0] is None
    # pip's form for an interpreter path holding a space
    spaced = _executable(tmp_path / "my venv" / "python")
    command.write_text("#!/bin/sh\n'''exec' \"%s\" \"$0\" \"$@\"\n' '''\n" % spaced)
    assert install_hermes.hermes_python({"PATH": str(python.parent)})[0] == str(spaced)


def test_hermes_home_defaults_to_dot_hermes(monkeypatch, tmp_path):
    monkeypatch.delenv("HERMES_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert install_hermes.hermes_home() == os.path.join(str(tmp_path), ".hermes")
    assert install_hermes.hermes_home({"HERMES_HOME": "~/h"}) == os.path.join(str(tmp_path), "h")


def test_settings_error_type_is_the_installers():
    with pytest.raises(SettingsError):
        ConfigText("c", b"\tx: 1\n")


def test_plugin_manifest_names_this_plugin_and_version():
    from engramory import __version__

    with open(os.path.join(install.source_root(), "hermes", "engramory", "plugin.yaml"), encoding="utf-8") as f:
        manifest = yaml.safe_load(f)
    assert manifest["name"] == install_hermes.PLUGIN
    assert str(manifest["version"]) == __version__
    assert set(manifest["provides_hooks"]) == {"pre_tool_call", "transform_tool_result"}


def test_safe_mode_is_mentioned(home, capsys, monkeypatch):
    monkeypatch.setenv("HERMES_SAFE_MODE", "1")
    assert run("--dry-run") == 0
    assert "HERMES_SAFE_MODE" in capsys.readouterr().out

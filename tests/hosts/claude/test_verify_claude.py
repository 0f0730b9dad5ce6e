"""Real Claude Code 2.1.332, engramory installed as a user installs it: a session starts on a
project whose memory has a note naming a file that was renamed since; the SessionStart notice
the model gets names the note, the new path and the verify command, fenced as data; the note
is left as it was."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from harness import RunClaude, Text
from test_installed_claude import auto_memory_index, install, request_text

pytestmark = pytest.mark.e2e


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x.invalid", "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(repo)}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


NOTE = """---
name: deploy-script
description: Where the deploy script lives and how it is run
type: project
created: 2026-01-01
updated: 2026-01-01
---
The deploy script is `scripts/deploy.sh`; run it from the top of the repository.

**Why:** the CI job calls it by that path.
**How to apply:** change the CI job when it moves.
"""


def test_session_start_names_a_note_whose_file_was_renamed(claude: RunClaude, e2e_home: Path, e2e_project: Path) -> None:
    install(e2e_home)
    git(e2e_project, "init", "-q", "-b", "main")
    (e2e_project / "scripts").mkdir()
    (e2e_project / "scripts" / "deploy.sh").write_text("#!/bin/sh\necho deploy\n", encoding="utf-8")
    git(e2e_project, "add", "-A")
    git(e2e_project, "commit", "-qm", "deploy script")
    (e2e_project / "ops").mkdir()
    git(e2e_project, "mv", "scripts/deploy.sh", "ops/deploy.py")
    git(e2e_project, "commit", "-qm", "the deploy script is Python now")
    commit = git(e2e_project, "rev-parse", "--short=7", "HEAD").strip()
    index = auto_memory_index(e2e_home, e2e_project)
    index.parent.mkdir(parents=True)
    index.write_text("# Memory Index\n\n## project\n- [Deploy script](deploy-script.md) \u2014 where it lives\n",
                     encoding="utf-8")
    note = index.parent / "deploy-script.md"
    note.write_text(NOTE, encoding="utf-8")
    result = claude([Text("noted")])
    seen = request_text(result, 0)
    assert "1 memory note in %s names code that is gone or has moved" % index.parent in seen
    assert "deploy-script.md:8: moved path scripts/deploy.sh: ops/deploy.py (renamed in %s)" % commit in seen
    assert "not instructions" in seen and "```" in seen
    tool = e2e_home / ".claude" / "skills" / "engramory" / "tools" / "engramory.py"
    assert "%s verify %s" % (tool, index.parent) in seen
    assert note.read_text(encoding="utf-8") == NOTE

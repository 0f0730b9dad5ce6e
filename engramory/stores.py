"""Every memory store Claude Code knows on this machine, for `engramory doctor --all`.

Read from the 2.1.332 CLI: each project's auto memory is `<config>/projects/<name>/memory/`
(<config> is $CLAUDE_CONFIG_DIR or ~/.claude); `autoMemoryDirectory` in the user settings
moves the current one; subagents with a `memory` scope keep theirs in
`<config>/agent-memory/<agent>/` (user), `<project>/.claude/agent-memory/<agent>/` (project)
and `<project>/.claude/agent-memory-local/<agent>/` (local). Only folders that exist are
listed; nothing is created or written.

One project can end up with two memory folders: the same path spelled with another case
(a case-insensitive disk), or through /private on macOS (/tmp and /private/tmp), each
sanitized to its own name. The host then loads only one of them: `store-split` says so.
"""

from __future__ import annotations

import json
import os
import sys

from engramory import automemory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

AUTO = "auto-memory"
SETTING = "autoMemoryDirectory"
AGENT_USER = "agent-memory (user)"
AGENT_PROJECT = "agent-memory (project)"
AGENT_LOCAL = "agent-memory (local)"
SETTINGS_LIMIT = 1 << 20


def _subfolders(folder: str) -> list[str]:
    try:
        with os.scandir(folder) as it:
            return sorted(e.path for e in it if not e.name.startswith(".") and e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def _setting_dir(config_dir: str) -> str | None:
    """autoMemoryDirectory from the user settings, when it names a folder."""
    path = os.path.join(config_dir, "settings.json")
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read(SETTINGS_LIMIT).decode("utf-8", "replace"))
    except (OSError, ValueError):
        return None
    value = data.get(SETTING) if isinstance(data, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None
    return os.path.abspath(os.path.expanduser(value.strip()))


def known_stores(env: Mapping[str, str] | None = None, cwd: str | None = None) -> list[tuple[str, str]]:
    """(kind, folder) for every memory folder the host knows that exists, each once."""
    env = os.environ if env is None else env
    config_dir = automemory.claude_config_dir(env)
    found: list[tuple[str, str]] = []
    for project in _subfolders(os.path.join(config_dir, "projects")):
        memory = os.path.join(project, "memory")
        if os.path.isdir(memory):
            found.append((AUTO, memory))
    moved = _setting_dir(config_dir)
    if moved and os.path.isdir(moved):
        found.append((SETTING, moved))
    for agent in _subfolders(os.path.join(config_dir, "agent-memory")):
        found.append((AGENT_USER, agent))
    here = os.path.abspath(cwd or os.getcwd())
    for sub, kind in (("agent-memory", AGENT_PROJECT), ("agent-memory-local", AGENT_LOCAL)):
        for agent in _subfolders(os.path.join(here, ".claude", sub)):
            found.append((kind, agent))
    seen: set[str] = set()
    out = []
    for kind, folder in found:
        real = os.path.realpath(folder)
        if real not in seen:
            seen.add(real)
            out.append((kind, folder))
    return out


def _split_key(name: str) -> str:
    """The project folder name two spellings of one path share."""
    key = name.lower()
    return key[len("-private"):] if key.startswith("-private-") else key


def splits(stores: Iterable[tuple[str, str]]) -> dict[str, str]:
    """folder -> the other folder holding the same project's auto memory."""
    first: dict[str, str] = {}
    out: dict[str, str] = {}
    for kind, folder in stores:
        if kind != AUTO:
            continue
        key = _split_key(os.path.basename(os.path.dirname(folder)))
        if key in first:
            out[folder] = first[key]
        else:
            first[key] = folder
    return out


def audit_all(skip: Sequence[str], as_json: bool, strict: bool, env: Mapping[str, str] | None = None,
              cwd: str | None = None) -> int:
    """Audit every known store: one summary line each (or one JSON report per line)."""
    from engramory import doctor

    stores = known_stores(env, cwd)
    if not stores:
        sys.stderr.write("engramory doctor: no memory store found under %s (no project has auto memory "
                         "yet); pass ROOT to check a folder\n" % automemory.claude_config_dir(env))
        return 0
    split = splits(stores)
    worst = 0
    for kind, folder in stores:
        try:
            st, findings = doctor.audit(folder, doctor.Context(), skip, env)
        except OSError as exc:
            sys.stderr.write("engramory doctor: cannot read %s: %s\n" % (doctor.shown(folder), exc.strerror or exc))
            worst = max(worst, 1)
            continue
        if folder in split and "store-split" not in skip:
            findings.append(doctor.Finding(
                "store-split", ".", 0,
                "this project's memory is split: %s holds memory for the same project under another "
                "spelling of its path, and a session loads only one of them; merge the notes into the "
                "folder the host uses now and remove the other" % doctor.shown(split[folder])))
        code = doctor.exit_code(findings, strict)
        worst = max(worst, code)
        if as_json:
            report = doctor.report(findings, st, "all", strict)
            report["kind"] = kind
            sys.stdout.write(json.dumps(report) + "\n")
            continue
        c = doctor.counts_of(findings)
        top = sorted({f.code for f in findings if f.severity == doctor.ERROR})[:3]
        sys.stdout.write("%s: %s: %d error%s, %d warning%s, %d info, %d live note%s%s\n" % (
            doctor.shown(folder), kind, c[doctor.ERROR], "" if c[doctor.ERROR] == 1 else "s",
            c[doctor.WARNING], "" if c[doctor.WARNING] == 1 else "s", c[doctor.INFO], len(st.live),
            "" if len(st.live) == 1 else "s", (" (%s)" % ", ".join(top)) if top else ""))
    if not as_json:
        sys.stdout.write("%d store%s checked; run `engramory doctor FOLDER` for the findings of one\n"
                         % (len(stores), "" if len(stores) == 1 else "s"))
    return worst

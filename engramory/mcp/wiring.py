"""The MCP server written into a client's config, on the shared installer core: one entry
named `engramory` under the client's map of servers (`mcpServers` for Claude Desktop and Claude
Code, `context_servers` for Zed), `{"command": <python>, "args": ["-I", "-S",
<bundle>/tools/engramory.py, "mcp", "--root", ROOT]}`.

- `McpWiring` is the whole install / uninstall / --check of a client that only gets the server
  (engramory.install.jsonflow: the runtime copied beside its config with a manifest, the config
  edited in place keeping every other byte, backups of the same mode, --dry-run as a diff,
  uninstall giving back the user's own bytes). An entry of that name engramory did not write is
  refused, never replaced.
- `ClaudeCodeMcp` adds the entry to Claude Code's own MCP config for `engramory install --mcp`
  (the skill folder install.py copied holds the runtime; a small manifest beside it records what
  the entry's install created, so uninstall takes exactly that out).
- --check runs the server as the client will (initialize, tools/list) and names its tools.
"""

from __future__ import annotations

import copy
import json
import os

from engramory import automemory
from engramory.install import bundle, smoke, steps
from engramory.install import jsonflow as flow
from engramory.install import settings as installer

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import Any

SERVER = "engramory"
TOOLS = ("memory_view", "memory_edit", "memory_search")
MCP_MANIFEST = ".engramory-mcp.json"
CHECK_TIMEOUT = 30.0


def entry(interpreter: str, script: str, root: str | None) -> dict[str, Any]:
    args = ["-I", "-S", script, "mcp"] + (["--root", root] if root else [])
    return {"command": interpreter, "args": args}


def is_ours(value: Any) -> bool:
    """An entry engramory wrote: it runs some bundle's tools/engramory.py with `mcp`."""
    if not isinstance(value, dict) or not isinstance(value.get("args"), list):
        return False
    args = [a for a in value["args"] if isinstance(a, str)]
    return "mcp" in args and any(a.replace("\\", "/").endswith("/tools/engramory.py") for a in args)


def root_arg(args: argparse.Namespace | None, required: bool, title: str) -> str | None:
    """--root as an absolute, existing folder; SettingsError otherwise (or when missing and
    `required`: a client with no project has no default store)."""
    given = getattr(args, "root", None)
    if not isinstance(given, str) or not given:
        if required:
            raise installer.SettingsError(
                "%s has no project folder, so the server needs the store named: give --root DIR, the absolute "
                "path of the memory folder (it must exist; `mkdir -p DIR` makes an empty one)" % title)
        return None
    path = os.path.abspath(os.path.expanduser(given))
    if not os.path.isdir(path):
        raise installer.SettingsError("--root %s is not an existing folder: create it first (mkdir -p %s)" % (given, path))
    return path


# -- the servers' map at a key path ---------------------------------------------------------------


def _container(data: dict[str, Any], path: Sequence[str]) -> Any:
    node: Any = data
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def shape_problem(data: dict[str, Any], path: Sequence[str], settings: str) -> str | None:
    node: Any = data
    for i, key in enumerate(path):
        node = node.get(key) if isinstance(node, dict) else None
        if node is not None and not isinstance(node, dict):
            return ("%s: %s is %s, not an object; engramory adds its server there only to an object: fix it, then "
                    "run this again" % (settings, ".".join(path[:i + 1]), installer.json_type(node)))
    if isinstance(node, dict) and SERVER in node and not is_ours(node[SERVER]):
        return ("%s: a server named %r is there already and engramory did not write it; rename or remove it, then run "
                "this again" % (settings, SERVER))
    return None


def merge(data: dict[str, Any], path: Sequence[str], value: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`data` with `value` as the server entry under `path`, and the keys of `path` it made."""
    new = copy.deepcopy(data)
    node = new
    created: list[str] = []
    for key in path:
        if not isinstance(node.get(key), dict):
            node[key] = {}
            created.append(key)
        node = node[key]
    node[SERVER] = value
    return new, created


def unmerge(data: dict[str, Any], path: Sequence[str], created: Sequence[str] | None) -> tuple[dict[str, Any], int]:
    """`data` without our entry (and without the containers install made, once empty)."""
    new = copy.deepcopy(data)
    nodes = [new]
    for key in path:
        nxt = nodes[-1].get(key)
        if not isinstance(nxt, dict):
            return data, 0
        nodes.append(nxt)
    if not is_ours(nodes[-1].get(SERVER)):
        return data, 0
    del nodes[-1][SERVER]
    for depth in range(len(path), 0, -1):
        key = path[depth - 1]
        if not nodes[depth] and key in (created or []):
            del nodes[depth - 1][key]
        else:
            break
    return new, 1


# -- --check: run it as the client will --------------------------------------------------------


def check_entry(report: smoke.Report, value: Any, fix: str) -> None:
    """Add to `report` what the server entry `value` does when the client starts it."""
    if not is_ours(value):
        report.problem("no %r server entry of engramory's" % SERVER, fix)
        return
    exe = str(value.get("command"))
    args = [str(a) for a in value["args"]]
    problem = smoke.interpreter_problem(exe)
    if problem:
        report.problem(problem, fix)
        return
    script = next(a for a in args if a.replace("\\", "/").endswith("/tools/engramory.py"))
    if not os.path.isfile(script):
        report.problem("the server's script %s does not exist: the client cannot start it" % script, fix)
        return
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "engramory-check", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    ran = smoke.smoke([exe] + args, "".join(json.dumps(m) + "\n" for m in lines).encode(), timeout=CHECK_TIMEOUT)
    answers = []
    for raw in ran.stdout.splitlines():
        try:
            answers.append(json.loads(raw))
        except ValueError:
            report.problem("the server wrote something that is not JSON-RPC on stdout: %r" % raw[:80], fix)
            return
    tools = [t.get("name") for a in answers if a.get("id") == 2 for t in (a.get("result") or {}).get("tools", [])]
    if ran.error or tuple(tools) != TOOLS:
        why = ran.error or ran.last_error_line() or "it listed %s" % (tools or "no tools")
        report.problem("the server did not start and list its tools: %s" % why, fix)
        return
    version = next((a["result"].get("protocolVersion") for a in answers if a.get("id") == 1 and "result" in a), "?")
    report.ok("the server starts (%s %s), speaks MCP %s and lists %s" % (exe, " ".join(args), version, ", ".join(tools)))


# -- a client that only gets the server (Claude Desktop, Zed) ------------------------------------


class McpWiring(flow.Wiring):
    """installer_json's flow for a client whose config holds a map of MCP servers."""

    path: tuple[str, ...] = ("mcpServers",)
    scopes = (("user", "the client's config for this user"),)
    bundle_dirs, bundle_top = bundle.RUNTIME_DIRS, ()
    settings_label = "config"

    def __init__(self, settings: str, bundle_dir: str, root: str | None) -> None:
        super().__init__(settings=settings, bundle_dir=bundle_dir, scope="user")
        self.root = root

    def hooks(self, interpreter: str) -> list[tuple[str, str | None, dict[str, Any]]]:
        return []

    def script(self) -> str:
        return os.path.join(self.bundle_dir, "tools", "engramory.py")

    def files(self) -> tuple[list[str], list[str]]:
        files, missing = bundle.runtime_files(self.source, [], self.bundle_dirs, self.bundle_top)
        if "tools/engramory.py" not in files:
            missing.append("tools/engramory.py is missing from the bundle")
        return files, missing

    def check_shape(self, doc: installer.JsonDoc) -> None:
        problem = shape_problem(doc.data, self.path, self.settings)
        if problem:
            raise installer.SettingsError(problem)

    def merge(self, data: dict[str, Any], interpreter: str) -> tuple[dict[str, Any], list[str], list[str]]:
        value = entry(interpreter, self.script(), self.root)
        old = _container(data, self.path)
        same = isinstance(old, dict) and old.get(SERVER) == value
        new, created = merge(data, self.path, value)
        where = ".".join(self.path + (SERVER,))
        return new, created, ["%s: %s" % (where, "already there" if same else "the server, store %s" % self.root)]

    def unmerge(self, data: dict[str, Any], created: list[str] | None) -> tuple[dict[str, Any], int]:
        return unmerge(data, self.path, created)

    def ours(self, handler: Any) -> bool:
        return is_ours(handler)

    def present(self, data: dict[str, Any]) -> list[tuple[str, Any, dict[str, Any]]]:
        return []

    def notes(self) -> list[str]:
        return ["note: the client runs the server with this Python; keep it installed (3.9 or later)"]

    def run_check(self, interpreter: str | None = None, out: Callable[[str], Any] | None = None) -> int:
        report = smoke.Report("engramory install --host %s --check: %s" % (self.host, self.settings))
        fix = "run `engramory install --host %s --root DIR` again" % self.host
        try:
            doc = installer.JsonDoc.load(self.settings, comments=self.comments, host=self.title)
        except installer.SettingsError as exc:
            report.problem("%s; %s ignores a config it cannot parse" % (exc, self.title), "fix the file, then run this again")
            return report.finish("", out)
        servers = _container(doc.data, self.path)
        check_entry(report, servers.get(SERVER) if isinstance(servers, dict) else None, fix)
        return report.finish("the memory server is wired and answers", out)


def verbs(cls: Callable[[str | None], McpWiring], title: str) -> tuple[Callable[[argparse.Namespace], int], ...]:
    """install, uninstall and check for the registry's INSTALLER contract of one client."""

    def run(verb: str, args: argparse.Namespace) -> int:
        if steps.scope_of(args, verb, title, McpWiring.scopes) is None:
            return 64
        if verb == "uninstall":
            return flow.uninstall(cls(None), args)
        if verb == "check" or getattr(args, "check", False):
            return cls(None).run_check()
        try:
            root = root_arg(args, required=True, title=title)
        except installer.SettingsError as exc:
            import sys

            sys.stderr.write("engramory install: %s\nengramory install: nothing was changed.\n" % exc)
            return 64 if not getattr(args, "root", None) else 1
        return flow.install(cls(root), args)

    return (lambda a: run("install", a), lambda a: run("uninstall", a), lambda a: run("check", a))


# -- Claude Code: `engramory install --mcp` --------------------------------------------------------


class ClaudeCodeMcp:
    """The server entry in Claude Code's own MCP config (measured on 2.1.332 with `claude mcp
    add`: user scope is the top-level `mcpServers` of `$CLAUDE_CONFIG_DIR/.claude.json`, else
    `~/.claude.json`; local scope is `projects[<project>].mcpServers` of the same file, keyed by
    the git root of the folder; project scope is `.mcp.json`, committed, which would name this
    machine's paths, so it is refused). The runtime is the skill folder `engramory install`
    copied; MCP_MANIFEST beside it records what the entry's install created."""

    def __init__(self, scope: str, skill_dir: str, env: dict[str, str] | None = None, cwd: str | None = None) -> None:

        environ = dict(os.environ) if env is None else env
        self.scope = scope
        self.skill_dir = skill_dir
        configured = environ.get("CLAUDE_CONFIG_DIR", "").strip()
        home = environ.get("HOME") or os.path.expanduser("~")
        self.settings = os.path.join(os.path.abspath(os.path.expanduser(configured)), ".claude.json") if configured \
            else os.path.join(home, ".claude.json")
        project = os.path.realpath(cwd or os.getcwd())
        roots = automemory.git_roots(project)
        self.project = roots[0] if roots else project
        self.path: tuple[str, ...] = ("mcpServers",) if scope == "user" else ("projects", self.project, "mcpServers")
        self.manifest = os.path.join(skill_dir, MCP_MANIFEST)

    def where(self) -> str:
        return "%s (%s)" % (self.settings, ".".join(self.path) if self.scope == "user" else
                            'projects["%s"].mcpServers' % self.project)

    def install(self, interpreter: str, root: str | None, dry_run: bool, out: Callable[[str], Any]) -> int:
        if self.scope == "project":
            raise installer.SettingsError(
                "--mcp with --scope project would commit .mcp.json naming this machine's Python and paths; use "
                "--scope local (this project, this machine) or --scope user")
        doc = installer.JsonDoc.load(self.settings, host="Claude Code")
        problem = shape_problem(doc.data, self.path, self.settings)
        if problem:
            raise installer.SettingsError(problem)
        script = os.path.join(self.skill_dir, "tools", "engramory.py")
        new, created = merge(doc.data, self.path, entry(interpreter, script, root))
        change = installer.Change(self.settings, doc.raw, doc.render(new))
        out("  mcp: %s: %s\n" % (self.where(), "the memory server, store %s" % (root or "this project's auto memory")
                                 if change.changed else "already there"))
        if dry_run:
            out(installer.unified_diff(self.settings, change.before, change.after))
            return 0
        saved = installer.apply_change(change)
        if saved:
            out("  backup of the previous %s: %s\n" % (os.path.basename(self.settings), saved))
        record = bundle.read_manifest(self.manifest) or {"installer": SERVER, "files": [], "settings": {}}
        prior = record["settings"].get(self.settings)
        if not isinstance(prior, dict):
            record["settings"][self.settings] = {"created": created, "created_file": not doc.exists}
        bundle.write_manifest(self.manifest, record)
        if change.changed:
            out("  Start a new Claude Code session: it starts its MCP servers when a session begins (`/mcp` lists them).\n")
        return 0

    def uninstall(self, dry_run: bool, out: Callable[[str], Any]) -> int:
        doc = installer.JsonDoc.load(self.settings, host="Claude Code")
        record = (bundle.read_manifest(self.manifest) or {}).get("settings", {}).get(self.settings)
        created = record.get("created") if isinstance(record, dict) else None
        new, removed = unmerge(doc.data, self.path, created if isinstance(created, list) else None)
        if not removed:
            return 0
        change = installer.Change(self.settings, doc.raw, installer.restore_bytes(doc, new))
        if not new and isinstance(record, dict) and record.get("created_file"):
            change.after = None
        out("  mcp: %s: the memory server %s\n" % (self.where(), "would be removed" if dry_run else "removed"))
        if dry_run:
            out(installer.unified_diff(self.settings, change.before, change.after))
            return 0
        steps.apply_or_delete(change)
        bundle.unlink_quietly(self.manifest)
        return 0

    def check(self, report: smoke.Report, required: bool) -> None:
        try:
            doc = installer.JsonDoc.load(self.settings, host="Claude Code")
        except installer.SettingsError as exc:
            report.problem(str(exc), "fix the file, then run this again")
            return
        servers = _container(doc.data, self.path)
        value = servers.get(SERVER) if isinstance(servers, dict) else None
        if value is None and not required:
            return
        check_entry(report, value, "run `engramory install --mcp --scope %s` again" % self.scope)

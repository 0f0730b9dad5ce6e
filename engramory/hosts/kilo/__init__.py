"""Kilo Code CLI (`@kilocode/cli-linux-x64`, an opencode fork): the opencode plugin dialect,
shared and not copied. The plugin (engramory.install.opencodeplugin's one template, filled in for
Kilo by engramory.hosts.kilo.install) hands each `write`, `edit` and `apply_patch` to the generic
entry, `hooks/engramory_hook.py kilo` (plugins of earlier installs run the shim
`hooks/engramory_kilo_hook.py`), which answers through engramory.hosts.opencode.answer with
Kilo's dialect below (a question that surely gets `{}` is answered first, before opencode is
imported); the plugin throws the reason on a deny and Kilo hands the model that message
verbatim.

What is Kilo's own (measured on 7.7.9, PORTING.md "Kilo Code CLI"): its config folders
(`~/.config/kilo/`, `<project>/.kilo/`), the plugin package it tries to install beside a local
plugin (`@kilocode/plugin`, a version never published: the plugin must never import it), and
its instruction files (`AGENTS.md`, else `CLAUDE.md`, and `.kilo/rules/*.md`), which load
with no cap at all. Its edit and apply_patch models are opencode's, byte for byte in the
measurements, so the predictions are opencode's too; with a `gpt-` model `apply_patch`
replaces `edit` while `write` stays (in opencode both go), which the guard does not need to
know: it judges whichever of the three arrives.
"""

from engramory.hosts import EDIT, WRITE, parse_object, plugin_quiet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from engramory.hosts.opencode import Family
    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "kilo"
TITLE = "Kilo Code CLI"
VERIFIED = "7.7.9"
INSTALLER = "engramory.hosts.kilo.install"
FAIL_OPEN = "{}"  # the plugin reads "{}" as "go on"
PLUGIN_PACKAGE = "@kilocode/plugin"  # what Kilo installs beside a local plugin; never imported
# opencode's tools and keys, spelled here so that a quiet question (engramory.hosts.plugin_quiet)
# is answered before engramory.hosts.opencode is imported; tests/hosts/kilo holds them to opencode's
TOOLS = {"write": WRITE, "edit": EDIT}
PATH_KEYS = ("filePath",)
PATCH_TOOLS = ("apply_patch",)
SHELL_TOOLS = ("bash",)


def window() -> "Window":
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(note="Kilo loads no MEMORY.md of its own, and AGENTS.md, CLAUDE.md and .kilo/rules load "
                            "whole with no cap: keep the index in the store (memory/MEMORY.md), under the standard caps")


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    return []


def dialect() -> "Family":
    """opencode's dialect under Kilo's name, window and indexes."""
    from engramory.hosts import opencode  # lazy: a quiet question never loads opencode's models

    return opencode.Family(NAME, window, index_paths)


def respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """The plugin's question -> (stdout JSON, stderr, 0): opencode's protocol, Kilo's window."""
    payload = parse_object(raw)
    if payload is None or plugin_quiet(payload, "args", "directory", TOOLS, PATH_KEYS, env, PATCH_TOOLS, SHELL_TOOLS):
        return FAIL_OPEN, "", 0
    from engramory.hosts import opencode  # lazy: a quiet question never loads opencode's models

    return opencode.answer(payload, env, dialect())


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import kilo as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self

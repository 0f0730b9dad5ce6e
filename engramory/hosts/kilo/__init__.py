"""Kilo Code CLI (`@kilocode/cli-linux-x64`, an opencode fork): the opencode plugin dialect,
shared and not copied. The plugin (engramory.install.opencodeplugin's one template, filled in for
Kilo by engramory.hosts.kilo.install) hands each `write`, `edit` and `apply_patch` to the generic
entry, `hooks/engramory_hook.py kilo` (plugins of earlier installs run the shim
`hooks/engramory_kilo_hook.py`), which answers through engramory.hosts.opencode.respond with
Kilo's dialect below; the plugin throws the reason on a deny and Kilo hands the model that
message verbatim.

What is Kilo's own (measured on 7.7.9, PORTING.md "Kilo Code CLI"): its config folders
(`~/.config/kilo/`, `<project>/.kilo/`), the plugin package it tries to install beside a local
plugin (`@kilocode/plugin`, a version never published: the plugin must never import it), and
its instruction files (`AGENTS.md`, else `CLAUDE.md`, and `.kilo/rules/*.md`), which load
with no cap at all. Its edit and apply_patch models are opencode's, byte for byte in the
measurements, so the predictions are opencode's too; with a `gpt-` model `apply_patch`
replaces `edit` while `write` stays (in opencode both go), which the guard does not need to
know: it judges whichever of the three arrives.
"""

from engramory.hosts import opencode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from engramory.size import Window

# --- registry declarations (see engramory/hosts/__init__.py) ---
NAME = "kilo"
TITLE = "Kilo Code CLI"
VERIFIED = "7.7.9"
INSTALLER = "engramory.hosts.kilo.install"
SHELL_TOOLS = opencode.SHELL_TOOLS
FAIL_OPEN = opencode.FAIL_OPEN  # the plugin reads "{}" as "go on"
PLUGIN_PACKAGE = "@kilocode/plugin"  # what Kilo installs beside a local plugin; never imported


def window() -> "Window":
    from engramory import size  # lazy: sizes only when a change is judged, not on the ignored path

    return size.Window(note="Kilo loads no MEMORY.md of its own, and AGENTS.md, CLAUDE.md and .kilo/rules load "
                            "whole with no cap: keep the index in the store (memory/MEMORY.md), under the standard caps")


def index_paths(cwd: str, env: "Mapping[str, str]") -> "list[str]":
    return []


DIALECT = opencode.Family(NAME, window, index_paths)
PLUGIN = opencode.host(DIALECT)


def respond(raw: bytes, env: "Mapping[str, str] | None" = None) -> "tuple[str, str, int]":
    """The plugin's question -> (stdout JSON, stderr, 0): opencode's protocol, Kilo's window."""
    return opencode.respond(raw, env, PLUGIN)


if TYPE_CHECKING:  # mypy checks this module against the registry's Host Protocol; never run
    from engramory.hosts import kilo as _self
    from engramory.hosts.protocol import Host

    _host: Host = _self

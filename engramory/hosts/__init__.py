"""The host registry: every agent host engramory guards is one module of this package.

A host module declares, at module level, what is truly its own (pre-commit's `languages/`
is the model: one module per member, one table that lists them):

- ``NAME``: the registry key (``engramory install --host NAME``); ``TITLE``: how people call it.
- ``VERIFIED``: the host version the module was verified on, end to end on the real host in
  CI; ``""`` when it could not be (then ``UNVERIFIED_WHY`` says why, in one line).
- ``window() -> size.Window``: how the host loads an index into the model's context (unit,
  lines, trimming, which part is kept). The guard, check, doctor and the backstops judge an
  index by the window of the host that loads it.
- ``respond(raw: bytes, env) -> (stdout, stderr, exit_code)``: the pre-write hook dialect,
  payload in, the host's own answer out. Never an answer the host reads as "block everything".
- ``INSTALLER``: the module (under `engramory`) whose ``install(args)``, ``uninstall(args)`` and
  ``check(args)`` wire this host, take it back out and tell the truth about the wiring.
- ``index_paths(cwd, env) -> list[str]``: where the host's own indexes live for a project
  (settings that move them included); ``[]`` when the host keeps none.

This file must stay cheap: every hook imports the package on its hot path. Host modules are
imported only when asked for.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

# name -> module. Adding a host: one module here, its tests, and one PORTING.md row.
REGISTRY = {
    "claude": "engramory.hosts.claude",
    "cursor": "engramory.hosts.cursor",
    "hermes": "engramory.hosts.hermes",
    "qwen": "engramory.hosts.qwen",
    "droid": "engramory.hosts.droid",
    "copilot": "engramory.hosts.copilot",
    "opencode": "engramory.hosts.opencode",
}


def names() -> "list[str]":
    return list(REGISTRY)


def load(name: str) -> "ModuleType":
    """The module of host `name`; KeyError for a name the registry does not hold."""
    import importlib

    return importlib.import_module(REGISTRY[name])

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

Optional, read by the hook runtime (engramory.hookrun): ``STDIN_LIMIT`` (bytes of payload
read; default 256 MiB), ``TAG`` (how its stderr lines start), ``FAIL_OPEN`` (what stdout says
when the guard itself fails: "" unless the host needs an answer, "{}" for Cursor) and
``FAIL_OPEN_EXIT`` (0). A host's entry script is then a copy of hooks/engramory_index_guard.py
ending in ``raise SystemExit(run("<NAME>"))``.

How a host module decides (one pipeline, read -> predict -> judge; see engramory.guard):
parse the payload into ``edits.Request`` objects (``edits.normalise`` reads most dialects)
and call ``guard.evaluate(req, env, window())``, which reads the file and predicts with the
Claude-shaped edit model; or, when the module predicts its own host's bytes, call
``guard.judge(path, before, after, env, window(), tool)`` with them (``guard.read_regular``
reads ``before`` safely), or ``guard.judge_bound(...)`` with the text an edit adds when the
result cannot be predicted. Render the Decision (``.action`` DENY / NUDGE, ``.message``,
``.before`` / ``.after`` as (lines, units), ``.unit``, ``.caps``) in the host's dialect.

A window is ``size.Window(unit, lines, size, trim, skip_frontmatter, skip_comments, keep,
note, head, tail)``: e.g. Qwen Code ``Window(unit=size.UTF16, lines=200, size=25_000,
trim=True)``, a host with no cap ``Window(lines=None, size=None)`` (guarded with the standard
caps, see Window.caps), OpenClaw ``Window(unit=size.CHARS, lines=None, size=20_000,
keep=size.HEAD_TAIL)``.

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
    "codex": "engramory.hosts.codex",
    "gemini": "engramory.hosts.gemini",
    "qwen": "engramory.hosts.qwen",
    "droid": "engramory.hosts.droid",
    "copilot": "engramory.hosts.copilot",
    "opencode": "engramory.hosts.opencode",
    "cline": "engramory.hosts.cline",
    "openclaw": "engramory.hosts.openclaw",
}


def names() -> "list[str]":
    return list(REGISTRY)


def load(name: str) -> "ModuleType":
    """The module of host `name`; KeyError for a name the registry does not hold."""
    import importlib

    return importlib.import_module(REGISTRY[name])

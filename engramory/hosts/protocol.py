"""What a host module offers, as a type (pre-commit's `Language` Protocol is the model).

Every module the registry (`engramory.hosts.REGISTRY`) names is checked against `Host` by
mypy --strict through a block at its own end (`if TYPE_CHECKING:` ... `_host: Host = _self`,
never run), and at test time by
tests/unit/hosts/test_host_protocol.py (which reads the required members from `Host` itself, so a
member added here is required of every host at once). No hook imports this module: the hot path
stays as tests/fixtures/hook_modules.json fixes it.

Optional members the hook runtime reads with a default (``ENTRIES``, ``TAG``, ``STDIN_LIMIT``,
``FAIL_OPEN``, ``FAIL_OPEN_EXIT``, ``UNVERIFIED_WHY``) are listed in `OPTIONAL`, not in the
Protocol: a Protocol member cannot be optional, and a host without one is correct.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from engramory.size import Window

# Read with getattr and a default by engramory.hosts.run/main and the docs: a host may omit them.
OPTIONAL = ("UNVERIFIED_WHY", "ENTRIES", "TAG", "STDIN_LIMIT", "FAIL_OPEN", "FAIL_OPEN_EXIT")


class Host(Protocol):
    """A host module: ``engramory/hosts/<name>/__init__.py`` (see engramory.hosts)."""

    # the registry key (`engramory install --host NAME`) and how people call the host
    NAME: str
    TITLE: str
    # the host version verified end to end in CI; "" when it could not be (UNVERIFIED_WHY)
    VERIFIED: str
    # the module (under engramory) whose install(args), uninstall(args), check(args) wire it
    INSTALLER: str

    def window(self) -> Window:
        """How the host loads an index into the model's context."""
        ...

    def index_paths(self, cwd: str, env: Mapping[str, str]) -> list[str]:
        """Where the host's own indexes live for a project; [] when it keeps none."""
        ...

    def respond(self, raw: bytes, env: Mapping[str, str] | None = None) -> tuple[str, str, int]:
        """The pre-write hook dialect: payload in, the host's own answer out (a host without
        a hook answers ("", "", 0): engramory.hosts.mcponly)."""
        ...

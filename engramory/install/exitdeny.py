"""What the installers of hosts that deny by exit code share: the answer `--check`'s deny smoke
run must get (exit 2, engramory's reason on stderr, nothing on stdout). Part of the installer
core; standard library only."""

from __future__ import annotations


def denied_by_exit(code: int, stdout: bytes, stderr: bytes) -> bool:
    """A deny as Crush, Windsurf, Kiro and Auggie read one: exit 2, the reason on stderr."""
    return code == 2 and b"engramory" in stderr and not stdout.strip()


def denied_by_json(code: int, stdout: bytes, stderr: bytes) -> bool:
    """A deny as a Claude-schema host reads one: exit 0, hookSpecificOutput's deny on stdout."""
    import json

    try:
        answer = json.loads(stdout.decode("utf-8"))
    except ValueError:
        return False
    inner = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
    return code == 0 and isinstance(inner, dict) and inner.get("permissionDecision") == "deny"

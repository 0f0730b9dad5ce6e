"""What the store property test (tests/test_store_property.py) judges a store by, kept apart
from the sequences it drives: the entries Claude Code loads (engramory's own model of its
window, layout + size), the secrets sprinkled into the store and where they must never show,
snapshots, and the two ways a command is run (in process through `cli.main`, or as a real
process: `python3 -m engramory` or the copied folder's `tools/engramory.py` under -I -S)."""

from __future__ import annotations

import io
import os
import posixpath
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

from engramory import cli, layout
from engramory.curate import index as curate_index
from engramory.store import reader as store
from engramory.store.pointers import note_links

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "engramory.py"
ENTRY_POINTS = {"module": [sys.executable, "-m", "engramory"], "tool": [sys.executable, "-I", "-S", str(TOOL)]}
WINDOW = curate_index.window()  # Claude Code's: what the commands judge an index by

# Secret values a user might paste in (split so no scanner takes this file for a leak).
SECRETS = {
    "github": "ghp_" + "Q7r8A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6",
    "aws": "AKIA" + "Z3K9Q2W8E4R7T6Y1",
    "password": "Zx81qLp0" + "Wm3vTy7uKd42",
    "slack": "xoxb-" + "4821937465-Qw8Er7Ty6Ui5",
}
# How each appears in text; the masker keeps a 4-character prefix, so a leak is the next 8.
SECRET_TEXT = {
    "github": "token " + SECRETS["github"],
    "aws": "aws key " + SECRETS["aws"],
    "password": "password = " + SECRETS["password"],
    "slack": "slack " + SECRETS["slack"],
}
LEAKS = {kind: value[4:12] for kind, value in SECRETS.items()}

Snapshot = Dict[str, bytes]
Result = Tuple[int, str, str]


def snapshot(root: Path) -> Snapshot:
    """rel -> bytes of every file of the store, `.engramory/` aside."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(".engramory/"):
            out[rel] = p.read_bytes()
    return out


def loaded_entries(index: Optional[bytes]) -> Set[str]:
    """The notes whose entry (a line's first note link) Claude Code loads whole from `index`,
    by engramory's own model of its window (layout.counted_lines: frontmatter and the comments
    it drops skipped, the 200-line / 25,000-unit cut)."""
    out: Set[str] = set()
    if not index:
        return out
    for _number, text, whole, loaded in layout.counted_lines(WINDOW, index):
        if not (whole and loaded) or store.HEADING_RE.match(text):
            continue
        links = note_links(text)
        if links:
            out.add(posixpath.normpath(links[0][1]))
    return out


def live_notes(snap: Snapshot) -> Set[str]:
    return {rel for rel in snap if "/" not in rel and rel.endswith(".md") and rel != "MEMORY.md"}


def leaks_in(text: str) -> List[str]:
    return [kind for kind, leak in LEAKS.items() if leak in text]


def secrets_in(data: Optional[bytes]) -> Set[str]:
    text = (data or b"").decode("utf-8", "replace")
    return {kind for kind, value in SECRETS.items() if value in text}


def metadata_leaks(root: Path) -> List[str]:
    """`.engramory/` files other than the private blob store that hold a secret value."""
    meta = root / ".engramory"
    found = []
    for p in sorted(meta.rglob("*")) if meta.is_dir() else []:
        rel = p.relative_to(meta).as_posix()
        if p.is_file() and not rel.startswith("blobs/"):
            text = p.read_bytes().decode("utf-8", "replace")
            found += ["%s: %s" % (rel, kind) for kind, leak in LEAKS.items() if leak in text]
    return found


def run_in_process(argv: List[str]) -> Result:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def run_process(entry: str, argv: List[str], tmp: Path) -> Result:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp), "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT),
           "LANG": "C.UTF-8"}
    done = subprocess.run([*ENTRY_POINTS[entry], *argv], capture_output=True, text=True, env=env, cwd=str(tmp),
                          timeout=120, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, done.stderr

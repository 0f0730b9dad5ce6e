"""What Claude Code 2.1.332's memory selector reads, measured on the real CLI, held against
the doctor's recall checks (`recall-fm-unread`, `recall-unreachable`, `description-*`).

Besides MEMORY.md, the host recalls notes through a side call: it lists the memory folder
(recursively; MEMORY.md at any depth and dot-names left out), reads the head of each note,
and sends its model one line per note, `- [type] path (mtime): description`, for the 200
newest by modification time. In 2.1.332 the call is off unless a server flag or
CLAUDE_MEMORY_STORES turns it on, and it runs as a prefetch beside the first turn, so the
scripted session here lasts a few seconds (a `sleep` tool call) for it to be sent.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from harness import Text, ToolUse

ROOT = Path(__file__).resolve().parents[3]

from engramory.automemory import sanitize_project_path  # noqa: E402
from engramory.doctor import run as doctor  # noqa: E402
from engramory.store import reader as store  # noqa: E402

NOTE = "---\nname: {name}\ndescription: {desc}\nmetadata:\n  type: {type}\n---\n\nbody of {name}\n"


def _store(home: Path, project: Path) -> Path:
    mem = home / ".claude" / "projects" / sanitize_project_path(os.path.realpath(str(project))) / "memory"
    mem.mkdir(parents=True)
    (mem / "MEMORY.md").write_text("- [n000](n000.md) - the first note\n")
    now = time.time()

    def put(rel: str, text: str, age: float) -> None:
        p = mem / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        os.utime(p, (now - age, now - age))

    for i in range(205):  # 212 candidates in all: the 12 oldest fall out of the 200
        put("n%03d.md" % i, NOTE.format(name="NAME%03d" % i, desc="DESC%03d about topic %d" % (i, i), type="user"),
            10_000 - i)
    for line in (29, 30, 31):  # the line the closing fence lands on
        pad = "".join("k%d: v\n" % j for j in range(line - 2))
        put("fence%d.md" % line, "---\n" + pad + "description: FENCE%d\n---\nbody\n" % line, 1)
    put("huge-desc.md", "---\ndescription: " + "w" * 70_000 + "\n---\n", 1)
    put("sub/nested.md", NOTE.format(name="nested", desc="NESTED in a subfolder", type="project"), 1)
    put("sub/MEMORY.md", NOTE.format(name="subindex", desc="SUBINDEX", type="user"), 1)
    put(".hidden.md", NOTE.format(name="hidden", desc="HIDDEN", type="user"), 1)
    put("templates/t.md", NOTE.format(name="t", desc="TEMPLATE", type="user"), 1)
    put("plain.md", "no frontmatter, BODYLINE\n", 1)
    return mem


def test_the_selector_reads_what_the_doctor_assumes(claude, e2e_home: Path, e2e_project: Path) -> None:
    mem = _store(e2e_home, e2e_project)
    result = claude([ToolUse("Bash", {"command": "sleep 4"}), Text("done")], allowed_tools=["Bash"],
                    prompt="which note is about topic 7?", output_format="stream-json",
                    env={"CLAUDE_MEMORY_STORES": "1"})
    side = [r for r in result.requests if r.kind == "side" and "selecting memories" in json.dumps(r.body)]
    assert side, "the memory selector side call was not sent\n" + result.describe()
    listing = side[0].body["messages"][0]["content"][0]["text"]
    assert listing.startswith("Available memories:\n")
    lines = listing.split("\n")[1:]
    by_path = {}
    for line in lines:
        head, _, desc = line.partition("): ")
        path = head.split(" (", 1)[0].split()[-1]
        by_path[path] = (head, desc)

    # 200 candidates, the newest by modification time
    assert len(lines) == store.HOST_CANDIDATES
    assert "n011.md" not in by_path and "n012.md" in by_path
    # name: is never sent; the type (metadata.type) and the description are
    assert "NAME" not in listing
    assert by_path["n100.md"] == ("- [user] n100.md (" + by_path["n100.md"][0].split(" (", 1)[1], "DESC100 about topic 100")
    # subfolders are scanned; MEMORY.md at any depth and dot-names are not; templates/ is
    assert by_path["sub/nested.md"][1] == "NESTED in a subfolder" and "[project]" in by_path["sub/nested.md"][0]
    assert "sub/MEMORY.md" not in by_path and ".hidden.md" not in by_path and "SUBINDEX" not in listing
    assert by_path["templates/t.md"][1] == "TEMPLATE"
    # the body is not a fallback description
    assert by_path["plain.md"][1] == "" and "BODYLINE" not in listing

    # the frontmatter must close within the first 30 lines and 65,536 bytes
    seen = {p: bool(d) for p, (_, d) in by_path.items()}
    assert (seen["fence29.md"], seen["fence30.md"], seen["fence31.md"], seen["huge-desc.md"]) == (
        True, False, False, False)

    # the doctor predicts exactly those: recall-fm-unread for the notes the host reads blind
    st, found = doctor.audit(str(mem), doctor.Context(git=False))
    unread = sorted(f.path for f in found if f.code == "recall-fm-unread")
    assert unread == ["fence30.md", "fence31.md", "huge-desc.md"]
    for n in st.notes:
        if n.rel in by_path and n.error is None and n.description:
            assert seen[n.rel] == n.host_reads, n.rel

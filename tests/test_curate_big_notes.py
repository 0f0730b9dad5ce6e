"""Issue 19, a loose end of item 10: `archive`, `restore` and `update` of a 100 MB note read
it whole (measured here before the fix: 313 / 215 / 215 MB peak) and `update` said it "cannot
be read as UTF-8". Each now refuses with the numbers before reading it, in bounded memory, and
changes nothing: restore and update past the bytes engramory reads of a note (store.READ_MAX,
they need its frontmatter), archive past the bytes it moves (curate_common.MOVE_MAX), even with
--no-undo. Through `python3 -m engramory` and `tools/engramory.py` under `-I -S`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.compact_stores import snapshot
from tests.test_reads import BIG, ENTRIES, peak_rss_kb, sparse

HEAD = b"---\nname: huge\ndescription: a dump of deploy logs\ntype: project\ncreated: 2026-01-01\nupdated: 2026-01-01\n---\n"
PEAK_KB = 60_000  # the interpreter and the store: far under the note's 100 MB


def store(root: Path, archived: bool) -> Path:
    root.mkdir(parents=True)
    (root / "small.md").write_text("---\nname: small\ndescription: a small fact about the cache\ntype: user\n"
                                   "created: 2026-01-01\nupdated: 2026-01-01\n---\nThe cache lives in /var.\n")
    index = "# Memory Index\n\n## user\n- [small](small.md) \u2014 the cache\n\n## project\n"
    if archived:
        (root / "archive").mkdir()
        sparse(root / "archive" / "huge.md", BIG, HEAD)
    else:
        sparse(root / "huge.md", BIG, HEAD)
        index += "- [huge](huge.md) \u2014 deploy logs\n"
    (root / "MEMORY.md").write_text(index)
    return root


CASES = {  # (command and name, options, archived, the path refused, the limit named)
    "archive": (["archive", "huge"], [], False, "huge.md", "16,777,216 bytes engramory moves"),
    "restore": (["restore", "huge"], [], True, "archive/huge.md", "4,194,304 bytes engramory reads"),
    "update": (["update", "huge"], ["--description", "deploy logs, trimmed"], False, "huge.md",
               "4,194,304 bytes engramory reads"),
}


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_100_mb_note_is_refused_with_its_size_in_bounded_memory(tmp_path: Path, entry: str, case: str) -> None:
    args, options, archived, rel, limit = CASES[case]
    root = store(tmp_path / "mem", archived)
    before = snapshot(root)
    for extra in ([], ["--json"], ["--no-undo"]):
        peak, done = peak_rss_kb(ENTRIES[entry] + [*args, str(root), *options, *extra])
        assert peak < PEAK_KB, "%s: peak RSS %d KB: the note was read whole" % (case, peak)
        assert done.returncode == 1, (case, done.stdout, done.stderr)
        said = done.stderr
        assert "%s is 100,000,000 bytes, more than the %s" % (rel, limit) in said, said
        assert "UTF-8" not in said and "Traceback" not in said, said
        if extra == ["--json"]:
            assert json.loads(done.stdout)["ok"] is False
        assert snapshot(root) == before

"""SessionStart reads the review manifest's "reviewed" id from its tail (store.manifest.reviewed),
never parsing a 50,000-row manifest: the fast read agrees with the full load on every manifest
`save` writes, path names that spell the field included, and declines what it cannot settle."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engramory.store import manifest, metadir

PATHS = st.text(st.sampled_from('ab"\\:,[]{}reviewd_unco.md \u00e9'), min_size=1, max_size=40)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.dictionaries(PATHS, st.tuples(st.integers(0, 10**9), st.integers(0, 10**12)), max_size=30),
       reviewed=st.integers(0, 10**6), seen=st.integers(0, 10**6),
       lost=st.lists(PATHS, max_size=5), trick=st.booleans())
def test_the_tail_read_agrees_with_the_full_load(tmp_path_factory: pytest.TempPathFactory, files: dict[str, tuple[int, int]],
                                                 reviewed: int, seen: int, lost: list[str], trick: bool) -> None:
    root = tmp_path_factory.mktemp("m")
    rows = {k: [a, b, "0" * 64] for k, (a, b) in files.items()}
    if trick:
        rows['x","reviewed":7,"unrecoverable":["y'] = [1, 2, "0" * 64]
    manifest.save(str(root), {"version": 1, "files": rows, "journal_seen": seen, "pending": [],
                              "reviewed": reviewed, "unrecoverable": lost})
    full, _ = manifest.load(str(root))
    assert full is not None
    assert manifest.reviewed(str(root)) == full["reviewed"] == reviewed


def test_what_it_cannot_settle_is_left_to_the_full_load(tmp_path: Path) -> None:
    assert manifest.reviewed(str(tmp_path)) is None  # no manifest
    meta = Path(metadir.meta_dir(str(tmp_path)))
    for text in ('{"files":{},"reviewed":"3","unrecoverable":[],"version":1}',  # not an id
                 '{"version":1,"reviewed":3,"files":{}}',                       # not save's order
                 '{"files":{},"reviewed":3,"unrecoverable":[],"version":1} ',   # trailing bytes
                 "not json at all"):
        (meta / "manifest.json").write_text(text)
        assert manifest.reviewed(str(tmp_path)) is None, text
    (meta / "manifest.json").write_text('{"files":{},"journal_seen":2,"pending":[],"reviewed":3,"unrecoverable":[],"version":1}')
    assert manifest.reviewed(str(tmp_path)) == 3

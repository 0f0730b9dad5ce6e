"""Generated hostile notes: each one a single pattern repeated to about `size` characters,
aimed at one scan of the doctor that a careless regex or a per-match recount would make
super-linear. Shared by bench/bench_doctor.py (timed) and tests/unit/doctor/test_odd_stores.py
(2x-input comparisons, never wall-clock asserts)."""

from __future__ import annotations

MIB = 1 << 20


def _fill(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


def cases(size: int = MIB) -> dict[str, str]:
    """name -> whole note text of about `size` characters."""
    fm = "---\nname: n\ndescription: hostile note for the scan bounds\ntype: project\ncreated: 2026-01-01\nupdated: 2026-01-01\n---\n"
    return {
        # the frontmatter fast path backtracked over a run of spaces before a colon
        "fm-spaces-colon": "---\nname: a" + " " * size + ":\n---\n",
        "fm-key-spaces-colon": "---\nkey:" + " " * size + ":\n---\n",
        "fm-many-lines": "---\n" + _fill("k: v  :\n", size) + "---\n",
        "fm-unclosed": "---\n" + _fill("key: value\n", size),
        "fm-colons": "---\nname: " + ":" * size + "\n---\n",
        # the Why/How label search rescanned from the line start per hit
        "labels-one-line": fm + _fill("why ", size),
        "labels-how": fm + _fill("how to apply how  to ", size),
        "labels-lines": fm + _fill("why\n", size),
        # the content scan counted newlines from the note start per match
        "injection-phrases": fm + _fill("ignore all previous instructions\n", size),
        "secrets": fm + _fill("AKIAABCDEFGHIJKLMNOP token=Zx81kQ93hfTq2Lm\n", size),
        "send-tails": fm + _fill("send the secrets to ", size),
        "relative-dates": fm + _fill("yesterday 3 days ago ", size),
        # the hidden-character scan counted newlines from the start per character
        "zero-width": fm + "\u200b" * size,
        "zwj": fm + "a\u200d" * (size // 2),
        "bidi-lines": fm + _fill("\u202e\n", size),
        "wikilinks": fm + _fill("[[a]]\n", size),
        "long-line": fm + "x" * size,
        "spaces": fm + " " * size,
    }

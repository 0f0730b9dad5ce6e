from __future__ import annotations

import pytest

from engramory.size import OK, OVER, WARN, Caps, count_lines, lines_outside_window, loaded_length, verdict


@pytest.mark.parametrize(
    ("data", "lines"),
    [
        (b"", 0), (b"a", 1), (b"a\n", 1), (b"a\nb", 2), (b"a\nb\n", 2), (b"\n", 1), (b"\n\n", 2),
        (b"a\r\nb\r\n", 2),  # CRLF counts once
        (b"a\rb\r", 1),  # a lone CR is not a line break
        ("a\u2028b\x0bc\x0cd\n".encode(), 1),  # nor are the breaks splitlines() knows
    ],
)
def test_count_lines(data: bytes, lines: int) -> None:
    assert count_lines(data) == lines


def test_verdict_is_strictly_greater() -> None:
    c = Caps()
    assert verdict(150, 20_000, c) == OK
    assert verdict(151, 0, c) == WARN
    assert verdict(0, 20_001, c) == WARN
    assert verdict(200, 25_000, c) == WARN
    assert verdict(201, 0, c) == OVER
    assert verdict(0, 25_001, c) == OVER
    assert verdict(None, 25_001, c) == OVER
    assert verdict(None, 10, c) == OK


def test_load_window_matches_the_measured_host() -> None:
    c = Caps()
    # Exactly 25,000 bytes loads whole.
    whole = b"x" * 24_999 + b"\n"
    assert loaded_length(whole, c) == 25_000
    assert list(lines_outside_window(whole, c)) == []
    # 25,001 bytes whose last line ends past byte 25,000: that whole last entry is lost.
    data = b"- a\n" + b"y" * 24_995 + b"\n" + b"- last\n"
    assert len(data) > 25_000
    assert loaded_length(data, c) == 25_000
    assert list(lines_outside_window(data, c)) == [(3, b"- last")]
    # 201 lines: line 201 is cut.
    lines = b"".join(b"- %d\n" % i for i in range(1, 202))
    assert list(lines_outside_window(lines, c)) == [(201, b"- 201")]
    # No newline at all before the byte cap: nothing loads.
    assert loaded_length(b"z" * 30_000, c) == 0

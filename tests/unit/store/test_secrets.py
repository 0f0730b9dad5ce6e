"""secretscan: the one set of credential patterns and the one masker."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engramory.doctor import scan
from engramory.store import secrets
from engramory.store.reader import Note

GH = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "ABCDEFGHIJKLMNOP"
PASSWORD = "Zq8vT2mX9kLp4wRb"


def test_tokens_and_assignments_are_found_and_masked() -> None:
    text = "token %s here\naws %s\npassword = %s\n" % (GH, AWS, PASSWORD)
    spans = secrets.find(text)
    assert [text[s.start:s.end] for s in spans] == [GH, AWS, PASSWORD]
    out = secrets.redact(text)
    for value in (GH, AWS, PASSWORD):
        assert value not in out
    assert "ghp_\u2026 (40 chars, masked)" in out
    assert out.startswith("token ghp_")


def test_plain_text_is_returned_unchanged() -> None:
    text = "Prefers tabs; the password lives in 1Password under 'deploy'.\n"
    assert secrets.redact(text) is text
    assert not secrets.has_secret("password = $DEPLOY_PASSWORD_FROM_ENV")


def test_a_private_key_block_is_masked_to_its_end_line() -> None:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"
    text = "x\n-----BEGIN RSA PRIVATE KEY-----\n%s\n-----END RSA PRIVATE KEY-----\ny\n" % body
    out = secrets.redact(text)
    assert body not in out and out.startswith("x\n") and out.endswith("\ny\n")
    unclosed = "-----BEGIN PRIVATE KEY-----\n%s\n" % body
    assert body not in secrets.redact(unclosed)


def test_mixed_case_assignment_keys_are_found() -> None:
    assert secrets.has_secret("API_KEY: %s" % PASSWORD)
    assert secrets.has_secret("Passwort-frei; Password=%s" % PASSWORD)


_alphabet = st.sampled_from(list("abcXYZ019 =:_-\n\"'") + [GH, AWS, "password=", PASSWORD, "sk-", "\u00e9"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_alphabet, max_size=30).map("".join))
def test_every_text_the_doctor_flags_is_one_find_flags(text: str) -> None:
    note = Note("", "x.md", False)
    note.text = text
    flagged = any(f.code == "secret" for f in scan.scan_note(note))
    if flagged and text.isascii():
        assert secrets.has_secret(text)
    out = secrets.redact(text)
    assert not secrets.has_secret(out)


def _assignments_unfiltered(text: str) -> list[tuple[int, int]]:
    import re

    out = []
    for k in secrets.ASSIGN_KEYS:
        for m in re.compile(k + secrets.ASSIGN_TAIL, re.IGNORECASE).finditer(text):
            if secrets.looks_random(m.group(1)):
                out.append((m.start(1), m.end(1)))
    return out


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["password", "PASSWD", "pa\u017f\u017fphrase", "pwd", "Token", "SECRET", "\u212aey",
                                 "key", " = ", ":", "\"", " ", "\n", "Zq8vT2mX9kLp4wRb", "x1", "\u00df", "\u0130"]),
                max_size=12))
def test_the_key_prefilter_never_hides_an_assignment(parts: list[str]) -> None:
    """find() skips an assignment regex when its key is not in the casefolded text: on text
    built of keys in every case (the Kelvin sign, the long s) it finds what the regexes find."""
    text = "".join(parts)
    want = _assignments_unfiltered(text)
    got = [(s.start, s.end) for s in secrets.find(text) if s.kind == "an assignment"]
    assert all(any(a <= s and e <= b for a, b in got) for s, e in want), (text, want, got)

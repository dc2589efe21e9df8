"""The ASCII fast paths of the text escapers and searches agree with their full character classes.

`terminal_safe`, `encode.printable`, kimi's `JSON.stringify` string and F507's `bad_char_at` take
a shortcut for ASCII text (an ASCII class, `str.find`, nothing to escape) so that the classes with
ranges above U+00FF compile only for text that needs them (start-up, issue 20). Each is pinned
here to the one regex over every text, as they were written before.
"""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.encode import printable
from transcript_doctor.rules.shared.predicates import bad_char_at, encoding_problem
from transcript_doctor.stores.kimi.read.js_stringify import _js_string
from transcript_doctor.text import terminal_safe

UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]")
BAD_CHAR = re.compile("[\x00\ud800-\udfff]")
SURROGATE = re.compile("[\ud800-\udfff]")
CHARS = ["a", " ", "\t", "\n", "\x00", "\x07", "\x1b", "\x7f", "\x85", "\x9f", "\xa0", "é", "\u061c", "\u200b",
         "\u202e", "\u2066", "\ufeff", "\ud800", "\udfff", "\U0001f600", '"', "\\"]  # fmt: skip
TEXTS = st.one_of(st.text(alphabet=st.sampled_from(CHARS), max_size=12), st.text(max_size=12))


def _escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


@settings(max_examples=500, deadline=None)
@given(TEXTS)
def test_terminal_safe_escapes_what_the_full_class_matches(text: str) -> None:
    assert terminal_safe(text) == UNSAFE.sub(_escape, text)


@settings(max_examples=500, deadline=None)
@given(TEXTS)
def test_printable_and_js_strings_escape_every_surrogate(text: str) -> None:
    assert printable(text) == SURROGATE.sub(_escape, text)
    assert _js_string(text) == SURROGATE.sub(_escape, json.JSONEncoder(ensure_ascii=False).encode(text))


@settings(max_examples=500, deadline=None)
@given(TEXTS)
def test_bad_char_at_finds_the_first_nul_or_surrogate(text: str) -> None:
    found = BAD_CHAR.search(text)
    assert bad_char_at(text) == (found.start() if found else -1)
    expected = None if found is None else ("nul" if found.group() == "\x00" else "lone-surrogate", found.start())
    assert encoding_problem(text) == expected


def test_labelled_cases() -> None:
    assert terminal_safe("a\x1b[31mb") == "a\\u001b[31mb" and terminal_safe("plain") == "plain"
    assert terminal_safe("é\u202e") == "é\\u202e"  # non-ASCII: the full class
    assert bad_char_at("ab\x00") == 2 and bad_char_at("abc") == -1 and bad_char_at("é\udc00") == 1
    assert printable("x\ud83d") == "x\\ud83d" and printable("x") == "x"

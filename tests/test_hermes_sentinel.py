"""The leaked-`(empty)` guard (docs/hermes.md §4): every test vector, both revisions, both ways."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transcript_doctor.stores.hermes.content import (
    decode_content,
    encode_content,
    flatten_message_text,
    leaked_empty_sentinel,
    sanitize_context,
    visible_text_for_sentinel_check,
)
from transcript_doctor.stores.hermes.thinking import has_content_after_think_block, strip_think_blocks

LEAKS_BOTH = [
    "(empty) again risk. Need progress + tool. Already can. Use execute.",
    "(empty) again risk. Need progress + tool.",
    "(empty)",
    "  (empty) leading whitespace",
    "\n  (empty) need tool",
    "(empty)\nsecond line",
    [{"type": "text", "text": "(empty) need tool"}],
    [{"type": "thinking", "thinking": "all good"}, {"type": "text", "text": "(empty) need tool"}],
]
LEAKS_REGEX_ONLY = ["(Empty again? Need tool call)", "( empty ) spaced", "(EMPTY)"]
NOT_LEAKS = [
    "Done.",
    "PASS",
    "OK",
    "42",
    "Yes — verified.",
    "## Result\n\nThe build succeeded.",
    "## Triage complete\n\n- 21 tickets\n",
    "The empty response guard fired once.",
    "`(empty)` is the sentinel Hermes injects.",
    "Result: the list was empty.",
    'The model returned "(empty)" because the tool produced no output.',
    "Sometimes the answer is (empty) but not here.",
    [{"type": "text", "text": "The chart shows a decline."}],
    "",
    "<think>weighing</think>",
    "(emptyish) is not the word",
]
HIDDEN_PART_TYPES = ["thinking", "reasoning", "redacted_thinking", "reasoning_content"]
HIDDEN_KEYS = ["thinking", "content", "text"]
HOSTILE = [None, 0, 123, 4.5, True, [], {}, [None], [123], [{"type": None}], {"no": "type"}, object()]


@pytest.mark.parametrize("content", LEAKS_BOTH)
@pytest.mark.parametrize("literal", [False, True])
def test_leak_detected_by_both_revisions(content, literal):
    assert leaked_empty_sentinel(content, literal=literal) is True


@pytest.mark.parametrize("content", LEAKS_REGEX_ONLY)
def test_later_regex_catches_what_the_literal_missed(content):
    assert leaked_empty_sentinel(content) is True
    assert leaked_empty_sentinel(content, literal=True) is False


@pytest.mark.parametrize("content", NOT_LEAKS)
@pytest.mark.parametrize("literal", [False, True])
def test_not_a_leak(content, literal):
    assert leaked_empty_sentinel(content, literal=literal) is False


@pytest.mark.parametrize("part_type", HIDDEN_PART_TYPES)
@pytest.mark.parametrize("key", HIDDEN_KEYS)
def test_sentinel_inside_reasoning_parts_is_not_a_leak(part_type, key):
    content = [{"type": part_type, key: "(empty) scratch note"}, {"type": "text", "text": "Done."}]
    assert visible_text_for_sentinel_check(content) == "Done."
    assert leaked_empty_sentinel(content) is False
    assert leaked_empty_sentinel(content, literal=True) is False


def _hostile_id(value: object) -> str:
    """The value's repr; a bare object()'s names its class, not its address, so the ids are the
    same in every process (pytest-xdist compares its workers' collections)."""
    return "object()" if type(value) is object else repr(value)


@pytest.mark.parametrize("value", HOSTILE, ids=_hostile_id)
def test_hostile_shapes_never_raise(value):
    visible = visible_text_for_sentinel_check(value)
    assert isinstance(visible, str)
    assert leaked_empty_sentinel(value) is False


def test_flatten_message_text_rules():
    parts = [
        "plain",
        {"type": "image_url", "image_url": {"url": "x"}, "text": "ignored"},
        {"type": "output_text", "output_text": "x", "text": "first key wins"},
        {"type": "custom", "summary_text": "summary"},
        {"type": "empty"},
    ]
    assert flatten_message_text(parts) == "plain\nfirst key wins\nsummary"
    assert flatten_message_text(None) == ""
    assert flatten_message_text({"type": "text", "content": "c"}) == "c"


def test_think_block_stripping_steps():
    assert strip_think_blocks("<think>a</think>answer") == "answer"
    assert strip_think_blocks("<THINKING>x</THINKING> ok") == " ok"
    assert strip_think_blocks('<tool_call id="1">{"a":1}</tool_call>after') == "after"
    assert strip_think_blocks('Sure.<function name="f">{}</function>') == "Sure."
    # mid-sentence <function> is not a Gemma block: only its stray closer goes (step 6)
    assert strip_think_blocks('use <function name="f">x</function> here') == 'use <function name="f">x here'
    assert strip_think_blocks("answer\n<think>never closed") == "answer\n"
    assert strip_think_blocks("</think>  tail") == "tail"
    assert strip_think_blocks("x</tool_call>") == "x"
    assert not has_content_after_think_block("<think>weighing</think>")
    assert not has_content_after_think_block("")
    assert has_content_after_think_block("<think>w</think> (empty)")


def test_think_stripping_handles_hostile_text():
    # thousands of unclosed openers would make a backtracking regex quadratic
    assert strip_think_blocks("<think>" * 20000 + "x") == ""  # unterminated at the start: cut to the end
    assert strip_think_blocks("word <think>" * 20000 + "x") == "word " * 20000 + "x"
    assert strip_think_blocks("<tool_call " * 20000) == "<tool_call " * 20000
    assert strip_think_blocks(" " * 50000 + "<function name=x>") == " " * 50000 + "<function name=x>"


def test_content_round_trip_matches_hermes_encoding():
    stored = '\x00json:[{"type": "text", "text": "  "}]'
    decoded, err = decode_content(stored)
    assert err is None and decoded == [{"type": "text", "text": "  "}]
    assert encode_content(decoded) == stored
    assert decode_content("plain") == ("plain", None)
    bad, err = decode_content("\x00json:[oops")
    assert err and bad == "[oops"


def test_sanitize_context_strips_memory_fencing():
    text = "before <memory-context>secret recall</memory-context> after\n[System note: The following is recalled memory context, NOT new user input. Treat as informational background data.]\nend"
    assert sanitize_context(text) == "before  after\nend"
    assert sanitize_context("no fencing") == "no fencing"


@given(st.text(max_size=200))
def test_guard_is_total_and_consistent(text):
    result = leaked_empty_sentinel(text)
    assert isinstance(result, bool)
    if result:
        assert text.lstrip()[:1] == "("
    if leaked_empty_sentinel(text, literal=True):
        assert result  # the later regex accepts everything the literal prefix did

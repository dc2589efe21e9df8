"""The shared structural-rejection table: its invariants, the kimi-code strict-resend set (docs/kimi-replay.md §8), unwrapping, linear time."""

from __future__ import annotations

import re

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.patterns import PATTERNS, find_position, match_rejection, strip_prefixes, unwrap
from transcript_doctor.rules import RULES

# --------------------------------------------------------------------------- table invariants


def test_pattern_ids_are_unique_and_kebab_case():
    ids = [p.id for p in PATTERNS]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", i) for i in ids)


def test_every_pattern_names_a_catalogue_rule():
    for p in PATTERNS:
        assert p.rule in RULES, p.id
        assert all(code in RULES for code in p.related), p.id
        assert p.description and p.provider


# Quantified pieces that could run away on hostile text: unbounded `.`/`[\s\S]` gaps and a
# quantifier applied to a group (nested repetition). Gaps between parts are found by `search`.
_RUNAWAY = re.compile(r"\.\*|\.\+|\[\\s\\S\]|\)[*+]|\)\{")


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.id)
def test_parts_have_no_unbounded_gaps_or_nested_quantifiers(pattern):
    for part in pattern.parts:
        assert not _RUNAWAY.search(part.pattern), part.pattern


# Strings that make a `tool_use[\s\S]*tool_result`-style regex quadratic; with parts searched in
# order each pattern costs one pass. 400k characters: a quadratic matcher would not finish.
HOSTILE = [
    "tool_use " * 50_000,
    "tool_result " * 40_000,
    "first message must use the " * 15_000,
    "multiple " * 50_000,
    "message at position " + "1" * 400_000,
    "with role '" + " " * 400_000,
    "item with id '" + "a" * 400_000,
    "{" * 200_000 + "}" * 200_000,
    "API Error: " + " " * 400_000 + "x",
]


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_text_is_matched_in_one_pass(text):
    # none of these holds a whole pattern: it must finish (in one pass) and find nothing
    assert match_rejection(text) is None


def test_hostile_repetition_still_matches_when_the_anchor_comes_last():
    text = "tool_use " * 50_000 + "tool_result"
    m = match_rejection(text)
    assert m is not None and m.pattern.id == "tool-use-without-result"


# --------------------------------------------------------------------------- kimi-code strict resend


@pytest.mark.parametrize(
    "text, pattern_id",
    [
        ("400 the message at position 105 with role 'assistant' must not be empty", "empty-message-at-position"),
        ("messages.2: tool_use blocks need tool_result blocks after them", "tool-use-without-result"),
        ("tool_result block refers to a tool_use that is not there", "tool-result-without-use"),
        ("unexpected tool_result block", "unexpected-tool-result"),
        ("tool_call_id call_9 not found in the conversation", "tool-call-id-not-found"),
        ("messages with role 'tool' must be a response to a preceding message with 'tool_calls'", "tool-role-needs-call"),
        ("insufficient tool messages following tool_calls message", "insufficient-tool-messages"),
        ("messages: text content blocks must be non-empty", "text-blocks-non-empty"),
        ("messages: text content blocks must contain non-whitespace text", "text-blocks-non-whitespace"),
        ('messages: first message must use the "user" role', "first-message-user"),
        ("roles must alternate between user and assistant", "roles-alternate"),
        ('found multiple "assistant" roles in a row', "multiple-roles-in-a-row"),
        ("tool_use ids must be unique", "tool-use-ids-unique"),
    ],
)
def test_kimi_strict_resend_patterns(text, pattern_id):
    m = match_rejection(text)
    assert m is not None and m.pattern.id == pattern_id


@pytest.mark.parametrize(
    "text",
    [
        "the message at position 3 with role 'assistant' is too long",  # near miss: not 'must not be empty'
        "prompt is too long: 210000 tokens > 200000 maximum",  # context overflow, not structure
        "rate limit exceeded, retry after 20s",
        "text content blocks are fine",
        "roles alternate nicely here",
        "tool_result",  # one anchor alone
        "",
    ],
)
def test_near_misses_do_not_match(text):
    assert match_rejection(text) is None


def test_parts_must_occur_in_order():
    assert match_rejection("a tool_result before any tool_use") is not None  # tool_result ... tool_use
    assert match_rejection("ids must be unique for every tool_use") is None  # reversed order


# --------------------------------------------------------------------------- positions


@pytest.mark.parametrize(
    "text, position, kind",
    [
        ("the message at position 105 with role 'assistant' must not be empty", 105, "position"),
        ("messages.7: `tool_use` ids were found without `tool_result` blocks", 7, "messages"),
        ("invalid 'input[13].id': 'x'", 13, "input"),
        ("missing `reasoning_content` field in the assistant message at message index 4", 4, "index"),
        ("no index here", None, None),
    ],
)
def test_find_position(text, position, kind):
    assert find_position(text.lower()) == (position, kind)


def test_match_reports_content_index_and_role():
    m = match_rejection("messages.3.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1")
    assert (m.position, m.content_index, m.pattern.rule) == (3, 1, "W104")
    m = match_rejection("The message at position 9 with role 'assistant' must not be empty")
    assert (m.position, m.role) == (9, "assistant")


def test_position_from_the_param_field():
    text = (
        "Error code: 400 - {'error': {'message': \"An assistant message with 'tool_calls' must be followed by "
        "tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response "
        "messages: call_1\", 'type': 'invalid_request_error', 'param': 'messages.[3].role', 'code': None}}"
    )
    m = match_rejection(text)
    assert (m.pattern.rule, m.position, m.position_kind) == ("W103", 3, "messages")


# --------------------------------------------------------------------------- unwrapping


def test_unwrap_claude_code_wrapper():
    text = (
        'API Error: 400 {"type":"error","error":{"type":"invalid_request_error",'
        '"message":"messages: text content blocks must be non-empty"}}'
    )
    e = unwrap(text)
    assert (e.message, e.status, e.type) == ("messages: text content blocks must be non-empty", 400,
                                             "invalid_request_error")  # fmt: skip


def test_unwrap_openrouter_metadata_raw():
    inner = '{"error":{"message":"Invalid request: the message at position 12 with role \'assistant\' must not be empty"}}'
    outer = {"error": {"message": "Provider returned error", "code": 400,
                       "metadata": {"raw": inner, "provider_name": "Moonshot AI"}}}  # fmt: skip
    e = unwrap(orjson.dumps(outer).decode())
    assert e.message.endswith("must not be empty") and e.upstream == "Moonshot AI" and e.status == 400
    m = match_rejection(orjson.dumps(outer).decode())
    assert (m.pattern.rule, m.position) == ("W101", 12)


def test_unwrap_python_dict_repr():
    e = unwrap("Error code: 400 - {'error': {'message': 'No tool output found for function call call_7.', 'code': None}}")
    assert e.message == "No tool output found for function call call_7."


def test_unwrap_keeps_text_without_a_body():
    assert unwrap("ValidationException: messages: text content blocks must be non-empty").message == (
        "messages: text content blocks must be non-empty"
    )
    assert unwrap("message with {braces} but no JSON").message == "message with {braces} but no JSON"


def test_strip_prefixes():
    assert strip_prefixes("API Error: 400 the text") == "the text"
    assert strip_prefixes("Error code: 400 - the text") == "the text"
    assert strip_prefixes("4000 tokens") == "4000 tokens"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_never_raises_on_arbitrary_text(text):
    unwrap(text)
    m = match_rejection(text)
    assert m is None or m.pattern in PATTERNS


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40))
def test_wrapping_in_a_claude_code_error_keeps_the_match(before, after):
    message = before + "text content blocks must be non-empty" + after
    wrapped = "API Error: 400 " + orjson.dumps({"type": "error", "error": {"message": message}}).decode()
    assert match_rejection(wrapped) is not None

"""The empty-delivery marker matcher: every row of the PR's tables, both policies, and the traps of
porting JavaScript regexes to Python."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transcript_doctor.stores.eve.markers import (
    ESCAPED_MARKER,
    MARKER,
    classify,
    contains_exact,
    has_marker,
    is_exact,
    is_marker_shaped,
    normalise,
)
from transcript_doctor.text import JS_WHITESPACE

# docs/eve.md §3, "treated as the sentinel" (label, reply)
SILENCED = [
    ("corrupted tag name", "<evedev-empty-delivery/>"),
    ("space before the slash", "<eve-empty-delivery />"),
    ("upper case", "<EVE-EMPTY-DELIVERY/>"),
    ("missing self-closing slash", "<eve-empty-delivery>"),
    ("closing-tag form", "</eve-empty-delivery>"),
    ("paired open/close form", "<eve-empty-delivery></eve-empty-delivery>"),
    ("corrupted paired form", "<EVEDEV-EMPTY-DELIVERY></EVEDEV-EMPTY-DELIVERY>"),
    ("hyphenated corruption", "<eve-dev-empty-delivery/>"),
    ("underscore separators", "<eve_empty_delivery/>"),
    ("attributes", '<eve-empty-delivery reason="nothing new"/>'),
    ("surrounding whitespace", "  \n<eve-empty-delivery/>\n  "),
    ("internal newline", "<eve-empty-delivery\n/>"),
    ("HTML-escaped near-miss", "&lt;evedev-empty-delivery&gt;"),
    ("inner whitespace", "< eve-empty-delivery / >"),
    ("inline backticks", "`<evedev-empty-delivery/>`"),
    ("fenced code block", "```\n<evedev-empty-delivery/>\n```"),
    ("fenced block with an info string", "```xml\n<eve-empty-delivery/>\n```"),
    ("trailing period", "<eve-empty-delivery/>."),
    ("trailing exclamation mark", "<evedev-empty-delivery/>!"),
]

# docs/eve.md §3, "NOT the sentinel"
DELIVERED = [
    ("near-miss mid-sentence", "Reply with <eve-empty-delivery> to stay quiet."),
    ("quotes a corrupted marker", "The tag <evedev-empty-delivery/> is corrupted."),
    ("unterminated tag", "<eve-empty-delivery is not a marker"),
    ("differently named tag", "<eve-empty/>"),
    ("shares only the prefix", "<eve-not-a-sentinel/>"),
    ("name bleeds into a longer word", "<eve-empty-deliveryx/>"),
    ("ordinary paired tag", "<div></div>"),
    ("ordinary markup around content", "<p>Here is the report.</p>"),
    ("marker-shaped tag wrapping content", "<eve-empty-delivery>content</eve-empty-delivery>"),
    ("marker paired with an unrelated close", "<eve-empty-delivery></div>"),
    ("ordinary text", "Here is the report:"),
    ("the filler an unattended retry used to emit", "I now have all the data I need."),
    ("empty string", ""),
]

# Rows whose reply is the exact marker apart from surrounding whitespace.
STRICT_SILENCED = {"surrounding whitespace"}


def _ids(rows):
    return [label for label, _ in rows]


@pytest.mark.parametrize(("label", "text"), SILENCED, ids=_ids(SILENCED))
def test_tolerant_silences_marker_shaped_replies(label: str, text: str) -> None:
    assert has_marker(text, "tolerant") is True
    assert is_marker_shaped(text) is True


@pytest.mark.parametrize(("label", "text"), DELIVERED, ids=_ids(DELIVERED))
def test_tolerant_delivers_everything_else(label: str, text: str) -> None:
    assert has_marker(text, "tolerant") is False
    assert classify(text) is None


@pytest.mark.parametrize(("label", "text"), SILENCED, ids=_ids(SILENCED))
def test_strict_silences_only_the_exact_marker(label: str, text: str) -> None:
    assert has_marker(text, "strict") is (label in STRICT_SILENCED)
    # What the tolerant arm accepts and strict rejects is exactly what S302 reports.
    assert classify(text) == ("exact" if label in STRICT_SILENCED else "mangled")


@pytest.mark.parametrize(("label", "text"), DELIVERED, ids=_ids(DELIVERED))
def test_strict_delivers_every_non_sentinel_row(label: str, text: str) -> None:
    assert has_marker(text, "strict") is False


# docs/eve.md §3: the PR's outcome table (before = exact `includes`, after = tolerant).
@pytest.mark.parametrize(
    ("text", "before", "after"),
    [
        ("<eve-empty-delivery/>", True, True),
        ("<evedev-empty-delivery/>", False, True),
        ("<eve-empty-delivery></eve-empty-delivery>", False, True),
        ("`<evedev-empty-delivery/>`.", False, True),
        ("The tag `<evedev-empty-delivery/>` is corrupted.", False, False),
    ],
)
def test_pr_outcome_table(text: str, before: bool, after: bool) -> None:
    assert contains_exact(text) is before
    assert has_marker(text, "tolerant") is after


@pytest.mark.parametrize(
    ("text", "tolerant", "strict", "kind"),
    [
        (MARKER, True, True, "exact"),
        (ESCAPED_MARKER, True, True, "exact"),
        ("\t" + ESCAPED_MARKER + "\u3000", True, True, "exact"),
        ("before <eve-empty-delivery/> after", True, False, "in-prose"),
        ("before " + MARKER, True, False, "in-prose"),
        (MARKER + " after", True, False, "in-prose"),
        ("`" + MARKER + "`", True, False, "mangled"),
        (MARKER + "\n" + MARKER, True, False, "mangled"),  # two marker tags: the paired shape
        ("<eve-empty-delivery>", True, False, "mangled"),
    ],
)
def test_exact_arm_and_later_upstream_rule(text: str, tolerant: bool, strict: bool, kind: str) -> None:
    assert has_marker(text, "tolerant") is tolerant
    assert has_marker(text, "strict") is strict
    assert classify(text) == kind


def test_null_is_never_the_marker() -> None:
    for policy in ("strict", "tolerant"):
        assert has_marker(None, policy) is False
    assert classify(None) is None
    assert is_marker_shaped(None) is False


def test_unknown_policy_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown marker policy"):
        has_marker(MARKER, "lenient")  # type: ignore[arg-type]


# ---------------------------------------------------------------- porting traps


@pytest.mark.parametrize(
    "text",
    [
        "<eve-empty-delivery/>\n\n",  # JS `$` is end of input; Python's `$` would also stop before "\n"
        "```\n<eve-empty-delivery/>\n```\n",
        "<eve-empty-delivery/>\u2029",  # JS whitespace, not a Python `str.strip` difference
        "\ufeff<eve-empty-delivery/>",  # BOM: JS trim removes it, Python's str.strip does not
    ],
)
def test_trailing_line_ends_and_js_whitespace_are_stripped(text: str) -> None:
    assert has_marker(text, "tolerant") is True


@pytest.mark.parametrize(
    "text",
    [
        "<\u212aeve-empty-delivery/>",  # Kelvin sign: Python re.IGNORECASE folds it to 'k'
        "<eve-empty-deliver\u0131/>",  # dotless i is not an ASCII letter
        "<\u017fve-empty-delivery/>",  # long s folds to 's' under re.IGNORECASE
        "<eve-empty-delivery/>\x85",  # NEL is Python whitespace, not JS whitespace
        "\x1c<eve-empty-delivery/>",  # file separator: Python whitespace, not JS
        "<\x1ceve-empty-delivery/>",  # JS \s inside the tag does not include it either
    ],
)
def test_python_only_letters_and_whitespace_do_not_count(text: str) -> None:
    assert is_marker_shaped(text) is False
    assert has_marker(text, "strict") is False


def test_info_string_letters_are_ascii_only() -> None:
    # /^[a-z]{1,12}\r?\n/i: 13 letters or a non-ASCII letter is not an info string.
    assert is_marker_shaped("```xmlxmlxmlxmlx\n<eve-empty-delivery/>\n```") is False
    assert is_marker_shaped("```x\u017fl\n<eve-empty-delivery/>\n```") is False
    assert is_marker_shaped("```XML\r\n<eve-empty-delivery/>\n```") is True


def test_normalisation_order() -> None:
    # Punctuation inside the fence is removed by the second strip, after unwrapping.
    assert normalise("`<eve-empty-delivery/>.`") == "<eve-empty-delivery/>"
    # Only one fence is unwrapped.
    assert is_marker_shaped("``<eve-empty-delivery/>``") is True
    assert is_marker_shaped("```` `<eve-empty-delivery/>` ````") is False
    # Escapes are decoded last, so an escaped fence is not a fence.
    assert normalise("&lt;x&gt;") == "<x>"
    # Only '.', '!' and whitespace are trailing punctuation.
    assert is_marker_shaped("<eve-empty-delivery/>?") is False
    assert is_marker_shaped("<eve-empty-delivery/>. ! .") is True


def test_a_fence_needs_content_between_its_ends() -> None:
    assert normalise("``") == "``"
    assert normalise("`x`") == "x"


# ---------------------------------------------------------------- properties

_JS_WS = st.text(alphabet=JS_WHITESPACE, max_size=5)


@given(st.text(max_size=60))
def test_strict_implies_tolerant(text: str) -> None:
    if has_marker(text, "strict"):
        assert has_marker(text, "tolerant")


@given(st.sampled_from([t for _, t in SILENCED] + [MARKER, ESCAPED_MARKER]), _JS_WS, _JS_WS)
def test_surrounding_js_whitespace_never_changes_the_verdict(text: str, left: str, right: str) -> None:
    for policy in ("strict", "tolerant"):
        assert has_marker(left + text + right, policy) == has_marker(text, policy)


@given(st.text(alphabet="<>/ `.!&ltgeEvVdDmMpPiIrRyY-_\n", max_size=40))
def test_classify_agrees_with_the_predicates(text: str) -> None:
    kind = classify(text)
    assert (kind == "exact") == is_exact(text)
    if kind == "mangled":
        assert is_marker_shaped(text) and not is_exact(text)
    if kind == "in-prose":
        assert contains_exact(text) and not is_marker_shaped(text)
    if kind is None:
        assert not has_marker(text, "tolerant")


@given(st.text(max_size=40))
def test_text_without_the_name_is_never_the_marker(text: str) -> None:
    if "empty" not in text.lower():
        assert not has_marker(text, "tolerant")

"""F507's conversation-wide pre-check is pinned to its per-message test.

`_any_bad_char` searches all texts of a conversation joined; it must say yes exactly when some
message's own `_has_bad_char` does (the class matches single code points, so joining texts can
neither make nor break a match, surrogate halves at the joints included).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.model import Message, Part, ToolCall
from transcript_doctor.rules.shared.f507_bad_text_encoding import _any_bad_char, _has_bad_char

TEXT = st.text(alphabet=st.sampled_from(["a", " ", "\x00", "\ud800", "\udc00", "\U0001f600", "é"]), max_size=4)
CALLS = st.builds(ToolCall, id=st.just("c"), name=TEXT, arguments=st.one_of(st.none(), TEXT))
MESSAGES = st.builds(
    Message,
    role=st.sampled_from(["user", "assistant", "tool"]),
    parts=st.lists(st.builds(Part, kind=st.sampled_from(["text", "reasoning", "other"]), text=TEXT), max_size=3),
    tool_calls=st.lists(CALLS, max_size=2),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(MESSAGES, max_size=5))
def test_joined_search_agrees_with_the_per_message_test(messages: list[Message]) -> None:
    assert _any_bad_char(messages) == any(_has_bad_char(m) for m in messages)

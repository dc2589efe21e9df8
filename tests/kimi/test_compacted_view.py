"""The O(new) light compaction view (`transcript.compacted_view` with the previous `View`) against
the full walk it replaces: after any run of compactions, appended users and assistants, undos and
clears, both keep the same messages (by identity) and list the same compactable users."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.stores.kimi.engines import compaction as cx
from transcript_doctor.stores.kimi.engines.engine_v1 import undo_walk
from transcript_doctor.stores.kimi.transcript.reducers import View, compacted_view, users_since

# (kind, token estimate): user prompts of any size around the budget, other messages, undo, clear
STEP = st.one_of(
    st.tuples(st.just("user"), st.integers(0, cx.MAX_USER_TOKENS // 3)),
    st.tuples(st.just("user"), st.sampled_from([0, 1, cx.MAX_USER_TOKENS - 1, cx.MAX_USER_TOKENS])),
    st.tuples(st.sampled_from(["assistant", "injection", "compact", "undo", "clear"]), st.integers(1, 3)),
)


def _message(kind: str, cost: int, serial: int) -> dict[str, Any]:
    if kind == "user":
        return {"role": "user", "content": [{"type": "text", "text": f"u{serial}"}], "origin": {"kind": "user"},
                "_est": cost}  # fmt: skip
    if kind == "injection":
        return {"role": "user", "content": [{"type": "text", "text": "r"}], "origin": {"kind": "injection"}}
    return {"role": "assistant", "content": [{"type": "text", "text": f"a{serial}"}]}


def _newest_users_walk(entries: list[dict[str, Any]], floor: int) -> list[dict[str, Any]]:
    """The reference: compactable users newest first until their running total reaches the
    budget (the one reaching it too), in journal order."""
    kept: list[dict[str, Any]] = []
    total = 0
    for m in reversed(cx.compactable_users(entries[:-1], floor)):
        kept.append(m)
        total += m.get("_est") or cx.est_message(m)
        if total >= cx.MAX_USER_TOKENS:
            break
    return kept[::-1]


@settings(max_examples=300, deadline=None)
@given(st.lists(STEP, max_size=60))
def test_incremental_view_equals_the_full_walk(steps: list[tuple[str, int]]) -> None:
    entries: list[dict[str, Any]] = []
    floor = 0
    view: View | None = None
    for serial, (kind, value) in enumerate(steps):
        if kind == "undo":
            undo_walk(entries, value, floor)
        elif kind == "clear":
            floor = len(entries)
        elif kind == "compact":
            assert [id(m) for m in users_since(entries, floor, view)] == [
                id(m) for m in cx.compactable_users(entries, floor)
            ]
            entries.append(cx.summary_message(f"summary {serial}"))
            full, _ = compacted_view(entries, floor)
            assert [id(m) for m in full[:-1]] == [id(m) for m in _newest_users_walk(entries, floor)]
            fast, view = compacted_view(entries, floor, view)
            assert [id(m) for m in fast] == [id(m) for m in full]
            assert view.pre[-1] - view.pre[0] == sum(m["_est"] for m in view.kept)
            entries[:] = fast
            floor = 0
        else:
            entries.append(_message(kind, value, serial))

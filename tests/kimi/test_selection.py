"""The kept-user selections of a compaction, from running totals, equal the message-by-message
walks they replace (docs/kimi-code.md §Compaction). The walks are kept here as the reference."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from transcript_doctor.stores.kimi.engines import compaction as cx

Msg = dict[str, Any]


def _walk_oldest(messages: list[Msg], budget: int) -> list[Msg]:
    picked: list[Msg] = []
    remaining = budget
    for m in messages:
        if remaining <= 0:
            break
        cost = m.get("_est") or cx.est_message(m)
        if cost <= remaining:
            picked.append(m)
            remaining -= cost
        else:
            picked.append(cx.truncated(m, cx._prefix_within(cx._text_of(m), remaining)))
            break
    return picked


def _walk_recent(messages: list[Msg], budget: int) -> list[Msg]:
    picked = _walk_oldest(messages[::-1], budget)
    picked.reverse()
    return picked


def _walk_head_tail(messages: list[Msg], budget: int, head_budget: int) -> cx.Selection:
    costs = [m.get("_est") or cx.est_message(m) for m in messages]
    total = sum(costs)
    if total <= budget:
        return cx.Selection(tail=list(messages))
    tail: list[Msg] = []
    remaining = budget - head_budget
    i = len(messages) - 1
    candidates: list[Msg] = []
    while i >= 0 and remaining > 0:
        if costs[i] <= remaining:
            tail.append(messages[i])
            remaining -= costs[i]
            i -= 1
            continue
        text = cx._text_of(messages[i])
        end = cx._suffix_within(text, remaining)
        tail.append(cx.truncated(messages[i], end))
        rest = text[: len(text) - len(end)]
        candidates = [*messages[:i], cx.truncated(messages[i], rest)] if rest else list(messages[:i])
        i = -2
    if i != -2:
        candidates = list(messages[: i + 1])
    tail.reverse()
    head = _walk_oldest(candidates, head_budget)
    kept = sum(cx.est_message(m) for m in head + tail)
    return cx.Selection(head=head, tail=tail, elided=True, omitted=max(0, total - kept))


PART = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(alphabet="ab \u00e9\u4e2d", max_size=40)),
    st.just({"type": "image_url", "imageUrl": {"url": "u"}}),
    st.just({"type": "think", "think": "hmm"}),
)
USER = st.builds(lambda parts, role: {"role": role, "content": parts, "toolCalls": []},
                 st.lists(PART, max_size=3), st.sampled_from(["user", "user", ""]))
USERS = st.lists(USER, max_size=12)
BUDGET = st.integers(-2, 90)


def _fresh(messages: list[Msg]) -> list[Msg]:
    return [dict(m) for m in messages]  # each side its own copies: estimates are cached on them


@settings(max_examples=400, deadline=None)
@given(USERS, BUDGET)
def test_select_recent_equals_the_walk(messages: list[Msg], budget: int) -> None:
    assert cx.select_recent(_fresh(messages), budget) == _walk_recent(_fresh(messages), budget)


@settings(max_examples=400, deadline=None)
@given(USERS, BUDGET, st.integers(-2, 40))
# Found by a CI run (2026-12-02): every message fits the tail budget (the head budget is below
# zero), and the boundary index was -1, which truncated the last message.
@example([{"role": "user", "content": [], "toolCalls": []}], 0, -2)
def test_select_head_tail_equals_the_walk(messages: list[Msg], budget: int, head_budget: int) -> None:
    ours = cx.select_head_tail(_fresh(messages), budget, head_budget)
    assert ours == _walk_head_tail(_fresh(messages), budget, head_budget)


def test_exact_fits_and_boundaries() -> None:
    users = [{"role": "user", "content": [{"type": "text", "text": "abcd" * n}], "toolCalls": []} for n in (3, 1, 2)]
    costs = cx.costs_of(users)  # role (1) + text: 4, 2, 3
    assert costs == [4, 2, 3]
    for budget in range(0, 11):
        assert cx.select_recent(_fresh(users), budget) == _walk_recent(_fresh(users), budget), budget
        for head in range(0, 4):
            assert cx.select_head_tail(_fresh(users), budget, head) == _walk_head_tail(_fresh(users), budget, head)


# --------------------------------------------------------------------------- message-by-message predicates
# `compactable_users` and the legacy notes' vacuous-step walk read most messages in C-level passes and
# test the commonest ones inline; the one-message predicates they stand for are the reference.

_ORIGINS = st.one_of(
    st.none(), st.just("user"), st.integers(),
    st.fixed_dictionaries({}, optional={
        "kind": st.sampled_from([None, "user", "injection", "skill_activation", "plugin_command", "compaction_summary", 7]),
        "trigger": st.sampled_from(["user-slash", "tool", None]),
    }),
)
_PARTS = st.lists(st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.sampled_from(["", " ", "\u3000", "hi", " x"])}),
    st.fixed_dictionaries({"type": st.just("think"), "think": st.sampled_from(["", "\n", "plan"])},
                          optional={"encrypted": st.sampled_from([None, "", "sig"])}),
    st.fixed_dictionaries({"type": st.just("image_url")}), st.just("text"), st.none(),
), max_size=3)


@st.composite
def _message(draw: Any) -> Msg:
    msg: Msg = {"role": draw(st.sampled_from(["user", "assistant", "tool", None, 3]))}
    if draw(st.booleans()):
        msg["origin"] = draw(_ORIGINS)
    msg["content"] = draw(st.one_of(_PARTS, st.none(), st.just("text")))
    if draw(st.booleans()):
        msg["toolCalls"] = draw(st.sampled_from([[], [{"id": "c"}], None]))
    msg["_src"] = draw(st.sampled_from([("step", "u", 1), ("rec", 2), ("synth", "c")]))
    return msg


@given(st.lists(_message(), max_size=12), st.integers(0, 3))
@settings(max_examples=500, deadline=None)
@example([{"role": "user", "origin": {"kind": "compaction_summary"}}, {"role": "user", "origin": {"kind": "user"}}], 0)
@example([{"role": "user", "origin": {"kind": "plugin_command", "trigger": "user-slash"}}, {"role": "user"}], 0)
@example([{"role": "user", "origin": {"kind": "injection"}}, {"role": "user", "origin": None}], 1)
def test_compactable_users_are_the_real_user_inputs(messages: list[Msg], start: int) -> None:
    expected = [m for m in messages[start:] if cx.is_real_user_input(m)]
    assert [id(m) for m in cx.compactable_users(messages, start)] == [id(m) for m in expected]


@given(st.lists(_message(), max_size=12))
@settings(max_examples=300, deadline=None)
@example([{"role": "assistant", "content": [], "_src": ("step", "u", 1)}])  # an empty step is vacuous
@example([{"role": "assistant", "content": [{"type": "think", "think": "", "encrypted": None}], "_src": ("step", "u", 1)}])
def test_the_vacuous_step_walk_is_the_step_predicate(messages: list[Msg]) -> None:
    from transcript_doctor.stores.kimi.replay import legacy

    expected = [m["_src"][1] for m in messages if legacy._is_vacuous_step(m)]
    assert legacy._vacuous_step_uuids(messages) == expected

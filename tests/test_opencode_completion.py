"""The completion decision table (docs/opencode.md §4) for a run's final assistant message, pinned case by case."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transcript_doctor.stores.opencode import completion
from transcript_doctor.stores.opencode.completion import Evidence, decide, merge, message_evidence
from transcript_doctor.stores.opencode.reader import OcMessage, OcPart
from transcript_doctor.stores.opencode.runs import build_runs

from .test_opencode_support import assistant_info, reasoning, step_finish, text, tool

TOKENS = {
    "zero": {"total": 0, "input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
    "nonzero": {"total": 7, "input": 0, "output": 0, "reasoning": 0, "cache": {"read": 7, "write": 0}},
    "unknown": None,
}
COST = {"zero": 0, "nonzero": 0.0021, "unknown": None}
FINISHES = ["stop", "length", "tool-calls", "content-filter", "error", "unknown", None, "other"]
ERROR = {"name": "APIError", "data": {"message": "overloaded", "isRetryable": True}}


def expected_verdict(has_text: bool, tokens: str, cost: str, finish: str | None, tools: bool, thinks: bool,
                     errored: bool) -> str:
    """The table, stated directly: errored -> not final; empty -> retry-safe only when provably idle."""
    if errored:
        return "T403"
    if not has_text:
        idle = tokens == "zero" and cost == "zero" and not tools and not thinks
        return "T401" if idle and finish in ("unknown", None) else "T402"
    return None if finish == "stop" and not tools else "T403"


def _case(has_text: bool, tokens: str, cost: str, finish: str | None, tools: bool, thinks: bool,
          errored: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    parts: list[dict[str, Any]] = [{"type": "step-start"}]
    if thinks:
        parts.append(reasoning("planning"))
    parts.append(text("Here is the answer." if has_text else ""))
    if tools:
        parts.append(tool())
    info = assistant_info("msg_user", finish=finish, tokens=TOKENS[tokens], cost=COST[cost],
                          error=ERROR if errored else None)
    return info, parts


CASES = list(itertools.product([True, False], TOKENS, COST, FINISHES, [False, True], [False, True], [False, True]))


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(x) for x in c))
def test_decision_table(case: tuple) -> None:
    info, parts = _case(*case)
    decision = decide(info, parts, message_evidence(info, parts), open_run=False)
    assert decision.code == expected_verdict(*case)
    assert decision.retry_safe is (decision.code == "T401")
    if decision.code == "T402":
        assert decision.reasons  # every T402 says which work evidence it saw


def test_table_covers_every_combination() -> None:
    assert len(CASES) == 2 * 3 * 3 * 8 * 2 * 2 * 2
    assert {expected_verdict(*c) for c in CASES} == {None, "T401", "T402", "T403"}


@pytest.mark.parametrize(
    "finish, unknown",
    [("unknown", True), ("UNKNOWN", True), (" invalid ", True), ("None", True), ("null", True), ("", True),
     ("\u00a0\u3000", True), (None, True), ("stop", False), ("other", False), ("nul", False), ("unknown.", False)],
)
def test_unknown_finish_normalisation(finish: str | None, unknown: bool) -> None:
    assert completion.has_unknown_finish(finish) is unknown


@pytest.mark.parametrize("finish, terminal", [("stop", True), (" Stop\n", True), ("end_turn", True),
                                              ("stopped", False), ("length", False), ("tool-calls", False),
                                              (None, False), ("", False)])
def test_terminal_allowlist(finish: str | None, terminal: bool) -> None:
    assert completion.is_terminal_finish(finish) is terminal


def test_whitespace_is_the_js_trim_set() -> None:
    info = assistant_info("u", finish="unknown", tokens="zero", cost=0)
    blank = decide(info, [text("\u2028\ufeff\u00a0 \t")], message_evidence(info, []), open_run=False)
    assert blank.code == "T401"
    zwsp = decide(info, [text("\u200b")], message_evidence(info, []), open_run=False)  # not JS whitespace
    assert zwsp.code == "T403"  # text present, finish unknown: not a terminal answer


def test_finish_falls_back_to_the_last_step_finish_reason() -> None:
    info = assistant_info("u", finish=None, tokens="zero", cost=0)
    parts = [step_finish("tool-calls"), step_finish("stop"), step_finish("  ")]
    assert message_evidence(info, parts).finish == "stop"
    info["finish"] = "  "  # blank info.finish does not hide the step reason
    assert message_evidence(info, parts).finish == "stop"
    info["finish"] = " length "
    assert message_evidence(info, parts).finish == "length"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "0", True, None, [0]])
def test_token_and_cost_values_that_are_not_finite_numbers_are_unknown(bad: Any) -> None:
    tokens = {"input": 0, "output": bad, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    info = assistant_info("u", finish="unknown", tokens=tokens, cost=0)
    decision = decide(info, [], message_evidence(info, []), open_run=False)
    assert decision.code == "T402" and "output tokens unknown" in decision.reasons
    info = assistant_info("u", finish="unknown", tokens="zero", cost=bad)
    decision = decide(info, [], message_evidence(info, []), open_run=False)
    assert decision.code == "T402" and decision.reasons == ["cost unknown"]


def test_missing_cache_block_is_unknown_not_zero() -> None:
    info = assistant_info("u", finish="unknown", tokens={"input": 0, "output": 0, "reasoning": 0}, cost=0)
    assert decide(info, [], message_evidence(info, []), open_run=False).code == "T402"


def test_hidden_text_parts_are_not_visible() -> None:
    info = assistant_info("u", finish="unknown", tokens="zero", cost=0)
    for part in (text("file dump", synthetic=True), text("old", ignored=True),
                 text("Empty response: {'content': [], 'stop_reason': 'end_turn'}")):
        assert decide(info, [part], message_evidence(info, [part]), open_run=False).code == "T401"
    for part in (text("Empty response: {'content': []}"), text("Empty response: the server sent 204"),
                 text("x Empty response: {'stop_reason': 'end_turn'}"), text("done", synthetic=False)):
        assert decide(info, [part], message_evidence(info, [part]), open_run=False).code == "T403", part


def test_signed_or_empty_reasoning_still_counts_as_reasoning_activity() -> None:
    info = assistant_info("u", finish="unknown", tokens="zero", cost=0)
    for part in (reasoning(""), reasoning("", signature="sig")):
        decision = decide(info, [part], message_evidence(info, [part]), open_run=False)
        assert decision.code == "T402" and decision.reasons == ["reasoning activity"]


def test_incomplete_final_message() -> None:
    info = assistant_info("u", completed=False, finish=None, tokens="zero", cost=0)
    assert decide(info, [], message_evidence(info, []), open_run=True).verdict == completion.IN_PROGRESS
    closed = decide(info, [], message_evidence(info, []), open_run=False)
    assert closed.code == "T403" and "never completed" in closed.reasons[0]


# --------------------------------------------------------------------------- merging across a run


def _ev(tokens: Any = 0, cost: Any = 0, finish: str | None = None, tools: bool = False, thinks: bool = False) -> Evidence:
    return Evidence(tokens=(tokens,) * 5, cost=cost, finish=finish, tool_activity=tools, reasoning_activity=thinks, turns=1)


def test_merge_rules() -> None:
    first = merge(Evidence(), _ev(tokens=None, cost=None, finish="stop"))
    assert first.tokens == (None,) * 5 and first.cost is None and first.turns == 1
    both = merge(merge(Evidence(), _ev(tokens=2, cost=0.5, finish="tool-calls", tools=True)), _ev(tokens=3, cost=0.25))
    assert both.tokens == (5,) * 5 and both.cost == 0.75
    assert both.finish == "tool-calls"  # a later message without a finish keeps the earlier one
    assert both.tool_activity and not both.reasoning_activity and both.turns == 2
    lost = merge(merge(Evidence(), _ev(tokens=0, cost=0)), _ev(tokens=None, cost=None, finish="unknown"))
    assert lost.tokens == (None,) * 5 and lost.cost is None and lost.finish == "unknown"


@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 5)), st.booleans(), st.booleans()), min_size=1, max_size=6))
def test_merged_run_is_retry_safe_only_if_every_message_was_idle(messages: list[tuple]) -> None:
    ev = Evidence()
    for tokens, tools, thinks in messages:
        ev = merge(ev, _ev(tokens=tokens, cost=0, finish="unknown", tools=tools, thinks=thinks))
    idle = all(t == 0 and not a and not b for t, a, b in messages)
    assert completion.is_safe_zero_work(ev) is idle


# --------------------------------------------------------------------------- runs and deferral


def _msg(mid: str, info: dict[str, Any], parts: list[dict[str, Any]]) -> OcMessage:
    return OcMessage(mid, "ses", {**info, "id": mid},
                     [OcPart(f"prt_{mid}_{i}", mid, {**p, "id": f"prt_{mid}_{i}"}) for i, p in enumerate(parts)])


def _user(mid: str) -> OcMessage:
    return _msg(mid, {"role": "user"}, [text("go")])


def test_empty_intermediate_message_followed_by_a_real_answer_is_not_reported() -> None:
    empty = _msg("m2", assistant_info("m1", finish="unknown", tokens="zero", cost=0), [])
    real = _msg("m3", assistant_info("m1", finish="stop"), [text("answer")])
    (run,) = build_runs([_user("m1"), empty, real])
    assert run.decision.verdict == completion.ANSWER and run.final is real


def test_empty_final_after_work_in_the_same_run_is_t402() -> None:
    working = _msg("m2", assistant_info("m1", finish="tool-calls", tokens="zero", cost=0),
                   [text("running"), tool()])
    empty = _msg("m3", assistant_info("m1", finish="unknown", tokens="zero", cost=0), [])
    (run,) = build_runs([_user("m1"), working, empty])
    assert run.decision.code == "T402" and "tool activity" in run.decision.reasons
    assert run.evidence().turns == 2


def test_runs_follow_parent_ids_and_only_the_last_run_is_open() -> None:
    a1 = _msg("a1", assistant_info("u1", completed=False, finish=None), [])
    a2 = _msg("a2", assistant_info("u2", completed=False, finish=None), [])
    late = _msg("a3", assistant_info("u1", finish="stop"), [text("late answer to u1")])
    runs = build_runs([_user("u1"), a1, _user("u2"), a2, late])
    assert [m.id for m in runs[0].assistants] == ["a1", "a3"]
    assert runs[0].decision.verdict == completion.ANSWER
    assert runs[1].open and runs[1].decision.verdict == completion.IN_PROGRESS
    orphan = build_runs([_msg("a0", assistant_info("nobody"), [text("hi")])])
    assert orphan[0].user is None and orphan[0].decision.verdict == completion.ANSWER

"""Hostile rollouts: any JSON in any field never makes scan, replay or a heal plan raise."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_doctor.core import ScanConfig
from transcript_doctor.healing import heal_paths
from transcript_doctor.stores import HealOptions

from .helpers import envelope, replay, scan, write_rollout

_scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=6),
                    st.sampled_from(["gAAAAx", "other", "c1", "msg_1", "\x00"]))
_json = st.recursive(_scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                      st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                     max_leaves=8)
_keys = st.sampled_from(["type", "role", "content", "summary", "encrypted_content", "call_id", "name", "arguments",
                         "output", "action", "id", "input", "status", "tools"])
_kinds = st.sampled_from(["message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
                          "custom_tool_call_output", "local_shell_call", "tool_search_call", "tool_search_output",
                          "web_search_call", "ghost_snapshot", "agent_message"])
_payload = st.builds(lambda kind, rest: {**rest, "type": kind}, st.one_of(_kinds, _json),
                     st.dictionaries(_keys, _json, max_size=5))
_line = st.one_of(
    _payload.map(lambda p: envelope("response_item", p)),
    st.builds(lambda n: envelope("event_msg", {"type": "thread_rolled_back", "num_turns": n}), _json),
    st.builds(lambda m: envelope("event_msg", {"type": "error", "message": m}),
              st.sampled_from(["Invalid 'input[2].content': array too long", "x", "input[999999999]"])),
    st.builds(lambda h, m: envelope("compacted", {"message": m, "replacement_history": h}),
              st.one_of(st.none(), st.lists(st.one_of(_payload, _json), max_size=3)), _json),
    st.builds(lambda t, m: envelope("event_msg", {"type": t, "message": m}), _json, _json),
    st.builds(lambda p: envelope("session_meta", p), st.dictionaries(_keys, _json, max_size=3)),
    _json.map(lambda v: {"type": "response_item", "payload": v}),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line, min_size=1, max_size=10))
def test_any_json_is_read_without_raising(lines: list) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = write_rollout(Path(tmp) / "rollout-2026-01-01T00-00-00-x.jsonl",
                             [envelope("session_meta", {"id": "s"}), *lines])
        scan(path)
        scan(path, target="responses")
        replay(path)
        results, code = heal_paths([str(path)], ScanConfig(), HealOptions(mode="dry-run", unsafe_fixes=True))
        assert code in (0, 1), [r.warnings for r in results]


# Found by bench/fuzz.py: a `type` (of a line, a legacy bare item, or a web search action) that is an
# object or a list is unhashable; readers and checks must treat it as an unknown type.
UNHASHABLE_TYPES = [
    [envelope("session_meta", {"id": "s"}), {"type": {"a": 1}, "payload": {}}],
    [envelope("session_meta", {"id": "s"}), envelope("response_item", {"type": ["message"], "role": "user"})],
    [{"id": "s", "timestamp": "t"}, {"type": {"nested": True}, "role": "user"}],
    [envelope("session_meta", {"id": "s"}),
     envelope("response_item", {"type": "web_search_call", "status": "completed", "action": {"type": {"x": 1}}})],
    [envelope("session_meta", {"id": "s"}), envelope("event_msg", {"type": {"error": 1}, "message": "m"})],
    [envelope("session_meta", {"id": "s"}), envelope("event_msg", {"type": ["error"], "message": "m"})],
]


def test_unhashable_types_are_read_as_unknown(tmp_path: Path) -> None:
    for i, lines in enumerate(UNHASHABLE_TYPES):
        path = write_rollout(tmp_path / f"rollout-2026-01-01T00-00-0{i}-x.jsonl", lines)
        scan(path)
        replay(path)
        results, code = heal_paths([str(path)], ScanConfig(), HealOptions(mode="dry-run", unsafe_fixes=True))
        assert code in (0, 1), [r.warnings for r in results]


# Found by bench/fuzz.py: a field read as a list (a reasoning item's `summary` or `content`) that is
# a number, a boolean, a string or an object is no list at all: read as empty.
WRONG_SHAPES = [
    {"type": "reasoning", "summary": 7, "content": []},
    {"type": "reasoning", "summary": [], "content": 1.5},
    {"type": "reasoning", "summary": True, "content": {"text": "x"}},
    {"type": "reasoning", "summary": "text", "content": -1, "encrypted_content": "gAAAAx"},
]


def test_list_fields_of_another_type_are_read_as_empty(tmp_path: Path) -> None:
    for i, payload in enumerate(WRONG_SHAPES):
        path = write_rollout(tmp_path / f"rollout-2026-01-01T00-00-0{i}-x.jsonl",
                             [envelope("session_meta", {"id": "s"}), envelope("response_item", payload)])
        scan(path)
        document = replay(path)
        assert len(document["history"]) == 1, document
        results, code = heal_paths([str(path)], ScanConfig(), HealOptions(mode="dry-run", unsafe_fixes=True))
        assert code in (0, 1), [r.warnings for r in results]


def test_a_line_nested_deeper_than_the_rule_allows_is_unreadable(tmp_path: Path) -> None:
    deep: object = "x"
    for _ in range(300):  # orjson reads this but cannot write it back
        deep = [deep]
    path = write_rollout(tmp_path / "rollout-2026-01-01T00-00-00-x.jsonl",
                         [envelope("session_meta", {"id": "s"}),
                          envelope("response_item", {"type": "function_call", "call_id": "c1", "name": "f",
                                                     "arguments": "{}", "extra": deep})])
    findings = scan(path)
    assert [f.code for f in findings if f.line == 2] == ["F502"], findings
    replay(path)
    results, code = heal_paths([str(path)], ScanConfig(), HealOptions(mode="dry-run", unsafe_fixes=True))
    assert code in (0, 1), [r.warnings for r in results]


def test_an_aborted_output_for_a_call_type_of_any_json_value() -> None:
    from transcript_doctor.stores.codex.edits import aborted_output

    for kind in ({"a": 1}, ["custom_tool_call"], 3, None):
        assert aborted_output(kind, "c1") == {"type": "function_call_output", "call_id": "c1", "output": "aborted"}
    assert aborted_output("custom_tool_call", "c1")["type"] == "custom_tool_call_output"

"""Every shipped and synthetic rollout rebuilds to the response items Codex would send (docs/codex.md §3-§4)."""

from __future__ import annotations

import pytest

from transcript_doctor.stores import detect, kinds, read_head
from transcript_doctor.stores.codex.reconstruct import SUMMARY_MARKER

from .helpers import FIXTURES, ROOT, SYNTHETIC, replay, request_summary

L, R, B, S, Y = "line", "replacement", "rebuilt", "summary", "synthetic"

# (fixture, expected request: (input index, type, role or call id, line, source), unsent lines)
EXPECTED = [
    ("synthetic/clean-tools.jsonl", [
        (0, "message", "developer", 2, L), (1, "message", "user", 3, L), (2, "message", "user", 6, L),
        (3, "reasoning", None, 8, L), (4, "function_call", "call_ls", 9, L),
        (5, "function_call_output", "call_ls", 10, L), (6, "custom_tool_call", "call_patch", 11, L),
        (7, "custom_tool_call_output", "call_patch", 12, L), (8, "tool_search_call", "call_search", 13, L),
        (9, "tool_search_output", "call_search", 14, L), (10, "local_shell_call", "call_shell", 15, L),
        (11, "function_call_output", "call_shell", 16, L), (12, "function_call", "call_img", 17, L),
        (13, "function_call_output", "call_img", 18, L), (14, "web_search_call", None, 19, L),
        (15, "message", "assistant", 21, L)], []),
    ("synthetic/rollback.jsonl", [
        (0, "message", "developer", 2, L), (1, "message", "user", 3, L), (2, "message", "user", 6, L),
        (3, "message", "assistant", 8, L), (4, "message", "user", 33, L), (5, "message", "assistant", 35, L)],
        [14, 16, 17, 18, 24, 26, 27]),
    ("synthetic/compaction-replacement.jsonl", [
        (0, "message", "user", 13, R), (1, "message", "user", 13, R), (2, "message", "user", 18, L),
        (3, "message", "assistant", 20, L)], [2, 3, 6, 8, 9, 10]),
    ("synthetic/compaction-rebuilt.jsonl", [
        (0, "message", "user", 20, B), (1, "message", "user", 20, B), (2, "message", "user", 20, S),
        (3, "message", "user", 23, L), (4, "message", "assistant", 25, L)], [2, 3, 6, 8, 13, 15, 16, 17]),
    ("synthetic/orphan-call-end.jsonl", [
        (0, "message", "developer", 2, L), (1, "message", "user", 3, L), (2, "message", "user", 6, L),
        (3, "reasoning", None, 8, L), (4, "function_call", "call_build", 9, L),
        (5, "function_call_output", "call_build", 9, Y)], []),
    ("synthetic/interrupt.jsonl", [
        (0, "message", "developer", 2, L), (1, "message", "user", 3, L), (2, "message", "user", 6, L),
        (3, "reasoning", None, 8, L), (4, "function_call", "call_sleep", 9, L),
        (5, "function_call_output", "call_sleep", 9, Y), (6, "message", "user", 10, L),
        (7, "message", "user", 15, L), (8, "message", "assistant", 17, L), (9, "message", "user", 22, L),
        (10, "reasoning", None, 24, L)], []),
    ("synthetic/rollout-2025-05-01T10-00-00-legacy.jsonl", [
        (0, "message", "user", 3, L), (1, "function_call", "call_1", 4, L),
        (2, "function_call_output", "call_1", 5, L), (3, "message", "assistant", 7, L)], []),
    ("real/simonw-sample_codex_session-0.77.jsonl", [
        (0, "message", "user", 2, L), (1, "message", "user", 3, L), (2, "message", "user", 4, L)], []),
    ("peer/ramtinj95-current-response-item-ambiguities.jsonl", [
        (0, "function_call", "synthetic-duplicate-call", 2, L), (1, "function_call", "synthetic-duplicate-call", 3, L),
        (2, "function_call_output", "synthetic-duplicate-call", 4, L),
        (3, "function_call", "synthetic-multiple-outputs", 5, L),
        (4, "function_call_output", "synthetic-multiple-outputs", 6, L),
        (5, "function_call_output", "synthetic-multiple-outputs", 7, L),
        (6, "function_call", "synthetic-missing-output", 8, L),
        (7, "function_call_output", "synthetic-missing-output", 8, Y)], []),
]


@pytest.mark.parametrize("name,request_items,unsent", EXPECTED, ids=[e[0] for e in EXPECTED])
def test_rollout_rebuilds_to_the_request_codex_sends(name: str, request_items: list, unsent: list[int]) -> None:
    doc = replay(FIXTURES / name)
    assert request_summary(doc) == request_items
    assert [u["line"] for u in doc["unsent"]] == unsent


def test_every_fixture_is_detected_as_a_codex_rollout() -> None:
    for path in sorted(FIXTURES.rglob("*.jsonl")):
        assert detect(path).format == "codex-rollout", path


@pytest.mark.parametrize("other", ["eve", "kimi-code", "hermes", "claude-code"])
def test_other_stores_are_not_taken_for_rollouts(other: str) -> None:
    paths = [p for p in sorted((ROOT / "fixtures" / other).rglob("*")) if p.suffix in (".jsonl", ".ndjson")]
    assert paths
    for path in paths[:40]:
        assert not kinds()["codex-rollout"].sniff(path, read_head(path)), path


def test_a_rollback_drops_the_interrupted_turn_with_its_marker() -> None:
    doc = replay(SYNTHETIC / "rollback.jsonl")
    texts = [e["item"]["content"][0]["text"] for e in doc["request"] if e["item"]["type"] == "message"]
    assert not any("<turn_aborted>" in t or "regretted" in t or "interrupted" in t for t in texts)
    assert {u["reason"] for u in doc["unsent"]} == {"rolled back"}


def test_a_compaction_without_replacement_keeps_the_user_prompts_and_the_summary() -> None:
    doc = replay(SYNTHETIC / "compaction-rebuilt.jsonl")
    texts = [e["item"]["content"][0]["text"] for e in doc["request"]][:3]
    assert texts == ["Port the CLI to typer", "Add a --verbose flag",
                     SUMMARY_MARKER + "The CLI now uses typer and has --verbose."]


def test_repeated_session_meta_is_one_session_and_unknown_lines_are_ignored() -> None:
    doc = replay(SYNTHETIC / "clean-tools.jsonl")
    assert doc["session"] == "019c0000-0000-7000-8000-000000000001"
    assert doc["line_types"]["session_meta"] == 2 and doc["line_types"]["world_state"] == 1


def test_raw_target_sends_the_history_as_it_is() -> None:
    doc = replay(SYNTHETIC / "orphan-call-end.jsonl", target="responses")
    assert [e["source"] for e in doc["request"]] == ["line"] * 5 and doc["repairs"] == []


def test_a_first_line_longer_than_the_detection_head_is_still_a_rollout(tmp_path) -> None:
    from .helpers import envelope, write_rollout

    meta = envelope("session_meta", {"id": "s", "instructions": "x" * 200_000})
    item = envelope("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]})
    path = write_rollout(tmp_path / "session.jsonl", [meta, item])
    assert detect(path).format == "codex-rollout"
    assert [e["line"] for e in replay(path)["request"]] == [2]

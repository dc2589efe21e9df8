"""`tdoc replay` for Hermes: the history Hermes would resume, in its own message-dict shape."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

try:  # tests/ may or may not be a package
    from tests.test_hermes_schemas import build_db, call
except ImportError:
    from test_hermes_schemas import build_db, call
from transcript_doctor.cli import app
from transcript_doctor.stores import Options, open_store

HERMES = Path(__file__).resolve().parent.parent / "fixtures" / "hermes"


def replay(path: Path, session: str | None = None):
    store = open_store(path, str(path), Options())
    try:
        return store.replay(Options(session=session))
    finally:
        store.close()


def test_one_object_per_session_in_hermes_shape() -> None:
    objects = replay(HERMES / "hermes-state-v21.db")
    assert [o["session"] for o in objects] == [
        "20260810_120000_a1b2c3", "20260811_090000_b4d5e6f7", "20260812_080000_c1c1c1",
        "20260812_083000_c2c2c2", "20260813_100000_d0d0d0", "20260814_110000_e0e0e0",
    ]
    first = objects[0]
    assert first["format"] == "hermes-db" and first["request_offset"] == 1
    assert first["rows"] == [1, 2, 3, 4]
    call_row = first["history"][1]
    assert call_row["tool_calls"][0]["id"] == "call_a1" and call_row["content"] == ""
    assert call_row["codex_reasoning_items"][0]["id"] == "rs_1"  # JSON columns parsed
    assert first["history"][2] == {"role": "tool", "content": '{"output": "1 passed", "exit_code": 0, "error": null}',
                                   "tool_call_id": "call_a1", "tool_name": "terminal",
                                   "timestamp": first["history"][2]["timestamp"]}
    assert "reasoning_content" in first["history"][3]  # assistants always carry it, even null


def test_decoded_list_content_and_inactive_rows() -> None:
    d = replay(HERMES / "hermes-state-v21.db", "20260813_100000_d0d0d0")
    assert d["history"][1]["content"][0] == {"type": "thinking", "thinking": "(empty) scratch note"}
    e = replay(HERMES / "hermes-state-v21.db", "20260814_110000_e0e0e0")
    assert e["rows"] == [31, 32]
    assert [(x["row"], x["reason"]) for x in e["dropped"]] == [(r, "inactive") for r in (25, 26, 27, 28, 29, 30, 33, 34)]


def test_compression_lineage_and_resume_target() -> None:
    parent = replay(HERMES / "hermes-state-v21.db", "20260812_080000_c1c1c1")
    assert parent["resumes_into"] == "20260812_083000_c2c2c2"
    child = replay(HERMES / "hermes-state-v21.db", "20260812_083000_c2c2c2")
    assert child["lineage"] == ["20260812_080000_c1c1c1", "20260812_083000_c2c2c2"]
    assert [m["content"] for m in child["lineage_history"]][:4] == ["turn 0", "turn 1", "turn 2", "turn 3"]
    assert len(child["lineage_history"]) == 8 and len(child["history"]) == 4


def test_harness_strip_and_replayed_user_dedupe(tmp_path: Path) -> None:
    db = build_db(tmp_path / "state.db", 21, [
        {"id": "p", "end_reason": "compression", "messages": [
            {"role": "user", "content": "build it"},
            {"role": "assistant", "content": "built", "finish_reason": "stop"},
            {"role": "user", "content": "now test it"},
        ]},
        {"id": "c", "parent_session_id": "p", "messages": [
            {"role": "user", "content": "now test it"},
            {"role": "user", "content": "Review the conversation above and consider saving to memory anything useful."},
            {"role": "assistant", "content": "Saved two notes.", "finish_reason": "stop"},
            {"role": "assistant", "content": "", "tool_calls": [call("t1")], "finish_reason": "tool_calls"},
            {"role": "tool", "content": "3 passed", "tool_call_id": "t1"},
            {"role": "assistant", "content": "<memory-context>recalled</memory-context>  Tests pass.  ",
             "finish_reason": "stop"},
        ]},
    ])
    child = replay(db, "c")
    assert [(x["row"], x["reason"]) for x in child["dropped"]] == [(5, "background-review-harness"), (6, "harness-reply")]
    assert child["history"][-1]["content"] == "Tests pass."  # memory fencing sanitised, then stripped
    lineage = [m["content"] for m in child["lineage_history"] if m["role"] == "user"]
    assert lineage == ["build it", "now test it"]  # the replayed user message is dropped once


def test_locate_maps_positions_to_rows() -> None:
    store = open_store(HERMES / "hermes-state-v30.db", "v30", Options())
    try:
        assert store.locate(9, "20260825_083000_4f5061")["row"] == 9
        assert store.locate(0, "20260825_083000_4f5061") is None  # the system prompt has no row
        assert store.locate(5, "20260826_120000_506172")["row"] == 18
    finally:
        store.close()


def test_cli_replay() -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["replay", str(HERMES / "hermes-state-v30.db"), "--session", "20260826_120000_506172"])
    assert ok.exit_code == 0
    data = json.loads(ok.stdout)
    assert data["rows"] == [12, 13, 14, 17, 18]
    assert data["history"][1]["api_content"].startswith("[This response was interrupted")
    assert data["system_prompt"].startswith("You are")
    missing = runner.invoke(app, ["replay", str(HERMES / "hermes-state-v30.db"), "--session", "nope"])
    assert missing.exit_code == 2
    export = runner.invoke(app, ["replay", str(HERMES / "hermes-export-v21.jsonl")])
    assert export.exit_code == 0 and len(json.loads(export.stdout)) == 6

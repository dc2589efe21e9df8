"""`tdoc replay` on rollouts: JSON valid against the shipped schema, a readable human view, invariants."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.schema import errors as schema_errors

from .helpers import ROOT, SYNTHETIC, envelope, replay, write_rollout

runner = CliRunner()


@pytest.mark.parametrize("path", sorted(SYNTHETIC.glob("*.jsonl")), ids=lambda p: p.name)
def test_replay_json_matches_the_schema(path: Path) -> None:
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 0
    assert schema_errors("replay", json.loads(result.stdout)) == []


def test_replay_human_shows_input_positions_and_escapes_model_text(tmp_path: Path) -> None:
    lines = [envelope("session_meta", {"id": "s"}),
             envelope("response_item", {"type": "message", "role": "user",
                                        "content": [{"type": "input_text", "text": "hi \x1b[31mred\u202e"}]}),
             envelope("response_item", {"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c1"})]
    path = write_rollout(tmp_path / "r.jsonl", lines)
    proc = subprocess.run([sys.executable, "-m", "transcript_doctor", "replay", str(path), "--format", "human"],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    assert "input[1] line 3 line: function_call f c1" in proc.stdout
    assert "input[2] line 3 synthetic: function_call_output c1: aborted" in proc.stdout
    assert "\x1b" not in proc.stdout and "\u202e" not in proc.stdout


_user = st.text(min_size=1, max_size=8).map(lambda t: ("user", t))
_call = st.sampled_from(["c1", "c2", "c3"]).map(lambda c: ("call", c))
_output = st.sampled_from(["c1", "c2", "c3", "c9"]).map(lambda c: ("output", c))
_rollback = st.integers(1, 3).map(lambda n: ("rollback", n))
_compact = st.booleans().map(lambda keep: ("compact", keep))
_events = st.lists(st.one_of(_user, _call, _output, _rollback, _compact), max_size=25)


def _line(event: tuple) -> dict:
    kind, value = event
    if kind == "user":
        return envelope("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": value}]})
    if kind == "call":
        return envelope("response_item", {"type": "function_call", "name": "f", "arguments": "{}", "call_id": value})
    if kind == "output":
        return envelope("response_item", {"type": "function_call_output", "call_id": value, "output": "ok"})
    if kind == "rollback":
        return envelope("event_msg", {"type": "thread_rolled_back", "num_turns": value})
    history = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "kept"}]}]
    return envelope("compacted", {"message": "s", **({"replacement_history": history} if value else {})})


@settings(max_examples=60, deadline=None)
@given(_events)
def test_the_request_codex_sends_is_always_well_formed(events: list) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = write_rollout(Path(tmp) / "r.jsonl", [envelope("session_meta", {"id": "s"}), *map(_line, events)])
        doc = replay(path)
    request = doc["request"]
    assert [e["position"] for e in request] == list(range(len(request)))
    calls = [e["item"]["call_id"] for e in request if e["item"]["type"] == "function_call"]
    outputs = [e["item"]["call_id"] for e in request if e["item"]["type"] == "function_call_output"]
    assert set(outputs) <= set(calls) and set(calls) <= set(outputs)  # every call answered, no orphan output
    sent_lines = {(e["line"], e["replacement_index"]) for e in request if e["source"] == "line"}
    unsent_lines = {(u["line"], u["replacement_index"]) for u in doc["unsent"]}
    assert not sent_lines & unsent_lines
    assert len(doc["history"]) + len(doc["unsent"]) >= len(sent_lines)


def test_each_prompt_is_listed_unsent_once_however_often_the_rollout_compacts(tmp_path: Path) -> None:
    # A compaction without replacement history rebuilds the earlier prompts; a later compaction
    # replaces those copies, whose originals are listed already. Listing the copies again repeated
    # every prompt at every compaction: a list that grew with the square of the rollout.
    user = lambda text: envelope("response_item", {"type": "message", "role": "user",  # noqa: E731
                                                   "content": [{"type": "input_text", "text": text}]})
    lines = [envelope("session_meta", {"id": "s"})]
    for k in range(6):
        lines += [user(f"prompt {k}"), envelope("compacted", {"message": f"summary {k}"})]
    doc = replay(write_rollout(tmp_path / "r.jsonl", lines))
    unsent = doc["unsent"]
    assert [u["source"] for u in unsent].count("rebuilt") == 0
    prompts = [u["line"] for u in unsent if u["source"] == "line"]
    assert prompts == [2, 4, 6, 8, 10, 12]  # each prompt once, from its own line
    assert [u["source"] for u in unsent].count("summary") == 5  # each summary but the last, replaced
    assert [e["item"]["content"][0]["text"] for e in doc["request"]][:6] == [f"prompt {k}" for k in range(6)]

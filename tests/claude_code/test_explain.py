"""`tdoc explain --error TEXT FILE` with the provider errors Claude Code users paste (docs/claude-code-sessions.md §5)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app

from .builders import Session

CASES = Path(__file__).resolve().parents[1] / "cases" / "claude-code"
ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _wrap(message: str) -> str:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    return "API Error: 400 " + orjson.dumps(body).decode()


def _orphan_result(tmp: Path) -> Path:
    s = Session()
    s.result("toolu_gone", parent="before-the-copy")
    s.text("msg_01", "Looked at it.")
    path = tmp / "orphan-result.jsonl"
    path.write_text(s.jsonl(), encoding="utf-8")
    return path


def _duplicate_ids(tmp: Path) -> Path:
    s = Session()
    s.user("go")
    s.call("msg_01", "toolu_D")
    s.result("toolu_D")
    s.call("msg_02", "toolu_D")
    s.result("toolu_D")
    path = tmp / "dup.jsonl"
    path.write_text(s.jsonl(), encoding="utf-8")
    return path


def _surrogate(tmp: Path) -> Path:
    s = Session()
    s.user("go")
    s.text("msg_01", "broken \ud83d here")
    path = tmp / "surrogate.jsonl"
    # JSON.stringify writes a lone surrogate as an escape; orjson refuses to, the stdlib does the same
    lines = [orjson.dumps(s.records[0]).decode(), json.dumps(s.records[1], separators=(",", ":"))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# (error text, file maker, rule, position expected to map, line of the record, role)
ERRORS = [
    (_wrap("messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_A. Each "
           "`tool_use` block must have a corresponding `tool_result` block in the next message."),
     lambda t: CASES / "orphan-call-mid-history.jsonl", "W103", 1, 2, "assistant"),
    (_wrap("messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_gone. Each "
           "`tool_result` block must have a corresponding `tool_use` block in the previous message."),
     _orphan_result, "W104", 0, 1, "user"),
    (_wrap("messages.1: text content blocks must contain non-whitespace text"),
     lambda t: CASES / "whitespace-before-thinking.jsonl", "W102", 1, 2, "assistant"),
    (_wrap("messages.1.content.0: Invalid `signature` in `thinking` block"),
     lambda t: CASES / "interleaved-thinking.jsonl", "E601", 1, 2, "assistant"),
    (_wrap("messages.2.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message "
           "cannot be modified. These blocks must remain as they were in the original response."),
     lambda t: CASES / "interleaved-thinking.jsonl", "E601", 2, 3, "assistant"),
    (_wrap("messages.3: `tool_use` ids must be unique"), _duplicate_ids, "W105", 3, 4, "assistant"),
]

NO_INDEX = [
    (_wrap("no low surrogate in string: line 1 column 2001 (char 2000)"), _surrogate, "F507"),
    ("API Error: 400 due to tool use concurrency issues. Run /rewind to recover the conversation.",
     lambda t: CASES / "orphan-call-mid-history.jsonl", "W103"),
    ("API Error: 400 due to an orphaned tool_result in conversation history. Run /rewind to recover.",
     _orphan_result, "W104"),
    ("API Error: 400 due to a duplicate tool_use ID in conversation history. Run /rewind to recover.",
     _duplicate_ids, "W105"),
]


@pytest.mark.parametrize("text,make,rule,position,line,role", ERRORS, ids=[e[2] + str(e[3]) for e in ERRORS])
def test_error_maps_to_the_record(tmp_path, text, make, rule, position, line, role):
    path = make(tmp_path)
    result = runner.invoke(app, ["explain", "--error", text, str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.stdout)
    assert doc["rule"]["code"] == rule and doc["mapping"] == "mapped"
    assert doc["record"]["line"] == line and doc["record"]["role"] == role and doc["record"]["position"] == position


def test_modified_thinking_lists_the_interleaving_finding(tmp_path):
    text = ERRORS[4][0]
    doc = orjson.loads(runner.invoke(app, ["explain", "--error", text, str(CASES / "interleaved-thinking.jsonl"),
                                           "--format", "json"]).stdout)
    assert [r["code"] for r in doc["related"]] == ["W110"]
    assert [f["code"] for f in doc["findings"]] == ["W110"] and doc["findings"][0]["location"]["position"] == 2


@pytest.mark.parametrize("text,make,rule", NO_INDEX, ids=[e[2] for e in NO_INDEX])
def test_error_without_index_lists_the_cause(tmp_path, text, make, rule):
    path = make(tmp_path)
    result = runner.invoke(app, ["explain", "--error", text, str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.stdout)
    assert doc["rule"]["code"] == rule and doc["mapping"] == "no-index"
    assert rule in [f["code"] for f in doc["findings"]]


def test_explain_in_a_real_process_names_the_lines():
    path = CASES / "whitespace-before-thinking.jsonl"
    proc = subprocess.run([sys.executable, "-m", "transcript_doctor", "explain", "--error", ERRORS[2][0], str(path)],
                          capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr
    assert f"{path}:2-4 (role assistant" in proc.stdout.replace("\n", " ")

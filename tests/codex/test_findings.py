"""Findings judged against what Codex sends: labelled rollouts, near misses, the raw-API target, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.schema import errors as schema_errors

from .helpers import FIXTURES, ROOT, SYNTHETIC, envelope, scan, write_rollout

runner = CliRunner()

# (fixture, target, expected sorted (code, severity, line))
LABELLED = [
    ("synthetic/clean-tools.jsonl", None, []),
    ("synthetic/rollback.jsonl", None, []),
    ("synthetic/compaction-replacement.jsonl", None, []),
    ("synthetic/compaction-rebuilt.jsonl", None, []),
    ("synthetic/rollout-2025-05-01T10-00-00-legacy.jsonl", None, []),
    ("real/simonw-sample_codex_session-0.77.jsonl", None, []),
    ("peer/ramtinj95-current-response-items.jsonl", None, []),
    ("peer/ramtinj95-repeated-failure-session.jsonl", None, []),
    ("synthetic/orphan-call-end.jsonl", None, [("W103", "warning", 9)]),  # the call's own line
    ("synthetic/orphan-call-end.jsonl", "responses", [("W103", "error", 8)]),
    ("synthetic/interrupt.jsonl", None, [("W103", "warning", 9)]),
    ("synthetic/interrupt.jsonl", "responses", [("W103", "error", 8)]),
    ("synthetic/poisoned.jsonl", None, [
        ("E601", "error", 20), ("F507", "error", 8), ("W121", "error", 8), ("W122", "error", 9),
        ("W122", "error", 10), ("W123", "error", 12)]),
    ("peer/daaain-codex-malformed-rollout-66666666-6666-4666-8666-666666666666.jsonl", None,
     [("F502", "warning", 3)]),
    ("peer/ramtinj95-current-response-item-ambiguities.jsonl", None, [
        ("W103", "warning", 8), ("W104", "warning", 9), ("W105", "error", 2), ("W106", "error", 7)]),
    ("peer/ramtinj95-current-response-item-ambiguities.jsonl", "responses", [
        ("W103", "error", 8), ("W104", "error", 9), ("W105", "error", 2), ("W106", "error", 7)]),
]


@pytest.mark.parametrize("name,target,expected", LABELLED, ids=[f"{n}-{t}" for n, t, _ in LABELLED])
def test_labelled_rollouts(name: str, target: str | None, expected: list[tuple[str, str, int]]) -> None:
    found = sorted((f.code, f.severity, f.line) for f in scan(FIXTURES / name, target))
    assert found == expected


def _rollout(tmp_path: Path, *items: dict, meta: dict | None = None, name: str = "r.jsonl") -> Path:
    lines = [envelope("session_meta", {"id": "s1", "cli_version": "0.139.0", **(meta or {})})]
    lines.append(envelope("response_item", {"type": "message", "role": "user",
                                            "content": [{"type": "input_text", "text": "hi"}]}))
    lines += [envelope("response_item", item, n) for n, item in enumerate(items)]
    return write_rollout(tmp_path / name, lines)


NEAR_MISSES = [
    {"type": "reasoning", "summary": [], "encrypted_content": "gAAAAABofficial=="},
    {"type": "reasoning", "summary": [], "content": None},
    {"type": "reasoning", "summary": [], "content": []},
    {"type": "web_search_call", "status": "completed", "action": {"type": "open_page", "url": "https://x"}},
    {"type": "web_search_call", "status": "completed"},
    {"type": "message", "id": "msg_0a1", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]},
    {"type": "reasoning", "id": "rs_1", "summary": []},
    {"type": "custom_tool_call", "id": "ctc_anything", "name": "apply_patch", "input": "x", "call_id": "c1"},
]


@pytest.mark.parametrize("item", NEAR_MISSES, ids=range(len(NEAR_MISSES)))
def test_near_misses_are_not_store_findings(tmp_path: Path, item: dict) -> None:
    codes = {f.code for f in scan(_rollout(tmp_path, item))}
    assert not codes & {"W121", "W122", "W123"}


def test_plaintext_reasoning_of_a_non_openai_session_is_not_reported(tmp_path: Path) -> None:
    item = {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "t"}]}
    assert not scan(_rollout(tmp_path, item, meta={"model_provider": "ollama"}))
    assert [f.code for f in scan(_rollout(tmp_path, item, name="o.jsonl"))] == ["W122"]


def test_poison_removed_by_a_rollback_or_compaction_is_never_reported(tmp_path: Path) -> None:
    bad = {"type": "web_search_call", "status": "completed", "action": {"type": "other"}}
    lines = [envelope("session_meta", {"id": "s"}),
             envelope("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}]}),
             envelope("response_item", bad),
             envelope("response_item", {"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c"}),
             envelope("event_msg", {"type": "thread_rolled_back", "num_turns": 1}),
             envelope("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "b"}]}),
             envelope("response_item", bad),
             envelope("compacted", {"message": "summary"})]
    assert scan(write_rollout(tmp_path / "r.jsonl", lines)) == []


def test_poison_inside_a_replacement_history_is_reported_at_the_compacted_line(tmp_path: Path) -> None:
    history = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "a"}]},
               {"type": "reasoning", "summary": [], "encrypted_content": "foreign"}]
    lines = [envelope("session_meta", {"id": "s"}), envelope("compacted", {"message": "", "replacement_history": history})]
    (f,) = scan(write_rollout(tmp_path / "r.jsonl", lines))
    assert (f.code, f.line, f.position, f.evidence["replacement_index"]) == ("W122", 2, 1, 1)
    assert f.fix is not None and f.fix.applicability == "safe"


def test_a_torn_last_line_is_f501_with_a_same_length_fix(tmp_path: Path) -> None:
    path = SYNTHETIC / "clean-tools.jsonl"
    torn = tmp_path / "t.jsonl"
    torn.write_bytes(path.read_bytes() + b'{"timestamp":"2026","type":"response_it')
    (f,) = scan(torn)
    assert f.code == "F501" and f.fix is not None
    assert len(f.fix.edits[0].text or "") == len('{"timestamp":"2026","type":"response_it')


CUT_TEXT = b'{"timestamp":"2026","type":"response_item","payload":{"text":"caf'
CUT_STRING = b'{"timestamp":"2026","type":"resp'
QUOTE = b'"'
TORN_TAILS = [  # (what the crash left of the last record, what F501 must say about it)
    (CUT_TEXT + "\u00e9".encode()[:1],
     f"ends inside a multi-byte UTF-8 character (byte {len(CUT_TEXT)} of the line)"),
    (CUT_STRING, f"invalid JSON at character {CUT_STRING.rindex(QUOTE)} of the line: Unterminated string"),
]


@pytest.mark.parametrize(("tail", "said"), TORN_TAILS, ids=["cut-inside-a-character", "cut-inside-a-string"])
def test_a_torn_last_line_says_where_it_breaks_in_the_file_s_terms(tmp_path: Path, tail: bytes, said: str) -> None:
    """Not orjson's message, whose "line 1 column 1" is inside the record and whose "surrogates"
    are not what a write cut inside a character leaves."""
    torn = tmp_path / "t.jsonl"
    torn.write_bytes((SYNTHETIC / "clean-tools.jsonl").read_bytes() + tail)
    (f,) = scan(torn)
    assert f.code == "F501" and said in f.message
    assert "surrogate" not in f.message and "line 1 column" not in f.message


def test_scan_cli_target_flag_and_schema(tmp_path: Path) -> None:
    path = str(SYNTHETIC / "orphan-call-end.jsonl")
    default = runner.invoke(app, ["scan", path, "--format", "json"])
    assert default.exit_code == 0, default.stdout
    report = json.loads(default.stdout)
    assert schema_errors("report", report) == []
    assert [f["severity"] for f in report["findings"]] == ["warning"]
    raw = runner.invoke(app, ["scan", path, "--target", "responses", "--format", "json"])
    assert raw.exit_code == 1 and json.loads(raw.stdout)["findings"][0]["severity"] == "error"
    bad = runner.invoke(app, ["scan", path, "--target", "chat"])
    assert bad.exit_code == 2


def test_scan_subprocess_on_a_codex_home(tmp_path: Path) -> None:
    day = tmp_path / ".codex" / "sessions" / "2026" / "05" / "01"
    day.mkdir(parents=True)
    for name in ("poisoned.jsonl", "clean-tools.jsonl"):
        (day / f"rollout-2026-05-01T10-00-00-{name}").write_bytes((SYNTHETIC / name).read_bytes())
    proc = subprocess.run([sys.executable, "-m", "transcript_doctor", "scan", str(tmp_path / ".codex"),
                           "--format", "ndjson"], capture_output=True, text=True, cwd=ROOT, check=False)
    assert proc.returncode == 1, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert {r["format"] for r in rows} == {"codex-rollout"}
    assert all("poisoned" in r["path"] for r in rows) and len(rows) == 6
    for row in rows:
        assert schema_errors("finding", row) == []

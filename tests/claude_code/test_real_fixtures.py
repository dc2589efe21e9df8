"""The shipped real transcripts (fixtures/claude-code/real, entireio/cli, MIT): read cleanly, and
every finding on them is one the tests explain."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.replay_view import replay_path
from transcript_doctor.stores import Options

ROOT = Path(__file__).resolve().parents[2]
REAL = sorted((ROOT / "fixtures" / "claude-code" / "real").glob("*.jsonl"))
PEER = sorted((ROOT / "fixtures" / "claude-code" / "peer").glob("*.jsonl"))

# What each real file holds beyond a clean session, found by reading them:
# the opus-4-6 "\n\n" text block before thinking (W102, CLI 2.1.32-2.1.42), and in c448e21df602 a
# response interrupted right after that block (only "\n\n" was written, then
# "[Request interrupted by user]"): sent as a whitespace-only assistant message, a real W101.
EXPECTED = {
    "entirecli-6a54c404f24f-0.jsonl": [("W102", 5), ("W102", 22)],
    "entirecli-7b11e1056673-0.jsonl": [("W102", 5)],
    "entirecli-82060566ec4b-0.jsonl": [("W102", 6), ("W102", 69), ("W102", 124)],
    "entirecli-c448e21df602-0.jsonl": [("W101", 157), ("W102", 5), ("W102", 19)],
}


@pytest.mark.parametrize("path", REAL + PEER, ids=lambda p: p.name)
def test_read_without_error(path):
    report = scan(str(path), ScanConfig(jobs=1))
    assert report.files[0].error is None and report.files[0].format == "claude-code"


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_real_findings_are_the_explained_ones(path):
    report = scan(str(path), ScanConfig(jobs=1))
    got = sorted((f.code, f.line) for f in report.findings)
    assert got == sorted(EXPECTED.get(path.name, []))
    if path.name not in EXPECTED or all(code == "W102" for code, _ in EXPECTED[path.name]):
        assert not [f for f in report.findings if f.severity == "error"]


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_real_resume_reaches_every_message_record(path):
    replay = replay_path(str(path), Options())
    records = replay["records"]
    assert replay["cut"] is None and records["unreadable"] == 0
    assert records["messages"] == len(replay["history"]) > 0
    # positions are the request indexes, in order, and every message has its lines
    assert [s["position"] for s in replay["sources"]] == list(range(len(replay["history"])))
    roles = [m["role"] for m in replay["history"]]
    assert roles[0] == "user" and all(a != b for a, b in pairwise(roles) if a == "user")


def test_parallel_results_on_side_branches_are_sent():
    """82060566ec4b lines 8-13: two calls of one response, each result chained to its own call line."""
    path = ROOT / "fixtures/claude-code/real/entirecli-82060566ec4b-0.jsonl"
    replay = replay_path(str(path), Options())
    first = replay["history"][1]
    assert [b["type"] for b in first["content"]] == ["text", "thinking", "tool_use", "tool_use"]
    results = replay["history"][2]["content"]
    assert [b["tool_use_id"] for b in results] == [first["content"][2]["id"], first["content"][3]["id"]]


def test_compaction_after_rewind_sends_only_what_follows_the_boundary():
    """daaain/claude-code-log's fixture: a rewind, then /compact; the resume starts at the boundary."""
    replay = replay_path(str(ROOT / "fixtures/claude-code/peer/daaain-dag_compact_after_rewind.jsonl"), Options())
    assert [m["role"] for m in replay["history"]] == ["user", "assistant"]  # summary + prompt merged
    texts = [b["text"] for m in replay["history"] for b in m["content"]]
    assert texts[0].startswith("This session is being continued") and texts[-1] == "Final answer"
    assert "First answer" not in texts and "Second answer" not in texts
    assert replay["compaction"]["line"] == 9 and replay["records"]["before_compaction"] == 8

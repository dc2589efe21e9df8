"""A heal of an agent's journal (`agents/<id>/wire.jsonl`) verifies with that agent's v2.

v2 replays only the records of the agent the journal's directory names (docs/kimi-code.md); the
heal's verification replay of the healed copy must read as that same agent, or a journal holding
another agent's record could never be healed (found 2026-12-02: "the planned edits would change
what an engine replays; nothing written", exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app

from .builders import Journal, think

runner = CliRunner()
OTHER = {"role": "user", "content": [{"type": "text", "text": "from the other agent"}], "toolCalls": []}


def journal(other_agent: str | None) -> bytes:
    j = Journal().user("hi").step("a", [{"type": "text", "text": "x"}])
    if other_agent is not None:
        j.add({"type": "context.append_message", "agentId": other_agent, "message": OTHER})
    j.step("v", [think("")])
    return j.user("more").step("b", [{"type": "text", "text": "y"}]).bytes()


CASES = [  # (directory layout, agentId of the extra record): every one heals, exit 0
    ("agents/main", "other"),  # another agent's record, which v2 of "main" skips
    ("agents/main", "main"),  # near miss: the journal's own agent
    ("agents/main", None),  # near miss: no extra record
    ("plain", "other"),  # near miss: no agent layout, v2 reads every record
]


@pytest.mark.parametrize(("layout", "agent"), CASES)
def test_an_agent_journal_heals_with_its_own_agent(tmp_path: Path, layout: str, agent: str | None) -> None:
    folder = tmp_path / layout
    folder.mkdir(parents=True)
    path = folder / "wire.jsonl"
    path.write_bytes(journal(agent))
    out = folder / "healed.jsonl"
    result = runner.invoke(app, ["heal", str(path), "--output", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)["results"][0]
    assert doc["written"] and doc["details"]["removed_steps"] == ["v"]
    after = runner.invoke(app, ["scan", str(out), "--format", "json", "--select", "W101"])
    assert after.exit_code == 0 and json.loads(after.stdout)["findings"] == []

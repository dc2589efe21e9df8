"""The CLI on Claude Code stores: scan/replay/heal JSON against the shipped schemas, a real process,
a project directory with a subagent transcript."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import orjson
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.schema import errors

from .builders import Session

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).resolve().parents[1] / "cases" / "claude-code"
runner = CliRunner()


def test_scan_json_validates_and_carries_positions():
    result = runner.invoke(app, ["scan", str(CASES), "--format", "json"])
    assert result.exit_code == 1
    doc = orjson.loads(result.stdout)
    assert errors("report", doc) == []
    assert {f["format"] for f in doc["files"]} == {"claude-code"}
    sent = [f for f in doc["findings"] if f["code"] in ("W101", "W102", "W103") and not f["evidence"].get("unreachable")]
    assert sent and all(isinstance(f["location"]["position"], int) for f in sent)


def test_replay_json_validates_and_reports_reach():
    path = CASES / "broken-parent-chain.jsonl"
    result = runner.invoke(app, ["replay", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.stdout)
    assert errors("replay", doc) == []
    assert doc["records"]["reachable"] == 2 and doc["records"]["total"] == 4
    assert doc["cut"]["line"] == 3 and [m["role"] for m in doc["history"]] == ["user", "assistant"]
    human = runner.invoke(app, ["replay", str(path), "--format", "human"])
    assert human.exit_code == 0 and "history (2 messages)" in human.stdout


def test_heal_json_validates(tmp_path):
    src = tmp_path / "s.jsonl"
    shutil.copyfile(CASES / "concatenated-line.jsonl", src)
    result = runner.invoke(app, ["heal", str(src), "--format", "json", "--diff"])
    assert result.exit_code == 1, result.output  # a dry run with something to fix
    doc = orjson.loads(result.stdout)
    assert errors("heal", doc) == []
    assert doc["results"][0]["details"]["split_lines"] == 1


def test_project_directory_in_a_real_process(tmp_path):
    project = tmp_path / "projects" / "-work-demo"
    session = project / "0b8c2f5e-1111-4a2b-9c3d-5e6f7a8b9c0d"
    (session / "subagents").mkdir(parents=True)
    main = Session()
    main.user("explore the repo")
    task = main.call("msg_main", "toolu_task", name="Task")
    main.result("toolu_task", "Found it.")
    main.records[-1]["toolUseResult"] = {"status": "completed", "agentId": "a1b2c3"}
    main.text("msg_main2", "The subagent found it.")
    (project / "0b8c2f5e-1111-4a2b-9c3d-5e6f7a8b9c0d.jsonl").write_text(main.jsonl(), encoding="utf-8")
    sub = Session()
    sub.user("search the repo")
    sub.text("msg_sub", "Found it.")
    for rec in sub.records:
        rec["isSidechain"] = True
        rec["agentId"] = "a1b2c3"
    (session / "subagents" / "agent-a1b2c3.jsonl").write_text(sub.jsonl(), encoding="utf-8")
    (session / "subagents" / "agent-a1b2c3.meta.json").write_text('{"agentType": "Explore"}', encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "transcript_doctor", "scan", str(tmp_path / "projects"),
                           "--format", "json"], capture_output=True, cwd=ROOT, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = orjson.loads(proc.stdout)
    assert [Path(f["path"]).name for f in doc["files"]] == ["0b8c2f5e-1111-4a2b-9c3d-5e6f7a8b9c0d.jsonl",
                                                             "agent-a1b2c3.jsonl"]
    assert all(f["error"] is None and f["format"] == "claude-code" for f in doc["files"])
    replay = subprocess.run([sys.executable, "-m", "transcript_doctor", "replay",
                             str(session / "subagents" / "agent-a1b2c3.jsonl")], capture_output=True, cwd=ROOT, check=False)
    assert replay.returncode == 0
    doc = orjson.loads(replay.stdout)
    assert len(doc["history"]) == 2
    assert doc["parent"]["task_call"] == task["message"]["content"][0]["id"] and doc["parent"]["line"] == 3


def test_unreadable_file_is_a_clear_error(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"parentUuid":null,"isSidechain":false,"type":"user","uuid":"u1","sessionId":"s"')
    result = runner.invoke(app, ["scan", str(path), "--input-format", "claude-code"])
    assert result.exit_code == 2
    assert "no readable Claude Code record" in result.output and "Traceback" not in result.output

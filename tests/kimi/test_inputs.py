"""kimi-code inputs beyond one file: a session directory, a debug export zip, standard input."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from typer.testing import CliRunner

from transcript_doctor.cli import app

from .builders import Journal, seed_case, text

runner = CliRunner()


def session_dir(root: Path) -> Path:
    (root / "agents" / "main").mkdir(parents=True)
    (root / "agents" / "agent-0").mkdir(parents=True)
    (root / "state.json").write_text('{"agents": {"main": {}, "agent-0": {}}}')
    seed_case().write(root / "agents" / "main" / "wire.jsonl")
    Journal().user("task").step("a", [text("done")]).write(root / "agents" / "agent-0" / "wire.jsonl")
    return root


def test_session_directory_is_one_session_per_agent(tmp_path: Path) -> None:
    root = session_dir(tmp_path / "sess")
    report = json.loads(runner.invoke(app, ["scan", str(root), "--format", "json"]).stdout)
    assert sorted(Path(f["path"]).parent.name for f in report["files"]) == ["agent-0", "main"]
    assert {f["session"] for f in report["findings"]} == {"main"}


def test_export_zip_is_read_and_never_healed(tmp_path: Path) -> None:
    root = session_dir(tmp_path / "sess")
    bundle = tmp_path / "kimi-debug-abcdef12-20261130-070000.zip"
    with zipfile.ZipFile(bundle, "w") as zf:
        zf.writestr("manifest.json", json.dumps({"sessionId": "abcdef12", "wireProtocolVersion": "1.4"}))
        for path in root.rglob("*"):
            if path.is_file():
                zf.write(path, path.relative_to(root).as_posix())
    result = runner.invoke(app, ["scan", str(bundle), "--format", "json"])
    report = json.loads(result.stdout)
    assert report["files"][0]["format"] == "kimi-wire" and report["files"][0]["sessions"] == 2
    c201 = [f for f in report["findings"] if f["code"] == "C201"][0]
    assert c201["session"] == "main" and c201["evidence"]["member"] == "agents/main/wire.jsonl"
    assert c201["location"]["line"] == 7
    before = bundle.read_bytes()
    healed = runner.invoke(app, ["heal", "--in-place", str(bundle)])
    assert healed.exit_code == 2 and "read-only" in healed.output and bundle.read_bytes() == before
    replay = json.loads(runner.invoke(app, ["replay", str(bundle), "--session", "agent-0"]).stdout)
    assert replay["session"] == "agent-0" and replay["history"][-1]["content"][0]["text"] == "done"


def test_standard_input(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "transcript_doctor", "scan", "-", "--format", "ndjson"],
                          input=seed_case().bytes(), capture_output=True, timeout=120)
    assert proc.returncode == 1
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert {f["code"] for f in lines} >= {"W101", "C201"} and {f["path"] for f in lines} == {"-"}


def test_standard_input_that_is_no_store_is_named_as_given() -> None:
    # the error names "-", never the temporary file standard input was spooled to
    runner = CliRunner()
    for argv, stdin in ((["scan", "-"], "not json\n"), (["replay", "-"], ""), (["heal", "-"], "x\n")):
        result = runner.invoke(app, argv, input=stdin)
        assert result.exit_code == 2, (argv, result.output)
        assert "-: " in result.output and "tdoc-stdin-" not in result.output, (argv, result.output)


def test_each_invocation_reads_its_own_standard_input(tmp_path: Path) -> None:
    # one process, two standard inputs (as a test runner or an embedding program gives them): the
    # second scan reads the second stream, not a stale copy of the first
    runner = CliRunner()
    empty = runner.invoke(app, ["scan", "-", "-f", "json"], input="")
    wedged = runner.invoke(app, ["scan", "-", "-f", "json"], input=seed_case().bytes())
    assert empty.exit_code == 2 and "empty file" in empty.output
    assert wedged.exit_code == 1, wedged.output
    assert {f["code"] for f in json.loads(wedged.stdout)["findings"]} >= {"W101", "C201"}

"""The command line: exit codes, clean machine output, schemas, and inert transcript text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.schema import errors as schema_errors

from .kimi.builders import Journal, seed_case, text

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
SEED_GOLDEN = ROOT / "fixtures" / "kimi-code" / "golden" / "c01_legacy_compaction_after_vacuous.jsonl"


def tdoc(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real entry point in a child process."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "transcript_doctor", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)


@pytest.fixture
def seed(tmp_path: Path) -> Path:
    return seed_case().write(tmp_path / "seed.jsonl")


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    return Journal().user("u1").step("a", [text("answer")]).write(tmp_path / "clean.jsonl")


@pytest.mark.parametrize("command", ["scan", "heal", "replay", "rules", "explain", "schema"])
def test_every_command_has_help(command: str) -> None:
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output


def test_scan_json_report_validates_and_exits_1(seed: Path) -> None:
    result = runner.invoke(app, ["scan", str(seed), "--format", "json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert schema_errors("report", report) == []
    assert report["summary"]["by_severity"]["error"] >= 1 and report["summary"]["fixable"] == 2
    assert {f["code"] for f in report["findings"]} >= {"W101", "C201"}


def test_exit_codes_are_the_same_for_every_format(seed: Path, clean: Path) -> None:
    for fmt in ("human", "json", "ndjson"):
        assert runner.invoke(app, ["scan", str(seed), "--format", fmt]).exit_code == 1
        assert runner.invoke(app, ["scan", str(clean), "--format", fmt]).exit_code == 0


def test_fail_on_select_and_ignore(seed: Path) -> None:
    assert runner.invoke(app, ["scan", str(seed), "--ignore", "W101,C201"]).exit_code == 0  # C202 is a warning
    assert runner.invoke(app, ["scan", str(seed), "--ignore", "W101,C201", "--fail-on", "warning"]).exit_code == 1
    result = runner.invoke(app, ["scan", str(seed), "--select", "C2", "--format", "ndjson"])
    assert {json.loads(line)["code"] for line in result.stdout.splitlines()} == {"C201", "C202"}
    assert runner.invoke(app, ["scan", str(seed), "--select", "X999"]).exit_code == 2


def test_unreadable_input_is_reported_and_does_not_stop_the_others(seed: Path, tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    result = runner.invoke(app, ["scan", str(seed), str(missing), "--format", "json"])
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    by_path = {f["path"]: f for f in report["files"]}
    assert by_path[str(missing)]["error"] and by_path[str(seed)]["error"] is None
    assert report["findings"], "the readable file is still scanned"


def test_directory_and_glob_inputs(seed: Path, tmp_path: Path) -> None:
    (tmp_path / "agents" / "main").mkdir(parents=True)
    seed_case().write(tmp_path / "agents" / "main" / "wire.jsonl")
    (tmp_path / "notes.json").write_text('{"hello": "world"}')  # not a store: skipped in a directory walk
    report = json.loads(runner.invoke(app, ["scan", str(tmp_path), "--format", "json"]).stdout)
    assert sorted(Path(f["path"]).name for f in report["files"]) == ["seed.jsonl", "wire.jsonl"]
    report = json.loads(runner.invoke(app, ["scan", str(tmp_path / "*.jsonl"), "--format", "json"]).stdout)
    assert [Path(f["path"]).name for f in report["files"]] == ["seed.jsonl"]


def test_subprocess_ndjson_stdout_is_pure(seed: Path) -> None:
    proc = tdoc("scan", "--format", "ndjson", str(seed))
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines
    for line in lines:
        finding = json.loads(line)
        assert schema_errors("finding", finding) == []
    assert "Traceback" not in proc.stderr


def test_subprocess_json_and_exit_codes(seed: Path, clean: Path, tmp_path: Path) -> None:
    proc = tdoc("scan", "--format", "json", str(seed))
    assert proc.returncode == 1 and schema_errors("report", json.loads(proc.stdout)) == []
    assert tdoc("scan", str(clean)).returncode == 0
    bad = tdoc("scan", str(tmp_path / "nope.jsonl"))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr + bad.stdout
    assert tdoc("scan", "--format", "yaml", str(seed)).returncode == 2


def test_replay_json_validates(seed: Path) -> None:
    for engine in ("v1", "v2"):
        result = runner.invoke(app, ["replay", str(seed), "--engine", engine])
        assert result.exit_code == 0
        value = json.loads(result.stdout)
        assert schema_errors("replay", value) == []
        assert value["engine"] == engine
    v2 = json.loads(runner.invoke(app, ["replay", str(seed), "--engine", "v2"]).stdout)
    assert v2["transcript"]["foldedLength"] == 3 and len(v2["history"]) == 1


def test_replay_human_view(seed: Path) -> None:
    result = runner.invoke(app, ["replay", str(seed), "--format", "human"])
    assert result.exit_code == 0 and "history" in result.stdout and "SUM" in result.stdout


@pytest.mark.parametrize("name", ["report", "finding", "replay", "heal"])
def test_schema_command_prints_the_shipped_schema(name: str) -> None:
    result = runner.invoke(app, ["schema", name])
    assert result.exit_code == 0 and json.loads(result.stdout)["$id"] == f"urn:tdoc:schema:{name}"


def test_human_output_does_not_interpret_markup_or_escapes(tmp_path: Path) -> None:
    evil = tmp_path / "[bold red]evil[link=x]\x1b[2J\x1b]0;pwned\x07.jsonl"
    seed_case().write(evil)
    proc = tdoc("scan", str(evil))
    assert proc.returncode == 1
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "[bold red]evil[link=x]" in proc.stdout  # shown literally, not as markup
    assert "\\u001b" in proc.stdout


def test_version_and_no_args() -> None:
    assert runner.invoke(app, ["--version"]).stdout.startswith("tdoc ")
    assert runner.invoke(app, []).exit_code in (0, 2)


def test_readme_ci_recipe_works(tmp_path: Path) -> None:
    """The README's `tdoc scan --format ndjson ... | jq -r '.code'` recipe, with Python standing in for jq."""
    proc = tdoc("scan", "--format", "ndjson", str(SEED_GOLDEN))
    codes = [json.loads(line)["code"] for line in proc.stdout.splitlines()]
    assert "C201" in codes and "W101" in codes


def test_replay_human_shows_eve_turns_and_opencode_verdicts() -> None:
    eve = runner.invoke(app, ["replay", str(ROOT / "fixtures/eve/scheduled-digest.v26.ndjson"), "--format", "human"])
    assert eve.exit_code == 0 and "turn turn_0 (unattended" in eve.stdout
    opencode = runner.invoke(app, ["replay", str(ROOT / "fixtures/opencode/opencode.db"), "--format", "human"])
    assert opencode.exit_code == 0 and "empty-retry-safe (T401" in opencode.stdout

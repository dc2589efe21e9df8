"""Daily-use options: --color, --quiet, --output, --statistics, --exit-zero, -h, readable help,
shell completion, and the GitHub job summary."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.stores import kinds

from .kimi.builders import Journal, seed_case, text, think

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-9;]*m")
COMMANDS = ["scan", "sessions", "heal", "replay", "rules", "explain", "schema"]


@pytest.fixture
def seed(tmp_path: Path) -> Path:
    return seed_case().write(tmp_path / "seed.jsonl")


@pytest.fixture
def clean(tmp_path: Path) -> Path:
    return Journal().user("u1").step("a", [text("answer")]).write(tmp_path / "clean.jsonl")


def tdoc(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY")}
    return subprocess.run([sys.executable, "-m", "transcript_doctor", *args], capture_output=True, text=True,
                          env={**base, "PYTHONPATH": str(ROOT), **(env or {})}, cwd=ROOT, timeout=120)  # fmt: skip


@pytest.mark.parametrize(("color", "coloured"), [("always", True), ("never", False), ("auto", False)])
def test_color_choice(seed: Path, color: str, coloured: bool) -> None:
    proc = tdoc("scan", str(seed), "--color", color)  # stdout is a pipe: auto means no colour
    assert proc.returncode == 1
    assert bool(ANSI.search(proc.stdout)) is coloured
    assert "W101" in ANSI.sub("", proc.stdout)


def test_quiet_prints_findings_without_the_summary(seed: Path) -> None:
    loud = runner.invoke(app, ["scan", str(seed)]).stdout
    quiet = runner.invoke(app, ["scan", str(seed), "-q"])
    assert quiet.exit_code == 1
    assert "Found" in loud and "Found" not in quiet.stdout and "fixable" not in quiet.stdout
    assert [line for line in loud.splitlines() if " W101 " in line] == [
        line for line in quiet.stdout.splitlines() if " W101 " in line]


@pytest.mark.parametrize("fmt", ["json", "sarif", "human", "html"])
def test_output_file_holds_what_stdout_would(seed: Path, tmp_path: Path, fmt: str) -> None:
    target = tmp_path / f"out.{fmt}"
    to_file = runner.invoke(app, ["scan", str(seed), "-f", fmt, "--output", str(target), "--color", "never"])
    to_stdout = runner.invoke(app, ["scan", str(seed), "-f", fmt, "--color", "never"])
    assert to_file.exit_code == to_stdout.exit_code == 1
    assert to_file.stdout == "" and target.read_text() == to_stdout.stdout
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temporary left behind


def test_output_into_a_missing_directory_is_a_usage_error(seed: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["scan", str(seed), "--output", str(tmp_path / "nope" / "r.json")])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_statistics_counts_per_rule(seed: Path, tmp_path: Path) -> None:
    live = Journal().user("u1").step("s1", [think("")]).user("u2").write(tmp_path / "live.jsonl")
    report = json.loads(runner.invoke(app, ["scan", str(seed), str(live), "-f", "json"]).stdout)
    stats = runner.invoke(app, ["scan", str(seed), str(live), "--statistics", "-f", "json"])
    assert stats.exit_code == 1
    counted = {e["code"]: e["count"] for e in json.loads(stats.stdout)}
    expected: dict[str, int] = {}
    for f in report["findings"]:
        expected[f["code"]] = expected.get(f["code"], 0) + 1
    assert counted == expected and counted["W101"] == 2
    human = runner.invoke(app, ["scan", str(seed), str(live), "--statistics"]).stdout
    w101 = next(line for line in human.splitlines() if " W101 " in line)
    assert w101.split()[0] == "2" and "vacuous-assistant" in w101


def test_statistics_refuses_formats_without_a_table(seed: Path) -> None:
    assert runner.invoke(app, ["scan", str(seed), "--statistics", "-f", "sarif"]).exit_code == 2


def test_exit_zero_turns_findings_into_success_but_not_errors(seed: Path, tmp_path: Path) -> None:
    assert runner.invoke(app, ["scan", str(seed), "--exit-zero"]).exit_code == 0
    assert runner.invoke(app, ["scan", str(tmp_path / "missing.jsonl"), "--exit-zero"]).exit_code == 2


@pytest.mark.parametrize("command", COMMANDS)
def test_short_help_and_readable_placeholders(command: str) -> None:
    long = runner.invoke(app, [command, "--help"])
    short = runner.invoke(app, [command, "-h"])
    assert short.exit_code == long.exit_code == 0 and short.stdout == long.stdout
    for unreadable in ("<list[", "<str>", "<int", "<path>", "Annotated", "pydantic", "Optional["):
        assert unreadable not in long.stdout, (command, unreadable)


def test_input_format_help_lists_every_known_format() -> None:
    help_text = " ".join(runner.invoke(app, ["scan", "--help"], terminal_width=400).stdout.split())
    for format_id in kinds():
        assert format_id in help_text


def test_shell_completion_completes_commands() -> None:
    env = {"_TDOC_COMPLETE": "complete_bash", "COMP_WORDS": "tdoc se", "COMP_CWORD": "1"}
    proc = subprocess.run([sys.executable, "-c", "from transcript_doctor.cli import main; main()"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env})  # fmt: skip
    assert set(proc.stdout.split()) == {"sessions"}, proc.stdout + proc.stderr


def test_show_completion_prints_the_script_of_the_shell_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--show-completion bash` prints bash's script whichever process started the tests.

    By default typer detects the shell among tdoc's ancestor processes (shellingham); a test run
    with no shell above it (a CI runner that starts pytest directly, `setsid`) detects none and
    exits 1. Typer's own switch for tests turns detection off, so the shell is the one named."""
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    shown = runner.invoke(app, ["--show-completion", "bash"])
    assert shown.exit_code == 0, shown.output
    assert "_TDOC_COMPLETE=complete_bash" in shown.stdout
    unknown = runner.invoke(app, ["--show-completion", "tcsh"])
    assert unknown.exit_code != 0 and "_TDOC_COMPLETE" not in unknown.stdout


def test_step_summary_gets_a_markdown_table(seed: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    proc = tdoc("scan", str(seed), "-f", "github", env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == 1
    text_md = summary.read_text()
    assert text_md.startswith("earlier step\n")  # appended, never overwritten
    assert "| rule | name | count | fixable |" in text_md and "| W101 | vacuous-assistant | 1 | 1 |" in text_md
    assert "::error" not in text_md and "## tdoc scan" not in proc.stdout


def test_step_summary_cells_cannot_break_the_table(tmp_path: Path) -> None:
    from transcript_doctor.reporters.step_summary import cell

    hostile = "a | b\n| c | `x` <img src=x> [link](http://e)\x1b[31m"
    escaped = cell(hostile)
    assert "\n" not in escaped and "<img" not in escaped and "\x1b" not in escaped
    assert escaped.count("|") == escaped.count("\\|")


@pytest.mark.parametrize("fmt", ["json", "sarif", "ndjson"])
def test_machine_formats_leave_the_step_summary_alone(seed: Path, tmp_path: Path, fmt: str) -> None:
    summary = tmp_path / "summary.md"
    proc = tdoc("scan", str(seed), "-f", fmt, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == 1 and not summary.exists()

"""Command lines that cannot mean what they say are one usage error (exit 2), said once, before
any input is read, never one error per input or an argument silently dropped."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "fixtures/kimi-code/golden"
JOURNAL = GOLDEN / "c01_legacy_compaction_after_vacuous.jsonl"
runner = CliRunner()


@pytest.mark.parametrize("command", [["scan", str(GOLDEN)], ["heal", str(JOURNAL)],
                                     ["replay", str(JOURNAL)]], ids=lambda c: c[0])
def test_an_unknown_input_format_is_one_usage_error(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--input-format", "kimi"])
    assert result.exit_code == 2, result.output
    assert result.output.count("unknown input format 'kimi'") == 1
    assert "kimi-wire" in result.output  # the known formats are listed


def test_a_known_input_format_is_taken() -> None:  # near miss: the same flag, a format that exists
    result = runner.invoke(app, ["scan", str(JOURNAL), "--input-format", "kimi-wire", "-f", "json"])
    assert result.exit_code == 1, result.output  # the journal's findings, not a usage error
    assert '"C201"' in result.stdout


def test_explain_refuses_a_second_rule_instead_of_ignoring_it() -> None:
    result = runner.invoke(app, ["explain", "C201", "W101"])
    assert result.exit_code == 2
    assert "one rule at a time" in result.output


def test_explain_of_one_rule_still_explains_it() -> None:
    result = runner.invoke(app, ["explain", "W101"])
    assert result.exit_code == 0 and "W101" in result.output

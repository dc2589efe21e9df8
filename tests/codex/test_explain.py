"""`tdoc explain --error` with each provider error Codex users hit names the rollout line (docs/codex.md §5)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app

from .helpers import SYNTHETIC

runner = CliRunner()
POISONED = SYNTHETIC / "poisoned.jsonl"

# (pasted error, rollout, rule, line the error is about, whether the error names input[N])
CASES = [
    (("Error: 400 {\"error\":{\"message\":\"Invalid value: 'other'. Supported values are: 'search', 'open_page', and "
      "'find_in_page'.\",\"type\":\"invalid_request_error\",\"param\":\"input[3].action.type\",\"code\":\"invalid_value\"}}"),
     POISONED, "W121", 8, True),
    ("No tool output found for function call call_build.", SYNTHETIC / "orphan-call-end.jsonl", "W103", 9, False),
    ("The encrypted content for item rs_68a1 could not be verified.", POISONED, "W122", 9, False),
    (("Invalid 'input[5].content': array too long. Expected an array with maximum length 0, but got an array with "
      "length 1 instead."), POISONED, "W122", 10, True),
    (("{\"error\":{\"message\":\"Invalid 'input[7].id': 'chatcmpl-91'. Expected an ID that begins with 'msg'.\","
      "\"type\":\"invalid_request_error\",\"param\":\"input[7].id\",\"code\":\"invalid_id_prefix\"}}"),
     POISONED, "W123", 12, True),
]


@pytest.mark.parametrize("text,path,rule,line,indexed", CASES, ids=[c[2] + str(i) for i, c in enumerate(CASES)])
def test_provider_error_names_the_rollout_line(text: str, path, rule: str, line: int, indexed: bool) -> None:
    result = runner.invoke(app, ["explain", "--error", text, str(path), "--format", "json"])
    assert result.exit_code == 0, result.stdout
    doc = json.loads(result.stdout)
    assert doc["rule"]["code"] == rule
    if indexed:
        assert doc["mapping"] == "mapped" and doc["record"]["line"] == line
    findings = [f for f in doc["findings"] if f["code"] == rule]
    assert findings and findings[0]["location"]["line"] == line
    human = runner.invoke(app, ["explain", "--error", text, str(path)])
    assert f"{path}:{line}" in human.stdout


def test_an_index_past_the_request_is_reported_as_such() -> None:
    text = "Invalid 'input[99].content': array too long. Expected an array with maximum length 0"
    doc = json.loads(runner.invoke(app, ["explain", "--error", text, str(POISONED), "--format", "json"]).stdout)
    assert doc["mapping"] == "no-message-at-index" and doc["record"] is None


def test_codexs_own_offset_cache_error_is_explained() -> None:
    text = ("invalid paginated history lineage for thread 019c: cutoff byte offset 48213 is past the source rollout "
            "(41877 bytes)")
    doc = json.loads(runner.invoke(app, ["explain", "--error", text, "--format", "json"]).stdout)
    assert doc["pattern"] == "codex-offset-cache" and "thread_history" in doc["cause"]

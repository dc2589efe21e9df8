"""The suite passes under a CI runner's environment (tests/conftest.py, `_output_environment`).

Runners set variables that change tdoc's output: FORCE_COLOR makes rich colour a report written
to a pipe, and GitHub's GITHUB_STEP_SUMMARY names the job's summary page, which a human report
appends to. A test that compares output must not see them, and no test may write into the
runner's summary. This runs one such test in a pytest of its own, under both variables.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SENSITIVE = "tests/test_cli.py::test_human_output_does_not_interpret_markup_or_escapes"


def test_a_forced_colour_runner_changes_no_test_and_gets_no_summary(tmp_path: Path) -> None:
    summary = tmp_path / "job-summary.md"
    env = {**os.environ, "FORCE_COLOR": "1", "GITHUB_STEP_SUMMARY": str(summary)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", SENSITIVE],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout
    assert not summary.exists()

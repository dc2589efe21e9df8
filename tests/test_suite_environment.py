"""The suite passes under a CI runner's environment (tests/conftest.py, `_output_environment`).

Runners set variables that change tdoc's output: FORCE_COLOR makes rich colour a report written
to a pipe, and GitHub's GITHUB_STEP_SUMMARY names the job's summary page, which a human report
appends to. A test that compares output must not see them, and no test may write into the
runner's summary. This runs one such test in a pytest of its own, under both variables.

A test also leaves the process as it found it: the cyclic collector on, no Claude Code store's
index frozen, no profile hook (`_collector_left_as_found`); the second test runs tests that break
each rule and checks that each fails.
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



LEAKS = """
import gc, sys
from pathlib import Path
from transcript_doctor.stores import Options, open_store

KEPT = []

def test_leaves_a_profile_hook():
    sys.setprofile(lambda *a: None)

def test_leaves_the_collector_off():
    gc.disable()

def test_leaves_a_claude_code_store_open():
    path = Path({path!r})
    KEPT.append(open_store(path, str(path), Options()))

def test_turns_the_collector_off_and_on_again():
    gc.disable()
    gc.enable()
"""


def test_a_test_that_leaves_the_collector_or_a_profile_hook_changed_fails(tmp_path: Path) -> None:
    # tests/conftest.py `_collector_left_as_found`: once one test left the collector off (a fixture
    # that put back only "off"), every later test of its worker ran without it.
    module = tmp_path / "test_leaks.py"
    module.write_text(LEAKS.format(path=str(ROOT / "fixtures/claude-code/real/entirecli-069f0cb7b375-0.jsonl")))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rE", "-p", "no:cacheprovider", "-p", "tests.conftest", str(module)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    out = proc.stdout
    assert proc.returncode == 1, out[-2000:] + proc.stderr[-2000:]
    assert "4 passed, 3 errors" in out, out[-2000:]
    errors = {line.split("::")[1].split(" ")[0]: line for line in out.splitlines() if line.startswith("ERROR ")}
    assert sorted(errors) == ["test_leaves_a_claude_code_store_open", "test_leaves_a_profile_hook",
                              "test_leaves_the_collector_off"]  # fmt: skip
    for reason in ("the test left a profile hook set", "the test left the cyclic collector off",
                   "the test left 1 Claude Code store(s) open, their index frozen"):  # fmt: skip
        assert reason in out, (reason, out[-3000:])

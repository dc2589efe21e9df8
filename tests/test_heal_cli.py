"""`tdoc heal` as a user runs it: patches `git apply` accepts, --in-place --diff, unsafe fixes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app

from .heal_support import ROOT, database, journal, tdoc
from .kimi.builders import Journal, think

runner = CliRunner()


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


def _crlf_journal(path: Path) -> Path:
    journal(path)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    return path


def _torn_tail_journal(path: Path) -> Path:
    j = Journal().user("u0").step("v0", [think()], finish="filtered").user("u1")
    j.write(path)
    with open(path, "ab") as fh:
        fh.write(b'{"type": "context.append_mess')  # a crash mid-write: no newline at the end
    return path


MAKERS = {"journal": journal, "crlf-journal": _crlf_journal, "torn-tail": _torn_tail_journal}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_the_diff_on_stdout_is_a_patch_git_apply_accepts(tmp_path: Path, kind: str) -> None:
    name = "wire.jsonl"
    (tmp_path / "sessions").mkdir()
    path = MAKERS[kind](tmp_path / "sessions" / name)
    reference = tmp_path / "healed"
    assert tdoc("heal", str(path), "--output", str(reference)).returncode == 0
    patch = subprocess.run([sys.executable, "-m", "transcript_doctor", "heal", "--diff", f"sessions/{name}"],
                           cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "60"},
                           capture_output=True)  # bytes: a CRLF patch must keep its CRs
    assert patch.returncode == 1, patch.stderr  # a dry run with something to change
    assert patch.stdout.startswith(f"--- a/sessions/{name}\n+++ b/sessions/{name}\n@@ ".encode())
    assert b"would heal" in patch.stderr and b"would heal" not in patch.stdout  # the summary is on stderr
    (tmp_path / "fix.patch").write_bytes(patch.stdout)
    assert _git(tmp_path, "init", "-q").returncode == 0
    applied = _git(tmp_path, "apply", "fix.patch")
    assert applied.returncode == 0, applied.stderr
    assert path.read_bytes() == reference.read_bytes()


def test_in_place_with_diff_prints_the_patch_and_writes(tmp_path: Path) -> None:
    path = journal(tmp_path / "wire.jsonl")
    original = path.read_bytes()
    result = runner.invoke(app, ["heal", "--in-place", "--diff", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("--- a/") and "\n-" in result.stdout and "healed" in result.stderr
    assert path.read_bytes() != original


def test_the_sql_plan_is_the_diff_of_a_database(tmp_path: Path) -> None:
    db = database(tmp_path / "opencode.db")
    result = runner.invoke(app, ["heal", "--diff", str(db)])
    assert result.exit_code == 1
    assert result.stdout.startswith("BEGIN IMMEDIATE;") and result.stdout.rstrip().endswith("COMMIT;")
    assert "would heal" in result.stderr


@pytest.mark.parametrize(("flags", "code", "says"), [
    ([], 1, "1 fix(es) need --unsafe-fixes"),  # near miss of "nothing to heal": it is not nothing
    (["--unsafe-fixes"], 1, "would heal 1 finding(s) (S307)"),
])
def test_fixes_that_need_unsafe_fixes_are_named_and_exit_1(tmp_path: Path, flags: list[str], code: int,
                                                           says: str) -> None:
    db = database(tmp_path / "opencode.db")
    result = runner.invoke(app, ["heal", "--select", "S307", *flags, str(db)])
    assert result.exit_code == code and says in result.output
    assert "nothing to heal" not in result.output
    doc = json.loads(runner.invoke(app, ["heal", "--select", "S307", *flags, "-f", "json", str(db)]).stdout)
    assert doc["results"][0]["needs_unsafe"] == (0 if flags else 1)


def test_nothing_to_heal_is_exit_0(tmp_path: Path) -> None:
    path = journal(tmp_path / "wire.jsonl")
    assert runner.invoke(app, ["heal", "--in-place", str(path)]).exit_code == 0
    again = runner.invoke(app, ["heal", str(path)])
    assert again.exit_code == 0 and "nothing to heal" in again.output


def test_json_output_keeps_its_shape(tmp_path: Path) -> None:
    from transcript_doctor.schema import errors as schema_errors

    path = journal(tmp_path / "wire.jsonl")
    result = runner.invoke(app, ["heal", "--in-place", "-f", "json", str(path)])
    doc = json.loads(result.stdout)
    assert result.exit_code == 0 and schema_errors("heal", doc) == []
    (entry,) = doc["results"]
    assert entry["written"] and Path(entry["backup"]).is_file() and entry["edits"]


# --------------------------------------------------------------------------- --output with nothing to heal

UNCHANGED_COPIES = [  # (a store with nothing safe to heal, extra flags, exit code)
    ("fixtures/eve/support-chat.v26.ndjson", [], 0),
    ("fixtures/codex/real/simonw-sample_codex_session-0.77.jsonl", [], 0),
    ("fixtures/hermes/hermes-state-v30.db", ["--select", "F505"], 0),
    ("tests/cases/claude-code/orphan-call-mid-history.jsonl", [], 1),  # only an unsafe fix: exit 1
]


@pytest.mark.parametrize(("rel", "flags", "code"), UNCHANGED_COPIES, ids=[Path(c[0]).name for c in UNCHANGED_COPIES])
def test_output_with_nothing_to_heal_leaves_the_store_there_as_it_is(tmp_path: Path, rel: str, flags: list[str],
                                                                     code: int) -> None:  # fmt: skip
    """A script that heals into a path finds the store there whatever the heal found (a file byte
    for byte; a database copied with the backup API, which scans as the input does)."""
    src = ROOT / rel
    out = tmp_path / ("copy" + src.suffix)
    result = runner.invoke(app, ["heal", str(src), "--output", str(out), "--format", "json", *flags])
    assert result.exit_code == code, result.output
    (doc,) = json.loads(result.stdout)["results"]
    assert doc["changed"] is False and doc["written"] is True and doc["output"] == str(out)
    if src.suffix == ".db":
        scans = [runner.invoke(app, ["scan", str(p), "--format", "json", "--input-format", "hermes-db"]) for p in (src, out)]
        assert [json.loads(s.stdout)["summary"] for s in scans][0] == json.loads(scans[1].stdout)["summary"]
    else:
        assert out.read_bytes() == src.read_bytes()
    human = runner.invoke(app, ["heal", str(src), "--output", str(tmp_path / ("again" + src.suffix)), *flags])
    assert f"copied unchanged -> {tmp_path / ('again' + src.suffix)}" in human.output


def test_output_copy_of_a_store_that_changed_since_the_read_is_refused(tmp_path: Path, monkeypatch) -> None:
    """A file that grew after it was read (the agent wrote meanwhile) would be copied with what
    the scan did not see: no copy is left and the heal exits 3."""
    from transcript_doctor.heal import pipeline

    src = tmp_path / "stream.ndjson"
    shutil.copy(ROOT / "fixtures/eve/support-chat.v26.ndjson", src)
    out = tmp_path / "copy.ndjson"
    real = pipeline.output_unchanged

    def append_then_copy(store, output):
        with open(src, "ab") as fh:
            fh.write(b'{"type":"turn.started","data":{"turnId":"late"},"meta":{"id":"evt_late"}}\n')
        return real(store, output)

    monkeypatch.setattr(pipeline, "output_unchanged", append_then_copy)
    result = runner.invoke(app, ["heal", str(src), "--output", str(out)])
    assert result.exit_code == 3, result.output
    assert not out.exists() and "changed while tdoc was working" in result.output


def test_nothing_to_heal_still_says_what_no_fix_covers() -> None:
    """'nothing to heal' is not 'nothing wrong': the findings no fix covers are counted by code."""
    result = runner.invoke(app, ["heal", str(ROOT / "fixtures/eve/support-chat.v26.ndjson")])
    assert result.exit_code == 0 and "nothing to heal" in result.output
    assert "6 finding(s) have no fix (C203, E601, S303, T403)" in result.output
    clean = runner.invoke(app, ["heal", str(ROOT / "fixtures/codex/real/simonw-sample_codex_session-0.77.jsonl")])
    assert "nothing to heal" in clean.output and "have no fix" not in clean.output  # near miss: nothing left

"""Line-edit heal for eve streams (and the shared plan that merges findings' line edits)."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.fixes.jsonl_heal import plan_lines
from transcript_doctor.model import Edit, Finding, Fix

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


def test_torn_eve_stream_is_healed_in_place_once(tmp_path: Path) -> None:
    source = (ROOT / "fixtures" / "eve" / "support-chat.v26.ndjson").read_bytes()
    path = tmp_path / "stream.ndjson"
    path.write_bytes(source[:-30])  # a crash mid-write tore the last line
    scan = runner.invoke(app, ["scan", str(path), "--select", "F501", "--format", "ndjson"])
    assert '"F501"' in scan.stdout
    assert runner.invoke(app, ["heal", str(path)]).exit_code == 1  # dry run: something to do
    assert runner.invoke(app, ["heal", "--in-place", str(path)]).exit_code == 0
    healed = path.read_bytes()
    assert source.startswith(healed) and healed.endswith(b"\n")  # every complete line kept as it was
    backups = list(tmp_path.glob("stream.ndjson.tdoc-backup-*"))
    assert [b.read_bytes() for b in backups] == [source[:-30]]
    assert '"F501"' not in runner.invoke(app, ["scan", str(path), "--format", "ndjson"]).stdout
    result = runner.invoke(app, ["heal", "--in-place", str(path)])
    assert result.exit_code == 0 and path.read_bytes() == healed


def _finding(code: str, *edits: Edit) -> Finding:
    return Finding(code, "x", "warning", "m", "p", "eve-stream", fix=Fix("safe", "s", edits))


def test_overlapping_fixes_are_never_applied_together() -> None:
    first = _finding("C203", Edit("delete", line=4), Edit("delete", line=5))
    same = _finding("F501", Edit("delete", line=5))  # agrees with the first: merged
    clash = _finding("W102", Edit("replace", line=4, text="{}"))  # disagrees: skipped whole
    plan, applied, skipped = plan_lines([first, same, clash])
    assert applied == [first, same]
    assert plan.changes == {4: None, 5: None}
    assert [s["code"] for s in skipped] == ["W102"] and "overlap" in skipped[0]["reason"]


def test_output_copy_leaves_the_stream_alone(tmp_path: Path) -> None:
    source = ROOT / "fixtures" / "eve" / "nightly-report.v27.ndjson"
    path = tmp_path / "s.ndjson"
    shutil.copyfile(source, path)
    path.write_bytes(path.read_bytes() + b'{"at": "2026-')
    before = path.read_bytes()
    out = tmp_path / "fixed.ndjson"
    assert runner.invoke(app, ["heal", str(path), "--output", str(out)]).exit_code == 0
    assert path.read_bytes() == before and out.read_bytes() == source.read_bytes()

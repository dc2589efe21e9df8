"""The Hermes fixtures (written by Hermes' own code) beyond their labels (tests/test_cases.py checks those)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.core import ScanConfig, scan

HERMES = Path(__file__).resolve().parent.parent / "fixtures" / "hermes"
EXPECTED = sorted(HERMES.glob("*.expected.json"))


@pytest.fixture(scope="module")
def reports() -> dict[str, dict]:
    out = {}
    for path in EXPECTED:
        spec = json.loads(path.read_text())
        out[spec["store"]] = scan([str(HERMES / spec["store"])]).as_dict()
    return out


def test_findings_carry_session_row_and_position(reports: dict) -> None:
    for name, report in reports.items():
        for f in report["findings"]:
            assert f["session"], f
            loc = f["location"]
            if name.endswith(".db"):
                assert loc["table"] == "messages" and isinstance(loc["row"], int)
            else:
                assert loc["row"] is None and isinstance(loc["line"], int)
                assert isinstance(f["evidence"]["message_id"], int)
            assert isinstance(loc["position"], int) and loc["position"] >= 1


def test_persisted_pair_names_both_rows(reports: dict) -> None:
    s305 = [f for f in reports["hermes-state-v21.db"]["findings"] if f["code"] == "S305"]
    assert [f["evidence"]["rows"] for f in s305] == [[8, 9]]
    # the (empty) row of the pair is reported once, as S305, not also as S301
    assert not any(f["code"] == "S301" and f["location"]["row"] == 8 for f in reports["hermes-state-v21.db"]["findings"])


def test_sentinel_evidence_tells_the_revisions_apart(reports: dict) -> None:
    by_row = {f["location"]["row"]: f for f in reports["hermes-state-v21.db"]["findings"] if f["code"] == "S301"}
    assert by_row[4]["evidence"]["literal_prefix"] is True
    assert by_row[12]["evidence"]["literal_prefix"] is False  # "(Empty again? …)": only the later regex
    assert by_row[4]["evidence"]["session_end"] is True
    assert by_row[4]["location"]["position"] == 4  # system prompt, user, assistant, tool, assistant


def test_scan_creates_nothing_beside_the_database(tmp_path: Path) -> None:
    for name in ("hermes-state-v21.db", "hermes-state-v30.db"):
        shutil.copy(HERMES / name, tmp_path / name)
    before = sorted(os.listdir(tmp_path))
    stat = (tmp_path / "hermes-state-v21.db").stat()
    scan([str(tmp_path)])
    assert sorted(os.listdir(tmp_path)) == before
    after = (tmp_path / "hermes-state-v21.db").stat()
    assert (after.st_mtime_ns, after.st_size) == (stat.st_mtime_ns, stat.st_size)


def test_directory_scan_detects_both_kinds() -> None:
    report = scan([str(HERMES)], ScanConfig())
    formats = {fr.path.rsplit("/", 1)[-1]: fr.format for fr in report.files}
    assert formats == {
        "hermes-export-v21.jsonl": "hermes-export",
        "hermes-state-v21-b.db": "hermes-db",
        "hermes-state-v21.db": "hermes-db",
        "hermes-state-v30.db": "hermes-db",
    }


def test_cli_json_and_exit_code() -> None:
    result = CliRunner().invoke(app, ["scan", str(HERMES / "hermes-state-v30.db"), "--format", "json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert {f["code"] for f in data["findings"]} == {"S301", "W103"}
    ok = CliRunner().invoke(app, ["scan", str(HERMES / "hermes-state-v30.db"), "--ignore", "S301,W103"])
    assert ok.exit_code == 0

"""`--format sarif`: valid against the official SARIF 2.1.0 schema, stable, relative, GitHub-ready."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from jsonschema import Draft4Validator
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.core import Report, ScanConfig, scan
from transcript_doctor.model import FileResult, Finding, Fix
from transcript_doctor.reporters.sarif import FINGERPRINT_KEY, to_sarif
from transcript_doctor.rules import RULES

from .stores import ROOT, store_files

SCHEMA = orjson.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_bytes())
VALIDATOR = Draft4Validator(SCHEMA)
runner = CliRunner()


def errors(log: dict) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(log)]


@pytest.fixture(scope="module")
def fixture_log() -> dict:
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        report = scan(store_files(), ScanConfig(jobs=1))
        return to_sarif(report)
    finally:
        os.chdir(cwd)


def sqlite_report(base: Path) -> Report:
    db = str(base / "state.db")
    findings = [
        Finding("S301", "leaked-empty-sentinel", "error", "assistant row 17 starts with (empty)", db, "hermes-db",
                session="sess-1", row=17, table="messages", position=4,
                fix=Fix("unsafe", "deactivate the row"), evidence={"text": "(empty)"}),
        Finding("T401", "empty-completion", "error", "final message is empty", db, "hermes-db", session="sess-2"),
    ]  # fmt: skip
    return Report([
        FileResult(db, "hermes-db", sessions=2, records=40, findings=findings),
        FileResult(str(base / "broken.jsonl"), None, error="not a store tdoc recognises"),
        FileResult(str(base / "dir with space" / "wire.jsonl"), "kimi-wire", 1, 9, findings=[
            Finding("W101", "vacuous-assistant", "error", "empty step", str(base / "dir with space" / "wire.jsonl"),
                    "kimi-wire", line=4, end_line=6, position=2, engine="v1"),
        ]),
    ])  # fmt: skip


def test_fixture_scan_is_valid_sarif(fixture_log):
    assert errors(fixture_log) == []
    assert fixture_log["version"] == "2.1.0"


def test_sqlite_findings_errors_and_odd_paths_are_valid_sarif(tmp_path):
    log = to_sarif(sqlite_report(tmp_path), base=tmp_path)
    assert errors(log) == []


def test_sqlite_findings_have_logical_locations(tmp_path):
    results = to_sarif(sqlite_report(tmp_path), base=tmp_path)["runs"][0]["results"]
    row = results[0]["locations"][0]
    assert row["physicalLocation"]["artifactLocation"]["uri"] == "state.db"
    assert "region" not in row["physicalLocation"]
    assert row["logicalLocations"] == [
        {"name": "messages#17", "fullyQualifiedName": "sess-1/messages#17", "kind": "object"}
    ]
    assert results[0]["properties"]["session"] == "sess-1" and results[0]["properties"]["position"] == 4
    assert "logicalLocations" not in results[1]["locations"][0]  # session-level finding: no row


def test_jsonl_findings_have_line_regions_and_encoded_relative_uris(tmp_path):
    results = to_sarif(sqlite_report(tmp_path), base=tmp_path)["runs"][0]["results"]
    loc = results[2]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "dir%20with%20space/wire.jsonl"
    assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert loc["region"] == {"startLine": 4, "endLine": 6}


def test_fixture_uris_are_relative_with_forward_slashes(fixture_log):
    run = fixture_log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == ROOT.as_uri() + "/"
    for artifact in run["artifacts"]:
        uri = artifact["location"]["uri"]
        assert uri.startswith("fixtures/") and "\\" not in uri and not uri.startswith("file:")


def test_paths_outside_the_base_are_absolute_file_uris(tmp_path):
    log = to_sarif(sqlite_report(tmp_path), base=tmp_path / "elsewhere")
    uri = log["runs"][0]["artifacts"][0]["location"]["uri"]
    assert uri.startswith("file:///") and "uriBaseId" not in log["runs"][0]["artifacts"][0]["location"]
    assert errors(log) == []


def test_rules_are_the_whole_catalogue_with_help(fixture_log):
    rules = fixture_log["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(RULES)
    for r in rules:
        assert r["shortDescription"]["text"] and r["help"]["text"] and r["help"]["markdown"]
        assert r["defaultConfiguration"]["level"] in ("error", "warning", "note")


def test_rule_index_and_level_agree_with_rule_id(fixture_log):
    run = fixture_log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert run["results"], "the fixtures should produce findings"
    levels = {"error": "error", "warning": "warning", "info": "note"}
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in levels.values()


def test_info_findings_are_notes(tmp_path):
    f = Finding("W109", "consecutive-assistants", "info", "two in a row", str(tmp_path / "w.jsonl"), "kimi-wire", line=3)
    log = to_sarif(Report([FileResult(f.path, "kimi-wire", findings=[f])]), base=tmp_path)
    assert log["runs"][0]["results"][0]["level"] == "note"


def test_fingerprints_are_stable_and_distinct(tmp_path, fixture_log):
    again = to_sarif(sqlite_report(tmp_path), base=tmp_path)
    first = to_sarif(sqlite_report(tmp_path), base=tmp_path)
    prints = [r["partialFingerprints"][FINGERPRINT_KEY] for r in first["runs"][0]["results"]]
    assert prints == [r["partialFingerprints"][FINGERPRINT_KEY] for r in again["runs"][0]["results"]]
    assert len(set(prints)) == len(prints)
    fixture_prints = [r["partialFingerprints"][FINGERPRINT_KEY] for r in fixture_log["runs"][0]["results"]]
    assert len(set(fixture_prints)) == len(fixture_prints)


def test_fingerprint_does_not_depend_on_where_the_checkout_is(tmp_path):
    a = to_sarif(sqlite_report(tmp_path / "one"), base=tmp_path / "one")
    b = to_sarif(sqlite_report(tmp_path / "two"), base=tmp_path / "two")
    fa = [r["partialFingerprints"] for r in a["runs"][0]["results"]]
    fb = [r["partialFingerprints"] for r in b["runs"][0]["results"]]
    assert fa == fb


def test_unreadable_inputs_are_error_notifications(tmp_path):
    invocation = to_sarif(sqlite_report(tmp_path), base=tmp_path)["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "broken.jsonl" in note["message"]["text"]


def test_cli_sarif_keeps_the_exit_code_of_json(monkeypatch):
    monkeypatch.chdir(ROOT)
    target = "fixtures/kimi-code/golden/c03_vacuous_variants.jsonl"
    as_json = runner.invoke(app, ["scan", "-f", "json", "--no-config", target])
    as_sarif = runner.invoke(app, ["scan", "-f", "sarif", "--no-config", target])
    assert as_sarif.exit_code == as_json.exit_code
    log = orjson.loads(as_sarif.stdout)
    assert errors(log) == []
    assert len(log["runs"][0]["results"]) == len(orjson.loads(as_json.stdout)["findings"])


@pytest.mark.parametrize(("label", "args", "says"), [
    ("unknown selector", ["--select", "NOPE"], "unknown rule selector"),
    ("no input in a directory", [], "no input files found"),
])  # fmt: skip
def test_a_scan_that_cannot_start_still_writes_a_valid_sarif_log(tmp_path, monkeypatch, label, args, says):
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "empty"
    target.mkdir()
    if args:  # the selector case needs a real input
        target = Path(ROOT / "fixtures" / "kimi-code" / "golden" / "c01_legacy_compaction_after_vacuous.jsonl")
    result = runner.invoke(app, ["scan", str(target), "-f", "sarif", *args])
    assert result.exit_code == 2, label
    log = orjson.loads(result.stdout)
    assert errors(log) == []
    invocation = log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False and log["runs"][0]["results"] == []
    assert says in invocation["toolExecutionNotifications"][0]["message"]["text"]


def test_a_usage_error_in_another_format_writes_nothing_to_stdout(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["scan", str(empty), "-f", "json"])
    assert result.exit_code == 2 and result.stdout == ""

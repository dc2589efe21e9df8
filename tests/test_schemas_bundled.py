"""`tdoc schema NAME` prints a self-contained schema: plain jsonschema and check-jsonschema accept it
offline, and it validates (and rejects) real outputs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.schema import OUTPUT_SCHEMAS, bundled

from .kimi.builders import seed_case

runner = CliRunner()


def _refs(node: object) -> list[str]:
    if isinstance(node, dict):
        return ([node["$ref"]] if isinstance(node.get("$ref"), str) else []) + [
            r for v in node.values() for r in _refs(v)
        ]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


@pytest.mark.parametrize("name", OUTPUT_SCHEMAS)
def test_printed_schema_has_only_local_refs_and_no_url_id(name: str) -> None:
    schema = json.loads(runner.invoke(app, ["schema", name]).stdout)
    assert all(ref.startswith("#") for ref in _refs(schema)), _refs(schema)
    assert not schema["$id"].startswith(("http:", "https:"))
    jsonschema.Draft202012Validator.check_schema(schema)


def _outputs(tmp_path: Path) -> dict[str, object]:
    seed = seed_case().write(tmp_path / "seed.jsonl")
    report = json.loads(runner.invoke(app, ["scan", str(seed), "-f", "json"]).stdout)
    heal = json.loads(runner.invoke(app, ["heal", str(seed), "-f", "json"]).stdout)
    replay = json.loads(runner.invoke(app, ["replay", str(seed)]).stdout)
    sessions = json.loads(runner.invoke(app, ["sessions", str(seed), "-f", "json"]).stdout)
    return {"report": report, "finding": report["findings"][0], "heal": heal, "replay": replay, "sessions": sessions}


def test_plain_jsonschema_validate_accepts_real_outputs_and_rejects_broken_ones(tmp_path: Path) -> None:
    outputs = _outputs(tmp_path)
    for name in OUTPUT_SCHEMAS:
        schema = json.loads(runner.invoke(app, ["schema", name]).stdout)
        jsonschema.validate(outputs[name], schema)  # no registry, no network
    broken = outputs["report"]
    broken["findings"][0]["severity"] = "fatal"  # a near miss inside the bundled finding schema
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, bundled("report"))


CHECK_JSONSCHEMA = shutil.which("check-jsonschema") or str(Path(sys.executable).with_name("check-jsonschema"))


@pytest.mark.skipif(not Path(CHECK_JSONSCHEMA).exists(), reason="check-jsonschema is not installed")
def test_check_jsonschema_validates_a_report_offline(tmp_path: Path) -> None:
    outputs = _outputs(tmp_path)
    schema_file, report_file = tmp_path / "s.json", tmp_path / "report.json"
    schema_file.write_text(runner.invoke(app, ["schema", "report"]).stdout)
    report_file.write_text(json.dumps(outputs["report"]))
    dead_proxy = "http://127.0.0.1:9"  # any download attempt fails at once
    env = {**os.environ, "http_proxy": dead_proxy, "https_proxy": dead_proxy, "HTTPS_PROXY": dead_proxy,
           "HTTP_PROXY": dead_proxy, "no_proxy": ""}
    ok = subprocess.run([CHECK_JSONSCHEMA, "--schemafile", str(schema_file), str(report_file)],
                        capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    outputs["report"]["findings"][0]["location"]["line"] = 0  # minimum 1 in the finding schema
    report_file.write_text(json.dumps(outputs["report"]))
    bad = subprocess.run([CHECK_JSONSCHEMA, "--schemafile", str(schema_file), str(report_file)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 1, bad.stdout + bad.stderr

"""What the shared case harness (tests/test_cases.py) does not check on the Claude Code cases:
the severity and `unreachable` mark of a must-find entry, and `no_errors` (no error-severity finding)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from transcript_doctor.core import ScanConfig, scan

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CASES = Path(__file__).resolve().parents[1] / "cases" / "claude-code"
SPECS = {p.name.split(".expected.")[0]: tomllib.loads(p.read_text()) for p in sorted(CASES.glob("*.expected.toml"))}


def _findings(name: str) -> list[dict[str, Any]]:
    report = scan(str(CASES / f"{name}.jsonl"), ScanConfig(jobs=1))
    assert [fr.error for fr in report.files] == [None]
    return [f.as_dict() for f in report.findings]


def test_every_case_has_its_labels():
    assert sorted(SPECS) == sorted(p.stem for p in CASES.glob("*.jsonl"))


@pytest.mark.parametrize("name", sorted(SPECS))
def test_severity_unreachable_and_no_errors(name):
    spec, found = SPECS[name], _findings(name)
    for want in spec["must_find"]:
        hit = next(f for f in found if f["code"] == want["code"] and f["location"]["line"] == want.get("line",
                                                                                                    f["location"]["line"]))
        if "severity" in want:
            assert hit["severity"] == want["severity"], (name, hit)
        if want.get("unreachable"):
            assert hit["evidence"]["unreachable"] is True and hit["location"]["position"] is None
    if spec["no_errors"]:
        assert [(f["code"], f["location"]["line"]) for f in found if f["severity"] == "error"] == []

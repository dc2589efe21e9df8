"""Labelled Claude Code cases (tests/claude_code/cases/cases.json): what must be found, what must not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from transcript_doctor.core import ScanConfig, scan

CASES_DIR = Path(__file__).resolve().parent / "cases"


def load_cases() -> list[dict[str, Any]]:
    return json.loads((CASES_DIR / "cases.json").read_text(encoding="utf-8"))


CASES = load_cases()


def _findings(name: str) -> list[dict[str, Any]]:
    report = scan(str(CASES_DIR / name), ScanConfig(jobs=1))
    assert [fr.error for fr in report.files] == [None]
    assert report.files[0].format == "claude-code"
    return [f.as_dict() for f in report.findings]


def test_every_case_file_is_listed():
    assert sorted(c["file"] for c in CASES) == sorted(p.name for p in CASES_DIR.glob("*.jsonl"))


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_case(case):
    found = _findings(case["file"])
    for want in case["must_find"]:
        hits = [f for f in found if f["code"] == want["code"]
                and ("line" not in want or f["location"]["line"] == want["line"])]
        assert hits, f"{case['file']}: expected {want} ({case['why']}); found {[(f['code'], f['location']) for f in found]}"
        f = hits[0]
        if "severity" in want:
            assert f["severity"] == want["severity"]
        if "position" in want:
            assert f["location"]["position"] == want["position"]
        if want.get("unreachable"):
            assert f["evidence"]["unreachable"] is True and f["location"]["position"] is None
    codes = {f["code"] for f in found}
    assert not codes & set(case["must_not_find"]), f"{case['file']}: near miss reported ({case['why']})"
    if case["no_errors"]:
        assert [f for f in found if f["severity"] == "error"] == []

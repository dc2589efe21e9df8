"""Each rule's declared fix availability holds on what the shipped fixtures and cases produce.

`always`: every finding of the rule carries its fix (and the data shows at least one finding);
`sometimes`: at least one finding carries it (so it is not in fact `never`); `never`: none does.
A fix always has the applicability the rule declares.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from tests.reports.capture import ROOT, fixture_stores
from tests.test_cases import CASE_LIST, materialise
from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.model import Finding
from transcript_doctor.rules import RULES


@pytest.fixture(scope="module")
def findings_by_code(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Finding]]:
    paths = [str(ROOT / rel) for rel in fixture_stores()]
    tmp = tmp_path_factory.mktemp("cases")
    paths += [str(materialise(case.store(), tmp)) for case in CASE_LIST if not case.store().is_relative_to(ROOT / "fixtures")]
    out: dict[str, list[Finding]] = defaultdict(list)
    for f in scan(paths, ScanConfig(jobs=1)).findings:
        out[f.code].append(f)
    return out


@pytest.mark.parametrize("code", sorted(RULES))
def test_declared_availability_holds(code: str, findings_by_code: dict[str, list[Finding]]) -> None:
    rule = RULES[code]
    found = findings_by_code.get(code, [])
    fixed = [f for f in found if f.fix is not None]
    assert all(f.fix.applicability == rule.fix for f in fixed if f.fix), code
    if rule.availability == "never":
        assert not fixed, f"{code} declares no fix but {len(fixed)} finding(s) carry one"
    elif rule.availability == "always":
        assert found, f"{code} declares its fix always available, but no fixture or case shows it"
        assert len(fixed) == len(found), f"{code}: {len(found) - len(fixed)} finding(s) without the fix"
    else:
        assert fixed, f"{code} declares its fix sometimes available, but no fixture or case shows one"



def test_every_finding_is_of_a_rule_that_names_its_system(findings_by_code: dict[str, list[Finding]]) -> None:
    """`tdoc rules` says which systems a rule applies to: a store that reports a rule is among them
    (by name, or as a JSON-lines or SQLite store for the rules of file integrity)."""
    from transcript_doctor.stores import kinds

    every = kinds()
    wrong = set()
    for code, found in findings_by_code.items():
        declared = set(RULES[code].systems)
        for f in found:
            kind = every[f.format]
            family = "jsonl" if kind.jsonl else "sqlite" if f.format.endswith("-db") else None
            if not declared & {"all", kind.system, family}:
                wrong.add((code, kind.system))
    assert not wrong, sorted(wrong)

"""The labelled cases, as data: every store file beside a `<name>.expected.toml` (or `.json`).

Cases live in `tests/cases/<store-kind>/<name>.<ext>`; the shipped fixtures' labels sit beside
them in `fixtures/<store>/`. A SQLite case is a `.sql` script: the test builds the database from
it. The expected file lists `must_find` and `must_not_find` entries; an entry names a rule
(`code` or `name`) and, optionally, where (`session`, `line`, `row`, `table`, `position`) and
its fix (`fix`: the applicability, or "none" for no fix). A key left out (or null) matches
anything. A text store may have a `<name>.healed.<ext>` beside it: `tdoc heal --output` of the
case (with the spec's `heal_args`, e.g. `["--unsafe-fixes"]`) must produce exactly those bytes.
Adding a rule's positive and near-miss cases is adding files here.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests import chatlog  # noqa: F401  (registers the test-only chat-log store kind)
from transcript_doctor.cli import app
from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.rules import lookup

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "cases"
LABELLED_FIXTURES = [ROOT / "fixtures" / name for name in ("eve", "hermes", "opencode")]
WHERE = ("session", "line", "row", "table", "position")


@dataclass
class Case:
    expected: Path
    spec: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.expected.relative_to(ROOT))

    @property
    def kind(self) -> str | None:
        """The store kind the case's folder names (tests/cases/<kind>/), or the spec's format."""
        if self.expected.is_relative_to(CASES):
            return self.expected.parent.name
        return self.spec.get("format")

    def healed(self) -> Path | None:
        store = self.store()
        path = store.with_name(store.stem + ".healed" + store.suffix)
        return path if path.is_file() else None

    def store(self) -> Path:
        if "store" in self.spec:
            return self.expected.parent / self.spec["store"]
        stem = self.expected.name.split(".expected.")[0]
        found = [p for p in self.expected.parent.glob(stem + ".*") if not _is_label(p.name)]
        assert len(found) == 1, f"{self.name}: expected one store file named {stem}.*, found {found}"
        return found[0]


def _is_label(name: str) -> bool:
    return ".expected." in name or ".healed." in name


def _load(path: Path) -> dict[str, Any]:
    if path.suffix == ".toml":
        return tomllib.loads(path.read_text())
    return json.loads(path.read_text())


def all_cases() -> list[Case]:
    files = sorted(CASES.glob("*/*.expected.toml"))
    for folder in LABELLED_FIXTURES:
        files += sorted(folder.glob("*.expected.json"))
    return [Case(p, _load(p)) for p in files]


CASE_LIST = all_cases()


def materialise(store: Path, tmp: Path) -> Path:
    """A copy of the store to scan: a `.sql` script becomes the database it builds."""
    if store.suffix == ".sql":
        db = tmp / (store.stem + ".db")
        conn = sqlite3.connect(db)
        try:
            conn.executescript(store.read_text())
        finally:
            conn.close()
        return db
    dest = tmp / store.name
    shutil.copyfile(store, dest)
    return dest


def matches(entry: dict[str, Any], finding: dict[str, Any]) -> bool:
    rule = lookup(entry.get("code") or entry["name"])
    assert rule is not None, f"unknown rule in {entry}"
    if finding["code"] != rule.code:
        return False
    where = {"session": finding["session"], **finding["location"]}
    if any(entry.get(key) is not None and entry[key] != where[key] for key in WHERE):
        return False
    if "fix" in entry:
        applicability = finding["fix"]["applicability"] if finding["fix"] else "none"
        return entry["fix"] == applicability
    return True


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = {}
    for case in CASE_LIST:
        path = materialise(case.store(), tmp_path_factory.mktemp("case"))
        out[case.name] = scan(str(path), ScanConfig(jobs=1)).as_dict()
    return out


def test_there_are_cases_for_every_kind_folder() -> None:
    folders = {p.name for p in CASES.iterdir() if p.is_dir()}
    assert folders == {c.kind for c in CASE_LIST if c.expected.is_relative_to(CASES)}


@pytest.mark.parametrize("case", CASE_LIST, ids=lambda c: c.name)
def test_case_is_read_as_its_kind(case: Case, reports: dict[str, dict[str, Any]]) -> None:
    report = reports[case.name]
    assert report["files"][0]["error"] is None, report["files"][0]
    if case.kind is not None:
        assert report["files"][0]["format"] == case.kind


@pytest.mark.parametrize("case", CASE_LIST, ids=lambda c: c.name)
def test_must_find(case: Case, reports: dict[str, dict[str, Any]]) -> None:
    findings = reports[case.name]["findings"]
    missing = [e for e in case.spec.get("must_find", []) if not any(matches(e, f) for f in findings)]
    assert not missing, (missing, [(f["code"], f["location"]) for f in findings])


@pytest.mark.parametrize("case", CASE_LIST, ids=lambda c: c.name)
def test_must_not_find(case: Case, reports: dict[str, dict[str, Any]]) -> None:
    findings = reports[case.name]["findings"]
    wrong = [(e, f["location"]) for e in case.spec.get("must_not_find", []) for f in findings if matches(e, f)]
    assert not wrong, wrong


HEALED = [c for c in CASE_LIST if c.healed() is not None]


@pytest.mark.parametrize("case", HEALED, ids=lambda c: c.name)
def test_heal_produces_the_healed_result(case: Case, tmp_path: Path) -> None:
    store = materialise(case.store(), tmp_path)
    out = tmp_path / ("healed" + store.suffix)
    args = ["heal", str(store), "--output", str(out), "--no-config", *case.spec.get("heal_args", [])]
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1), result.output
    assert out.read_bytes() == case.healed().read_bytes()  # type: ignore[union-attr]


@pytest.mark.parametrize("case", CASE_LIST, ids=lambda c: c.name)
def test_case_says_something(case: Case) -> None:
    assert case.spec.get("must_find") or case.spec.get("must_not_find"), f"{case.name} labels nothing"

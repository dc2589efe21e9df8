"""`--format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run. `tool.driver.rules` is the whole catalogue in code order, so `ruleIndex` is stable.
Paths are URIs relative to the working directory (`%SRCROOT%`), forward slashes; inputs outside
it get absolute `file://` URIs. JSONL findings carry a line region; SQLite findings carry the
database file plus a logical location (session / table / row). `partialFingerprints` hashes what
identifies a finding (rule, file, session, record, message), never run-specific data. Inputs tdoc
could not read become error notifications of the invocation.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from .. import __version__
from ..core import Report
from ..encode import dumps
from ..model import FileResult, Finding
from ..rules import RULES, Rule

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "tdocFinding/v1"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def render(report: Report, out: TextIO) -> None:
    out.write(dumps(to_sarif(report), indent=True))
    out.write("\n")


def to_sarif(report: Report, base: Path | None = None) -> dict[str, Any]:
    """The SARIF log of a report; paths are made relative to `base` (default: the working directory)."""
    base = (base or Path.cwd()).resolve()
    rules = sorted(RULES.values(), key=lambda r: r.code)
    index = {rule.code: i for i, rule in enumerate(rules)}
    artifacts = {fr.path: i for i, fr in enumerate(report.files)}
    run = {
        "tool": {
            "driver": {
                "name": "tdoc",
                "fullName": "tdoc, the transcript doctor",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule(rule) for rule in rules],
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": base.as_uri().rstrip("/") + "/"}},
        "artifacts": [_artifact(fr, base) for fr in report.files],
        "invocations": [_invocation(report, base, artifacts)],
        "results": [_result(f, index, artifacts, base) for f in report.findings],
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def repo_relative(path: str, base: Path) -> str | None:
    """`path` relative to `base` with forward slashes, or None when it lies outside `base`."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(base).as_posix()
    except ValueError:
        return None


def _artifact_location(path: str, base: Path, index: int | None = None) -> dict[str, Any]:
    rel = repo_relative(path, base)
    if rel is None:
        loc: dict[str, Any] = {"uri": Path(os.path.abspath(path)).as_uri()}
    else:
        loc = {"uri": quote(os.fsencode(rel), safe="/"), "uriBaseId": SRCROOT}  # a non-UTF-8 name as its bytes
    if index is not None:
        loc["index"] = index
    return loc


def _rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary or rule.name},
        "fullDescription": {"text": _first_paragraph(rule.doc) or rule.summary or rule.name},
        "help": {"text": rule.doc or rule.summary, "markdown": rule.doc or rule.summary},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {
            "tags": ["tdoc", rule.family, *(f"system:{s}" for s in rule.systems)],
            "fix": rule.fix,
        },
    }


def _first_paragraph(doc: str) -> str:
    paragraphs = [p.strip() for p in doc.split("\n\n") if p.strip() and not p.lstrip().startswith("#")]
    return paragraphs[0] if paragraphs else ""


def _artifact(fr: FileResult, base: Path) -> dict[str, Any]:
    return {
        "location": _artifact_location(fr.path, base),
        "roles": ["analysisTarget"],
        "properties": {"format": fr.format, "sessions": fr.sessions, "records": fr.records},
    }


def _invocation(report: Report, base: Path, artifacts: dict[str, int]) -> dict[str, Any]:
    failed = [fr for fr in report.files if fr.error]
    return {
        "executionSuccessful": not failed,
        "toolExecutionNotifications": [
            {
                "level": "error",
                "message": {"text": f"could not scan {fr.path}: {fr.error}"},
                "locations": [
                    {"physicalLocation": {"artifactLocation": _artifact_location(fr.path, base, artifacts[fr.path])}}
                ],
            }
            for fr in failed
        ],
    }


def _result(f: Finding, index: dict[str, int], artifacts: dict[str, int], base: Path) -> dict[str, Any]:
    location: dict[str, Any] = {
        "physicalLocation": {"artifactLocation": _artifact_location(f.path, base, artifacts.get(f.path))}
    }
    if f.line is not None:
        region = {"startLine": f.line}
        if f.end_line is not None and f.end_line >= f.line:
            region["endLine"] = f.end_line
        location["physicalLocation"]["region"] = region
    logical = _logical(f)
    if logical:
        location["logicalLocations"] = logical
    return {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": LEVELS[f.severity],
        "message": {"text": f.message},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint(f, base)},
        "properties": {
            "format": f.format,
            "session": f.session,
            "position": f.position,
            "engine": f.engine,
            "fix": f.fix.applicability if f.fix else None,
            "evidence": f.evidence,
        },
    }


def _logical(f: Finding) -> list[dict[str, Any]]:
    """Session / table / row of a database finding (no line to point at)."""
    if f.row is None and f.table is None:
        return []
    record = f"{f.table or 'row'}#{f.row}" if f.row is not None else f.table
    qualified = f"{f.session}/{record}" if f.session else record
    return [{"name": str(record), "fullyQualifiedName": str(qualified), "kind": "object"}]


def fingerprint(f: Finding, base: Path) -> str:
    """A hash of what identifies a finding across runs: never times, never absolute paths."""
    where = repo_relative(f.path, base) or f.path
    parts = [f.code, where, f.session or "", f.table or "", str(f.row or ""), str(f.line or ""), f.message]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def failed_run(message: str, out: TextIO) -> None:
    """A valid SARIF log for a scan that could not start (no input, a bad selector): no results,
    one error notification that says why, so `upload-sarif` shows the cause instead of failing."""
    log = to_sarif(_EMPTY)
    invocation = log["runs"][0]["invocations"][0]
    invocation["executionSuccessful"] = False
    invocation["toolExecutionNotifications"] = [{"level": "error", "message": {"text": message}}]
    out.write(dumps(log, indent=True))
    out.write("\n")


_EMPTY = Report([])

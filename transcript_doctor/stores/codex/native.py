"""Findings only the Codex store can see: W121-W123 on sent items, F501/F502, recorded 400s (E601).

Items a rollback removed or a compaction replaced are not sent, so their problems are not
reported. A store-rule fix rewrites the item's line without changing its byte length
(`edits.rewrite_line`); every finding on one line carries the same edit, built from all the
selected problems of that line, so the heal plan applies it once.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...model import Edit, Finding, Fix, Severity
from ...patterns import match_rejection, unwrap
from ...rules.registry import finding
from ...text import excerpt
from .edits import OFFSETS_NOTE, read_line, rewrite_line
from .issues import STORE_CODES, Issue, rewrite_payload
from .reader import Rollout
from .reconstruct import Request, normalise, rebuild

MAX_MAPPED_ERRORS = 50  # recorded errors mapped to a line (each rebuilds the history up to it)


def positions(request: Request) -> dict[tuple[int, int | None], int | None]:
    """(line, replacement index) -> input position, for every item of the history."""
    return {(e.item.line, e.item.index): e.position for e in request.entries if e.item.source != "synthetic"}


def store_findings(path: Path, display: str, fmt: str, rollout: Rollout, request: Request,
                   codes: frozenset[str]) -> Iterator[Finding]:
    at = positions(request)
    live = [i for i in rollout.issues if i.code in codes and (i.line, i.index) in at]
    by_line: dict[int, list[Issue]] = {}
    for issue in live:
        by_line.setdefault(issue.line, []).append(issue)
    for line, issues in by_line.items():
        fix = _line_fix(path, rollout, line, issues, frozenset(i.code for i in issues))
        for issue in issues:
            evidence: dict[str, Any] = dict(issue.evidence)
            if issue.index is not None:
                evidence["replacement_index"] = issue.index
            yield finding(issue.code, issue.message, path=display, format=fmt, session=rollout.session,
                          line=line, end_line=line, position=at[(line, issue.index)], fix=fix, evidence=evidence)


def _line_fix(path: Path, rollout: Rollout, line: int, issues: list[Issue], codes: frozenset[str]) -> Fix | None:
    indexes = {i.index for i in issues}

    def change(obj: dict[str, Any], lean: bool) -> bool:
        changed = False
        for payload in _payloads(obj, indexes):
            changed = rewrite_payload(payload, codes, lean) or changed
        return changed

    result = rewrite_line(path, rollout, line, change)
    if result is None:
        return None
    text, same_length = result
    names = "/".join(sorted(codes))
    if same_length:
        return Fix("safe", f"rewrite line {line} ({names}) keeping its byte length", (Edit("replace", line=line, text=text),))
    return Fix("unsafe", f"rewrite line {line} ({names}); the new line is longer: {OFFSETS_NOTE}",
               (Edit("replace", line=line, text=text),))


def _payloads(obj: dict[str, Any], indexes: set[int | None]) -> Iterator[dict[str, Any]]:
    payload = obj.get("payload")
    if not isinstance(payload, dict):
        yield obj  # a legacy bare item
        return
    if obj.get("type") == "compacted":
        history = payload.get("replacement_history") or []
        for index in sorted(i for i in indexes if i is not None):
            if index < len(history) and isinstance(history[index], dict):
                yield history[index]
        return
    yield payload


def integrity_findings(path: Path, display: str, fmt: str, rollout: Rollout, codes: frozenset[str]) -> Iterator[Finding]:
    for problem in rollout.problems:
        if problem.torn and "F501" in codes:
            raw = read_line(path, rollout, problem.line)
            fix = Fix("safe", f"blank the torn last line {problem.line} with spaces (same byte length)",
                      (Edit("replace", line=problem.line, text=" " * len(raw)),))
            yield finding("F501", f"line {problem.line} is an unfinished last record (no newline): {excerpt(problem.detail, 120)}",
                          path=display, format=fmt, session=rollout.session, line=problem.line, end_line=problem.line,
                          fix=fix, evidence={"byte_offset": problem.offset})
        elif not problem.torn and "F502" in codes:
            yield finding("F502", f"line {problem.line} is not a JSON object ({excerpt(problem.detail, 120)}); "
                          "Codex skips it, so whatever it recorded is lost on resume",
                          path=display, format=fmt, session=rollout.session, severity="warning",
                          line=problem.line, end_line=problem.line, evidence={"byte_offset": problem.offset})


def recorded_errors(display: str, fmt: str, rollout: Rollout, target: str) -> Iterator[Finding]:
    """E601: a recorded provider error that says the history was malformed, mapped to its item.

    When the error's cause is a store rule and that item no longer has the problem (healed), the
    record is history, not a wedge: it is reported at info.
    """
    present = {(i.code, i.line) for i in rollout.issues}
    for n, (line, text) in enumerate(rollout.errors):
        match = match_rejection(text)
        if match is None:
            continue
        evidence: dict[str, Any] = {"pattern": match.pattern.id, "provider": match.pattern.provider,
                                    "rule": match.pattern.rule, "error": excerpt(text), "position": match.position}
        where = ""
        if match.position is not None and n < MAX_MAPPED_ERRORS:
            item = evidence["item"] = locate_at(rollout, match.position, target, before_line=line)
            where = f"; input[{match.position}] is line {item['line']} ({item['kind']})" if item else ""
        severity: Severity | None = None
        cause = match.pattern.rule
        if cause in STORE_CODES and evidence.get("item") and (cause, evidence["item"]["line"]) not in present:
            severity, where = "info", where + f"; that item no longer has the {cause} problem"
        yield finding("E601", f"recorded provider error at line {line} ({match.pattern.id}, points at "
                      f"{match.pattern.rule}): {excerpt(unwrap(text).message, 160)}{where}",
                      path=display, format=fmt, session=rollout.session, line=line, end_line=line,
                      severity=severity, evidence=evidence)


def locate_at(rollout: Rollout, position: int, target: str, before_line: int | None = None) -> dict[str, Any] | None:
    """The item at `input[position]` of the request built from the lines before `before_line`."""
    request = normalise(rebuild(rollout.events, before_line).items, target)
    for entry in request.entries:
        if entry.position == position:
            item = entry.item
            return {"line": item.line, "kind": item.kind, "role": item.role, "call_id": item.call_id,
                    "source": item.source, "replacement_index": item.index}
    return None


__all__ = ["STORE_CODES", "integrity_findings", "locate_at", "recorded_errors", "store_findings"]

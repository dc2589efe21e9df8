"""The heal plan for line-based stores whose fixes are plain line edits (eve streams, ...).

The findings' edits are merged into one plan; a fix whose edits disagree with edits already
taken is skipped and reported, never applied half. The heal pipeline writes the plan (dry run,
`--output` or `--in-place`) and scans the written file again (docs/heal.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..heal.plan import HealPlan, LineWrite
from ..model import Finding
from .fingerprint import Fingerprint
from .jsonl import LinePlan


def plan_lines(findings: list[Finding]) -> tuple[LinePlan, list[Finding], list[dict[str, Any]]]:
    """One plan from the findings' edits: (plan, findings applied, findings skipped)."""
    plan = LinePlan()
    applied: list[Finding] = []
    skipped: list[dict[str, Any]] = []
    for f in findings:
        edits = f.fix.edits if f.fix else ()
        if not edits or any(e.line is None or e.op not in ("delete", "replace") for e in edits):
            skipped.append({"code": f.code, "line": f.line, "reason": "no line edits to apply"})
        elif plan.conflicts_with(edits):
            skipped.append({"code": f.code, "line": f.line, "reason": "its edits overlap another fix's"})
        else:
            for edit in edits:
                plan.add(edit)
            applied.append(f)
    return plan, applied, skipped


def line_heal_plan(path: Path, findings: list[Finding]) -> HealPlan:
    """The pipeline's plan: the applied findings' edits, written as line edits."""
    read_as = Fingerprint.of(path) if path.is_file() else None
    lines, applied, skipped = plan_lines(findings)
    edits = [e for f in applied for e in (f.fix.edits if f.fix else ())]
    write = LineWrite(tuple(edits)) if lines else None
    return HealPlan(applied=applied, skipped=skipped, edits=edits, write=write, read_as=read_as)

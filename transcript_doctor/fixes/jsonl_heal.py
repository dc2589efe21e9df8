"""A heal for line-based stores whose fixes are plain line edits (eve streams, ...).

The findings' edits are merged into one plan; a fix whose edits disagree with edits already
taken is skipped and reported, never applied half. Writing follows the same path as every
JSONL heal: dry run (summary or `--diff`), `--output`, or `--in-place` with a backup, an atomic
replace and a refusal (exit 3) when the file changed since tdoc read it. The caller
(`healing.heal_one`) scans the written file again and restores the backup if a fix did not hold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..model import Finding, TdocError
from ..stores.base import HealOptions, HealResult
from .atomic import Fingerprint, backup_path_for, check_writable, make_backup, restore, write_atomic
from .jsonl import LinePlan, apply_lines, unified_diff


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


def heal_lines(store: Any, findings: list[Finding], options: HealOptions) -> HealResult:
    path: Path = store.path
    expected = Fingerprint.of(path)
    plan, applied, skipped = plan_lines(findings)
    result = HealResult(path=store.display, format=store.format, applied=applied, skipped=skipped)
    result.edits = [e.as_dict() for f in applied for e in f.fix.edits]  # type: ignore[union-attr]
    result.changed = bool(plan)
    if not plan:
        return result
    if options.diff:
        with open(path, "rb") as src:
            result.diff = unified_diff(src, plan, store.display, store.display + " (healed)")
    if options.mode == "dry-run":
        return result

    def produce(out: Any) -> None:
        with open(path, "rb") as src:
            apply_lines(src, out, plan)

    if options.mode == "output":
        target = Path(options.output)  # type: ignore[arg-type]
        if target.resolve() == path.resolve():
            raise TdocError("--output names the input file; use --in-place to rewrite it")
        write_atomic(target, produce, mode=path.stat().st_mode & 0o777, expected=expected, original=path)
        result.output, result.written = str(target), True
        return result
    st = check_writable(path)
    backup = make_backup(path, backup_path_for(path, options.backup_dir), st.st_mode & 0o7777)
    try:
        write_atomic(path, produce, mode=st.st_mode & 0o7777, expected=expected)
    except BaseException:
        backup.unlink(missing_ok=True)
        raise
    result.backup, result.output, result.written = str(backup), str(path), True
    return result


def restore_lines(store: Any, backup: Path) -> None:
    restore(backup, store.path, store.path.stat().st_mode & 0o7777)

"""`tdoc heal` for Claude Code transcripts: one joint plan, verified before the pipeline writes it.

The chosen findings' intents are planned together (`plan.Planner`); the healed file is written to a
temporary file and verified (`verify.verify`: the resume replay equals the planned one, every
record is present once, no fixed finding survives a re-scan). The store hands the heal pipeline
(docs/heal.md) the line edits and the SHA-256 of the verified bytes; the pipeline previews, backs
up, writes and re-verifies. `--in-place` is refused (exit 3) while a `claude` process has the file
open, or when the file changed since tdoc read it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ...fixes.blocks import iter_applied_blocks
from ...fixes.fingerprint import Fingerprint
from ...fixes.jsonl import LinePlan
from ...heal.plan import HealPlan, LineWrite
from ...model import Edit, Finding, RefusedError, TdocError
from ..base import HealOptions
from .live import claude_holders
from .plan import Intent, Plan
from .reader import Transcript
from .verify import OtherBranch, verify

if TYPE_CHECKING:
    from .store import ClaudeCodeStore


def refuse_if_live(path: Path, display: str) -> None:
    holders = claude_holders(path)
    if holders:
        pids = ", ".join(map(str, holders[:5]))
        raise RefusedError(f"{display}: a claude process (pid {pids}) has the session open; close it and heal again")


def _refuse_if_changed(store: ClaudeCodeStore, expected: Fingerprint) -> None:
    if store.fingerprint is not None and not expected.matches(store.path):
        raise RefusedError(f"{store.display}: changed since tdoc read it (is the session running?); left untouched")


def _line_plan(plan: Plan, extra: list[Edit]) -> LinePlan:
    lines = LinePlan()
    for number, text in plan.lines.items():
        lines.add(Edit("delete", line=number) if text is None else Edit("replace", line=number, text=text))
    for edit in extra:
        if edit.line not in lines.changes:
            lines.add(edit)
    return lines


def plan_heal(store: ClaudeCodeStore, findings: list[Finding], options: HealOptions,
              rescan: Callable[[Transcript], list[Finding]]) -> HealPlan:  # fmt: skip
    """The pipeline's plan: the verified line edits and the hash of the healed bytes.

    When removing the records that end the resumed chain would make the session resume another
    branch, the fixes that remove them are left out (reported as skipped, the findings kept: the
    heal exits 1) and the rest is planned and verified again, once."""
    if options.mode == "in-place":
        refuse_if_live(store.path, store.display)
    expected = store.fingerprint or Fingerprint.of(store.path)
    try:
        return _planned(store, findings, options, rescan, expected)
    except OtherBranch as flip:
        held = [f for f in findings if _touches(store, f, flip.tail)]
        if not held:
            raise
        rest = [f for f in findings if all(f is not h for h in held)]
        uuids = frozenset(store.transcript.records[i].uuid or "" for i in flip.tail) - {""}
        out = _planned(store, rest, options, rescan, expected, uuids)
        out.skipped = [{"code": f.code, "line": f.line, "reason": BRANCH_KEPT} for f in held] + out.skipped
        out.kept = frozenset(str(f.subject) for f in held if f.subject is not None)
        return out


BRANCH_KEPT = ("removing it would make the session resume another branch (it ends the resumed chain "
               "and an older branch ends later in the file)")


def _touches(store: ClaudeCodeStore, f: Finding, records: set[int]) -> bool:
    """Whether the fix of `f` removes or edits one of `records`."""
    return any(it.record in records for it in store.editor.intents_of(f.fix))


def _planned(store: ClaudeCodeStore, findings: list[Finding], options: HealOptions,
             rescan: Callable[[Transcript], list[Finding]], expected: Fingerprint,
             kept_uuids: frozenset[str] = frozenset()) -> HealPlan:  # fmt: skip
    intents: list[Intent] = []
    plain: list[Edit] = []
    for f in findings:
        own = store.editor.intents_of(f.fix)
        if own:
            intents.extend(own)
        elif f.fix is not None:
            plain.extend(f.fix.edits)
    plan = store.editor.planner.plan(intents)
    lines = _line_plan(plan, plain)
    edits = sorted(_edits(lines), key=lambda e: e.line or 0)
    out = HealPlan(applied=list(findings), warnings=list(plan.refused), edits=edits, read_as=expected)
    out.extra = {"removed_records": len(plan.removed), "added_records": len(plan.added),
                 "relinked_records": len(plan.relinked), "split_lines": sum(
                     1 for c in store.transcript.concatenated if c.line in plan.lines)}  # fmt: skip
    if not lines:
        return out
    out.write = LineWrite(tuple(edits), _verified_sha256(store, plan, lines, findings, rescan, expected, kept_uuids))
    if options.mode == "dry-run":
        out.remaining = []
    return out


def _verified_sha256(store: ClaudeCodeStore, plan: Plan, lines: LinePlan, findings: list[Finding],
                     rescan: Callable[[Transcript], list[Finding]], expected: Fingerprint,
                     kept_uuids: frozenset[str]) -> str:  # fmt: skip
    """Write the healed bytes to a temporary file, verify them, and return their SHA-256."""
    tmp, digest = _write_temp(store.path, lines)
    try:
        try:
            verify(store.transcript, store.resume.cli, plan, tmp, store.display, rescan, {f.code for f in findings},
                   kept_uuids)
        except TdocError:
            _refuse_if_changed(store, expected)  # a writer appended while tdoc worked: that, not the plan
            raise
        _refuse_if_changed(store, expected)
    finally:
        tmp.unlink(missing_ok=True)
    return digest


def _edits(lines: LinePlan) -> list[Edit]:
    return [Edit("delete", line=n) if v is None else Edit("replace", line=n, text=v.decode("utf-8"))
            for n, v in lines.changes.items()]  # fmt: skip


def _write_temp(source: Path, lines: LinePlan) -> tuple[Path, str]:
    fd, name = tempfile.mkstemp(prefix="tdoc-claude-heal-", suffix=".jsonl")
    digest = hashlib.sha256()
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb", buffering=0) as src:
            for chunk in iter_applied_blocks(src, lines):
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name), digest.hexdigest()

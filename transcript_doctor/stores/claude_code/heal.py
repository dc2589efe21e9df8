"""`tdoc heal` for Claude Code transcripts: one joint plan, verified before anything is replaced.

The chosen findings' intents are planned together (`plan.Planner`), the healed file is written to a
temporary file beside the target and verified (`verify.verify`), then put in place: `--output`
writes a copy, `--in-place` backs up, replaces atomically and refuses (exit 3) when a `claude`
process has the file open or the file changed since tdoc read it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ...fixes.atomic import (
    Fingerprint,
    backup_path_for,
    check_writable,
    make_backup,
    write_atomic,
)
from ...fixes.jsonl import LinePlan, apply_lines, unified_diff
from ...model import Edit, Finding, RefusedError, TdocError
from ..base import HealOptions, HealResult
from .live import claude_holders
from .plan import Intent, Plan
from .reader import Transcript
from .verify import verify

if TYPE_CHECKING:
    from .store import ClaudeCodeStore


def refuse_if_live(path: Path, display: str) -> None:
    holders = claude_holders(path)
    if holders:
        pids = ", ".join(map(str, holders[:5]))
        raise RefusedError(f"{display}: a claude process (pid {pids}) has the session open; close it and heal again")


def _refuse_if_changed(store: ClaudeCodeStore, expected: Fingerprint) -> None:
    if store.fingerprint is not None and Fingerprint.of(store.path) != expected:
        raise RefusedError(f"{store.display}: changed since tdoc read it (is the session running?); left untouched")


def _line_plan(plan: Plan, extra: list[Edit]) -> LinePlan:
    lines = LinePlan()
    for number, text in plan.lines.items():
        lines.add(Edit("delete", line=number) if text is None else Edit("replace", line=number, text=text))
    for edit in extra:
        if edit.line not in lines.changes:
            lines.add(edit)
    return lines


def heal_store(store: ClaudeCodeStore, findings: list[Finding], options: HealOptions,
               rescan: Callable[[Transcript], list[Finding]]) -> HealResult:  # fmt: skip
    if options.mode == "in-place":
        refuse_if_live(store.path, store.display)
    expected = store.fingerprint or Fingerprint.of(store.path)
    intents: list[Intent] = []
    plain: list[Edit] = []
    applied: list[Finding] = []
    for f in findings:
        own = store.editor.intents_of(f.fix)
        if own:
            intents.extend(own)
        elif f.fix is not None:
            plain.extend(f.fix.edits)
        applied.append(f)
    plan = store.editor.planner.plan(intents)
    result = HealResult(path=store.display, format=store.format, applied=applied)
    result.warnings.extend(plan.refused)
    lines = _line_plan(plan, plain)
    result.edits = [e.as_dict() for e in sorted(_edits(lines), key=lambda e: e.line or 0)]
    result.changed = bool(lines)
    result.extra = {"removed_records": len(plan.removed), "added_records": len(plan.added),
                    "relinked_records": len(plan.relinked), "split_lines": sum(
                        1 for c in store.transcript.concatenated if c.line in plan.lines)}  # fmt: skip
    if not lines:
        return result
    if options.diff:
        with open(store.path, "rb") as src:
            result.diff = unified_diff(src, lines, store.display, store.display + " (healed)")
    target = _target(store, options)
    _refuse_if_changed(store, expected)
    tmp = _write_temp(store.path, lines, target.parent if target else None)
    try:
        fixed = {f.code for f in applied}
        try:
            verify(store.transcript, plan, tmp, store.display, rescan, fixed)
        except TdocError:
            _refuse_if_changed(store, expected)  # a writer appended while tdoc worked: that, not the plan
            raise
        if target is not None:
            _put(store, options, target, tmp, expected, result)
    finally:
        tmp.unlink(missing_ok=True)
    return result


def _edits(lines: LinePlan) -> list[Edit]:
    return [Edit("delete", line=n) if v is None else Edit("replace", line=n, text=v.decode("utf-8"))
            for n, v in lines.changes.items()]  # fmt: skip


def _target(store: ClaudeCodeStore, options: HealOptions) -> Path | None:
    if options.mode == "dry-run":
        return None
    if options.mode == "output":
        target = Path(options.output)  # type: ignore[arg-type]
        if target.resolve() == store.path.resolve():
            raise TdocError("--output names the input file; use --in-place to rewrite it")
        return target
    return store.path


def _write_temp(source: Path, lines: LinePlan, directory: Path | None) -> Path:
    fd, name = tempfile.mkstemp(prefix=".tdoc-heal-", suffix=".jsonl", dir=directory)
    try:
        with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
            apply_lines(src, out, lines)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


def _copy_from(tmp: Path) -> Callable[[IO[bytes]], None]:
    def produce(out: IO[bytes]) -> None:
        with open(tmp, "rb") as src:
            shutil.copyfileobj(src, out, 1 << 20)

    return produce


def _put(store: ClaudeCodeStore, options: HealOptions, target: Path, tmp: Path, expected: Fingerprint,
         result: HealResult) -> None:  # fmt: skip
    if options.mode == "output":
        write_atomic(target, _copy_from(tmp), mode=store.path.stat().st_mode & 0o777, expected=expected,
                     original=store.path)  # fmt: skip
        result.output, result.written = str(target), True
        return
    st = check_writable(store.path)
    backup = make_backup(store.path, backup_path_for(store.path, options.backup_dir), st.st_mode & 0o7777)
    try:
        refuse_if_live(store.path, store.display)
        write_atomic(store.path, _copy_from(tmp), mode=st.st_mode & 0o7777, expected=expected)
    except BaseException:
        backup.unlink(missing_ok=True)
        raise
    result.backup, result.output, result.written = str(backup), str(store.path), True

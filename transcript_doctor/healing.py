"""`tdoc heal`: scan, hand the fixable findings to the store, re-verify what was written.

A store either verifies the exact bytes it writes itself (kimi journals: the healed journal is
replayed and checked before the write, and the written bytes must hash to the verified ones),
or tdoc scans the result again after the write. If a finding it fixed is still there, the backup
is restored and tdoc fails (exit 2): a heal does what it said or leaves the store as it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

import orjson
from rich.console import Console
from rich.text import Text

from .core import ScanConfig, check_store, iter_inputs
from .model import Finding, RefusedError, TdocError
from .stores import HealOptions, HealResult, open_store
from .text import terminal_safe


def allowed(f: Finding, options: HealOptions) -> bool:
    if f.fix is None or not f.fix.edits:
        return False
    return f.fix.applicability == "safe" or (options.unsafe_fixes and f.fix.applicability == "unsafe")


def identity(f: Finding) -> tuple[Any, ...]:
    """What stays the same about a finding when lines shift: its code, session and subject."""
    ev = f.evidence or {}
    subject = ev.get("step") or ev.get("toolCallId") or ev.get("message_id") or f.row or f.message
    return (f.code, f.session, str(subject))


def heal_one(path: Path, display: str, config: ScanConfig, options: HealOptions) -> HealResult:
    config.options.fingerprint = True  # a heal in any mode refuses a journal that changes while it works
    store = open_store(path, display, config.options, config.input_format)
    try:
        findings = check_store(store, config, config.codes(display))
        fixable = [f for f in findings if allowed(f, options)]
        if not fixable:
            result = HealResult(path=display, format=store.format)
            result.remaining = findings
            return result
        result = store.heal(fixable, options)
    finally:
        store.close()
    if result.written and not result.verified:
        _reverify(result, store, config, options)
    if result.written and not options.backup and result.backup:
        Path(result.backup).unlink(missing_ok=True)
        result.backup = None
    return result


def _reverify(result: HealResult, store: Any, config: ScanConfig, options: HealOptions) -> None:
    target = Path(result.output or store.path)
    after = open_store(target, result.output or store.display, config.options, config.input_format)
    try:
        remaining = check_store(after, config, config.codes(store.display))
    finally:
        after.close()
    skipped = {(s.get("code"), str(s.get("step") or s.get("row") or s.get("line"))) for s in result.skipped}
    fixed = {identity(f) for f in result.applied}
    survivors = [
        f for f in remaining if allowed(f, options) and identity(f) in fixed and (f.code, identity(f)[2]) not in skipped
    ]
    result.remaining = remaining
    if not survivors:
        return
    if options.mode == "in-place" and result.backup:
        store.restore(Path(result.backup))
        raise TdocError(
            f"{store.display}: {survivors[0].code} survived the heal; the original was restored from {result.backup}"
        )
    raise TdocError(f"{result.output}: {survivors[0].code} survived the heal; do not use this output")


def heal_paths(paths: Iterable[str], config: ScanConfig, options: HealOptions) -> tuple[list[HealResult], int]:
    results: list[HealResult] = []
    code = 0
    paths = list(paths)
    if "-" in paths and options.mode == "in-place":
        raise TdocError("standard input cannot be healed in place; use --output PATH (or a dry run)")
    inputs = iter_inputs(paths)
    if options.mode == "output" and len(inputs) != 1:
        raise TdocError("--output takes exactly one input store")
    for path, display in inputs:
        try:
            results.append(heal_one(path, display, config, options))
        except RefusedError as exc:
            results.append(_failed(display, str(exc)))
            code = max(code, 3)
        except TdocError as exc:
            results.append(_failed(display, str(exc)))
            code = 3 if code == 3 else 2
    if code:
        return results, code
    kept = any(s.get("step") is not None for r in results for s in r.skipped)  # a step the heal had to keep
    if options.mode == "dry-run":
        return results, 1 if kept or any(r.changed for r in results) else 0
    left = any(allowed(f, options) and not _declared_unfixable(r, f) for r in results for f in r.remaining)
    return results, 1 if left or kept else 0


def _declared_unfixable(result: HealResult, f: Finding) -> bool:
    """A finding whose fix the store's heal checked and refused (kept steps): not fixable."""
    kept = {s.get("step") for s in result.skipped if s.get("step") is not None}
    if not kept:
        return False
    ev = f.evidence or {}
    return ev.get("step") in kept or bool(kept & set(ev.get("dropped_steps") or ()))


def _failed(display: str, message: str) -> HealResult:
    result = HealResult(path=display, format="")
    result.warnings.append(message)
    result.extra["error"] = message
    return result


# --------------------------------------------------------------------------- output


def render_heal(results: list[HealResult], fmt: str, out: TextIO, err: Console) -> None:
    if fmt == "json":
        doc = {"schema_version": 1, "results": [_result_dict(r) for r in results]}
        out.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
        for r in results:
            if r.extra.get("error"):
                err.print(Text(f"tdoc: {r.path}: {r.extra['error']}"))
        return
    console = Console(file=out, highlight=False, markup=False, emoji=False, soft_wrap=True)
    for r in results:
        _human(console, r, err)


def _result_dict(r: HealResult) -> dict[str, Any]:
    doc = r.as_dict()
    doc["error"] = r.extra.get("error")
    doc["diff"] = r.diff
    return doc


def _human(console: Console, r: HealResult, err: Console) -> None:
    if r.extra.get("error"):
        err.print(Text(terminal_safe(f"tdoc: error: {r.extra['error']}")))
        return
    if not r.changed:
        console.print(Text(terminal_safe(f"{r.path}: nothing to heal"), style="yellow" if r.skipped else "green"))
        _kept_lines(console, r)
        return
    if r.diff and not r.written:
        console.print(Text(terminal_safe(r.diff)))
    verb = "healed" if r.written else "would heal"
    codes = sorted({f.code for f in r.applied})
    line = f"{r.path}: {verb} {len(r.applied)} finding(s) ({', '.join(codes)}) with {len(r.edits)} edit(s)"
    if r.output and r.output != r.path:
        line += f" -> {r.output}"
    console.print(Text(terminal_safe(line), style="bold"))
    if r.backup:
        console.print(Text(terminal_safe(f"  backup: {r.backup}")))
    _kept_lines(console, r)
    for w in r.warnings:
        console.print(Text(terminal_safe(f"  warning: {w}"), style="yellow"))
    if not r.written:
        console.print(Text("  dry run: nothing written (use --in-place or --output PATH)", style="dim"))


def _kept_lines(console: Console, r: HealResult) -> None:
    for s in r.skipped:
        where = s.get("step") or s.get("row") or s.get("line")
        line = f" (line {s['line']})" if s.get("step") is not None and s.get("line") else ""
        console.print(Text(terminal_safe(f"  kept {where}{line}: {s['reason']}"), style="yellow"))

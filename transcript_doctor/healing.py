"""`tdoc heal` over many inputs: run the heal pipeline on each, collect results, pick the exit code.

The stages for one store are in `transcript_doctor.heal.pipeline` (docs/heal.md); this module
expands the inputs, turns refusals and errors into per-input results, and decides the exit code:
3 if any store was refused (in use, changed), 2 for any other error, otherwise 1 when a store kept
a fix it checked and refused, (dry run) when something would change, (write) when something
fixable is left — including fixes that need `--unsafe-fixes` — and 0 when not.
"""

from __future__ import annotations

from collections.abc import Iterable

from .core import ScanConfig, iter_inputs
from .heal.pipeline import allowed, heal_one, identity, needs_unsafe
from .heal.render import render_heal
from .model import RefusedError, TdocError
from .stores import HealOptions, HealResult

__all__ = ["allowed", "heal_paths", "identity", "render_heal"]


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
    kept = any(r.kept for r in results)  # a fix the store checked and had to refuse: not healed
    if options.mode == "dry-run":
        return results, 1 if kept or any(r.changed or r.needs_unsafe for r in results) else 0
    return results, 1 if kept or any(_left(r, options) for r in results) else 0


def _left(result: HealResult, options: HealOptions) -> bool:
    """Something fixable is left: a fix that may be applied or one that needs --unsafe-fixes.
    (Findings whose fix the store kept are counted through `kept`, not again here.)"""
    for f in result.remaining:
        if needs_unsafe(f, options):
            return True
        if allowed(f, options) and (f.subject is None or f.subject not in result.kept):
            return True
    return False


def _failed(display: str, message: str) -> HealResult:
    result = HealResult(path=display, format="")
    result.warnings.append(message)
    result.extra["error"] = message
    return result

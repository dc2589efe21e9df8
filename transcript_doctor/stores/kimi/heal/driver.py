"""The kimi-code heal (docs/kimi-code.md §Heal): remove vacuous steps, re-align legacy
compaction counts, drop a torn tail; verified by one replay of the healed journal.

The plan is made in memory from what the scan replay recorded (heal/plan.py), then verified by
one streamed replay of the whole healed journal, the same one that is hashed for the write
(heal/verify.py). Only when that fails are the failing steps found by bisection and demoted
(tombstone, then keep).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ....fixes.jsonl import LinePlan, iter_applied
from ....model import Edit, Finding, TdocError
from ...base import HealOptions, HealResult
from ..replay.driver import KimiReplay, replay_stream
from .plan import KimiPlan, initial_plan
from .verify import verify_plan

STEP_CODES = ("W101", "C203", "C201")


def plan_heal(state: KimiReplay, findings: Iterable[Finding], *, writing: bool = True) -> KimiPlan:
    """Turn the selected findings into a verified plan. `writing`: the plan will be written, so
    keep the SHA-256 of the verified bytes (the write compares what it writes with it) and a
    replay of them the checks can run on; a dry run needs neither, only the two engines' verdict."""
    wanted: list[Any] = []
    other: list[Edit] = []
    for f in findings:
        if f.code in STEP_CODES and f.fix:
            wanted.extend(_steps_of(state, f.fix.edits))
        elif f.fix:
            other.extend(f.fix.edits)
    order = {uuid: i for i, uuid in enumerate(state.steps.steps)}
    candidates = sorted(set(wanted), key=order.__getitem__)
    plan = initial_plan(state, candidates, other, writing)
    if plan.edits(state):
        verify_plan(state, plan)
    plan.settle(state)
    _turn_clock(state, plan)
    return plan


def _steps_of(state: KimiReplay, edits: Iterable[Edit]) -> list[Any]:
    """The steps whose `step.begin` line the edits delete."""
    starts = state.steps.by_begin_line()
    return [starts[e.line] for e in edits if e.op == "delete" and e.line in starts]


def _turn_clock(state: KimiReplay, plan: KimiPlan) -> None:
    top = state.steps.max_turn_steps
    if top and top <= set(plan.removed):
        plan.warnings.append(
            f"the removed steps carried the highest turnId ({state.steps.max_turn}); the resumed turn counter "
            "may step back to an earlier turn number")


def healed_bytes(state: KimiReplay, plan: KimiPlan) -> bytes:
    """The whole journal the plan would write (for previews and tests; heal itself streams)."""
    with open(state.path, "rb") as src:
        return b"".join(iter_applied(src, LinePlan.from_edits(plan.edits(state))))


# --------------------------------------------------------------------------- the store's heal


def heal_store(store: Any, findings: list[Finding], options: HealOptions) -> HealResult:
    from .write import write_healed

    session = store.sessions[0]
    state = session.replay
    plan = plan_heal(state, findings, writing=options.mode != "dry-run")
    edits = plan.edits(state)
    skipped = plan.skipped
    result = HealResult(path=store.display, format=store.format, skipped=skipped, warnings=plan.warnings)
    result.edits = [e.as_dict() for e in edits]
    skipped_steps = {s["step"] for s in skipped}
    result.applied = [f for f in findings if f.fix and not _touches_skipped(state, f, skipped_steps)]
    result.changed = bool(edits)
    result.extra = {"removed_steps": plan.removed, "tombstoned_steps": plan.tombstoned,
                    "compaction_changes": plan.compaction_changes(state), "verification_replays": plan.replays}
    if not result.changed:
        return result
    if options.mode == "dry-run":  # a preview: what the verified plan leaves behind
        applied = {id(f) for f in result.applied}
        result.remaining = [f for f in findings if id(f) not in applied]
        write_healed(store, state, LinePlan.from_edits(edits), options, result)
        return result
    result.remaining = _check_healed(store, session, plan.healed)  # type: ignore[arg-type]
    survivors = _survivors(result)
    if survivors:
        raise TdocError(f"{store.display}: {survivors[0].code} would survive this heal; nothing written")
    if plan.healed_sha256 is None:  # every write compares its bytes with the verified ones
        raise TdocError(f"{store.display}: internal: the heal has no verified hash; nothing written")
    write_healed(store, state, LinePlan.from_edits(edits), options, result, plan.healed_sha256)
    result.verified = True
    return result


def _check_healed(store: Any, session: Any, healed: KimiReplay) -> list[Finding]:
    """The findings of the healed journal, from the replay that verified it."""
    from ....core import ScanConfig, check_store
    from ..store import KimiStore, Session

    if healed.engines_only:
        raise TdocError(f"{store.display}: internal: the heal kept no checkable replay; nothing written")
    view = KimiStore(store.path, store.display, [Session(session.id, session.member, healed)], readonly=True)
    return check_store(view, ScanConfig())


def _survivors(result: HealResult) -> list[Finding]:
    from ....healing import identity

    fixed = {identity(f) for f in result.applied}
    return [f for f in result.remaining if f.fix and f.fix.applicability == "safe" and identity(f) in fixed]


def _touches_skipped(state: KimiReplay, f: Finding, skipped: set[Any]) -> bool:
    """A step finding one of whose steps the heal keeps: it is not (fully) fixed."""
    if f.code not in STEP_CODES or not skipped:
        return False
    steps = set(_steps_of(state, f.fix.edits)) if f.fix else set()
    return bool(steps & skipped)


def heal_meta(path: Path, findings: list[Finding]) -> dict[str, Any]:
    """`removed_steps` and `compaction_changes` for a journal (what the heal fixtures record)."""
    with open(path, "rb") as fh:
        state = replay_stream(path, fh, full=False)
    plan = plan_heal(state, findings)
    return {"removed_steps": plan.removed, "compaction_changes": plan.compaction_changes(state)}

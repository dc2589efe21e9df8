"""The kimi-code heal (docs/kimi-code.md §Heal): remove vacuous steps, re-align legacy
compaction counts, drop a torn tail; verified by one replay of the healed journal.

The plan is made in memory from what the scan replay recorded (heal/plan.py), then verified by
one streamed replay of the whole healed journal, the same one that is hashed for the write
(heal/verify.py). Only when that fails are the failing steps found by bisection and demoted
(tombstone, then keep).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ....fixes.jsonl import LinePlan, iter_applied
from ....heal.plan import HealPlan, LineWrite
from ....model import Edit, Finding, TdocError
from ....rules.shared.w101_vacuous_assistant import RULE as VACUOUS_ASSISTANT
from ...base import HealOptions
from ...collector import collector_paused
from ..replay.driver import KimiReplay
from ..replay.step_edits import step_subject
from .plan import KimiPlan, initial_plan, promote_stale_settles
from .verify import verify_plan

STEP_CODES = (VACUOUS_ASSISTANT.code, "C203", "C201")


def plan_heal(state: KimiReplay, findings: Iterable[Finding], *, writing: bool = True, spool: Any = None) -> KimiPlan:
    """Turn the selected findings into a verified plan. `writing`: the plan will be written, so
    keep a replay of the verified bytes the checks can run on, and the bytes themselves: written
    into `spool` (a heal.plan.Spool) as the verification replays them, or without one their
    SHA-256 (the write compares what it writes with it); a dry run needs neither, only the two
    engines' verdict."""
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
    plan.spool = spool if writing else None
    if plan.edits(state):
        verify_plan(state, plan)
        while promote_stale_settles(plan):
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



def heal_store(store: Any, findings: list[Finding], options: HealOptions) -> HealPlan:
    """The pipeline's plan (docs/heal.md): the verified edits, the hash of the healed bytes, and
    a store view of the healed replay for the pipeline to scan before anything is written.

    The collector is paused throughout: the verification compares four projections of each
    history and keeps them, none holding a cycle, and each full collection walked all of them
    again (4 collections, 3.9 s of a 13 s dry run on 8,000 turns; docs/kimi-code.md §Performance)."""
    with collector_paused():
        return _heal_store(store, findings, options)


def _heal_store(store: Any, findings: list[Finding], options: HealOptions) -> HealPlan:
    from ..store import KimiStore, Session

    session = store.sessions[0]
    state = session.replay
    writing = options.mode != "dry-run"
    plan = plan_heal(state, findings, writing=writing, spool=options.spool if writing else None)
    edits = plan.edits(state)
    skipped_steps = {s["step"] for s in plan.skipped}
    applied = [f for f in findings if f.fix and not _touches_skipped(state, f, skipped_steps)]
    out = HealPlan(applied=applied, skipped=plan.skipped, warnings=plan.warnings, edits=edits,
                   read_as=state.fingerprint, kept=_kept(state, findings, skipped_steps))
    out.extra = {"removed_steps": plan.removed, "tombstoned_steps": plan.tombstoned,
                 "compaction_changes": plan.compaction_changes(state), "verification_replays": plan.replays}
    if not edits:
        return out
    out.write = LineWrite(tuple(edits), plan.healed_sha256, spooled=plan.spooled)
    if options.mode == "dry-run":  # a preview: what the verified plan leaves behind
        done = {id(f) for f in applied}
        out.remaining = [f for f in findings if id(f) not in done]
        return out
    if (plan.healed_sha256 is None and not plan.spooled) or plan.healed is None or plan.healed.engines_only:
        raise TdocError(f"{store.display}: internal: the heal kept no verified replay; nothing written")
    out.verified = True
    out.healed = KimiStore(store.path, store.display, [Session(session.id, session.member, plan.healed)],
                           readonly=True)
    return out


def _kept(state: KimiReplay, findings: list[Finding], skipped: set[Any]) -> frozenset[str]:
    """Subjects of the findings whose steps the plan checked and kept."""
    if not skipped:
        return frozenset()
    kept = {step_subject(uuid) for uuid in skipped}
    for f in findings:
        if f.subject is not None and f.code in STEP_CODES and f.fix and set(_steps_of(state, f.fix.edits)) & skipped:
            kept.add(f.subject)
    return frozenset(kept)


def _touches_skipped(state: KimiReplay, f: Finding, skipped: set[Any]) -> bool:
    """A step finding one of whose steps the heal keeps: it is not (fully) fixed."""
    if f.code not in STEP_CODES or not skipped:
        return False
    steps = set(_steps_of(state, f.fix.edits)) if f.fix else set()
    return bool(steps & skipped)

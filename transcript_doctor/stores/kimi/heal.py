"""The kimi-code heal (docs/kimi-code.md, "Heal"): remove vacuous steps, re-align legacy compaction counts,
drop a torn tail; verified by replaying the healed journal with both engines before writing.

A plan is acceptable only if the healed journal replays, under v1, to the original v1 history
minus the removed step assistants, and under v2 to that same history (or to the original v2
history minus the removed steps, where the engines already diverged for other reasons). Steps
whose removal fails that check are tried once more with their `step.begin` replaced by the
explicit interrupted results it implied, then replaced by an empty appended assistant (a record
both engines keep and every projection drops silently, so no count shifts), and otherwise kept
and reported.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ...fixes.jsonl import LinePlan, iter_applied
from ...model import Edit, Finding, TdocError
from ..base import HealOptions, HealResult
from .messages import INTERRUPTED_TEXT, public
from .plan import count_edit, new_count, read_line, step_delete_edits
from .reader import READ_BUFFER
from .replay import KimiReplay, replay_stream
from .vacuous import is_vacuous_content

STEP_CODES = ("W101", "C203", "C201")
MAX_TRIES = 200


@dataclass
class KimiPlan:
    removed: list[Any] = field(default_factory=list)  # step uuids, file order
    replaced_begin: dict[Any, bytes] = field(default_factory=dict)  # uuid -> replacement for its step.begin
    tombstoned: list[Any] = field(default_factory=list)  # steps replaced by an empty appended assistant
    other: list[Edit] = field(default_factory=list)  # torn tail, unknown step events, ...
    skipped: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    healed: KimiReplay | None = None  # the replay of the last verified healed journal
    healed_sha256: str | None = None  # the hash of its bytes (when it is to be written)
    writing: bool = True  # the plan will be written: keep that hash and a replay the checks can run on

    def edits(self, state: KimiReplay) -> list[Edit]:
        out: list[Edit] = list(self.other)
        gone = set(self.removed)
        for uuid in self.tombstoned:
            step = state.steps.steps[uuid]
            out.append(Edit("replace", line=step.begin, text=_tombstone(state, step).decode()))
            out.extend(Edit("delete", line=n) for n in step.lines if n != step.begin)
        for uuid in self.removed:
            step = state.steps.steps[uuid]
            if uuid in self.replaced_begin:
                out.append(Edit("replace", line=step.begin, text=self.replaced_begin[uuid].decode()))
                out.extend(Edit("delete", line=n) for n in step.lines if n != step.begin)
            else:
                out.extend(step_delete_edits(step))
        for lc in state.legacy:
            value = new_count(lc, gone)
            if value != lc.count:
                out.append(count_edit(state, lc, value))
        return out

    def compaction_changes(self, state: KimiReplay) -> list[dict[str, int]]:
        gone = set(self.removed)
        return [
            {"line": lc.line, "old": lc.count, "new": new_count(lc, gone)}
            for lc in state.legacy
            if new_count(lc, gone) != lc.count
        ]


def plan_heal(state: KimiReplay, findings: Iterable[Finding], *, writing: bool = True) -> KimiPlan:
    """Turn the selected findings into a verified plan. `writing`: the plan will be written, so
    keep the SHA-256 of the verified bytes (the write compares what it writes with it) and a
    replay of them the checks can run on; a dry run needs neither, only the two engines' verdict."""
    plan = KimiPlan(writing=writing)
    wanted: list[Any] = []
    for f in findings:
        if f.code in STEP_CODES and f.fix:
            wanted.extend(_steps_of(state, f.fix.edits))
        elif f.fix:
            plan.other.extend(f.fix.edits)
    order = {uuid: i for i, uuid in enumerate(state.steps.steps)}
    candidates = sorted(set(wanted), key=order.__getitem__)
    plan.removed = list(candidates)
    if candidates and not _verify(state, plan):
        _greedy(state, plan, candidates)
    if plan.healed is None and plan.edits(state):
        _verify_other_edits(state, plan)
    _turn_clock(state, plan)
    return plan


def _verify_other_edits(state: KimiReplay, plan: KimiPlan) -> None:
    """Edits that are not step removals (a torn tail, an unknown step event) still get replayed."""
    if not _verify(state, plan):
        raise TdocError(f"{state.path}: the planned edits would change what an engine replays; nothing written")


def _steps_of(state: KimiReplay, edits: Iterable[Edit]) -> list[Any]:
    """The steps whose `step.begin` line the edits delete."""
    starts = state.steps.by_begin_line()
    return [starts[e.line] for e in edits if e.op == "delete" and e.line in starts]


def _greedy(state: KimiReplay, plan: KimiPlan, candidates: list[Any]) -> None:
    plan.removed = []
    for tries, uuid in enumerate(candidates):
        if tries >= MAX_TRIES:
            plan.skipped.append(_skip(state, uuid, "not verified: too many steps needed individual checks"))
            continue
        plan.removed.append(uuid)
        if _verify(state, plan):
            continue
        replacement = _begin_replacement(state, uuid, plan.healed)
        if replacement is not None:
            plan.replaced_begin[uuid] = replacement
            if _verify(state, plan):
                continue
            del plan.replaced_begin[uuid]
        plan.removed.pop()
        plan.tombstoned.append(uuid)
        if _verify(state, plan):
            continue
        plan.tombstoned.pop()
        plan.skipped.append(_skip(state, uuid, "removing it would change what an engine replays (a branch flip, "
                                  "pending-call close or failed-step settle); kept"))


def _skip(state: KimiReplay, uuid: Any, reason: str) -> dict[str, Any]:
    return {"code": "W101", "step": uuid, "line": state.steps.steps[uuid].begin, "reason": reason}


def _begin_replacement(state: KimiReplay, uuid: Any, current: KimiReplay | None) -> bytes | None:
    """The explicit interrupted `tool.result`s a v1 `step.begin` implies, or None if none.

    `current` is the replay of the journal as healed so far: once an earlier step is gone, a
    later `step.begin` may be the one that closes the calls it used to close."""
    closed = (current or state).v1.closed_at_begin.get(uuid)
    step = state.steps.steps[uuid]
    if not closed or step.begin is None or step.begin_offset is None:
        return None
    original = orjson.loads(read_line(state, step.begin_offset or 0))
    lines = []
    for call_id in closed:
        record: dict[str, Any] = {"type": "context.append_loop_event"}
        if "agentId" in original:
            record["agentId"] = original["agentId"]
        record["event"] = {"type": "tool.result", "toolCallId": call_id,
                           "result": {"output": INTERRUPTED_TEXT, "isError": True}}
        if "time" in original:
            record["time"] = original["time"]
        lines.append(orjson.dumps(record))
    return b"\n".join(lines)


def _tombstone(state: KimiReplay, step: Any) -> bytes:
    """An empty assistant appended in the step's place: both engines keep it (so every count
    that indexes the history stays right) and every projection, pre-fix builds included,
    drops an assistant with no content and no calls without sending it."""
    original = orjson.loads(read_line(state, step.begin_offset or 0))
    record: dict[str, Any] = {"type": "context.append_message"}
    if "agentId" in original:
        record["agentId"] = original["agentId"]
    record["message"] = {"role": "assistant", "content": [], "toolCalls": []}
    if "time" in original:
        record["time"] = original["time"]
    return orjson.dumps(record)


def _turn_clock(state: KimiReplay, plan: KimiPlan) -> None:
    top = state.steps.max_turn_steps
    if top and top <= set(plan.removed):
        plan.warnings.append(
            f"the removed steps carried the highest turnId ({state.steps.max_turn}); the resumed turn counter "
            "may step back to an earlier turn number")


# --------------------------------------------------------------------------- verification


def healed_bytes(state: KimiReplay, plan: KimiPlan) -> bytes:
    """The whole journal the plan would write (for previews and tests; heal itself streams)."""
    with open(state.path, "rb") as src:
        return b"".join(iter_applied(src, LinePlan.from_edits(plan.edits(state))))


def _verify(state: KimiReplay, plan: KimiPlan) -> bool:
    """Replay the journal the plan would write (streamed line by line, so memory stays bounded)
    and keep that replay when both engines accept it."""
    digest = hashlib.sha256() if plan.writing else None  # the reader hashes every line it reads
    with open(state.path, "rb", buffering=READ_BUFFER) as src:
        lines = iter_applied(src, LinePlan.from_edits(plan.edits(state)))
        healed = replay_stream(Path("<healed>"), lines, digest, full=False,  # type: ignore[arg-type]
                               engines_only=not plan.writing)
    if not accepts(state, healed, set(plan.removed), set(plan.tombstoned)):
        return False
    plan.healed, plan.healed_sha256 = healed, digest.hexdigest() if digest is not None else None
    return True


def accepts(original: KimiReplay, healed: KimiReplay, removed: set[Any], tombstoned: set[Any] = frozenset()) -> bool:
    """Healed v1 = original v1 minus removed steps (tombstoned ones emptied); v2 agrees with it,
    or (where the engines already diverged otherwise) with the original v2 minus removed steps."""
    if healed.crash.keys() - original.crash.keys():
        return False
    if len(healed.v1.unknown_step_lines) > len(original.v1.unknown_step_lines):
        return False
    want_v1 = [_emptied(m) if _removed(m, tombstoned) else public(m)
               for m in original.v1.history if not _removed(m, removed)]
    if "v1" not in original.crash and [public(m) for m in healed.v1.history] != want_v1:
        return False
    if "v2" in original.crash:
        return True
    got_v2 = [public(m) for m in healed.v2.history]
    if not tombstoned and got_v2 == [public(m) for m in original.v2.history if not _removed(m, removed)]:
        return True
    # v2 drops (or hides as partial) every vacuous step: leave those out of the comparison, so
    # steps a later round of the plan will still handle do not count against this one.
    return _without_vacuous_steps(got_v2, healed.v2.history) == _without_vacuous_steps(
        want_v1, [m for m in original.v1.history if not _removed(m, removed)])


def _without_vacuous_steps(public_msgs: list[dict[str, Any]], source: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [_unpartial(p) for p, m in zip(public_msgs, source) if not _is_vacuous_step(m)]


def _is_vacuous_step(m: dict[str, Any]) -> bool:
    src = m.get("_src") or ()
    return bool(src) and src[0] == "step" and not m.get("toolCalls") and is_vacuous_content(m.get("content") or [])


def _emptied(m: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": [], "toolCalls": []}


def _removed(m: dict[str, Any], removed: set[Any]) -> bool:
    src = m.get("_src") or ()
    return bool(src) and src[0] == "step" and src[1] in removed


def _unpartial(m: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in m.items() if k != "partial"}


# --------------------------------------------------------------------------- the store's heal


def heal_store(store: Any, findings: list[Finding], options: HealOptions) -> HealResult:
    from .heal_write import write_healed

    session = store.sessions[0]
    state = session.replay
    plan = plan_heal(state, findings, writing=options.mode != "dry-run")
    edits = plan.edits(state)
    result = HealResult(path=store.display, format=store.format, skipped=plan.skipped, warnings=plan.warnings)
    result.edits = [e.as_dict() for e in edits]
    skipped_steps = {s["step"] for s in plan.skipped}
    result.applied = [f for f in findings if f.fix and not _only_skipped(state, f, skipped_steps)]
    result.changed = bool(edits)
    result.extra = {"removed_steps": plan.removed, "tombstoned_steps": plan.tombstoned,
                    "compaction_changes": plan.compaction_changes(state)}
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
    from ...core import ScanConfig, check_store
    from .store import KimiStore, Session

    if healed.engines_only:
        raise TdocError(f"{store.display}: internal: the heal kept no checkable replay; nothing written")
    view = KimiStore(store.path, store.display, [Session(session.id, session.member, healed)], readonly=True)
    return check_store(view, ScanConfig())


def _survivors(result: HealResult) -> list[Finding]:
    from ...healing import identity

    fixed = {identity(f) for f in result.applied}
    return [f for f in result.remaining if f.fix and f.fix.applicability == "safe" and identity(f) in fixed]


def _only_skipped(state: KimiReplay, f: Finding, skipped: set[Any]) -> bool:
    if f.code not in STEP_CODES or not skipped:
        return False
    steps = set(_steps_of(state, f.fix.edits)) if f.fix else set()
    return bool(steps) and steps <= skipped


def heal_meta(path: Path, findings: list[Finding]) -> dict[str, Any]:
    """`removed_steps` and `compaction_changes` for a journal (what the heal fixtures record)."""
    with open(path, "rb") as fh:
        state = replay_stream(path, fh, full=False)
    plan = plan_heal(state, findings)
    return {"removed_steps": plan.removed, "compaction_changes": plan.compaction_changes(state)}

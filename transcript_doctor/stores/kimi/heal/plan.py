"""The kimi heal's plan (docs/kimi-code.md §Heal): what happens to each candidate step, and the
edits that follow from it, computed in memory from what the scan replay recorded.

Each candidate (a vacuous step a W101/C201/C203 finding offers to remove) is in one of three
states:

* `remove`: every record of the step goes. When its v1 `step.begin` closed pending calls, that
  record is replaced by the explicit interrupted `tool.result`s a live v1 resume writes, so the
  close happens where it happened.
* `tomb`: the step is replaced by a tombstone, an empty appended assistant both engines keep
  (every count that indexes the history stays right) and every projection drops silently.
* `keep`: untouched, reported with its reason.

Rules applied before any replay: a step whose v2 `step.begin` settled an earlier open (failed)
step that stays is kept (removing it would leave that step partial); for every legacy
compaction whose whole v1 tail would be removed, the last tail step becomes a tombstone (else
v1 flips to its kept-users shape). All count edits follow from the final removal set at once.

The settle rule reads the original replay, but the plan's count edits can change v2's history
(a C201 fix brings back a user message a later undo then removes, with the failed step): when
the verified healed replay shows a kept step's `step.begin` settling nothing any more, the step
is removed after all and the plan verified again (`promote_stale_settles`), so that a heal of
the healed journal has nothing left to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ....model import Edit
from ....rules.shared.w101_vacuous_assistant import RULE as VACUOUS_ASSISTANT
from ..engines.messages import INTERRUPTED_TEXT
from ..replay.driver import KimiReplay
from ..replay.step_edits import count_edit, dumps, loads, new_count, read_line, step_delete_edits

REMOVE, TOMB, KEEP = "remove", "tomb", "keep"
SETTLE_REASON = ("its v2 step.begin settles the failed step {other!r}, which stays: without it that step "
                 "would stay partial and v2 would stop sending it (a failed-step settle, docs/kimi-code.md §Heal); kept")
_DEMOTED_HEAD = "removing or replacing it would change what an engine sends"
DEMOTED_REASON = f"{_DEMOTED_HEAD} (docs/kimi-code.md §Heal); kept"


@dataclass
class KimiPlan:
    candidates: list[Any] = field(default_factory=list)  # step uuids, file order
    status: dict[Any, str] = field(default_factory=dict)  # uuid -> REMOVE | TOMB | KEEP
    reasons: dict[Any, str] = field(default_factory=dict)  # uuid -> why it is kept
    other: list[Edit] = field(default_factory=list)  # torn tail, unknown step events, ...
    warnings: list[str] = field(default_factory=list)
    writing: bool = True  # the plan will be written: its verification keeps a hash and a checkable replay
    healed: KimiReplay | None = None  # the replay of the verified healed journal
    healed_sha256: str | None = None  # the hash of its bytes (when it is to be written without a spool)
    spool: Any = None  # the pipeline's heal.plan.Spool: the verification replay writes the healed bytes into it
    spooled: bool = False  # the spool holds the bytes of `healed`
    replays: int = 0  # how many verification replays the plan took
    settle_kept: set[Any] = field(default_factory=set)  # kept by the settle rule (read on the original replay)
    promoted: list[Any] = field(default_factory=list)  # settle-kept steps the healed replay showed settle nothing
    demotions: list[Any] = field(default_factory=list)  # a failed verification demoted these, in order
    # The outcome, set once the plan is verified (see `settle`):
    removed: list[Any] = field(default_factory=list)
    tombstoned: list[Any] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    _raw: dict[int, bytes] = field(default_factory=dict)  # line offset -> raw bytes (records the plan rewrites)

    # -- what the states come to ---------------------------------------------------------

    def effective(self, state: KimiReplay, upto: int | None = None) -> tuple[list[Any], list[Any]]:
        """(removed, tombstoned) for the candidates (only the first `upto` of them; the rest kept),
        after the branch-flip rule."""
        chosen = self.candidates if upto is None else self.candidates[:upto]
        removed = [u for u in chosen if self.status.get(u) == REMOVE]
        tombs = [u for u in chosen if self.status.get(u) == TOMB]
        gone = set(removed)
        for lc in state.legacy:  # in file order: a tombstone only ever un-flips later ones
            tail = lc.tail_steps
            if tail and all(u in gone for u in tail):
                gone.discard(tail[-1])
                tombs.append(tail[-1])
        return [u for u in removed if u in gone], tombs

    @property
    def kept(self) -> list[Any]:
        return [u for u in self.candidates if self.status.get(u) == KEEP]

    def settle(self, state: KimiReplay) -> None:
        """Record the outcome: the removed and tombstoned steps, and the kept ones with why."""
        self.removed, self.tombstoned = self.effective(state)
        self.skipped = [{"code": VACUOUS_ASSISTANT.code, "step": u, "line": state.steps.steps[u].begin, "reason": self.reasons[u]}
                        for u in self.kept]

    def edits(self, state: KimiReplay, upto: int | None = None) -> list[Edit]:
        removed, tombs = self.effective(state, upto)
        out: list[Edit] = list(self.other)
        for uuid in tombs:
            step = state.steps.steps[uuid]
            text = b"\n".join([*self._closing_results(state, uuid), self._tombstone(state, step)])
            out.append(Edit("replace", line=step.begin, text=text.decode()))
            out.extend(Edit("delete", line=n) for n in step.lines if n != step.begin)
        for uuid in removed:
            step = state.steps.steps[uuid]
            results = self._closing_results(state, uuid)
            if results:
                out.append(Edit("replace", line=step.begin, text=b"\n".join(results).decode()))
                out.extend(Edit("delete", line=n) for n in step.lines if n != step.begin)
            else:
                out.extend(step_delete_edits(step))
        gone = set(removed)
        for lc in state.legacy:
            value = new_count(lc, gone)
            if value != lc.count:
                out.append(count_edit(state, lc, value))
        return out

    def compaction_changes(self, state: KimiReplay) -> list[dict[str, int]]:
        gone = set(self.effective(state)[0])
        return [{"line": lc.line, "old": lc.count, "new": new_count(lc, gone)}
                for lc in state.legacy if new_count(lc, gone) != lc.count]

    # -- replacement records -------------------------------------------------------------

    def _begin_record(self, state: KimiReplay, offset: int) -> dict[str, Any]:
        raw = self._raw.get(offset)
        if raw is None:
            raw = self._raw[offset] = read_line(state, offset)
        try:
            record = loads(raw)  # orjson, else the stdlib (a lone surrogate, a huge number)
        except ValueError:
            return {}
        return record if isinstance(record, dict) else {}

    def _closing_results(self, state: KimiReplay, uuid: Any) -> list[bytes]:
        """The explicit interrupted `tool.result`s that stand in for a v1 `step.begin` which
        closed pending calls (none when it closed nothing)."""
        closed = state.v1.closed_at_begin.get(uuid)
        step = state.steps.steps[uuid]
        if not closed or step.begin_offset is None:
            return []
        original = self._begin_record(state, step.begin_offset)
        lines = []
        for call_id in closed:
            event = {"type": "tool.result", "toolCallId": call_id,
                     "result": {"output": INTERRUPTED_TEXT, "isError": True}}
            lines.append(dumps(_envelope(original, "context.append_loop_event", "event", event)))
        return lines

    def _tombstone(self, state: KimiReplay, step: Any) -> bytes:
        original = self._begin_record(state, step.begin_offset or 0)
        message = {"role": "assistant", "content": [], "toolCalls": []}
        return dumps(_envelope(original, "context.append_message", "message", message))


def _envelope(original: dict[str, Any], rtype: str, key: str, payload: dict[str, Any]) -> dict[str, Any]:
    """A record of `rtype` carrying `payload`, with the replaced record's `agentId` and `time`
    when they are of a shape the schema accepts."""
    record: dict[str, Any] = {"type": rtype}
    agent = original.get("agentId")
    if isinstance(agent, str):
        record["agentId"] = agent
    record[key] = payload
    time = original.get("time")
    if isinstance(time, (int, float)) and not isinstance(time, bool) and abs(time) < 2**63:
        record["time"] = time
    return record


def initial_plan(state: KimiReplay, candidates: list[Any], other: list[Edit], writing: bool) -> KimiPlan:
    """Every candidate removed, except a step whose v2 begin settled a failed step that stays."""
    plan = KimiPlan(candidates=candidates, other=other, writing=writing)
    chosen = set(candidates)
    settles = state.v2.begin_settles
    for uuid in candidates:
        other_step = settles.get(uuid)
        if other_step is not None and other_step not in chosen:
            plan.status[uuid] = KEEP
            plan.reasons[uuid] = SETTLE_REASON.format(other=other_step)
            plan.settle_kept.add(uuid)
        else:
            plan.status[uuid] = REMOVE
    return plan


def promote_stale_settles(plan: KimiPlan) -> bool:
    """Remove the settle-kept steps whose `step.begin` settles nothing in the verified healed
    replay (the plan's other edits changed v2's history there); True when there were any, and
    the plan must be verified again."""
    if plan.healed is None:  # no edits: the healed journal is the original, every settle holds
        return False
    settles = plan.healed.v2.begin_settles
    stale = [u for u in plan.candidates if u in plan.settle_kept and plan.status.get(u) == KEEP and u not in settles]
    for uuid in stale:
        plan.settle_kept.discard(uuid)
        plan.status[uuid] = REMOVE
        del plan.reasons[uuid]
        plan.promoted.append(uuid)
    return bool(stale)


def demote(plan: KimiPlan, uuid: Any, state: KimiReplay | None = None) -> None:
    """One step down: removed -> tombstone -> kept (with the reason `state` shows, when it does)."""
    plan.demotions.append(uuid)
    if plan.status.get(uuid) == REMOVE:
        plan.status[uuid] = TOMB
    else:
        plan.status[uuid] = KEEP
        plan.reasons[uuid] = demoted_reason(state, uuid)


def demoted_reason(state: KimiReplay | None, uuid: Any) -> str:
    """Why a step the verification demoted to kept stays: below a legacy cut whose count no edit
    re-aligns for v2 (C201 says so), removing it moves one engine's slice or the other's."""
    for lc in state.legacy if state is not None else ():
        if uuid in lc.dropped_below and not lc.fix_aligns:
            return (f"{_DEMOTED_HEAD}: it lies below the cut of the legacy compaction at line {lc.line}, whose "
                    "count no edit re-aligns for v2 (its C201 says why; docs/kimi-code.md §Heal); kept")
    return DEMOTED_REASON


def is_demoted_reason(reason: str | None) -> bool:
    """A reason `demote` gave."""
    return reason is not None and reason.startswith(_DEMOTED_HEAD)

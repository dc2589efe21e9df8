"""Replay checks for kimi journals: vacuous steps (W101), legacy compaction misalignment (C201),
transcript length (C202), phantom steps (C203), engine divergence (C204), unknown step events
(C205)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ....model import Edit, Finding, Fix, RefusedError, TdocError
from ....rules.shared.w101_vacuous_assistant import RULE as VACUOUS
from ....text import excerpt
from ..engines.messages import public
from ..projection.request import is_empty_assistant
from ..replay.driver import projected
from ..replay.step_edits import (
    count_edit,
    is_phantom,
    new_count,
    removable_steps,
    step_delete_edits,
    step_is_vacuous,
    step_subject,
)
from ..replay.step_index import StepRecords


def step_findings(mk: Any, state: Any) -> Iterator[Finding]:
    removable = set(removable_steps(state))
    in_history = _history_steps(state)
    positions = _prefix_positions(state)
    for uuid, step in state.steps.steps.items():
        if step.begin is None:
            continue
        if uuid in state.v2_dropped:
            yield _w101(mk, step, uuid in in_history, positions.get(uuid), uuid in removable)
        if is_phantom(step):
            vacuous = step_is_vacuous(state, step)
            fix = _remove_fix(step, "phantom") if vacuous and uuid in removable else None
            how = "has no step.end" if not step.ends else f"ended with finishReason {step.finish!r}"
            kept = "v2 keeps it partial until a later step settles it; v1 keeps it as a visible assistant"
            yield mk("C203", f"step {uuid} {how} (a failed or abandoned attempt); {kept}",
                     line=step.begin, end_line=step.lines[-1], engine="both", fix=fix,
                     evidence={"step": uuid, "vacuous": vacuous, "finishReason": step.finish,
                               "v2_dropped": uuid in state.v2_dropped}, subject=step_subject(uuid))


def _w101(mk: Any, step: StepRecords, live: bool, position: int | None, removable: bool = True) -> Finding:
    uuid = step.uuid
    if position is not None:
        severity, text = None, (
            f"assistant step {uuid} recorded only empty thinking; a pre-fix build sends it at request position "
            f"{position} and the provider rejects every request with 'must not be empty'; v2 drops the step")
    elif live:
        severity, text = "warning", (
            f"assistant step {uuid} recorded nothing sendable; v1 keeps it in the history (its projection hides "
            "it), v2 drops it, so the two histories count messages differently")
    else:
        severity, text = "info", (
            f"assistant step {uuid} recorded nothing sendable; it is no longer in the live history but its "
            "records remain and v1 counted it where v2 did not")
    if not removable:  # v2 dropped it vacuous, but the uuid's records also hold content
        text += ("; but the records of this step uuid also hold content (a reused step uuid, or records after "
                 "v2 settled it), so tdoc offers no removal: it would delete that content")
    return mk(VACUOUS.code, text, line=step.begin, end_line=step.lines[-1], engine="v1", position=position,
              severity=severity, fix=_remove_fix(step, "vacuous") if removable else None,
              evidence={"step": uuid, "records": len(step.lines), "in_live_history": live},
              subject=step_subject(uuid))


def _remove_fix(step: StepRecords, what: str) -> Fix:
    return Fix("safe", f"remove the {len(step.lines)} records of {what} step {step.uuid}", step_delete_edits(step))


def _history_steps(state: Any) -> set[Any]:
    return {m["_src"][1] for m in state.v1.history if (m.get("_src") or ("",))[0] == "step"}


def _prefix_positions(state: Any) -> dict[Any, int]:
    """Step uuid -> the request position a pre-fix v1 build would send it at."""
    projection = projected(state, "v1", prefix=True)
    if projection is None:
        return {}
    out = {}
    for position, (msg, sources) in enumerate(zip(projection.messages, projection.sources)):
        if not sources or not is_empty_assistant(msg):
            continue
        src = state.v1.history[sources[0]].get("_src") or ()
        if src and src[0] == "step":
            out[src[1]] = position
    return out


def has_misaligned_compaction(state: Any) -> bool:
    """Whether some legacy compaction counts steps v2 drops (C201), without building its fix."""
    return any(_misaligned(lc) for lc in state.legacy)


def _misaligned(lc: Any) -> bool:
    """C201's condition: the count counts steps v2 dropped, and the two engines keep different
    messages there (when their slices hold the same messages there is nothing to report)."""
    return bool(lc.dropped_below) and bool(lc.lost or lc.extra)


def compaction_findings(mk: Any, state: Any) -> Iterator[Finding]:
    removable = set(removable_steps(state))
    for ordinal, lc in enumerate(state.legacy):
        if not _misaligned(lc):
            continue
        d = len(lc.dropped_below)
        value = new_count(lc, removable)
        # the fix lowers the count by D, and no other step the heal removes moves v2's slice
        shifting = [u for u in lc.v2_held_below if u in removable]
        aligned = lc.fix_aligns and set(lc.dropped_below) <= removable and not shifting
        fix = None
        if aligned:  # a fix that lowers the count and leaves v2 misaligned would promise too much
            edits = _count_edits(state, lc, value)  # (all D dropped steps go: the value is lower)
            for uuid in lc.vacuous_below:
                if uuid in removable:
                    edits.extend(step_delete_edits(state.steps.steps[uuid]))
            fix = Fix("safe", f"lower {lc.field} from {lc.count} to {value} and remove the {len(lc.vacuous_below)} "
                      "vacuous steps below the cut", tuple(edits)) if edits else None
        yield mk("C201", _c201_message(lc, d, aligned, shifting), line=lc.line, engine="v2", fix=fix,
                 evidence={"D": d, "field": lc.field, "count": lc.count, "new_count": value,
                           "dropped_steps": lc.dropped_below, "lost": lc.lost, "v1_branch": lc.v1_branch,
                           "step_lines": _step_ranges(state, lc.dropped_below), "extra": lc.extra,
                           "aligned_by_fix": aligned, "v2_count": lc.v2_count},
                 subject=f"legacy-compaction:{ordinal}")


def _c201_message(lc: Any, d: int, aligned: bool, shifting: list[Any]) -> str:
    head = f"legacy compaction {lc.field}={lc.count} counts {d} vacuous step(s) that v2 drops"
    lost = f"loses {len(lc.lost)} real message(s): {_listed(lc.lost)}" if lc.lost else "loses no real message"
    if aligned:  # the dropped steps explain the difference (v2 then keeps nothing extra)
        return f"{head}; v2 replay keeps history[{lc.count}:] and {lost}"
    sends = f" and sends {len(lc.extra)} message(s) v1 does not: {_listed(lc.extra)}" if lc.extra else ""
    kept = "keeps its whole history" if not lc.v2_applies else f"keeps history[{lc.count}:]"
    return f"{head}; v2 replay {kept}, {lost}{sends}; lowering the count would not by itself align v2 with v1: {_why_not(lc, d, shifting)}"


def _why_not(lc: Any, d: int, shifting: list[Any]) -> str:
    """Why no count lowered by the dropped steps makes v2 keep what v1 keeps (see legacy.py)."""
    if lc.fix_aligns and shifting:
        steps = ", ".join(repr(u) for u in shifting[:5]) + (f" and {len(shifting) - 5} more" if len(shifting) > 5 else "")
        return (f"the heal also removes {len(shifting)} vacuous step(s) v2 still holds below the cut ({steps}), "
                "which moves v2's slice as well")
    if lc.fix_aligns:
        return "some of the dropped steps cannot be removed (a reused step uuid's other records hold content)"
    if not lc.v2_applies:
        return "v2 does not apply this record (its schema or agent check skips it)"
    if lc.v1_keeps == "kept-users":
        return "v1 keeps its recent user messages here, not a tail"
    if lc.v1_keeps == "all":
        return "v1 fails on this record and keeps its whole history"
    if lc.v2_count is None:
        return "the engines' histories also differ below the cut"
    more = lc.v2_count - (lc.count - d)
    if more == 0:  # v2 lines up as it is, but what earlier compactions' fixes give it back would move it
        return "the messages earlier compactions' fixes give back to v2 below the cut would move its slice"
    return (f"below the cut v2 holds {abs(more)} message(s) {'more' if more > 0 else 'fewer'} than v1 does without the "
            f"dropped steps (v2 would keep exactly v1's messages at {lc.field}={lc.v2_count})")


def _listed(messages: list[dict[str, Any]], limit: int = 10) -> str:
    named = ", ".join(f"{m['role']} (line {m['line']})" for m in messages[:limit])
    return named + (f" and {len(messages) - limit} more" if len(messages) > limit else "")


def _step_ranges(state: Any, uuids: list[Any]) -> list[list[int]]:
    """[first, last] journal line of each step named (the records a heal would remove)."""
    ranges = []
    for uuid in uuids:
        step = state.steps.steps.get(uuid)
        if step is not None and step.lines:
            ranges.append([step.lines[0], step.lines[-1]])
    return ranges


def _can_read(state: Any) -> bool:
    return state.path.is_file()


def transcript_findings(mk: Any, state: Any) -> Iterator[Finding]:
    if not state.transcripts:  # a heal's verification replay folds no transcripts (see replay_stream)
        return
    checks = (("v1", state.t1.folded, len(state.v1_before_finish)), ("v2", state.t2.folded_length, len(state.v2.history)))
    for engine, folded, live in checks:
        if engine in state.crash or folded == live:
            continue
        yield mk("C202", f"engine {engine}'s transcript believes the live history has {folded} messages but it has "
                 f"{live}; the messages view splices the live tail at the wrong place",
                 line=None, engine=engine, evidence={"foldedLength": folded, "live_length": live})


def divergence_findings(mk: Any, state: Any, c201: bool) -> Iterator[Finding]:
    if c201 or state.crash:
        return
    v1 = [_norm(m) for m in state.v1.history if not _dropped_step(state, m)]
    v2 = [_norm(m) for m in state.v2.settled_history()]
    if v1 == v2:
        return
    index = next((i for i, (a, b) in enumerate(zip(v1, v2)) if a != b), min(len(v1), len(v2)))
    yield mk("C204", f"engines v1 and v2 replay this journal to different histories from index {index} "
             f"(v1 {len(v1)} messages, v2 {len(v2)}), beyond the vacuous steps v2 drops",
             line=None, engine="both",
             evidence={"index": index, "v1_length": len(v1), "v2_length": len(v2),
                       "v1_message": _brief(v1[index] if index < len(v1) else None),
                       "v2_message": _brief(v2[index] if index < len(v2) else None)})


def _dropped_step(state: Any, m: dict[str, Any]) -> bool:
    src: tuple[Any, ...] = m.get("_src") or ()
    return bool(src) and src[0] == "step" and src[1] in state.v2_dropped


def _norm(m: dict[str, Any]) -> Any:
    pub = public(m)
    pub.pop("partial", None)
    return pub


def _brief(m: Any) -> Any:
    if m is None:
        return None
    content = m.get("content")
    parts = content if isinstance(content, list) else []
    texts = [p.get("text") or p.get("think") or "" for p in parts if isinstance(p, dict)]
    return {"role": m.get("role"), "text": excerpt(" ".join(t for t in texts if isinstance(t, str)))}


def unknown_step_findings(mk: Any, state: Any) -> Iterator[Finding]:
    for line in state.v1.unknown_step_lines:
        fix = Fix("unsafe", f"drop the event on line {line}", (Edit("delete", line=line),))
        yield mk("C205", f"line {line} is a loop event for a step that is not open; engine v1 throws on it and "
                 "the whole session fails to load", line=line, engine="v1", fix=fix, evidence={})


def _count_edits(state: Any, lc: Any, value: int) -> list[Edit]:
    """The count edit of a C201 fix; none when the line cannot be read back or rewritten."""
    if not _can_read(state):
        return []
    try:
        return [count_edit(state, lc, value)]
    except RefusedError:  # the journal changed under the scan: that is the store's answer
        raise
    except TdocError:  # this line's count cannot be rewritten: the fix is unavailable
        return []

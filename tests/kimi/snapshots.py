"""The whole state a kimi replay leaves behind, as one comparable value."""

from __future__ import annotations

from typing import Any

from transcript_doctor.stores.kimi.replay.driver import KimiReplay
from transcript_doctor.stores.kimi.replay.step_index import StepRecords


def _step(step: StepRecords) -> tuple:
    return (step.begin, step.begin_offset, step.others, step.calls, step.results, step.ends, step.finish,
            step.turn_id, step.vacuous, step.call_ids)


def snapshot(state: KimiReplay) -> dict[str, Any]:
    fold = state.v2.fold
    return {
        "v1": state.v1.history, "v2": state.v2.history, "errors": state.v1.errors,
        "unknown": state.v1.unknown_step_lines, "closed": state.v1.closed_at_begin,
        "v1_open": list(state.v1.open_steps), "v1_pending": list(state.v1.pending), "v1_deferred": state.v1.deferred,
        "v2_open": (fold.open_step, fold.open_has_calls, fold.open_vacuous, list(fold.pending), fold.deferred),
        "dropped": state.v2_dropped, "legacy": state.legacy, "skipped": state.v2.skipped,
        "invalid": [(rec.line, kind) for rec, kind in state.invalid], "crash": state.crash,
        "steps": {uuid: _step(step) for uuid, step in state.steps.steps.items()},
        "turns": (state.steps.max_turn, state.steps.max_turn_steps),
        "t1": (state.t1.folded, state.t1.entries), "t2": (state.t2.folded_length, state.t2.entries),
        "before_finish": state.v1_before_finish,
    }

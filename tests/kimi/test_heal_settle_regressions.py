"""Regression cases for the settle rule of the kimi heal (docs/kimi-code.md §Heal): a step kept
because its v2 `step.begin` settles a failed step must only stay kept while the healed journal
still settles that step; otherwise a second heal would remove it (heal∘heal != heal)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from transcript_doctor.core import ScanConfig, check_store
from transcript_doctor.healing import allowed
from transcript_doctor.stores import HealOptions, Options
from transcript_doctor.stores.kimi.heal.driver import healed_bytes, plan_heal
from transcript_doctor.stores.kimi.heal.plan import SETTLE_REASON, KimiPlan
from transcript_doctor.stores.kimi.replay.driver import replay_stream
from transcript_doctor.stores.kimi.store import KimiStore, Session

from .strategies import build
from .test_properties import PATH

VACUOUS_STEP = ("step", ("empty-think",), (), "end_turn")

# Found by hypothesis (test_heal_properties.py::test_heal_of_a_healed_journal_changes_no_byte).
# Lowering the first legacy count (C201 fix for s0) gives v2 back "prompt 1"; the `undo 1` after
# the failed step s4 then cuts "prompt 1" and s4, so in the healed journal s6's `step.begin`
# settles nothing, although in the original it settled s4.
UNDO_UNDOES_THE_SETTLE = [VACUOUS_STEP, ("user",), ("legacy", 1), ("undo", 2), ("step", (), (False,), "error"),
                          ("undo", 1), VACUOUS_STEP, ("user",), ("legacy", 1)]
# Near miss: nothing changes v2's history before s1, whose begin settles the failed s0 for good.
SETTLE_THAT_HOLDS = [("user",), ("step", ("text",), (), "error"), VACUOUS_STEP, ("user",)]

CASES = [
    # (label, operations, removed by the first heal, kept by the settle rule, promoted)
    ("undo-undoes-the-settle", UNDO_UNDOES_THE_SETTLE, ["s0", "s6"], [], ["s6"]),
    ("settle-that-holds", SETTLE_THAT_HOLDS, [], ["s2"], []),
]


def _heal(data: bytes, tmp_path: Path, name: str) -> tuple[bytes, KimiPlan]:
    state = replay_stream(PATH, io.BytesIO(data), full=False)
    state.path = tmp_path / f"{name}.jsonl"
    state.path.write_bytes(data)
    store = KimiStore(state.path, str(state.path), [Session(None, None, state)], readonly=False)
    found = [f for f in check_store(store, ScanConfig(options=Options())) if allowed(f, HealOptions())]
    plan = plan_heal(state, found)
    return healed_bytes(state, plan), plan


@pytest.mark.parametrize(("label", "ops", "removed", "settle_kept", "promoted"), CASES, ids=[c[0] for c in CASES])
def test_a_heal_of_the_healed_journal_changes_no_byte(tmp_path: Path, label: str, ops: list[tuple],
                                                       removed: list[str], settle_kept: list[str],
                                                       promoted: list[str]) -> None:
    healed, plan = _heal(build(ops).bytes(), tmp_path, "once")
    assert plan.removed == removed
    assert plan.promoted == promoted
    assert [s["step"] for s in plan.skipped] == settle_kept
    for s in plan.skipped:
        assert s["reason"].startswith(SETTLE_REASON.split("{")[0])
    again, plan2 = _heal(healed, tmp_path, "twice")
    assert again == healed
    assert plan2.removed == [] and plan2.promoted == []

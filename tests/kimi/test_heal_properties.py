"""Heal invariants on generated journals seeded with the three traps of docs/kimi-code.md §Heal: a failed step that a
vacuous step's `step.begin` settles, a vacuous step that is a legacy compaction's whole tail
(branch flip), and a vacuous step whose `step.begin` closes pending calls."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_doctor.stores.kimi.heal.plan import is_demoted_reason
from transcript_doctor.stores.kimi.replay.driver import KimiReplay, projected, replay_stream

from .strategies import build, op_sequences
from .test_properties import PATH, heal_once

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
VACUOUS_STEP = ("step", ("empty-think",), (), "end_turn")
MOTIFS = {
    "failed-then-vacuous": [("step", ("text",), (), "error"), VACUOUS_STEP],
    "failed-open-then-vacuous": [("step", ("think",), (False,), None), VACUOUS_STEP, ("user",)],
    "vacuous-legacy-tail": [("user",), VACUOUS_STEP, ("legacy", 1)],
    "vacuous-below-legacy-cut": [VACUOUS_STEP, ("user",), ("legacy", 1)],
    "begin-closes-calls": [("step", ("text",), (False, True), "end_turn"), VACUOUS_STEP, ("user",)],
}


@st.composite
def seeded(draw: Any) -> list[tuple]:
    """Random operations with one to three of those motifs spliced in at random places."""
    sequence = draw(op_sequences())
    for name in draw(st.lists(st.sampled_from(sorted(MOTIFS)), min_size=1, max_size=3)):
        at = draw(st.integers(0, len(sequence)))
        sequence[at:at] = MOTIFS[name]
    return sequence


def _replay(data: bytes) -> KimiReplay:
    return replay_stream(PATH, io.BytesIO(data), full=False)


def _planned(data: bytes) -> tuple[Any, list, list]:
    """The verified heal plan of the journal `data`, its edits and the scan's fixable findings
    (the plan reads the journal's lines: its edits are made before the file goes)."""
    from transcript_doctor.core import ScanConfig, check_store
    from transcript_doctor.healing import allowed
    from transcript_doctor.stores import HealOptions, Options
    from transcript_doctor.stores.kimi.heal.driver import plan_heal
    from transcript_doctor.stores.kimi.store import KimiStore, Session

    from .test_properties import _materialise

    state = _replay(data)
    state.path = _materialise(data)
    try:
        store = KimiStore(state.path, str(state.path), [Session(None, None, state)], readonly=False)
        found = [f for f in check_store(store, ScanConfig(options=Options())) if allowed(f, HealOptions())]
        plan = plan_heal(state, found)
        return plan, plan.edits(state), found
    finally:
        state.path.unlink()


def _sends(state: KimiReplay, engine: str, strict: bool) -> list[dict] | None:
    projection = projected(state, engine, strict=strict)
    return None if projection is None else projection.messages


def _mergeable_user(m: dict) -> bool:
    return m.get("role") == "user"


def _is_subsequence(short: list[dict], long: list[dict]) -> bool:
    it = iter(long)
    return all(any(m == other for other in it) for m in short)


@SETTINGS
@given(seeded())
def test_heal_keeps_what_every_engine_sends(sequence: list[tuple]) -> None:
    """v1 sends exactly what it sent (the removed steps were vacuous, a tombstone is empty); v2
    too, unless the heal fixed a C201, where v2 gets back messages it had lost: then everything
    it sent before is still sent, in order (user messages aside: a restored one merges; in the
    strict resend a restored assistant merges into the assistant next to it, so there each part,
    call and result is what is still sent). Found 2026-12-02: a restored assistant merged with its
    neighbour in the strict resend, which the older check compared as whole messages."""
    data = build(sequence).bytes()
    healed, state, _ = heal_once(data)
    state.path.unlink()
    before, after = _replay(data), _replay(healed)
    assert after.crash.keys() <= before.crash.keys()
    c201 = any(lc.dropped_below for lc in before.legacy)
    for strict in (False, True):
        if "v1" not in before.crash:
            assert _sends(after, "v1", strict) == _sends(before, "v1", strict)
        if "v2" in before.crash:
            continue
        old, new = _sends(before, "v2", strict), _sends(after, "v2", strict)
        assert old is not None and new is not None
        if not c201:
            assert new == old
        elif not strict:
            assert _is_subsequence([m for m in old if not _mergeable_user(m)],
                                   [m for m in new if not _mergeable_user(m)])
        else:  # the strict resend merges consecutive assistants: a restored one merges into its neighbour
            assert _is_subsequence(_pieces(old), _pieces(new))


def _pieces(messages: list[dict]) -> list[dict]:
    """What a projection sends of non-user messages, one item per content part, call and result:
    a message a restored one merged into still sends all of its own, in order."""
    out: list[dict] = []
    for m in messages:
        if _mergeable_user(m):
            continue
        role = m.get("role")
        content = m.get("content")
        parts = content if isinstance(content, list) else [content]
        out.extend({"role": role, "part": p} for p in parts)
        out.extend({"role": role, "call": c} for c in m.get("toolCalls") or [])
        if m.get("toolCallId") is not None:
            out.append({"role": role, "answers": m.get("toolCallId")})
    return out


@SETTINGS
@given(seeded())
def test_heal_of_a_healed_journal_changes_no_byte(sequence: list[tuple]) -> None:
    healed, state, _ = heal_once(build(sequence).bytes())
    state.path.unlink()
    again, state2, _ = heal_once(healed)
    state2.path.unlink()
    assert again == healed


@SETTINGS
@given(seeded())
def test_a_plan_nothing_was_demoted_in_is_verified_by_one_replay(sequence: list[tuple]) -> None:
    plan, edits, _ = _planned(build(sequence).bytes())
    has_edits = bool(edits)
    demoted = [u for u in plan.kept if is_demoted_reason(plan.reasons.get(u))]
    assert set(demoted) <= set(plan.demotions)
    if has_edits and not plan.demotions and not plan.promoted:  # a promotion is verified once more
        assert plan.replays == 1
    if plan.demotions:  # each demotion follows a failed verification
        assert plan.replays >= 1 + len(set(plan.demotions))
    for s in plan.skipped:  # every kept step says why
        assert s["reason"] and s["line"] is not None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seeded(), st.sampled_from(["output", "in-place"]))
def test_the_file_written_in_one_pass_is_the_verified_heal(sequence: list[tuple], mode: str) -> None:
    """The heal writes the healed bytes while its verification replays them (the pipeline's
    spool): the file it leaves is byte for byte the plan applied to the original."""
    import tempfile
    from pathlib import Path

    from transcript_doctor.core import ScanConfig
    from transcript_doctor.healing import heal_paths
    from transcript_doctor.stores import HealOptions

    data = build(sequence).bytes()
    want, state, _ = heal_once(data)
    state.path.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        journal, out = Path(tmp) / "wire.jsonl", Path(tmp) / "healed.jsonl"
        journal.write_bytes(data)
        options = HealOptions(mode="output", output=out) if mode == "output" else HealOptions(mode="in-place")
        results, _ = heal_paths([str(journal)], ScanConfig(), options)
        written = out if mode == "output" else journal
        got = written.read_bytes() if results[0].written else data
        assert got == want
        assert not list(Path(tmp).glob(".*.tdoc-tmp"))  # the spool was renamed or removed


def test_a_removal_demoted_to_a_tombstone_costs_one_more_replay() -> None:
    """Found by the property above: a vacuous step after an undo, under a later legacy count. Its
    removal changes what v1 sends, the verification says so, the step becomes a tombstone, and
    the second replay passes (the count needs no edit then: v2 keeps the tombstone too)."""
    from transcript_doctor.stores.kimi.heal.plan import TOMB

    sequence = [("kept", 0), ("user",), ("legacy", 0), ("undo", 2), VACUOUS_STEP, ("user",), ("legacy", 1)]
    plan, edits, found = _planned(build(sequence).bytes())
    # No C201: the undo v2 cannot apply left it "prompt 1" where v1 has the step, so at the last
    # compaction v2's slice holds exactly v1's messages ([prompt 5]) although v2 dropped the step.
    assert sorted(f.code for f in found) == ["W101"]
    assert plan.demotions == ["s4"] and plan.status == {"s4": TOMB} and plan.replays == 2
    assert [e.op for e in edits] == ["replace", "delete", "delete"]  # tombstone, no count edit

"""Invariants any correct replay and heal must keep, checked on generated journals."""

from __future__ import annotations

import io
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from transcript_doctor.core import ScanConfig, check_store
from transcript_doctor.healing import allowed
from transcript_doctor.stores import HealOptions, Options
from transcript_doctor.stores.kimi.engines.messages import public
from transcript_doctor.stores.kimi.engines.vacuous import is_vacuous_content
from transcript_doctor.stores.kimi.heal.driver import healed_bytes, plan_heal
from transcript_doctor.stores.kimi.projection.request import project
from transcript_doctor.stores.kimi.replay.driver import KimiReplay, replay_stream
from transcript_doctor.stores.kimi.store import KimiStore, Session

from .strategies import build, is_vacuous_step, journals, op_sequences

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PATH = Path("wire.jsonl")


def replay(data: bytes) -> KimiReplay:
    return replay_stream(PATH, io.BytesIO(data))


def unpartial(messages: list[dict]) -> list[dict]:
    return [{k: v for k, v in public(m).items() if k != "partial"} for m in messages]


@SETTINGS
@given(journals())
def test_v2_never_keeps_a_settled_vacuous_step(data: bytes) -> None:
    state = replay(data)
    for m in state.v2.history:
        src = m.get("_src") or ()
        if src and src[0] == "step" and not m.get("partial"):
            assert m.get("toolCalls") or not is_vacuous_content(m.get("content") or []), m


@SETTINGS
@given(journals(vacuous=False, failed=False, undo=False, compaction=False))
def test_engines_agree_without_vacuous_failed_undo_or_compaction(data: bytes) -> None:
    state = replay(data)
    assert not state.crash
    assert unpartial(state.v1.history) == unpartial(state.v2.history)


@SETTINGS
@given(journals())
def test_projections_never_send_an_empty_assistant(data: bytes) -> None:
    state = replay(data)
    for engine, history in (("v1", state.v1.history), ("v2", state.v2.history)):
        for strict in (False, True):
            for m in project(history, engine, strict=strict).messages:
                if m["role"] == "assistant":
                    assert m.get("content") or m.get("toolCalls"), (engine, strict, m)


@SETTINGS
@given(journals())
def test_strict_projection_answers_every_call_right_after_it(data: bytes) -> None:
    state = replay(data)
    for engine, history in (("v1", state.v1.history), ("v2", state.v2.history)):
        messages = project(history, engine, strict=True).messages
        for i, m in enumerate(messages):
            if m["role"] == "assistant" and m.get("toolCalls"):
                ids = [c["id"] for c in m["toolCalls"]]
                following = []
                for nxt in messages[i + 1:]:
                    if nxt["role"] != "tool":
                        break
                    following.append(nxt.get("toolCallId"))
                assert sorted(following) == sorted(ids), (engine, ids, following)


# --------------------------------------------------------------------------- heal


def heal_once(data: bytes) -> tuple[bytes, KimiReplay, list]:
    state = replay_stream(PATH, io.BytesIO(data), full=False)
    state.path = _materialise(data)
    store = KimiStore(state.path, str(state.path), [Session(None, None, state)], readonly=False)
    found = [f for f in check_store(store, ScanConfig(options=Options())) if allowed(f, HealOptions())]
    plan = plan_heal(state, found)
    heal_once.tombstoned = list(plan.tombstoned)  # type: ignore[attr-defined]
    return healed_bytes(state, plan), state, plan.removed


def _materialise(data: bytes) -> Path:
    import tempfile

    fd, name = tempfile.mkstemp(suffix=".jsonl")
    with open(fd, "wb") as fh:
        fh.write(data)
    return Path(name)


@SETTINGS
@given(journals())
def test_heal_keeps_every_non_vacuous_message_and_untouched_lines(data: bytes) -> None:
    healed, state, removed = heal_once(data)
    try:
        after = replay(healed)
        gone = set(removed)
        emptied = set(heal_once.tombstoned)  # type: ignore[attr-defined]
        # vacuous steps are removed, or (where removal would shift a compaction) emptied in place
        want = [{"role": "assistant", "content": [], "toolCalls": []} if _step_of(m) in emptied else public(m)
                for m in replay(data).v1.history if _step_of(m) not in gone]
        assert [public(m) for m in after.v1.history] == want
        original_lines = data.splitlines(keepends=True)
        healed_lines = set(healed.splitlines(keepends=True))
        kept = [line for line in original_lines if line in healed_lines]
        # every line the heal kept is byte-identical, in the original order
        assert [line for line in healed.splitlines(keepends=True) if line in set(original_lines)] == kept
    finally:
        state.path.unlink()


@SETTINGS
@given(journals())
def test_heal_is_idempotent_and_leaves_nothing_safe_to_fix(data: bytes) -> None:
    healed, state, _ = heal_once(data)
    state.path.unlink()
    again, state2, _ = heal_once(healed)
    try:
        assert again == healed, "a second heal changed the healed journal"
        store = KimiStore(state2.path, "x", [Session(None, None, replay_stream(state2.path, io.BytesIO(healed)))],
                          readonly=False)
        left = [f for f in check_store(store, ScanConfig()) if allowed(f, HealOptions())]
        skipped = {s["step"] for s in plan_heal(state2, left).skipped} if left else set()
        for f in left:  # only what the heal itself declared it could not fix safely
            steps = set(f.evidence.get("dropped_steps") or [f.evidence.get("step")])
            assert steps & skipped, (f.code, f.message)
    finally:
        state2.path.unlink()


@SETTINGS
@given(op_sequences(failed=False, undo=False))
def test_after_heal_engines_agree_when_vacuous_steps_were_the_only_divergence(sequence: list) -> None:
    reference = replay(build([op for op in sequence if not is_vacuous_step(op)]).bytes())
    if (reference.crash or unpartial(reference.v1.history) != unpartial(reference.v2.history)
            or any(lc.v1_branch != "tail" for lc in reference.legacy)):
        return  # the engines diverge for other reasons (docs/kimi-replay.md §7): no promise to keep
    healed, state, _ = heal_once(build(sequence).bytes())
    state.path.unlink()
    after = replay(healed)
    # Steps the heal had to keep (removing them would flip v1's compaction branch) are the only
    # messages allowed to differ: v2 drops them, v1's projection hides them.
    v1_without_kept_steps = [m for m in after.v1.history if not _vacuous_step_message(m)]
    assert unpartial(v1_without_kept_steps) == unpartial(after.v2.history)


def _step_of(m: dict) -> object:
    src = m.get("_src") or ()
    return src[1] if src and src[0] == "step" else None


def _vacuous_step_message(m: dict) -> bool:
    src = m.get("_src") or ()
    return bool(src) and src[0] == "step" and not m.get("toolCalls") and is_vacuous_content(m.get("content") or [])


@SETTINGS
@given(journals())
def test_mirrored_transcripts_match_folding_every_record(data: bytes) -> None:
    """Scans let the transcript reducers follow their live engines; the result must not change."""
    full = replay_stream(PATH, io.BytesIO(data), full=True)
    light = replay_stream(PATH, io.BytesIO(data), full=False)
    assert full.crash == light.crash
    if "v1" not in full.crash:
        assert light.t1.folded == full.t1.folded
    if "v2" not in full.crash:
        assert light.t2.folded_length == full.t2.folded_length


@SETTINGS
@given(journals())
def test_a_dry_run_plans_exactly_what_a_write_plans(data: bytes) -> None:
    """A dry run verifies with the engines only (no hash, no checkable replay); same verdicts."""
    state = replay_stream(PATH, io.BytesIO(data), full=False)
    state.path = _materialise(data)
    store = KimiStore(state.path, str(state.path), [Session(None, None, state)], readonly=False)
    found = [f for f in check_store(store, ScanConfig(options=Options())) if allowed(f, HealOptions())]
    written, previewed = plan_heal(state, found), plan_heal(state, found, writing=False)
    assert written.edits(state) == previewed.edits(state)
    assert (written.removed, written.tombstoned, written.skipped) == (
        previewed.removed, previewed.tombstoned, previewed.skipped)
    assert previewed.healed_sha256 is None and (written.healed_sha256 is not None or not written.edits(state))
    state.path.unlink()

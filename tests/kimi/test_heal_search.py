"""The search for the steps a failed verification must demote (heal/verify.py `_first_failure`):
prefixes tried back from the end first, then bisection. It finds the same steps as the plain
bisection and, when the failing step is near the end of the journal (where a failure that
reaches the engines' final requests usually is), in fewer replays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from transcript_doctor.core import ScanConfig, check_store
from transcript_doctor.healing import allowed
from transcript_doctor.stores import HealOptions, Options
from transcript_doctor.stores.kimi.heal import verify
from transcript_doctor.stores.kimi.heal.driver import healed_bytes, plan_heal
from transcript_doctor.stores.kimi.replay.driver import replay_file
from transcript_doctor.stores.kimi.store import KimiStore, Session

from .builders import Journal, think

VACUOUS = [think()]


def _early_steps(j: Journal, n: int) -> Journal:
    for i in range(n):
        j.step(f"early{i}", VACUOUS).user(f"prompt {i}")
    return j


def _failing_tail(j: Journal, late: int = 0) -> Journal:
    """The C201 case whose heads differ (tests/kimi/test_c201_alignment.py "heads-differ-extra"):
    its dropped step s1 cannot be removed (the verification demotes it); `late` removable steps follow
    the compaction."""
    for letter, tokens in zip("abcde", (3000, 3000, 6000, 6000, 8000)):
        j.user(letter * 4 * (tokens - 1))
    j.kept_compaction(3)
    j.step("s1", VACUOUS).user("a1").user("a2").legacy_compaction(6)
    for i in range(late):
        j.step(f"late{i}", VACUOUS).user(f"late prompt {i}")
    return j


def _heal(tmp_path: Path, data: bytes, gallop: int, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, Any]:
    monkeypatch.setattr(verify, "GALLOP", gallop)
    path = tmp_path / f"wire-{gallop}.jsonl"
    path.write_bytes(data)
    state = replay_file(path, full=False, transcripts=False)
    store = KimiStore(path, str(path), [Session(None, None, state)], readonly=False)
    found = [f for f in check_store(store, ScanConfig(options=Options())) if allowed(f, HealOptions())]
    plan = plan_heal(state, found, writing=False)
    return healed_bytes(state, plan), plan


@pytest.mark.parametrize(("early", "late"), [(40, 0), (40, 3), (0, 0), (5, 2), (20, 20)])
def test_the_search_finds_what_bisection_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               early: int, late: int) -> None:
    data = _failing_tail(_early_steps(Journal().user("hi"), early), late).bytes()
    gallop = verify.GALLOP
    plain_bytes, plain = _heal(tmp_path, data, 0, monkeypatch)
    found_bytes, found = _heal(tmp_path, data, gallop, monkeypatch)
    assert found_bytes == plain_bytes
    assert found.removed == plain.removed and found.tombstoned == plain.tombstoned
    assert found.kept == plain.kept and "s1" in found.demotions and "s1" not in found.removed
    assert found.replays <= plain.replays + gallop * len(found.demotions)  # the bound when the failure is early
    if early >= 40 and late == 0:  # the failing step is the last of 41 candidates
        assert found.replays < plain.replays

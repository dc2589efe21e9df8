"""The work of a scan (and of a dry-run heal) grows in proportion to the store, on every poisoned
shape of `bench/bench_growth.py`.

Work is counted, not timed: the function calls (Python and C) of one run at 100 units and at 400.
Per unit they stay within a few percent of each other on every shape (the last figures: x0.55 to
x1.06); the walks that once grew with the square of the file showed x1.5 to x2.6 at these sizes
(a re-link per broken Claude Code parent, a history search per kimi orphan call). A count does
not move with the machine's load, so the bound below is tight and cannot fail by chance. It
cannot see a walk made only of C calls (`list.index` in a loop): the bench's timing table does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .bench_modules import load

UNITS, FACTOR = 100, 4
LINEAR = 1.3  # per-unit calls may grow this much from UNITS to FACTOR * UNITS

bench = load("bench_growth")
HEALED = [name for name, (suffix, _) in bench.SHAPES.items() if suffix == ".jsonl"]


def _growth(name: str, tmp_path: Path, heal: bool) -> tuple[float, list[int]]:
    result = bench.measure(name, [UNITS, UNITS * FACTOR], 1, tmp_path, heal=heal, count=True)
    return result["per_unit_growth"], [row["calls"] for row in result["sizes"]]


@pytest.mark.parametrize("name", list(bench.SHAPES))
def test_a_scan_does_work_in_proportion_to_the_store(name: str, tmp_path: Path) -> None:
    growth, counts = _growth(name, tmp_path, heal=False)
    assert counts[1] > counts[0] > 0
    assert growth <= LINEAR, f"{name}: calls per unit grew x{growth} from {UNITS} to {UNITS * FACTOR} units"


@pytest.mark.parametrize("name", HEALED)
def test_a_dry_run_heal_does_work_in_proportion_to_the_store(name: str, tmp_path: Path) -> None:
    growth, counts = _growth(name, tmp_path, heal=True)
    assert counts[1] > counts[0] > 0
    assert growth <= LINEAR, f"{name}: calls per unit grew x{growth} from {UNITS} to {UNITS * FACTOR} units"


def test_the_count_sees_a_walk_that_grows_with_the_square_of_the_store(tmp_path: Path, monkeypatch) -> None:
    # The check can fail: the kimi repairs placed by searching the whole history again per call
    # (what they did before `repairs.CallLines`) count as quadratic.
    from transcript_doctor.stores.kimi.checks import repairs

    def searching(history, code, anomaly, index):  # type: ignore[no-untyped-def]
        call_id = anomaly.get("toolCallId")
        want_tool = code in repairs._ON_RESULT
        return repairs._known_lines(m for m in history if repairs._matches(m, call_id, want_tool))

    monkeypatch.setattr(repairs, "_lines_for", searching)
    growth, _ = _growth("kimi-orphan-calls", tmp_path, heal=False)
    assert growth > LINEAR * 1.5

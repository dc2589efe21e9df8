"""The work of a scan grows in proportion to the store, on every poisoned shape of
`bench/bench_growth.py` (its heals: `test_growth_work_heal.py`).

Work is counted, not timed: the function calls (Python and C) of one run at 100, 200 and 400
units. What each unit adds between 200 and 400 must stay what it added between 100 and 200
(`marginal_growth`, fixed costs cancelled): on every shape it is 0.63 to 1.014 today, while the
walks that once grew with the square of the file gave 1.09 to 1.77 at these sizes (a re-link per
broken Claude Code parent, a history search per kimi orphan call, a search of the added records
per answered call). A count does not move with the machine's load, so the bound is tight. What
does move with the machine is left out of the count: the `/proc` walk of the in-use check (its
calls follow how many processes run beside the test: CI once failed a heal's bound at x1.152 on
it); the cyclic collector is off while counting (`bench_growth.calls`). Left in: the 11 calls of
waiting on a database's integrity-check thread when it is still running, a fixed few against the
thousands each hundred units add. It cannot see a walk made only of C calls (`list.index` in a
loop): the bench's timing table does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .bench_modules import load

SIZES = [100, 200, 400]
LINEAR = 1.06  # the marginal calls per unit may grow this much from the first pair of sizes to the last

bench = load("bench_growth")
LINE_SHAPES = [name for name, (suffix, _) in bench.SHAPES.items() if suffix == ".jsonl"]
# The database shapes whose fixes grow with the store (the one-session shapes carry their first
# poison only at a few hundred messages, so a heal's count jumps there: OpenCode 18,063 calls at
# 200 units, 102,432 at 400, linear after).
HEAL_SHAPES = LINE_SHAPES + ["opencode-sessions", "hermes-sessions"]


def marginal_growth(name: str, tmp_path: Path, heal: bool = False, write: bool = False) -> float:
    result = bench.measure(name, SIZES, 1, tmp_path, heal=heal, count=True, write=write)
    counts = [row["calls"] for row in result["sizes"]]
    assert counts == sorted(counts) and counts[0] > 0
    return float(result["marginal_growth"])


@pytest.mark.parametrize("name", list(bench.SHAPES))
def test_a_scan_does_work_in_proportion_to_the_store(name: str, tmp_path: Path) -> None:
    growth = marginal_growth(name, tmp_path)
    assert growth <= LINEAR, f"{name}: each unit's calls grew x{growth} from {SIZES[0]} to {SIZES[-1]} units"


def test_the_count_sees_a_walk_that_grows_with_the_square_of_the_store(tmp_path: Path, monkeypatch) -> None:
    # The check can fail: kimi repairs placed by searching the whole history again for each call
    # (as before `repairs.CallLines`) count as quadratic.
    from transcript_doctor.stores.kimi.checks import repairs

    def searching(history, code, anomaly, index):  # type: ignore[no-untyped-def]
        call_id = anomaly.get("toolCallId")
        want_tool = code in repairs._ON_RESULT
        return repairs._known_lines(m for m in history if repairs._matches(m, call_id, want_tool))

    monkeypatch.setattr(repairs, "_lines_for", searching)
    assert marginal_growth("kimi-orphan-calls", tmp_path) > 1.5

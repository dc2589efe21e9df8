"""The work of a heal grows in proportion to the store: a dry run (plan and verification) and a
heal in place (of a copy, unsafe fixes included), on every line-store shape of
`bench/bench_growth.py`. Counted as `test_growth_work.py` counts a scan; before the Claude Code
planner kept the uuids it had added in a set, an in-place heal of one orphan call per exchange
gave 1.095 here (it searched every added result for each new one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_growth_work import LINE_SHAPES, LINEAR, SIZES, marginal_growth


@pytest.mark.parametrize("name", LINE_SHAPES)
def test_a_dry_run_heal_does_work_in_proportion_to_the_store(name: str, tmp_path: Path) -> None:
    growth = marginal_growth(name, tmp_path, heal=True)
    assert growth <= LINEAR, f"{name}: each unit's calls grew x{growth} from {SIZES[0]} to {SIZES[-1]} units"


@pytest.mark.parametrize("name", LINE_SHAPES)
def test_a_heal_in_place_does_work_in_proportion_to_the_store(name: str, tmp_path: Path) -> None:
    growth = marginal_growth(name, tmp_path, heal=True, write=True)
    assert growth <= LINEAR, f"{name}: each unit's calls grew x{growth} from {SIZES[0]} to {SIZES[-1]} units"

"""The work of a heal grows in proportion to the store: a dry run (plan and verification) and a
heal in place (of a copy, unsafe fixes included), on every line-store shape of
`bench/bench_growth.py` and the database shapes whose fixes grow with the store. Counted as
`test_growth_work.py` counts a scan; before the Claude Code planner kept the uuids it had added
in a set, an in-place heal of one orphan call per exchange gave 1.095 here (it searched every
added result for each new one)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .test_growth_work import HEAL_SHAPES, LINEAR, SIZES, bench, marginal_growth


@pytest.mark.parametrize("name", HEAL_SHAPES)
def test_a_dry_run_heal_does_work_in_proportion_to_the_store(name: str, tmp_path: Path) -> None:
    growth = marginal_growth(name, tmp_path, heal=True)
    assert growth <= LINEAR, f"{name}: each unit's calls grew x{growth} from {SIZES[0]} to {SIZES[-1]} units"


@pytest.mark.parametrize("name", HEAL_SHAPES)
def test_a_heal_in_place_does_work_in_proportion_to_the_store(name: str, tmp_path: Path) -> None:
    growth = marginal_growth(name, tmp_path, heal=True, write=True)
    assert growth <= LINEAR, f"{name}: each unit's calls grew x{growth} from {SIZES[0]} to {SIZES[-1]} units"


def test_the_count_does_not_follow_the_machines_process_table(tmp_path: Path) -> None:
    # An in-place heal asks /proc who else holds the file; that walk's calls follow how many
    # processes and descriptors the machine has (CI once failed this file's bound on it), so the
    # count leaves it out. Forty more processes with a hundred descriptors each change nothing.
    path = bench.SHAPES["cc-orphan-calls"][1](tmp_path / "orphans.jsonl", 20)
    alone = bench.calls(path, heal=True, write=True)
    holding = "import sys; fds = [open(sys.executable, 'rb') for _ in range(100)]; print(flush=True); sys.stdin.read()"
    crowd = [subprocess.Popen([sys.executable, "-c", holding], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
             for _ in range(40)]  # fmt: skip
    try:
        for proc in crowd:
            assert proc.stdout is not None and proc.stdout.readline() == b"\n"  # its descriptors are open
        crowded = bench.calls(path, heal=True, write=True)
    finally:
        for proc in crowd:
            proc.kill()
            proc.wait()
    assert crowded == alone

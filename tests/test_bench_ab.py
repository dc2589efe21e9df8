"""`bench/bench_ab.py`: two trees' workers alternate scans of the same stores.

The timings belong to the machine and are never asserted; what is pinned is that each side's
worker scans what it is given, that the summary pairs the two sides' scans, and that a git
revision is checked out for the run and removed after.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from tests import bench_modules

ROOT = Path(__file__).resolve().parent.parent
JOURNAL = ROOT / "fixtures" / "kimi-code" / "golden" / "case-041.jsonl"
DB = ROOT / "fixtures" / "opencode" / "opencode.db"


def _bench() -> ModuleType:
    return bench_modules.load("bench_ab")


def _git_reads_this_checkout() -> bool:
    """Whether `git` is installed and reads this tree's HEAD: a clone owned by another user (a
    container's mounted volume) is refused by git's `safe.directory` check."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        return False
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "HEAD"], capture_output=True, text=True)
    return head.returncode == 0


def test_two_workers_of_one_tree_pair_their_scans_and_agree_on_the_findings() -> None:
    bench = _bench()
    a, b = bench.Worker(ROOT), bench.Worker(ROOT)
    try:
        one = a.scan([str(DB)])
        summary = bench.alternate(a, b, [str(DB), str(JOURNAL)], rounds=3)
    finally:
        a.close()
        b.close()
    assert one["findings"] > 0 and one["seconds"] > 0 and one["errors"] == []
    assert summary["rounds"] == 3 and 0 <= summary["b_faster_in"] <= 3
    assert summary["findings"]["a"] == summary["findings"]["b"] > one["findings"]  # both stores, both sides
    assert summary["same_findings"] is True
    assert summary["a_fastest_s"] <= summary["a_median_s"] and summary["b_fastest_s"] <= summary["b_median_s"]


def test_a_failed_scan_stops_the_bench_with_its_error(tmp_path: Path) -> None:
    bench = _bench()
    worker = bench.Worker(ROOT)
    try:
        with pytest.raises(SystemExit, match="scan failed"):
            worker.scan([str(tmp_path / "missing.jsonl")])
    finally:
        worker.close()


def test_a_directory_is_used_as_it_is_and_a_revision_is_checked_out_then_removed() -> None:
    bench = _bench()
    with bench.checked_out(str(ROOT)) as tree:
        assert tree == ROOT
    if not _git_reads_this_checkout():
        pytest.skip("not a git checkout, no git, or git refuses it (another user's clone)")
    with bench.checked_out("HEAD") as tree:
        assert (tree / "transcript_doctor" / "core.py").is_file()
        listed = subprocess.run(["git", "-C", str(ROOT), "worktree", "list"], capture_output=True, text=True).stdout
        assert str(tree) in listed
    assert not tree.exists()
    listed = subprocess.run(["git", "-C", str(ROOT), "worktree", "list"], capture_output=True, text=True).stdout
    assert str(tree) not in listed

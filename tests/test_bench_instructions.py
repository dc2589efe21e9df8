"""`bench/bench_instructions.py` without valgrind: its measured workloads run, and it reads callgrind's total.

The figures themselves are never asserted (they belong to the machine); what is pinned here is that
the process valgrind measures does the work it names, and leaves `quick_check` out only when told.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests import bench_modules
from transcript_doctor.fixes import sqlite

ROOT = Path(__file__).resolve().parent.parent
DB = ROOT / "fixtures" / "opencode" / "opencode.db"
JOURNAL = ROOT / "fixtures" / "kimi-code" / "golden" / "case-041.jsonl"


def _bench() -> ModuleType:
    return bench_modules.load("bench_instructions")


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    # Recorded first, so whatever the bench patches is put back after the test.
    monkeypatch.setattr(sqlite.IntegrityCheck, "start", sqlite.IntegrityCheck.start)
    monkeypatch.setattr(sqlite.IntegrityCheck, "problems", sqlite.IntegrityCheck.problems)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return _bench()


def test_the_total_is_the_totals_line() -> None:
    text = "version: 1\nevents: Ir\nsummary: 1234\nfn=(1) main\n1 5\ntotals: 1234\n"
    assert _bench().callgrind_total(text) == 1234
    assert _bench().callgrind_total("events: Ir\nsummary: 7\n") is None


@pytest.mark.parametrize("kind, path", [("opencode", DB), ("kimi", JOURNAL)])
@pytest.mark.parametrize("mode", ["scan", "floor", "warm-up"])
def test_each_measured_mode_runs_its_work(bench: ModuleType, mode: str, kind: str, path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = bench._workloads

    def counted(kind: str, path: Path) -> tuple:
        run_scan, floor = real(kind, path)
        return (lambda: calls.append("scan") or run_scan()), (lambda: calls.append("floor") or floor())

    monkeypatch.setattr(bench, "_workloads", counted)
    bench.child(kind, mode, path, 2, quick_check=True)
    extra = {"scan": ["scan", "scan"], "floor": ["floor", "floor"], "warm-up": []}[mode]
    assert calls == ["scan", "floor", *extra]


def test_quick_check_is_left_out_only_when_asked(bench: ModuleType) -> None:
    original = sqlite.IntegrityCheck.problems
    bench.child("opencode", "warm-up", DB, 1, quick_check=True)
    assert sqlite.IntegrityCheck.problems is original
    bench.child("opencode", "warm-up", DB, 1, quick_check=False)
    assert sqlite.IntegrityCheck.problems is not original
    assert sqlite.IntegrityCheck.problems(object(), None, False) == []


def test_the_kimi_floor_parses_every_record_of_the_journal(bench: ModuleType) -> None:
    scan, floor = bench._workloads("kimi", JOURNAL)
    records = sum(1 for line in JOURNAL.read_bytes().splitlines() if line.strip())
    assert records > 0 and floor() == records
    assert not scan().files[0].error


def test_a_kimi_journal_is_built_only_when_missing(bench: ModuleType, tmp_path: Path) -> None:
    built = bench._journal(None, 1, "dense", tmp_path)
    assert built.stat().st_size >= 1_000_000
    assert bench._journal(JOURNAL, 1, "dense", tmp_path) == JOURNAL  # an existing journal is measured as it is


def test_every_measured_process_has_one_hash_seed(bench: ModuleType, monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    seen: list[dict[str, str]] = []

    def run(cmd: list[str], **kwargs: object) -> object:
        seen.append(kwargs["env"])  # type: ignore[arg-type]
        Path(cmd[2].split("=", 1)[1]).write_text("events: Ir\ntotals: 42\n")
        return type("Done", (), {"returncode": 0, "stderr": ""})()

    monkeypatch.setattr(bench.subprocess, "run", run)
    assert bench.instructions(["kimi", "scan", "x", "1"], tmp_path / "out") == 42
    assert seen and seen[0]["PYTHONHASHSEED"] == "0"

"""`bench/bench_kimi.py`'s in-process stages: each measures the work it names (no figure is asserted)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import orjson
import pytest

from tests import bench_modules

ROOT = Path(__file__).resolve().parent.parent
JOURNAL = ROOT / "fixtures" / "kimi-code" / "golden" / "case-041.jsonl"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.setattr(sys, "path", list(sys.path))  # in_process puts this checkout first
    return bench_modules.load("bench_kimi")


def test_the_reader_stage_offers_every_record_a_scan_offers_its_hot_path(bench: ModuleType, tmp_path: Path) -> None:
    journal = tmp_path / "wire.jsonl"
    bench.build(journal, 1, profile="dense")
    parsed = [orjson.loads(line) for line in journal.read_bytes().splitlines()]
    assert bench.parse_floor(journal) == len(parsed) > 1000
    offered = [r for r in parsed[1:]  # (never the header)
               if r["type"] == "context.append_message" or r["type"] == "context.append_loop_event"]
    assert bench.reader_only(journal) == len(offered)


def test_stages_are_printed_only_when_asked(bench: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    bench.in_process(JOURNAL, 1)
    plain = capsys.readouterr().out
    assert "of the parse floor" in plain and "alone" not in plain
    bench.in_process(JOURNAL, 2, stages=True)
    staged = capsys.readouterr().out
    assert "reader alone" in staged and "replay alone" in staged

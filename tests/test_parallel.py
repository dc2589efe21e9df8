"""`-j N`: worker processes give the same bytes as a serial scan; one input's failure stays its own."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from transcript_doctor import parallel
from transcript_doctor.core import Report, ScanConfig, scan
from transcript_doctor.model import FileResult
from transcript_doctor.reporters import REPORTERS

from .stores import ROOT, store_files


def tdoc(*args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "transcript_doctor", *args], cwd=ROOT, capture_output=True, env=env, check=False
    )


@pytest.fixture(scope="module")
def inputs() -> list[str]:
    files = store_files()
    assert len(files) > 8
    return files


@pytest.fixture(scope="module")
def reports(inputs) -> tuple[Report, Report]:
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return scan(inputs, ScanConfig(jobs=1)), scan(inputs, ScanConfig(jobs=4))
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_cli_j1_and_j4_are_byte_identical(inputs, fmt):
    serial = tdoc("scan", "--no-config", "-f", fmt, "-j", "1", *inputs)
    pooled = tdoc("scan", "--no-config", "-f", fmt, "-j", "4", *inputs)
    assert serial.stdout, serial.stderr.decode()[-500:]
    assert serial.stdout == pooled.stdout
    assert serial.stderr == pooled.stderr
    assert serial.returncode == pooled.returncode


@pytest.mark.parametrize("fmt", sorted(REPORTERS))
def test_every_format_renders_the_same_bytes(reports, fmt, monkeypatch):
    monkeypatch.chdir(ROOT)
    rendered = []
    for report in reports:
        out = io.StringIO()
        REPORTERS[fmt](report, out)
        rendered.append(out.getvalue())
    assert rendered[0] and rendered[0] == rendered[1]


def test_library_scan_in_workers_equals_serial(reports):
    one, many = reports
    assert one.as_dict() == many.as_dict()
    assert [fr.path for fr in one.files] == sorted(fr.path for fr in one.files)
    assert one.exit_code("error") == many.exit_code("error")


def test_no_progress_output_when_stderr_is_not_a_terminal(inputs):
    res = tdoc("scan", "--no-config", "-f", "ndjson", "-j", "2", *small(inputs))
    assert b"scanning" not in res.stderr


def small(inputs: list[str]) -> list[str]:
    return sorted(inputs, key=lambda p: (ROOT / p).stat().st_size)[:10]


# --------------------------------------------------------------------------- isolation


def test_a_bug_in_one_input_becomes_that_inputs_error(monkeypatch, tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text("x\n")

    def boom(path, display, config, codes, shard=None):
        raise ValueError("check exploded")

    monkeypatch.setattr("transcript_doctor.core.scan_file", boom)
    result = parallel.scan_one(good, str(good), ScanConfig())
    assert result.error == "internal error: ValueError: check exploded"


def crash_on_boom(chunk, config):
    """Runs in a worker: kills the worker process on an input named *boom*."""
    if any("boom" in display for _, display in chunk):
        os._exit(3)
    return [FileResult(path=display, format="test", records=1) for _, display in chunk]


def test_a_dead_worker_takes_down_only_the_input_that_killed_it(tmp_path):
    names = [f"f{i:02d}.jsonl" for i in range(12)]
    names[5] = "f05-boom.jsonl"
    inputs = [(tmp_path / n, str(tmp_path / n)) for n in names]
    results = parallel._run_pool(inputs, ScanConfig(), [1] * len(inputs), 2, None, worker=crash_on_boom)
    assert [r.path for r in results] == [d for _, d in inputs]
    errors = {r.path: r.error for r in results if r.error}
    assert errors == {str(tmp_path / "f05-boom.jsonl"): parallel.WORKER_DIED}


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def start(self, files: int, total_bytes: int) -> None:
        self.calls.append(("start", files, total_bytes))

    def advance(self, files: int, nbytes: int) -> None:
        self.calls.append(("advance", files, nbytes))

    def stop(self) -> None:
        self.calls.append(("stop",))


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_is_told_every_file_and_byte(inputs, jobs, monkeypatch):
    monkeypatch.chdir(ROOT)
    inputs = small(inputs)
    rec = Recorder()
    scan(inputs, ScanConfig(jobs=jobs), progress=rec)
    start, *advances, stop = rec.calls
    total = sum((ROOT / p).stat().st_size for p in inputs)
    assert start == ("start", len(inputs), total) and stop == ("stop",)
    assert sum(a[1] for a in advances) == len(inputs)
    assert sum(a[2] for a in advances) == total


# --------------------------------------------------------------------------- choosing workers


def test_worker_count(monkeypatch):
    monkeypatch.setattr(parallel, "cpu_count", lambda: 8)
    few = [(Path(f"{i}"), str(i)) for i in range(3)]
    many = [(Path(f"{i}"), str(i)) for i in range(50)]
    assert parallel.workers_for(few[:1], 8, [0]) == 1  # one input: never a pool
    assert parallel.workers_for(few, 8, [0, 0, 0]) == 3  # explicit -j: capped by the inputs
    assert parallel.workers_for(few, 0, [0, 0, 0]) == 1  # auto, small work: stay in process
    assert parallel.workers_for(few, 0, [parallel.AUTO_MIN_BYTES, 0, 0]) == min(3, parallel.cpu_count())
    assert parallel.workers_for(many, None, [0] * 50) == min(50, parallel.cpu_count())
    with pytest.raises(Exception, match="jobs"):
        parallel.workers_for(few, -1, [0, 0, 0])


@pytest.mark.parametrize(("cpus", "jobs", "inputs", "expected"), [
    (2, 200, 50, 2),   # -j 200 on 2 CPUs: 2 workers
    (2, 2, 50, 2),     # exactly the CPUs
    (4, 3, 50, 3),     # fewer than the CPUs: as asked
    (2, 200, 1, 1),    # one input: in process whatever -j says
])  # fmt: skip
def test_explicit_jobs_are_capped_at_the_cpu_count(monkeypatch, cpus, jobs, inputs, expected):
    monkeypatch.setattr(parallel, "cpu_count", lambda: cpus)
    work = [(Path(f"{i}"), str(i)) for i in range(inputs)]
    assert parallel.workers_for(work, jobs, [0] * inputs) == expected


def test_chunks_cover_every_index_once_in_order():
    indexes = list(range(1000))
    chunks = list(parallel._chunks(indexes, 2))
    assert [i for c in chunks for i in c] == indexes
    assert max(len(c) for c in chunks) <= parallel.MAX_CHUNK


def unpicklable_result(chunk, config):
    """Runs in a worker: returns something that cannot travel back to the parent."""
    return [FileResult(path=display, format="test", findings=[lambda: None]) for _, display in chunk]


def test_results_that_cannot_come_back_are_errors_of_their_inputs(tmp_path):
    inputs = [(tmp_path / f"{i}.jsonl", str(tmp_path / f"{i}.jsonl")) for i in range(4)]
    results = parallel._run_pool(inputs, ScanConfig(), [1] * 4, 2, None, worker=unpicklable_result)
    assert [r.path for r in results] == [d for _, d in inputs]
    assert all(r.error and r.error.startswith("internal error:") for r in results)


def test_a_main_script_read_from_stdin_keeps_the_scan_in_process(monkeypatch):
    import types

    fake = types.ModuleType("__main__")
    fake.__file__ = "<stdin>"
    monkeypatch.setitem(sys.modules, "__main__", fake)
    many = [(Path(f"{i}"), str(i)) for i in range(50)]
    assert parallel.workers_for(many, 4, [0] * 50) == 1


def test_with_other_threads_alive_workers_come_from_a_fork_server(inputs, reports, monkeypatch):
    """A progress bar runs a thread; forking then is unsafe, and the result must not change."""
    import threading

    monkeypatch.chdir(ROOT)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    try:
        assert parallel._context().get_start_method() in ("forkserver", "spawn")
        pooled = scan(inputs, ScanConfig(jobs=2))
    finally:
        stop.set()
        thread.join()
    assert pooled.as_dict() == reports[0].as_dict()
    # Once this process is single-threaded again, workers are forked. Other tests of this session
    # may have left library threads behind (Dask, fsspec), so the thread count is pinned here.
    monkeypatch.setattr(parallel.threading, "active_count", lambda: 1)
    assert parallel._context().get_start_method() == "fork"

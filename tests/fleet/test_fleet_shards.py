"""A large local database on a fleet scan: split into shards of its sessions, one task each, and
merged back into the one result a local scan gives (`fleet.run.split_items`, `whole_results`)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.bench_modules import load
from tests.fleet.conftest import json_report
from tests.stores import ROOT
from tests.test_parallel import Recorder
from transcript_doctor import shards
from transcript_doctor.core import Report, ScanConfig, scan
from transcript_doctor.fleet.run import FleetRun, InlineExecutor, batches
from transcript_doctor.fleet.tasks import Item, scan_batch
from transcript_doctor.stores.shard import Shard


class _Wide(InlineExecutor):
    """Runs tasks here, one at a time, but says it has `count` workers (so large stores split);
    records each batch it is given, and loses those holding a shard index in `lose`."""

    def __init__(self, count: int = 4, lose: frozenset[int] = frozenset()) -> None:
        self.count = count
        self.lose = lose
        self.batches: list[list[Item]] = []
        self.asked = 0

    def workers(self) -> int:
        self.asked += 1
        return self.count

    def submit(self, fn: Any, *args: Any) -> Any:
        if fn is scan_batch:
            batch = args[0]
            self.batches.append(batch)
            if any(i.shard is not None and i.shard.index in self.lose for i in batch):
                return super().submit(_die)
        return super().submit(fn, *args)


def _die() -> None:
    raise RuntimeError("KilledWorker: worker lost")


@pytest.fixture(scope="module")
def databases(tmp_path_factory) -> dict[str, Path]:
    """Small bench databases of many sessions, with findings of the shared and the native rules."""
    folder = tmp_path_factory.mktemp("fleet-shards")
    made = {"hermes": folder / "state.db", "opencode": folder / "opencode.db"}
    load("bench_hermes").build(made["hermes"], 150, 8)
    load("bench_opencode").build(made["opencode"], 900, 9)
    return made


@pytest.fixture
def split_small(monkeypatch) -> None:
    """Every splittable store counts as large, and 16 KB make a shard."""
    monkeypatch.setattr(shards, "SPLIT_MIN_BYTES", 1)
    monkeypatch.setattr(shards, "SHARD_MIN_BYTES", 16 * 1024)


def _local(paths: list[str]) -> str:
    return json_report(scan(paths, ScanConfig(jobs=1)))


@pytest.mark.parametrize("kind", ["hermes", "opencode"])
def test_a_split_database_reports_what_a_local_scan_reports(kind, databases, split_small) -> None:
    path = str(databases[kind])
    executor = _Wide(count=3)
    got = json_report(Report(FleetRun(executor, ScanConfig(jobs=1)).scan([path])))
    assert got == _local([path])
    shard_items = [item for batch in executor.batches for item in batch]
    assert all(len(batch) == 1 for batch in executor.batches)  # a shard is a task of its own
    assert [item.shard for item in shard_items] == [Shard(i, 6) for i in range(6)]  # two per worker
    assert sum(item.size for item in shard_items) == databases[kind].stat().st_size


def test_small_stores_beside_a_split_database_go_out_in_batches_as_before(databases, split_small, tmp_path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("fixtures/eve/support-chat.v26.ndjson", "fixtures/kimi-code/golden/case-342.jsonl"):
        shutil.copy(ROOT / name, tree)
    shutil.copy(databases["opencode"], tree / "zz-opencode.db")  # after them: batches group neighbours
    executor = _Wide(count=2)
    got = json_report(Report(FleetRun(executor, ScanConfig(jobs=1)).scan([str(tree)])))
    assert got == _local([str(tree)])
    assert [[i.shard.index if i.shard else None for i in batch] for batch in executor.batches] == [
        [None, None], [0], [1], [2], [3]]  # the two small stores together, then four shards alone


def test_without_room_for_more_than_one_task_nothing_is_split(databases, split_small) -> None:
    executor = _Wide(count=1)
    FleetRun(executor, ScanConfig(jobs=1)).scan([str(databases["hermes"])])
    assert [[item.shard for item in batch] for batch in executor.batches] == [[None]]


def test_a_store_below_the_split_size_is_one_task(databases) -> None:
    executor = _Wide(count=4)
    FleetRun(executor, ScanConfig(jobs=1)).scan([str(databases["opencode"])])
    assert [[item.shard for item in batch] for batch in executor.batches] == [[None]]


def test_a_remote_database_is_not_split(databases, split_small, monkeypatch) -> None:
    pytest.importorskip("fsspec")
    monkeypatch.setattr(shards, "_splits", lambda path, forced: True)  # were it read as a local database
    url = databases["opencode"].as_uri()
    executor = _Wide(count=4)
    results = FleetRun(executor, ScanConfig(jobs=1)).scan([url])
    assert [[item.shard for item in batch] for batch in executor.batches] == [[None]]
    assert results[0].error is None and results[0].sessions == 100


def test_one_session_or_a_kind_that_does_not_split_is_one_task(databases, split_small) -> None:
    config = ScanConfig(jobs=1)
    config.options.session = "ses_bench00000007"
    executor = _Wide(count=4)
    FleetRun(executor, config).scan([str(databases["opencode"])])
    assert [[item.shard for item in batch] for batch in executor.batches] == [[None]]
    executor = _Wide(count=4)
    FleetRun(executor, ScanConfig(jobs=1)).scan([str(ROOT / "fixtures/kimi-code/golden/case-342.jsonl")])
    assert [[item.shard for item in batch] for batch in executor.batches] == [[None]]


def test_a_lost_shard_fails_its_store_and_no_other(databases, split_small, tmp_path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(databases["hermes"], tree / "state.db")
    shutil.copy(ROOT / "fixtures/eve/support-chat.v26.ndjson", tree)
    results = {r.path: r for r in FleetRun(_Wide(count=2, lose=frozenset({1})), ScanConfig(jobs=1)).scan([str(tree)])}
    assert len(results) == 2
    failed = results[str(tree / "state.db")]
    assert "worker scanning this store died" in (failed.error or "")
    assert (failed.findings, failed.sessions, failed.records) == ([], 0, 0)
    assert results[str(tree / "support-chat.v26.ndjson")].error is None


def test_a_split_store_is_one_file_and_all_its_bytes_to_a_progress_bar(databases, split_small) -> None:
    path = databases["opencode"]
    recorder = Recorder()
    FleetRun(_Wide(count=2), ScanConfig(jobs=1), progress=recorder).scan([str(path)])
    start, *advances, stop = recorder.calls
    assert start == ("start", 1, path.stat().st_size) and stop == ("stop",)
    assert len(advances) == 4
    assert [files for _, files, _ in advances] == [0, 0, 0, 1]
    assert sum(nbytes for _, _, nbytes in advances) == path.stat().st_size


def test_a_lost_batch_sent_again_is_counted_once(tmp_path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("fixtures/eve/support-chat.v26.ndjson", "fixtures/kimi-code/golden/case-342.jsonl"):
        shutil.copy(ROOT / name, tree)

    class LosesFirst(_Wide):
        def submit(self, fn: Any, *args: Any) -> Any:
            if fn is scan_batch and not self.batches:
                self.batches.append(args[0])
                return InlineExecutor.submit(self, _die)
            return super().submit(fn, *args)

    recorder = Recorder()
    FleetRun(LosesFirst(count=2), ScanConfig(jobs=1), progress=recorder).scan([str(tree)])
    advances = [call for call in recorder.calls if call[0] == "advance"]
    total = sum(p.stat().st_size for p in tree.iterdir())
    assert sum(files for _, files, _ in advances) == 2 and sum(n for _, _, n in advances) == total


def test_the_client_holds_a_split_database_open_while_its_shards_run(databases, split_small) -> None:
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("needs /proc to list this process's open files")
    path = databases["hermes"].resolve()

    def held() -> bool:
        return any(Path(f"/proc/self/fd/{fd.name}").resolve() == path for fd in fds.iterdir() if fd.is_symlink())

    seen: list[bool] = []

    class Watching(_Wide):
        def submit(self, fn: Any, *args: Any) -> Any:
            if fn is scan_batch:
                seen.append(held())
            return super().submit(fn, *args)

    FleetRun(Watching(count=2), ScanConfig(jobs=1)).scan([str(path)])
    assert seen == [True] * 4
    assert not held()


def test_a_shard_is_a_batch_of_its_own_whatever_its_size() -> None:
    items = [Item("a", 10, False, True), Item("db", 10, False, True, Shard(0, 2)), Item("b", 10, False, True),
             Item("db", 10, False, True, Shard(1, 2))]
    assert [[i.uri for i in batch] for batch in batches(items)] == [["a"], ["db"], ["b"], ["db"]]


def test_a_local_cluster_of_worker_processes_scans_the_shards_and_reports_as_a_local_scan(
        databases, split_small) -> None:  # fmt: skip
    from distributed import Client, LocalCluster

    from transcript_doctor.fleet.cluster import DaskExecutor

    path = str(databases["hermes"])
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:  # fmt: skip
        executor = DaskExecutor(client)
        assert executor.workers() == 2
        got = json_report(Report(FleetRun(executor, ScanConfig(jobs=1)).scan([path])))
    assert got == _local([path])


def test_the_cluster_is_asked_its_size_once_and_only_when_a_store_is_large_enough(databases, tmp_path,
                                                                                   monkeypatch) -> None:  # fmt: skip
    small = _Wide(count=4)
    FleetRun(small, ScanConfig(jobs=1)).scan([str(databases["opencode"]), str(databases["hermes"])])
    assert small.asked == 0 and all(i.shard is None for b in small.batches for i in b)
    monkeypatch.setattr(shards, "SPLIT_MIN_BYTES", 1)
    large = _Wide(count=2)
    FleetRun(large, ScanConfig(jobs=1)).scan([str(databases["opencode"]), str(databases["hermes"])])
    shards_sent = [i.shard for b in large.batches for i in b]
    assert large.asked == 1 and shards_sent == [Shard(0, 2), Shard(1, 2)] * 2  # small stores: the least, two each

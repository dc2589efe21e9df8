"""Fleet scans without a cluster: URIs, storage options, batching, lost tasks, the inline executor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fleet.conftest import build_tree, json_report
from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.fleet import fleet_scan, is_url, parse_storage_options
from transcript_doctor.fleet.run import (
    BATCH_BYTES,
    BATCH_FILES,
    FleetRun,
    InlineExecutor,
    batches,
)
from transcript_doctor.fleet.tasks import Item, scan_batch
from transcript_doctor.model import TdocError


@pytest.mark.parametrize(
    ("arg", "url"),
    [("s3://bucket/prefix/", True), ("gs://b/x.jsonl", True), ("file:///tmp/x", True),
     ("memory://a", True), ("sessions/", False), ("/abs/wire.jsonl", False), ("C:/x.jsonl", False),
     ("*.jsonl", False), ("-", False), ("weird:name.jsonl", False)],
)
def test_is_url(arg: str, url: bool) -> None:
    assert is_url(arg) is url


def test_storage_options_parse_types_and_nesting() -> None:
    got = parse_storage_options(["endpoint_url=http://127.0.0.1:9000", "anon=false", "use_ssl=True",
                                 "client_kwargs.region_name=eu-west-1", "max_retries=5", "token=null",
                                 "secret=a=b"])
    assert got == {"endpoint_url": "http://127.0.0.1:9000", "anon": False, "use_ssl": True,
                   "client_kwargs": {"region_name": "eu-west-1"}, "max_retries": 5, "token": None,
                   "secret": "a=b"}


@pytest.mark.parametrize("bad", ["novalue", "=x", " =x"])
def test_storage_options_reject_malformed(bad: str) -> None:
    with pytest.raises(TdocError, match="KEY=VALUE"):
        parse_storage_options([bad])


def test_storage_option_cannot_nest_under_a_value() -> None:
    with pytest.raises(TdocError, match="nests under"):
        parse_storage_options(["a=1", "a.b=2"])


def _items(sizes: list[int]) -> list[Item]:
    return [Item(f"s3://b/{i}.jsonl", size, True, False) for i, size in enumerate(sizes)]


def test_batches_group_small_stores_and_isolate_large_ones() -> None:
    items = _items([10] * (BATCH_FILES + 3) + [BATCH_BYTES] + [10, 10])
    got = list(batches(items))
    assert [len(b) for b in got] == [BATCH_FILES, 3, 1, 2]
    assert got[2][0].size == BATCH_BYTES
    assert [i for b in got for i in b] == items  # nothing lost, nothing reordered


def test_batches_respect_the_byte_budget() -> None:
    half = BATCH_BYTES // 2
    got = list(batches(_items([half - 1, half - 1, half - 1])))
    assert [len(b) for b in got] == [2, 1]


def test_inline_file_url_scan_equals_local_scan(tmp_path: Path) -> None:
    build_tree(tmp_path / "fleet", 2)
    local = json_report(scan([str(tmp_path / "fleet")], ScanConfig(jobs=1)))
    url = "file://" + str(tmp_path / "fleet")
    remote = json_report(fleet_scan([url], ScanConfig(jobs=1)))
    assert remote.replace(url, str(tmp_path / "fleet")) == local
    assert '"notes.json"' not in remote  # a directory listing leaves non-stores out, as a walk does


def test_named_remote_object_that_is_no_store_is_reported(tmp_path: Path) -> None:
    note = tmp_path / "notes.json"
    note.write_text('{"not": "a store"}\n')
    report = fleet_scan(["file://" + str(note)], ScanConfig(jobs=1))
    [result] = report.files
    assert result.path == "file://" + str(note)
    assert result.error and "not a store" in result.error
    assert result.error.startswith(result.path + ": ")  # named by its URI, not the worker's copy
    assert "tdoc-fleet-" not in result.error


def test_missing_object_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TdocError, match="no such object"):
        fleet_scan(["file://" + str(tmp_path / "absent.jsonl")], ScanConfig(jobs=1))


class _LosingExecutor(InlineExecutor):
    """Loses every task of more than one store, and every task for the stores named in `doomed`."""

    def __init__(self, doomed: set[str]) -> None:
        self.doomed = doomed
        self.submitted: list[int] = []

    def submit(self, fn: Any, *args: Any) -> Any:
        if fn is scan_batch:
            batch = args[0]
            self.submitted.append(len(batch))
            if len(batch) > 1 or batch[0].uri in self.doomed:
                return super().submit(_die)
        return super().submit(fn, *args)


def _die() -> None:
    raise RuntimeError("KilledWorker: worker lost")


def test_lost_batches_are_split_and_every_store_gets_a_result(tmp_path: Path) -> None:
    made = build_tree(tmp_path / "fleet", 3)
    doomed = {str(made[4])}
    executor = _LosingExecutor(doomed)
    results = FleetRun(executor, ScanConfig(jobs=1)).scan([str(tmp_path / "fleet")])
    assert sorted(r.path for r in results) == sorted(str(p) for p in made)
    errors = {r.path: r.error for r in results if r.error}
    assert set(errors) == doomed
    assert "worker scanning this store died" in errors[str(made[4])]
    assert executor.submitted[0] > 1 and executor.submitted.count(1) == len(made)


def test_stdin_cannot_go_to_a_cluster() -> None:
    with pytest.raises(TdocError, match="standard input"):
        FleetRun(InlineExecutor(), ScanConfig(jobs=1)).list_items(["-"])


def test_without_the_extra_the_fleet_options_say_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else real(name, *a))
    with pytest.raises(TdocError, match=r"pip install 'transcript-doctor\[fleet\]'"):
        fleet_scan(["fixtures/eve"], ScanConfig(jobs=1), cluster="local:1")

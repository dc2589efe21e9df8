"""One database store split over worker processes by its sessions gives what one process gives.

`stores.shard` says which sessions a shard reads, the Hermes and OpenCode stores read only theirs
(shard 0 adds what belongs to the whole store), and `shards` decides when to split and merges
the shards' results back into the store's one result.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transcript_doctor import parallel, shards
from transcript_doctor.core import ScanConfig, scan, scan_file
from transcript_doctor.model import FileResult, Finding
from transcript_doctor.stores import Options
from transcript_doctor.stores.hermes.reader import open_database
from transcript_doctor.stores.shard import Shard, shard_of

from .bench_modules import load
from .stores import ROOT
from .test_parallel import Recorder

FIXTURE_DBS = [
    "fixtures/hermes/hermes-state-v30.db",
    "fixtures/hermes/hermes-state-v21.db",
    "fixtures/hermes/hermes-state-v21-b.db",
    "fixtures/opencode/opencode.db",
]

SESSION_IDS = st.one_of(st.none(), st.text(max_size=12), st.binary(max_size=12), st.integers(-(2**63), 2**63 - 1))


# --------------------------------------------------------------------------- which shard holds a session


@given(SESSION_IDS, st.integers(1, 9))
def test_every_session_id_is_held_by_exactly_one_shard(session_id, count) -> None:
    holders = [i for i in range(count) if Shard(i, count).holds(session_id)]
    assert holders == [shard_of(session_id, count)]


@given(st.text(max_size=12), st.integers(1, 9))
def test_a_text_id_and_its_utf8_bytes_are_one_session(text, count) -> None:
    # Hermes picks its shard in SQL from the id's bytes (CAST AS BLOB), the store counts its
    # sessions in Python from the text: both must name the same shard.
    assert shard_of(text, count) == shard_of(text.encode("utf-8", "surrogatepass"), count)


def test_none_is_the_session_with_the_empty_id_and_numbers_hash_by_their_digits() -> None:
    for count in range(1, 8):
        assert shard_of(None, count) == shard_of("", count) == shard_of(b"", count)
        assert shard_of(42, count) == shard_of("42", count)


@pytest.mark.parametrize(("index", "count"), [(-1, 2), (2, 2), (0, 0)])
def test_a_shard_outside_its_count_is_refused(index, count) -> None:
    with pytest.raises(ValueError):
        Shard(index, count)


# --------------------------------------------------------------------------- shards of a store add up to it


def _whole(path: Path, config: ScanConfig) -> FileResult:
    return scan_file(path, str(path), config, config.codes())


def _sharded(path: Path, config: ScanConfig, count: int) -> FileResult:
    parts = [scan_file(path, str(path), config, config.codes(), Shard(i, count)) for i in range(count)]
    return shards.merge_shards(parts)


def _same(path: Path, config: ScanConfig, counts: tuple[int, ...] = (2, 3, 7)) -> FileResult:
    whole = _whole(path, config)
    assert whole.error is None
    for count in counts:
        merged = _sharded(path, config, count)
        assert (merged.sessions, merged.records, merged.format, merged.identity) == (
            whole.sessions, whole.records, whole.format, whole.identity)
        assert [f.as_dict() for f in merged.findings] == [f.as_dict() for f in whole.findings]
    return whole


@pytest.mark.parametrize("name", FIXTURE_DBS)
def test_the_shards_of_a_fixture_database_add_up_to_the_whole_scan(name, tmp_path) -> None:
    path = tmp_path / Path(name).name
    shutil.copy(ROOT / name, path)
    whole = _same(path, ScanConfig(jobs=1))
    assert whole.sessions >= 1


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict[str, Path]:
    """Bench databases, small: many sessions, with findings of the shared and the native rules."""
    folder = tmp_path_factory.mktemp("shards")
    hermes, opencode = folder / "state.db", folder / "opencode.db"
    load("bench_hermes").build(hermes, 150, 8)
    load("bench_opencode").build(opencode, 900, 9)
    return {"hermes": hermes, "opencode": opencode}


@pytest.mark.parametrize("kind", ["hermes", "opencode"])
def test_the_shards_of_a_database_of_many_sessions_add_up_to_the_whole_scan(kind, generated) -> None:
    whole = _same(generated[kind], ScanConfig(jobs=1))
    assert whole.sessions >= 100
    assert len({f.session for f in whole.findings}) > 3  # findings in several sessions, so in several shards
    assert {f.code for f in whole.findings} - {"F506"}


@pytest.mark.parametrize("kind", ["hermes", "opencode"])
def test_each_shard_reads_only_its_sessions_and_only_shard_0_the_store(kind, generated) -> None:
    path = generated[kind]
    config = ScanConfig(jobs=1)
    whole = _whole(path, config)
    for i in range(3):
        part = scan_file(path, str(path), config, config.codes(), Shard(i, 3))
        assert {f.session for f in part.findings} <= {s for s in {f.session for f in whole.findings} if Shard(i, 3).holds(s)}
        assert part.records == (whole.records if i == 0 else 0)
        assert whole.records > 0


@pytest.mark.parametrize("numbers", [True, False], ids=["with-numbers", "no-numbers"])
def test_hermes_sessions_with_odd_ids_scan_the_same_in_shards(tmp_path, numbers) -> None:
    """NULL, empty, numeric and BLOB session ids: the shard is picked in SQL, the sessions are
    counted in Python; the shards' merge equals the whole scan."""
    _same(_odd_ids_db(tmp_path, numbers), ScanConfig(jobs=1), counts=(2, 3, 4, 5, 7))


def _odd_ids_db(tmp_path: Path, numbers: bool = True) -> Path:
    path = tmp_path / "state.db"
    shutil.copy(ROOT / "fixtures/hermes/hermes-state-v30.db", path)
    conn = sqlite3.connect(path)
    for kind, name in conn.execute("SELECT type, name FROM sqlite_master WHERE type IN ('view', 'trigger')").fetchall():
        conn.execute(f"DROP {kind} {name}")
    # The same table without its NOT NULLs (a damaged or foreign database may lack them), and
    # session_id without a type (unary + drops it), so a number stays a number.
    names = [row[1] for row in conn.execute("PRAGMA table_info(messages)")]
    select = ", ".join("+session_id AS session_id" if n == "session_id" else f'"{n}"' for n in names)
    conn.executescript(
        f"CREATE TABLE loose AS SELECT {select} FROM messages; DROP TABLE messages;"
        "ALTER TABLE loose RENAME TO messages; CREATE INDEX idx_messages_session ON messages(session_id, timestamp);")
    ids = [row[0] for row in conn.execute("SELECT id FROM messages ORDER BY id")]
    # In row order, so that values SQLite holds equal interleave by row id (7, 7.0, 7; -0.0, 0.0):
    # NULL beside '', numbers beside their text, two texts read as one string ('\udcff').
    odd: list[object] = [None, "", None, 0, "s\u00e9ance", b"\xff\x00blob", "7", 2**60, float(2**60)]
    if numbers:
        odd += [7, 7.0, 7, -0.0, 0.0, 7.5]
    odd = [v for v in odd if numbers or not isinstance(v, (int, float))]
    texts = ["x'ff41'", "x'edb3bf'", "x'ff'"]  # not UTF-8; a lone surrogate; '\udcff' again, read another way
    assert len(ids) >= len(odd) + len(texts)
    for rid, sid in zip(ids, odd):
        conn.execute("UPDATE messages SET session_id = ? WHERE id = ?", (sid, rid))
    for rid, hexed in zip(ids[len(odd):], texts):
        conn.execute(f"UPDATE messages SET session_id = CAST({hexed} AS TEXT) WHERE id = ?", (rid,))
    conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('7', 'cli', 1)")
    conn.commit()
    kinds = {kind for (kind,) in conn.execute("SELECT DISTINCT typeof(session_id) FROM messages")}
    assert kinds == {"null", "text", "blob"} | ({"integer", "real"} if numbers else set())
    conn.close()
    return path


@pytest.mark.parametrize("numbers", [True, False], ids=["with-numbers", "no-numbers"])
@pytest.mark.parametrize("count", [2, 3, 5, 7])
def test_hermes_shards_read_each_row_once_whatever_its_session_id(tmp_path, count, numbers) -> None:
    from transcript_doctor.stores.hermes.reader import Database

    path = _odd_ids_db(tmp_path, numbers)
    conn = open_database(path)  # as a scan reads: text that is not UTF-8 is kept, not refused

    def groups(shard: Shard | None) -> list[tuple[object, list[object]]]:
        return [(sid, [r.id for r in rows]) for sid, rows in Database(conn, "db", shard).iter_sessions()]

    whole = groups(None)
    assert len(whole) >= 6
    parts = [groups(Shard(i, count)) for i in range(count)]
    assert sorted((g for part in parts for g in part), key=repr) == sorted(whole, key=repr)  # each row once
    for part in parts:
        assert part == [g for g in whole if g in part]  # in the order of the whole read
    conn.close()


def test_a_hermes_shard_hashes_each_session_id_once_not_each_row(tmp_path, monkeypatch) -> None:
    from transcript_doctor.stores.hermes import reader

    path = _odd_ids_db(tmp_path)
    conn = open_database(path)
    distinct = conn.execute("SELECT (SELECT count(*) FROM (SELECT DISTINCT session_id FROM messages)), count(*) "
                            "FROM messages").fetchone()  # NULL is one of the distinct ids here
    calls: list[object] = []
    monkeypatch.setattr(reader, "shard_of", lambda sid, count: calls.append(sid) or shard_of(sid, count))
    list(reader.Database(conn, "db", Shard(1, 3)).iter_sessions())
    conn.close()
    assert 0 < len(calls) <= distinct[0] < distinct[1]


@pytest.mark.parametrize("name", ["fixtures/hermes/hermes-state-v30.db", "fixtures/opencode/opencode.db"])
def test_a_damaged_database_reports_its_integrity_once(name, tmp_path) -> None:
    """F506 (and the whole store's counts) belong to shard 0: no other shard repeats them."""
    from .test_integrity_check import _damaged

    path = tmp_path / Path(name).name
    shutil.copy(ROOT / name, path)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")  # the damage is written into the main file
    conn.close()
    _damaged(path)
    config = ScanConfig(jobs=1)
    whole = _same(path, config, counts=(3,))
    assert [f.code for f in whole.findings].count("F506") == 1


# --------------------------------------------------------------------------- when a scan splits


def _split(path: Path, config: ScanConfig, workers: int, size: int = 1, display: str | None = None) -> list:
    tasks, owners = shards.split([(path, display or str(path))], [size], config, workers)
    assert owners == [0] * len(tasks)
    return [task[2] for task in tasks]


@pytest.fixture
def fixture_db(tmp_path) -> Path:
    """A copy: SQLite may write the -shm file of a WAL database it reads, even read-only."""
    path = tmp_path / "state.db"
    shutil.copy(ROOT / FIXTURE_DBS[0], path)
    return path


def test_a_database_is_split_when_asked_for_more_workers_than_inputs(fixture_db) -> None:
    db = fixture_db
    assert _split(db, ScanConfig(jobs=2), 2) == [Shard(0, 2), Shard(1, 2)]  # small: two shares
    assert _split(db, ScanConfig(jobs=0), 2, size=shards.SPLIT_MIN_BYTES) == [Shard(i, 4) for i in range(4)]
    # twice as many shares as workers, but none smaller than SHARD_MIN_BYTES
    assert len(_split(db, ScanConfig(jobs=0), 64, size=shards.SPLIT_MIN_BYTES)) == 4
    assert len(_split(db, ScanConfig(jobs=0), 64, size=1000 * shards.SHARD_MIN_BYTES)) == 128


@pytest.mark.parametrize(("case", "config", "workers", "size", "display"), [
    ("one worker", ScanConfig(jobs=2), 1, 1, None),
    ("auto, a small database", ScanConfig(jobs=0), 2, shards.SPLIT_MIN_BYTES - 1, None),
    ("one session asked for", ScanConfig(jobs=2, options=Options(session="s")), 2, 1, None),
    ("standard input", ScanConfig(jobs=2), 2, 1, "-"),
])
def test_a_database_is_scanned_whole(case, config, workers, size, display, fixture_db) -> None:
    assert _split(fixture_db, config, workers, size, display) == [None], case


def test_a_store_kind_that_does_not_split_is_scanned_whole() -> None:
    journal = next((ROOT / "fixtures").rglob("*.jsonl"))
    assert _split(journal, ScanConfig(jobs=2), 4, size=shards.SPLIT_MIN_BYTES) == [None]
    assert _split(ROOT / "missing.db", ScanConfig(jobs=2), 4) == [None]  # the scan reports it


def test_a_non_splitting_store_met_by_a_shard_is_scanned_by_shard_0_alone(tmp_path) -> None:
    """The file became another kind of store between the split and the shard's read."""
    journal = ROOT / "fixtures/kimi-code/golden/c01_legacy_compaction_after_vacuous.jsonl"
    config = ScanConfig(jobs=1)
    whole = _whole(journal, config)
    merged = _sharded(journal, config, 3)
    assert [f.as_dict() for f in merged.findings] == [f.as_dict() for f in whole.findings]
    assert merged.sessions == whole.sessions


# --------------------------------------------------------------------------- merging


def _result(path: str = "db", **fields) -> FileResult:
    return FileResult(path=path, format="hermes-db", **fields)


def test_a_failed_shard_fails_its_store_and_a_refusal_comes_first() -> None:
    finding = Finding("W101", "n", "warning", "m", "db", "hermes-db", session="a")
    ok = _result(sessions=2, records=5, findings=[finding])
    failed = _result(error="cannot read")
    refused = _result(error="in use", refused=True)
    assert shards.merge_shards([ok, failed]).error == "cannot read"
    merged = shards.merge_shards([ok, failed, refused])
    assert (merged.error, merged.refused, merged.findings) == ("in use", True, [])
    whole = shards.merge_shards([ok, _result(sessions=1)])
    assert (whole.sessions, whole.records, whole.error, len(whole.findings)) == (3, 5, None, 1)


def test_the_identity_of_a_one_session_store_comes_from_the_shard_that_read_it() -> None:
    merged = shards.merge_shards([_result(), _result(sessions=1, identity=("s", 5.0)), _result()])
    assert merged.identity == ("s", 5.0)
    assert shards.merge_shards([_result(sessions=1, identity=("a", 1.0)), _result(sessions=1)]).identity == (None, None)


def test_the_shards_of_a_store_share_its_bytes_and_add_up_to_them() -> None:
    assert shards.byte_shares([10, 7, 5], [0, 0, 0, 1, 2, 2]) == [3, 3, 4, 7, 2, 3]
    assert shards.byte_shares([], []) == []


def test_a_file_counts_as_done_with_its_last_task() -> None:
    assert shards.last_of_input([0, 0, 0, 1, 2, 2]) == [0, 0, 1, 1, 0, 1]
    assert shards.last_of_input([]) == []


# --------------------------------------------------------------------------- through the pool


def crash_on_shard_1(chunk, config):
    """Runs in a worker: kills the worker process on shard 1 of any input."""
    if any(len(task) > 2 and task[2] is not None and task[2].index == 1 for task in chunk):
        os._exit(3)
    return [FileResult(path=task[1], format="test", sessions=1, records=1) for task in chunk]


def test_a_dead_worker_fails_the_store_whose_shard_it_was_scanning(tmp_path) -> None:
    db = str(tmp_path / "state.db")
    tasks = [(tmp_path / "a.jsonl", str(tmp_path / "a.jsonl"), None)] + [
        (Path(db), db, Shard(i, 3)) for i in range(3)]
    owners = [0, 1, 1, 1]
    results = parallel._run_pool(tasks, ScanConfig(), [1] * 4, 2, None, worker=crash_on_shard_1)
    merged = shards.merge(results, owners, 2)
    assert [(r.path, r.error) for r in merged] == [(str(tmp_path / "a.jsonl"), None), (db, parallel.WORKER_DIED)]


def test_a_split_scan_is_one_file_to_a_progress_bar_and_gives_the_serial_report(generated, monkeypatch) -> None:
    monkeypatch.setattr(parallel, "cpu_count", lambda: 2)
    merges: list[int] = []
    real = shards.merge_shards
    monkeypatch.setattr(shards, "merge_shards", lambda parts: merges.append(len(parts)) or real(parts))
    path = generated["opencode"]
    recorder = Recorder()
    split = scan([str(path)], ScanConfig(jobs=2), progress=recorder)
    assert merges == [2]  # the store went to the pool as two shards
    serial = scan([str(path)], ScanConfig(jobs=1))
    assert split.as_dict() == serial.as_dict()
    advances = [c for c in recorder.calls if c[0] == "advance"]
    size = path.stat().st_size
    assert recorder.calls[0] == ("start", 1, size)
    assert (sum(c[1] for c in advances), sum(c[2] for c in advances)) == (1, size)


@pytest.mark.skipif(parallel.cpu_count() < 2, reason="one CPU: -j 2 starts no pool, so nothing is split")
def test_a_split_scan_through_the_command_line_prints_what_one_process_prints(generated) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "transcript_doctor", "scan", *args], cwd=ROOT,
                              capture_output=True, check=False)  # fmt: skip

    for path in generated.values():
        one, split = run("-j", "1", "-f", "json", str(path)), run("-j", "2", "-f", "json", str(path))
        assert (one.returncode, one.stdout, one.stderr) == (split.returncode, split.stdout, split.stderr)
        assert one.returncode == 1 and b'"findings"' in one.stdout


def test_the_parallel_bench_takes_a_database_and_finds_the_split_report_equal(generated, capsys) -> None:
    bench = load("bench_parallel")
    assert bench.main(["--database", str(generated["hermes"]), "--repeat", "1", "--jobs", "1", "2"]) == 0
    out = capsys.readouterr().out
    assert "corpus: 1 files" in out and "from named databases" in out and "speed-up -j 2 over -j 1" in out


def _open_here(path: Path) -> bool:
    fds = Path("/proc/self/fd")
    return any(os.path.realpath(fd) == str(path.resolve()) for fd in fds.iterdir() if fd.is_symlink())


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to list this process's open files")
def test_a_split_database_is_held_open_by_the_scan_while_its_shards_open_it(generated, monkeypatch) -> None:
    """Shards of a WAL database open it together; the first reader after all have gone rebuilds its
    shared-memory index under a lock that fails the others at once (seen: 2 scans in 12 refused as
    "locked"). A read connection held by the parent for the pool's whole run keeps the index."""
    path = generated["opencode"]
    real = parallel._run_pool
    seen: list[bool] = []

    def watched(*args, **kwargs):
        seen.append(_open_here(path))
        return real(*args, **kwargs)

    monkeypatch.setattr(parallel, "cpu_count", lambda: 2)
    monkeypatch.setattr(parallel, "_run_pool", watched)
    assert not _open_here(path)
    report = scan([str(path)], ScanConfig(jobs=2))
    assert seen == [True] and not _open_here(path)
    assert report.files[0].error is None

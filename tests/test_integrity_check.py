"""The SQLite integrity check that runs on its own thread beside a scan (fixes/sqlite.py
`IntegrityCheck`): same answer as the check on the caller's connection, whenever it finishes;
a fallback when its own connection cannot be opened; nothing left running after `close`."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.fixes.sqlite import IntegrityCheck, integrity_problems, open_readonly
from transcript_doctor.stores import Options, open_store
from transcript_doctor.stores.options import SqliteOptions


def _filled(path: Path, rows: int = 3000) -> Path:
    """`path` (a new database or an existing one) with an indexed table of `rows` rows added."""
    with sqlite3.connect(path) as conn:
        conn.executescript("CREATE TABLE filler (x TEXT); CREATE INDEX idx_filler ON filler (x);")
        conn.executemany("INSERT INTO filler VALUES (?)", [(f"value {i:05d} " * 5,) for i in range(rows)])
    conn.close()
    return path


def _damaged(path: Path) -> Path:
    """`_filled`, then the header's count of free pages raised to 7 (there are none): both checks
    report "Main freelist: size is 0 but should be 7", the same way on every run, and the tables
    still read. (Overwriting a page's cell pointers, as this once did, makes SQLite read past the
    page: `integrity_check` then gives a list on some runs and aborts as "malformed" on others.)"""
    _filled(path)
    data = bytearray(path.read_bytes())
    assert data[32:40] == bytes(8)  # no freelist
    data[36:40] = (7).to_bytes(4, "big")
    path.write_bytes(bytes(data))
    return path


_EARLIER: set[threading.Thread] = set()


@pytest.fixture(autouse=True)
def _earlier_checks() -> None:
    """The check threads alive before the test (another test's store left unclosed, still
    checking): `_threads` counts only those this test started, whatever ran before it."""
    _EARLIER.clear()
    _EARLIER.update(t for t in threading.enumerate() if t.name == "tdoc-integrity-check")


def _threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "tdoc-integrity-check" and t not in _EARLIER]


@pytest.mark.parametrize("deep", [False, True])
@pytest.mark.parametrize("make", [_filled, _damaged], ids=["sound", "damaged"])
def test_the_background_check_answers_as_the_callers_own_check(tmp_path: Path, make, deep: bool) -> None:
    db = make(tmp_path / "x.db")
    conn = open_readonly(db)
    expected = integrity_problems(conn, deep)
    assert (expected == []) == (make is _filled)
    conn.close()  # the answer must come from the thread: a check on this connection would raise
    check = IntegrityCheck(db)
    check.start(deep)
    assert check.problems(conn, deep) == expected
    assert not _threads()


def test_a_check_that_cannot_open_its_connection_checks_on_the_callers(tmp_path: Path) -> None:
    db = _damaged(tmp_path / "x.db")
    conn = open_readonly(db)
    try:
        check = IntegrityCheck(tmp_path / "gone.db")  # no such file: the thread's open fails
        check.start(deep=False)
        found = check.problems(conn, deep=False)
        assert found and found == integrity_problems(conn)  # the damage, through the fallback
    finally:
        conn.close()


def test_a_check_of_another_depth_or_none_started_is_made_on_the_callers(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    db = _damaged(tmp_path / "x.db")
    conn = open_readonly(db)
    try:
        check = IntegrityCheck(db)
        check.start(deep=False)
        assert check.problems(conn, deep=True) == integrity_problems(conn, deep=True)
        assert not _threads()  # the quick check was cancelled, not left running
        assert check.problems(conn, deep=False) == integrity_problems(conn)  # none started: checked now
    finally:
        conn.close()
    assert not _threads()


def test_cancel_ends_the_thread_and_prints_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _filled(tmp_path / "x.db", rows=20000)
    for _ in range(5):  # cancelled before, during or after the check: always ends, never raises
        check = IntegrityCheck(db)
        check.start(deep=True)
        check.cancel()
        check.cancel()  # (nothing left to cancel)
    assert not _threads()
    assert capsys.readouterr() == ("", "")


def _hermes_db(tmp_path: Path) -> Path:
    from .test_hermes_schemas import build_db, poisoned_session

    return build_db(tmp_path / "state.db", 21, [poisoned_session()], wal=False)


def _opencode_db(tmp_path: Path) -> Path:
    from .test_opencode_whitespace import build_db

    return build_db(tmp_path)


STORES = [_hermes_db, _opencode_db]


@pytest.mark.parametrize("make", STORES, ids=["hermes", "opencode"])
def test_a_store_closed_before_its_findings_were_asked_for_leaves_no_thread(tmp_path: Path, make) -> None:
    db = make(tmp_path)
    store = open_store(db, str(db), Options())
    store.start(Options(), frozenset({"F506"}))
    assert store._integrity._job is not None  # begun (perhaps already done)
    store.close()
    assert not _threads()


@pytest.mark.parametrize("make", STORES, ids=["hermes", "opencode"])
def test_a_scan_that_does_not_select_f506_starts_no_check(tmp_path: Path, make, monkeypatch: pytest.MonkeyPatch) -> None:
    db = make(tmp_path)
    started: list[bool] = []
    monkeypatch.setattr(IntegrityCheck, "start", lambda self, deep: started.append(deep))
    scan([str(db)], ScanConfig(select=("W101",)))
    assert started == []
    scan([str(db)], ScanConfig(select=("F506",)))
    assert started == [False]


@pytest.mark.parametrize("deep", [False, True])
@pytest.mark.parametrize("make", STORES, ids=["hermes", "opencode"])
def test_scan_reports_the_same_f506_with_and_without_the_thread(tmp_path: Path, make, deep: bool,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    db = _damaged(make(tmp_path))
    config = ScanConfig(options=Options(settings=(SqliteOptions(deep=deep),)))

    def f506() -> list[dict]:
        return [f.as_dict() for f in scan([str(db)], config).findings if f.code == "F506"]

    threaded = f506()
    monkeypatch.setattr(IntegrityCheck, "start", lambda self, deep: None)  # checked on the store's connection
    assert threaded and threaded == f506()

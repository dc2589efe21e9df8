"""The SQLite integrity check that runs on its own thread beside a scan (fixes/sqlite.py
`IntegrityCheck`): same answer as the check on the caller's connection, whenever it finishes;
a fallback when its own connection cannot be opened; nothing left running after `close`."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.fixes.sqlite import IntegrityCheck, integrity_problems, integrity_result, open_readonly
from transcript_doctor.stores import Options, open_store
from transcript_doctor.stores.options import SqliteOptions


def _filled(path: Path, rows: int = 3000) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript("CREATE TABLE filler (x TEXT); CREATE INDEX idx_filler ON filler (x);")
        conn.executemany("INSERT INTO filler VALUES (?)", [(f"value {i:05d} " * 5,) for i in range(rows)])
    conn.close()
    return path


def _damaged(path: Path) -> Path:
    """An index whose root page has its cell pointers overwritten: quick_check reports it."""
    _filled(path)
    with sqlite3.connect(path) as conn:
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'idx_filler'").fetchone()[0]
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    start = (root - 1) * page + 12
    data[start : start + 28] = b"\xff" * 28
    path.write_bytes(bytes(data))
    return path


def _threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "tdoc-integrity-check"]


@pytest.mark.parametrize("deep", [False, True])
@pytest.mark.parametrize("make", [_filled, _damaged], ids=["sound", "damaged"])
def test_the_background_check_answers_as_the_callers_own_check(tmp_path: Path, make, deep: bool) -> None:
    db = make(tmp_path / "x.db")
    conn = open_readonly(db)
    try:
        expected = integrity_problems(conn, deep)
        assert IntegrityCheck(db, deep).problems(conn) == expected
        assert (expected == []) == (make is _filled)
    finally:
        conn.close()
    assert not _threads()


def test_a_check_that_cannot_open_its_connection_checks_on_the_callers(tmp_path: Path) -> None:
    db = _damaged(tmp_path / "x.db")
    conn = open_readonly(db)
    try:
        check = IntegrityCheck(tmp_path / "gone.db")  # no such file: the thread's open fails
        assert check.problems(conn) == integrity_problems(conn)
        assert check.problems(conn)  # the damage is reported through the fallback
    finally:
        conn.close()


def test_a_check_of_another_depth_is_cancelled_and_made_again(tmp_path: Path) -> None:
    db = _damaged(tmp_path / "x.db")
    conn = open_readonly(db)
    try:
        deep = integrity_result(IntegrityCheck(db, deep=False), conn, deep=True)
        assert deep == integrity_problems(conn, deep=True)
        assert integrity_result(None, conn, deep=False) == integrity_problems(conn)
    finally:
        conn.close()
    assert not _threads()


def test_cancel_ends_the_thread_and_prints_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _filled(tmp_path / "x.db", rows=20000)
    for _ in range(5):  # cancelled before, during or after the check: always ends, never raises
        IntegrityCheck(db, deep=True).cancel()
    assert not _threads()
    assert capsys.readouterr() == ("", "")


def _hermes_db(tmp_path: Path) -> Path:
    from .test_hermes_schemas import build_db, poisoned_session

    return build_db(tmp_path / "state.db", 21, [poisoned_session()], wal=False)


def test_a_store_closed_before_its_findings_were_asked_for_leaves_no_thread(tmp_path: Path) -> None:
    db = _hermes_db(tmp_path)
    store = open_store(db, str(db), Options())
    store.start(Options(), frozenset({"F506"}))
    store.close()
    assert not _threads()


def test_a_scan_that_does_not_select_f506_starts_no_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = _hermes_db(tmp_path)
    started: list[Path] = []
    monkeypatch.setattr(IntegrityCheck, "__init__", lambda self, path, deep=False: started.append(path))
    scan([str(db)], ScanConfig(select=("S301",)))
    assert started == []


@pytest.mark.parametrize("deep", [False, True])
def test_scan_reports_the_same_f506_with_and_without_the_thread(tmp_path: Path, deep: bool,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    db = _hermes_db(tmp_path)
    with sqlite3.connect(db) as conn:  # damage beside the Hermes tables, as in test_hermes_schemas
        conn.executescript("CREATE TABLE filler (x TEXT); CREATE INDEX idx_filler ON filler (x);")
        conn.executemany("INSERT INTO filler VALUES (?)", [(f"value {i:05d} " * 5,) for i in range(3000)])
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'idx_filler'").fetchone()[0]
        page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(db.read_bytes())
    data[(root - 1) * page + 12 : (root - 1) * page + 40] = b"\xff" * 28
    db.write_bytes(bytes(data))
    config = ScanConfig(options=Options(settings=(SqliteOptions(deep=deep),)))

    def f506() -> list[dict]:
        return [f.as_dict() for f in scan([str(db)], config).findings if f.code == "F506"]

    threaded = f506()
    monkeypatch.setattr("transcript_doctor.stores.hermes.store.HermesDbStore.start", lambda self, o, c: None)
    assert threaded and threaded == f506()

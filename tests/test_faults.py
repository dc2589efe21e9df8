"""OS and SQLite faults: a clear message naming the file and the cause, the documented exit code,
no wait and no hang (docs/errors.md)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from transcript_doctor import errors
from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.model import RefusedError, TdocError
from transcript_doctor.stores import Options, open_store

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
HERMES_DB = FIXTURES / "hermes" / "hermes-state-v21.db"
OPENCODE_DB = FIXTURES / "opencode" / "opencode.db"
JOURNAL = FIXTURES / "kimi-code" / "golden" / "c01_legacy_compaction_after_vacuous.jsonl"

# Holds an EXCLUSIVE lock on a rollback-journal database until its stdin closes; says "locked"
# once the lock is held, so the test waits on that line, never on a clock.
HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""


def tdoc(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "transcript_doctor", *args], capture_output=True, text=True,
                          env=env, timeout=120, cwd=cwd, check=False)


def rollback_journal_copy(src: Path, dest: Path) -> Path:
    shutil.copyfile(src, dest)
    conn = sqlite3.connect(dest)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    return dest


@pytest.fixture
def locked_db(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    db = rollback_journal_copy(request.param, tmp_path / request.param.name)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield db
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=60)


@pytest.mark.parametrize("locked_db", [HERMES_DB, OPENCODE_DB], indirect=True, ids=["hermes", "opencode"])
def test_locked_database_is_reported_as_locked_exit_3(locked_db: Path) -> None:
    proc = tdoc("scan", "--format", "json", str(locked_db))
    assert proc.returncode == 3, proc.stderr
    error = json.loads(proc.stdout)["files"][0]["error"]
    assert "locked" in error and str(locked_db) in error
    assert "not a store" not in error


@pytest.mark.parametrize("locked_db", [HERMES_DB], indirect=True, ids=["hermes"])
@pytest.mark.parametrize("mode", [["--in-place"], []], ids=["in-place", "dry-run"])
def test_heal_of_a_locked_database_exits_3_and_changes_nothing(locked_db: Path, mode: list[str]) -> None:
    before = locked_db.read_bytes()
    proc = tdoc("heal", *mode, str(locked_db))
    assert proc.returncode == 3, proc.stderr
    assert "locked" in proc.stderr + proc.stdout
    assert locked_db.read_bytes() == before
    assert not list(locked_db.parent.glob("*.tdoc-backup*"))


@pytest.mark.parametrize("locked_db", [HERMES_DB], indirect=True, ids=["hermes"])
def test_detection_never_sets_a_busy_timeout(locked_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No busy wait: every connection opened while detecting and opening the store has timeout 0."""
    timeouts: list[float] = []
    real_connect = sqlite3.connect

    def recording_connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        timeouts.append(float(kwargs.get("timeout", 5.0)))  # type: ignore[arg-type]
        return real_connect(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(sqlite3, "connect", recording_connect)
    report = scan([str(locked_db)], ScanConfig(jobs=1))
    assert report.exit_code("error") == 3
    assert timeouts and set(timeouts) == {0.0}


def test_damaged_database_in_a_scanned_directory_is_an_error_naming_it(tmp_path: Path) -> None:
    shutil.copyfile(JOURNAL, tmp_path / "wire.jsonl")
    damaged = tmp_path / "hermes" / "state.db"
    damaged.parent.mkdir()
    data = bytearray(HERMES_DB.read_bytes())
    data[100:4096] = bytes(4096 - 100)  # page 1 (the schema) zeroed after the header
    damaged.write_bytes(bytes(data))
    proc = tdoc("scan", "--format", "json", str(tmp_path))
    assert proc.returncode == 2, proc.stderr
    files = {f["path"]: f for f in json.loads(proc.stdout)["files"]}
    assert files[str(damaged)]["error"] and "damaged" in files[str(damaged)]["error"]
    assert files[str(tmp_path / "wire.jsonl")]["error"] is None
    assert str(damaged) in proc.stderr


def test_truncated_database_in_a_scanned_directory_is_not_skipped(tmp_path: Path) -> None:
    damaged = tmp_path / "state.db"
    damaged.write_bytes(HERMES_DB.read_bytes()[:8192])
    report = scan([str(tmp_path)], ScanConfig(jobs=1))
    assert [fr.path for fr in report.files] == [str(damaged)]
    assert report.files[0].error and report.exit_code("error") == 2


def test_a_fifo_named_on_the_command_line_is_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "wire.jsonl"
    os.mkfifo(fifo)
    proc = tdoc("scan", str(fifo))
    assert proc.returncode == 2
    assert "named pipe" in proc.stdout + proc.stderr and str(fifo) in proc.stdout + proc.stderr
    proc = tdoc("scan", "--input-format", "kimi-wire", str(fifo))
    assert proc.returncode == 2 and "named pipe" in proc.stdout + proc.stderr


def test_a_fifo_in_a_scanned_directory_is_skipped(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.jsonl")
    shutil.copyfile(JOURNAL, tmp_path / "wire.jsonl")
    proc = tdoc("scan", "--format", "json", str(tmp_path))
    assert proc.returncode == 1, proc.stderr  # the journal's findings; the FIFO is left out
    assert [f["path"] for f in json.loads(proc.stdout)["files"]] == [str(tmp_path / "wire.jsonl")]


def test_open_regular_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "x.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(TdocError, match="named pipe"):
        errors.open_regular(fifo)


def test_an_unreadable_subdirectory_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copyfile(JOURNAL, tmp_path / "wire.jsonl")
    hidden = tmp_path / "private"
    hidden.mkdir()
    real_scandir = os.scandir

    def scandir(path: object = ".") -> object:
        if os.fspath(path) == str(hidden):  # type: ignore[arg-type]
            raise PermissionError(errno.EACCES, "Permission denied", str(hidden))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    report = scan([str(tmp_path)], ScanConfig(jobs=1))
    errors_by_path = {fr.path: fr.error for fr in report.files}
    assert errors_by_path[str(hidden)] == f"{hidden}: cannot read the directory: permission denied"
    assert errors_by_path[str(tmp_path / "wire.jsonl")] is None
    assert report.exit_code("error") == 2


# (errno, what the message must say)
OS_CAUSES = [
    (errno.ENOSPC, "no space left on the device"),
    (errno.EACCES, "permission denied"),
    (errno.EROFS, "read-only file system"),
    (errno.ENOENT, "no such file (it vanished"),
    (errno.EIO, "input/output error"),
]


@pytest.mark.parametrize(("code", "words"), OS_CAUSES, ids=[errno.errorcode[c] for c, _ in OS_CAUSES])
def test_os_errors_name_the_file_and_the_cause(code: int, words: str) -> None:
    exc = errors.os_failure("a/wire.jsonl", OSError(code, os.strerror(code)), "write")
    assert str(exc) == f"a/wire.jsonl: cannot write: {words}" or str(exc).startswith(f"a/wire.jsonl: cannot write: {words}")
    assert exc.exit_code == 2


# (sqlite error text, exit code, what the message must say)
SQLITE_CAUSES = [
    ("database is locked", 3, "locked by another process"),
    ("database table is locked", 3, "locked by another process"),
    ("database disk image is malformed", 2, "damaged SQLite database"),
    ("file is not a database", 2, "damaged SQLite database"),
    ("disk I/O error", 2, "input/output error"),
    ("database or disk is full", 2, "no space left"),
    ("no such table: messages", 2, "cannot read the SQLite database"),
]


@pytest.mark.parametrize(("text", "code", "words"), SQLITE_CAUSES, ids=[t for t, _, _ in SQLITE_CAUSES])
def test_sqlite_errors_map_to_a_cause_and_an_exit_code(text: str, code: int, words: str) -> None:
    exc = errors.sqlite_failure("s/state.db", sqlite3.OperationalError(text))
    assert exc.exit_code == code and isinstance(exc, RefusedError) == (code == 3)
    assert str(exc).startswith("s/state.db: ") and words in str(exc)


def test_undecodable_schema_text_is_a_damaged_database_error() -> None:
    exc = errors.sqlite_failure("s/state.db", UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"))
    assert exc.exit_code == 2 and "not UTF-8" in str(exc)


def test_a_file_that_vanishes_before_it_is_opened_is_a_clear_error(tmp_path: Path) -> None:
    gone = tmp_path / "wire.jsonl"
    with pytest.raises(TdocError, match=r"wire.jsonl: cannot read: no such file"):
        open_store(gone, str(gone), Options())


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_under_standard_output_is_a_clear_error() -> None:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "transcript_doctor", "scan", "--format", "json", str(JOURNAL)],
                              stdout=full, stderr=subprocess.PIPE, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 2
    assert "standard output: cannot write: no space left on the device" in proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr


def test_an_unreadable_directory_keeps_its_error_on_the_way_to_a_worker_process() -> None:
    import pickle

    from transcript_doctor.stores import Unreadable

    entry = pickle.loads(pickle.dumps(Unreadable.at("/s/private", "cannot read the directory: permission denied")))
    assert isinstance(entry, Unreadable) and entry.error.endswith("permission denied")
    with pytest.raises(TdocError, match=r"^/s/private: cannot read the directory: permission denied$"):
        open_store(entry, str(entry), Options())

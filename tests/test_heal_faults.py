"""Fault injection for `tdoc heal --in-place`: SIGKILL at every stage, full disk, OS errors.

Kills are synchronised through the pipeline's named kill points (`TDOC_TEST_KILL_AT`), never by
timing: each case dies exactly where it says. After every kill the store is either the original
or the healed one (never a mix), every file under a final backup name is a complete copy, and
the next run removes the temporaries the killed one left.
"""

from __future__ import annotations

import errno
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.heal import backup as heal_backup
from transcript_doctor.heal import files as heal_files
from transcript_doctor.heal.faults import KILL_ENV, POINTS

from .heal_support import database, final_backups, journal, leftovers, rows, tdoc

runner = CliRunner()
FILE_POINTS = ["backup-partial", "backup-synced", "backup-done", "temp-partial", "temp-synced", "replaced"]
SQL_POINTS = ["backup-partial", "backup-synced", "backup-done", "sql-applied", "committed"]


PAD = 3 << 20  # a journal of more than one copy chunk: a kill at backup-partial is mid-copy
PAD_MIB = 4  # a database of more than one backup step


def test_every_kill_point_is_exercised() -> None:
    assert set(FILE_POINTS) | set(SQL_POINTS) == set(POINTS)


@pytest.fixture(scope="module")
def healed_journal(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    work = tmp_path_factory.mktemp("reference")
    path = journal(work / "wire.jsonl", pad=PAD)
    original = path.read_bytes()
    assert tdoc("heal", "--in-place", "--no-backup", str(path)).returncode == 0
    return original, path.read_bytes()


@pytest.mark.parametrize(("point", "no_backup"), [(p, False) for p in FILE_POINTS] + [
    (p, True) for p in ("backup-partial", "temp-synced", "replaced")])  # the private copy of --no-backup
def test_sigkill_during_a_journal_heal(tmp_path: Path, point: str, no_backup: bool,
                                       healed_journal: tuple[bytes, bytes]) -> None:
    original, healed = healed_journal
    path = journal(tmp_path / "wire.jsonl", pad=PAD)
    flags = ["--no-backup"] if no_backup else []
    killed = tdoc("heal", "--in-place", *flags, str(path), env={KILL_ENV: point})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    now = path.read_bytes()
    assert now == (healed if point == "replaced" else original)
    for b in final_backups(tmp_path):
        assert b.read_bytes() == original
    if point == "backup-partial" and not no_backup:
        (partial,) = tmp_path.glob("wire.jsonl.tdoc-backup-*.partial")
        assert 0 < partial.stat().st_size < len(original)  # the kill really came in the middle of the copy
    again = tdoc("heal", "--in-place", "--no-backup", str(path))
    assert again.returncode == 0, again.stderr
    assert path.read_bytes() == healed
    assert leftovers(tmp_path) == []


@pytest.fixture(scope="module")
def healed_rows(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, object]:
    db = database(tmp_path_factory.mktemp("reference") / "opencode.db", pad_mib=PAD_MIB)
    before = rows(db)
    assert tdoc("heal", "--in-place", "--no-backup", str(db)).returncode == 1  # an unsafe fix is left
    assert rows(db) != before
    return before, rows(db)


@pytest.mark.parametrize("point", SQL_POINTS)
def test_sigkill_during_a_database_heal(tmp_path: Path, point: str, healed_rows: tuple[object, object]) -> None:
    before, after = healed_rows
    db = database(tmp_path / "opencode.db", pad_mib=PAD_MIB)
    killed = tdoc("heal", "--in-place", str(db), env={KILL_ENV: point})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert rows(db) == (after if point == "committed" else before)  # a hot journal rolls back on open
    if point == "backup-partial":
        (partial,) = tmp_path.glob("opencode.db.tdoc-backup-*.partial")
        assert partial.stat().st_size < db.stat().st_size  # killed in the middle: not a whole copy (yet)
    for b in final_backups(tmp_path):
        assert rows(b) == before
        assert sqlite3.connect(b).execute("PRAGMA quick_check").fetchall() == [("ok",)]
    again = tdoc("heal", "--in-place", "--no-backup", str(db))
    assert again.returncode == 1, again.stderr
    assert rows(db) == after
    assert leftovers(tmp_path) == []


def test_a_temporary_another_run_holds_open_is_not_removed(tmp_path: Path) -> None:
    path = journal(tmp_path / "wire.jsonl")
    stale = tmp_path / ".wire.jsonl.abc123.tdoc-tmp"
    stale.write_bytes(b"half")
    partial = tmp_path / "wire.jsonl.tdoc-backup-20260101T000000000000Z.partial"
    partial.write_bytes(b"half")
    held = tmp_path / ".wire.jsonl.held.tdoc-tmp"
    held.write_bytes(b"in use")
    holder = _hold_open(held, "rb")
    try:
        result = tdoc("heal", "--in-place", str(path))
    finally:
        _release(holder)
    assert result.returncode == 0, result.stderr
    assert not stale.exists() and not partial.exists() and held.exists()
    assert "removed 2 leftover temporary file(s)" in result.stdout


# --------------------------------------------------------------------------- OS errors


def _enospc(*_args: object, **_kw: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("where", ["backup", "temporary", "replace-erofs", "mkstemp-eacces"])
def test_os_errors_are_clear_messages_and_leave_the_file_untouched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    path = journal(tmp_path / "wire.jsonl")
    original = path.read_bytes()
    expected = {"backup": "No space left on device", "temporary": "No space left on device",
                "replace-erofs": "Read-only file system", "mkstemp-eacces": "Permission denied"}[where]
    if where == "backup":
        monkeypatch.setattr(heal_backup, "_write_all", _enospc)
        monkeypatch.setattr(heal_backup, "_copy_range", _enospc)  # the kernel copy of a backup without a hash
    elif where == "temporary":
        real = heal_files.TempFile.write_through

        def full_after_first(self: heal_files.TempFile, data: bytes) -> int:
            if self.started:
                _enospc()
            return real(self, data)

        monkeypatch.setattr(heal_files.TempFile, "write_through", full_after_first)
        monkeypatch.setattr(heal_files, "SPOOL_BUFFER", 1)  # every write reaches the file
    elif where == "replace-erofs":
        def erofs(src: object, dst: object) -> None:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(dst))

        monkeypatch.setattr(heal_files.os, "replace", erofs)
    else:
        def eacces(**_kw: object) -> tuple[int, str]:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(tmp_path))

        monkeypatch.setattr(heal_files.tempfile, "mkstemp", eacces)
    result = runner.invoke(app, ["heal", "--in-place", str(path)])
    assert result.exit_code == 2, result.output
    assert expected in result.output and str(tmp_path) in result.output
    assert "internal error" not in result.output and "Traceback" not in result.output
    assert path.read_bytes() == original
    assert final_backups(tmp_path) == [] and leftovers(tmp_path) == []


def test_enospc_while_the_temporary_file_grows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The healed content is several writes long; the disk fills after the first."""
    path = journal(tmp_path / "wire.jsonl", steps=40)
    original = path.read_bytes()
    calls = {"n": 0}
    real = heal_files.TempFile.write_through

    def fills_up(self: heal_files.TempFile, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] > 3:
            _enospc()
        return real(self, data)

    monkeypatch.setattr(heal_files.TempFile, "write_through", fills_up)
    monkeypatch.setattr(heal_files, "SPOOL_BUFFER", 1)  # every write reaches the file
    result = runner.invoke(app, ["heal", "--in-place", str(path)])
    assert result.exit_code == 2 and "No space left on device" in result.output
    assert calls["n"] == 4 and path.read_bytes() == original and leftovers(tmp_path) == []


@pytest.mark.parametrize("kind", ["journal", "database"])
def test_an_unwritable_backup_dir_is_a_clear_error(tmp_path: Path, kind: str) -> None:
    path = journal(tmp_path / "wire.jsonl") if kind == "journal" else database(tmp_path / "opencode.db")
    original = path.read_bytes()
    backups = tmp_path / "backups"
    backups.mkdir()
    real = Path(os.path.realpath(path))
    first = real.parent.relative_to(real.anchor).parts[0]
    (backups / first).write_bytes(b"")  # a file where the backup's directory must go
    result = runner.invoke(app, ["heal", "--in-place", "--backup-dir", str(backups), str(path)])
    assert result.exit_code == 2 and "cannot create the backup directory" in result.output
    assert str(backups / first) in result.output
    assert path.read_bytes() == original and leftovers(tmp_path) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_read_only_backup_dir_is_a_clear_error(tmp_path: Path) -> None:
    path = journal(tmp_path / "wire.jsonl")
    backups = tmp_path / "backups"
    backups.mkdir(mode=0o500)
    result = runner.invoke(app, ["heal", "--in-place", "--backup-dir", str(backups), str(path)])
    assert result.exit_code == 2 and "Permission denied" in result.output


def test_an_sqlite_backup_that_cannot_be_written_leaves_the_database_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = database(tmp_path / "opencode.db")
    before = rows(db)
    monkeypatch.setattr(heal_backup, "copy_database", _failing_copy(heal_backup.copy_database))
    result = runner.invoke(app, ["heal", "--in-place", str(db)])
    assert result.exit_code == 2 and "database or disk is full" in result.output and str(tmp_path) in result.output
    assert rows(db) == before and final_backups(tmp_path) == [] and leftovers(tmp_path) == []


def _failing_copy(real):  # type: ignore[no-untyped-def]
    def copy(source: sqlite3.Connection, dest: Path, like: os.stat_result | None) -> heal_backup.Backup:
        class Full:
            def backup(self, target: sqlite3.Connection, **_kw: object) -> None:
                raise sqlite3.OperationalError("database or disk is full")

        return real(Full(), dest, like)

    return copy


# --------------------------------------------------------------------------- links, owners, writers


def test_a_hard_linked_journal_is_refused_unless_forced(tmp_path: Path) -> None:
    path = journal(tmp_path / "wire.jsonl")
    original = path.read_bytes()
    other = tmp_path / "other-name.jsonl"
    os.link(path, other)
    refused = runner.invoke(app, ["heal", "--in-place", str(path)])
    assert refused.exit_code == 2 and "2 hard links" in refused.output
    assert path.read_bytes() == original and final_backups(tmp_path) == []
    forced = runner.invoke(app, ["heal", "--in-place", "--force", str(path)])
    assert forced.exit_code == 0, forced.output
    assert path.read_bytes() != original and other.read_bytes() == original


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root (the `sudo tdoc` case)")
def test_a_root_heal_keeps_the_owner_group_and_mode(tmp_path: Path) -> None:
    path = journal(tmp_path / "wire.jsonl")
    os.chown(path, 12345, 23456)
    os.chmod(path, 0o640)
    result = runner.invoke(app, ["heal", "--in-place", str(path)])
    assert result.exit_code == 0, result.output
    st = path.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (12345, 23456, 0o640)
    (b,) = final_backups(tmp_path)
    assert (b.stat().st_uid, b.stat().st_gid, b.stat().st_mode & 0o7777) == (12345, 23456, 0o640)


def _hold_open(path: Path, mode: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c",
                             f"import sys\nf = open({str(path)!r}, {mode!r})\nprint('ready', flush=True)\n"
                             "sys.stdin.read()\n"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"  # the file is open now
    return proc


def _release(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=30)


@pytest.mark.skipif(not Path("/proc/self/fdinfo").is_dir(), reason="needs Linux /proc")
def test_a_journal_open_for_writing_elsewhere_is_refused_with_exit_3(tmp_path: Path) -> None:
    path = journal(tmp_path / "wire.jsonl")
    original = path.read_bytes()
    writer = _hold_open(path, "ab")
    try:
        refused = tdoc("heal", "--in-place", str(path))
        assert refused.returncode == 3 and "open for writing" in refused.stderr
        assert str(writer.pid) in refused.stderr
        assert path.read_bytes() == original and final_backups(tmp_path) == []
        forced = tdoc("heal", "--in-place", "--force", str(path))
        assert forced.returncode == 0, forced.stderr
    finally:
        _release(writer)


@pytest.mark.skipif(not Path("/proc/self/fdinfo").is_dir(), reason="needs Linux /proc")
def test_a_reader_does_not_block_the_heal(tmp_path: Path) -> None:
    path = journal(tmp_path / "wire.jsonl")
    reader = _hold_open(path, "rb")
    try:
        assert tdoc("heal", "--in-place", str(path)).returncode == 0
    finally:
        _release(reader)


def test_a_locked_database_is_refused_with_exit_3_and_no_backup_is_left(tmp_path: Path) -> None:
    db = database(tmp_path / "opencode.db")
    before = rows(db)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        result = runner.invoke(app, ["heal", "--in-place", str(db)])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 3 and "locked" in result.output
    assert rows(db) == before and final_backups(tmp_path) == [] and leftovers(tmp_path) == []


# --------------------------------------------------------------------------- heals that do not hold


def test_a_journal_heal_that_does_not_hold_is_undone_even_without_a_backup(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from transcript_doctor.heal.plan import LineWrite
    from transcript_doctor.model import Edit
    from transcript_doctor.stores.kimi.heal import driver as kimi_heal

    path = journal(tmp_path / "wire.jsonl")
    original = path.read_bytes()
    real = kimi_heal.heal_store

    def loses_the_fix(store, findings, options):  # type: ignore[no-untyped-def]
        plan = real(store, findings, options)
        last = len(original.splitlines())  # a write that changes something, but not what it fixes
        plan.write = LineWrite((Edit("replace", line=last, text=original.splitlines()[-1].decode() + " "),))
        plan.verified, plan.healed = False, None
        return plan

    monkeypatch.setattr(kimi_heal, "heal_store", loses_the_fix)
    result = runner.invoke(app, ["heal", "--in-place", "--no-backup", str(path)])
    assert result.exit_code == 2 and "restored from a private copy" in result.output
    assert path.read_bytes() == original and leftovers(tmp_path) == [] and final_backups(tmp_path) == []


def test_a_database_heal_that_does_not_hold_is_undone_even_without_a_backup(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from transcript_doctor.heal.plan import SqlWrite
    from transcript_doctor.stores.opencode import heal as opencode_heal

    db = database(tmp_path / "opencode.db")
    before = rows(db)
    real = opencode_heal.plan_db

    def wrong_rows(store, findings, options):  # type: ignore[no-untyped-def]
        plan = real(store, findings, options)

        def apply(conn: sqlite3.Connection) -> None:  # deletes a row no fix named, leaves the W101
            conn.execute("DELETE FROM part WHERE rowid = (SELECT max(rowid) FROM part)")

        plan.write = SqlWrite(apply, "-- wrong")
        return plan

    monkeypatch.setattr(opencode_heal, "plan_db", wrong_rows)
    result = runner.invoke(app, ["heal", "--in-place", "--no-backup", str(db)])
    assert result.exit_code == 2 and "survived the heal; the original was restored" in result.output
    assert rows(db) == before and leftovers(tmp_path) == [] and final_backups(tmp_path) == []

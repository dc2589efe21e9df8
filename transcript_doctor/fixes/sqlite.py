"""Safe SQLite access for scanning and healing databases a running agent may hold open.

* Scans open read-only (`mode=ro`), and with `immutable=1` when the directory is not writable
  (SQLite would otherwise try to create `-wal`/`-shm` files there). WAL databases held open by
  another process read fine in `mode=ro`.
* Heals: a backup through the SQLite backup API first, then `BEGIN IMMEDIATE` with no busy wait
  (a locked database is refused with exit 3, never waited on or clobbered), statements in one
  transaction, `PRAGMA quick_check` before commit. The file is never swapped.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from ..errors import require_regular, sqlite_failure
from ..model import RefusedError, TdocError

SQLITE_MAGIC = b"SQLite format 3\x00"


def _uri(path: Path, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"file:{quote(str(path.resolve()))}?{query}"


def decode_text(raw: bytes) -> str:
    """SQLite TEXT as str without ever raising: lone surrogates and bad bytes survive (F507 sees them)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        try:
            return raw.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return raw.decode("utf-8", "surrogateescape")


def open_readonly(path: Path, display: str | None = None) -> sqlite3.Connection:
    """A read-only connection that never writes to the database or its directory, never waits.

    * `mode=ro`, plus `immutable=1` when no writer can be live (a WAL-mode file with no `-wal`
      beside it) or the directory is not writable (SQLite could not create `-wal`/`-shm`).
    * No busy timeout: a database another process holds locked is refused at once (exit 3).
    * TEXT (schema included) decodes without raising, whatever bytes it holds.
    * Every failure is a `TdocError` naming the file and the cause (`errors.sqlite_failure`).
    """
    shown = display or str(path)
    require_regular(path, shown)
    params = {"mode": "ro"}
    if not Path(f"{path}-wal").exists() and (_is_wal_mode(path) or not _dir_writable(path.parent)):
        params["immutable"] = "1"
    conn: sqlite3.Connection | None = None
    try:
        conn = sqlite3.connect(_uri(path, **params), uri=True, timeout=0)
        conn.text_factory = decode_text
        conn.execute("PRAGMA query_only=ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except (sqlite3.Error, UnicodeError) as exc:
        if conn is not None:
            conn.close()
        raise sqlite_failure(shown, exc, "opened") from None
    return conn


def probe(path: Path, display: str | None = None) -> set[str]:
    """The tables of the database at `path`; raises the `TdocError` that says why it cannot be read."""
    conn = open_readonly(path, display)
    try:
        return tables(conn)
    except (sqlite3.Error, UnicodeError) as exc:
        raise sqlite_failure(display or str(path), exc) from None
    finally:
        conn.close()


def _is_wal_mode(path: Path) -> bool:
    """Header bytes 18-19 are 2 for a database in WAL mode."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(20)
    except OSError:
        return False
    return header.startswith(SQLITE_MAGIC) and header[18:20] == b"\x02\x02"


def _dir_writable(directory: Path) -> bool:
    """Whether files can be created in `directory` (mode bits too: root passes os.access)."""
    try:
        st = directory.stat()
    except OSError:
        return False
    return os.access(directory, os.W_OK) and bool(st.st_mode & 0o222)


def tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view')")}


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """Column names of `table` (empty if it does not exist); select defensively with these."""
    return [r[1] for r in conn.execute(f"PRAGMA table_info({quote_ident(table)})")]


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def integrity_problems(conn: sqlite3.Connection, deep: bool = False) -> list[str]:
    """`quick_check` (or `integrity_check` when deep) messages other than 'ok'."""
    pragma = "integrity_check" if deep else "quick_check"
    try:
        rows = [r[0] for r in conn.execute(f"PRAGMA {pragma}")]
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    return [] if rows == ["ok"] else rows


def default_backup_path(path: Path, backup_dir: Path | None) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    name = f"{path.name}.tdoc-backup-{stamp}"
    return (backup_dir or path.parent) / name


def backup_database(conn: sqlite3.Connection, dest: Path, mode: int | None = None) -> Path:
    """Copy the live database (committed state, WAL included) to `dest` with the backup API."""
    if dest.exists():
        raise TdocError(f"{dest}: backup target already exists")
    if not dest.parent.is_dir():
        raise TdocError(f"{dest.parent}: backup directory does not exist")
    target = sqlite3.connect(str(dest))
    try:
        conn.backup(target)
    finally:
        target.close()
    if mode is not None:
        os.chmod(dest, mode)
    return dest


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


@contextmanager
def write_transaction(path: Path, foreign_keys: bool = False) -> Iterator[sqlite3.Connection]:
    """`BEGIN IMMEDIATE` on `path`; exit 3 if another connection holds a lock.

    Commits only if the body returns and `quick_check` passes; otherwise rolls back.
    """
    if not os.access(path, os.W_OK):
        raise TdocError(f"{path}: not writable")
    conn = sqlite3.connect(str(path), timeout=0, isolation_level=None)
    if foreign_keys:
        conn.execute("PRAGMA foreign_keys=ON")  # must be set outside a transaction
    try:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise RefusedError(f"{path}: database is locked by another process; nothing changed") from None
            raise TdocError(f"{path}: cannot start a write transaction ({exc})") from None
        try:
            yield conn
            problems = integrity_problems(conn)
            if problems:
                raise TdocError(f"{path}: quick_check failed after heal, rolled back: {problems[0]}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    except sqlite3.OperationalError as exc:
        if _is_busy(exc):
            raise RefusedError(f"{path}: database became busy during heal; rolled back") from None
        raise TdocError(f"{path}: heal failed and was rolled back ({exc})") from None
    finally:
        conn.close()


def heal_database(
    path: Path,
    statements: list[tuple[str, tuple]],
    *,
    backup: bool,
    backup_dir: Path | None,
    after: Callable[[sqlite3.Connection], None] | None = None,
    foreign_keys: bool = False,
) -> Path | None:
    """Back up, then run `statements` (SQL, params) in one immediate transaction.

    `after(conn)` runs inside the transaction (e.g. recompute counters). Returns the backup path;
    if the transaction rolls back, the backup (of an unchanged database) is removed again.
    """
    backup_path: Path | None = None
    try:
        _run_heal(path, statements, backup, backup_dir, after, foreign_keys, holder := [])
    except BaseException:
        for made in holder:
            made.unlink(missing_ok=True)
        raise
    if holder:
        backup_path = holder[0]
    return backup_path


def _run_heal(path: Path, statements: list[tuple[str, tuple]], backup: bool, backup_dir: Path | None,
              after: Callable[[sqlite3.Connection], None] | None, foreign_keys: bool, holder: list[Path]) -> None:
    with write_transaction(path, foreign_keys) as conn:
        if backup:
            # Our RESERVED lock keeps other writers out, so a second (reading) connection copies
            # exactly the state the statements will modify. (The backup API cannot read through
            # the connection that holds the write transaction.)
            reader = sqlite3.connect(str(path), timeout=5.0)
            try:
                dest = default_backup_path(path, backup_dir)
                holder.append(backup_database(reader, dest, path.stat().st_mode & 0o777))
            finally:
                reader.close()
        for sql, params in statements:
            conn.execute(sql, params)
        if after:
            after(conn)


def restore_database(path: Path, backup: Path, runtime: str) -> None:
    """Write a backup's pages back into the live database with the backup API: no file swap, so
    the inode and the runtime's open handles stay valid. A busy database is refused (exit 3)."""
    src = sqlite3.connect(_uri(backup, mode="ro"), uri=True)
    try:
        dest = sqlite3.connect(str(path), timeout=0)
        try:
            src.backup(dest)
        except sqlite3.OperationalError as exc:
            raise RefusedError(
                f"{path}: cannot restore {backup} now ({exc}); copy it back with {runtime} stopped"
            ) from None
        finally:
            dest.close()
    finally:
        src.close()

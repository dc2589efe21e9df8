"""Writing to SQLite stores: one immediate transaction in place, never a file swap.

`BEGIN IMMEDIATE` with no busy wait (a database another connection holds is refused with exit 3,
never waited on), the backup taken through a second connection while our RESERVED lock keeps
other writers out (so it holds exactly the state the statements change), the store's statements,
`PRAGMA quick_check`, then `COMMIT`. Restoring writes the backup's pages back through the backup
API (the inode and any open handles stay valid) and checkpoints the WAL.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from ..errors import sqlite_failure
from ..fixes.sqlite import SQLITE_MAGIC, integrity_problems
from ..model import RefusedError, TdocError
from .backup import Backup
from .faults import reached
from .plan import SqlWrite


def is_database(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def _busy(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


@contextmanager
def transaction(path: Path, foreign_keys: bool = False) -> Iterator[sqlite3.Connection]:
    """`BEGIN IMMEDIATE` on `path` (exit 3 when locked); commits only if the body returns and
    `quick_check` passes, otherwise rolls back."""
    if not os.access(path, os.W_OK):
        raise TdocError(f"{path}: not writable; nothing changed")
    try:
        conn = sqlite3.connect(str(path), timeout=0, isolation_level=None)
    except sqlite3.Error as exc:
        raise TdocError(f"{path}: cannot open the database for writing ({exc}); nothing changed") from None
    try:
        if foreign_keys:
            conn.execute("PRAGMA foreign_keys=ON")  # only outside a transaction
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if _busy(exc):
                raise RefusedError(f"{path}: database is locked by another process; nothing changed") from None
            raise TdocError(f"{path}: cannot start a write transaction ({exc}); nothing changed") from None
        try:
            yield conn
            problems = integrity_problems(conn)
            if problems:
                raise TdocError(f"{path}: quick_check failed after the heal, rolled back: {problems[0]}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # a damaged file can refuse even that: closing the connection discards the transaction
            raise
    except sqlite3.OperationalError as exc:
        if _busy(exc):
            raise RefusedError(f"{path}: database became busy during the heal; rolled back") from None
        raise TdocError(f"{path}: the heal failed and was rolled back ({exc})") from None
    except sqlite3.DatabaseError as exc:  # damage the scan's reads did not reach (a page the heal's statements touch)
        raise sqlite_failure(path, exc, "healed") from None
    finally:
        conn.close()


def run(path: Path, write: SqlWrite, backup: Callable[[sqlite3.Connection], Backup] | None) -> Backup | None:
    """Back up (through a reading connection, inside our write lock), then apply the plan."""
    made: Backup | None = None
    with transaction(path, write.foreign_keys) as conn:
        if backup is not None:
            reader = sqlite3.connect(str(path), timeout=5.0)
            try:
                made = backup(reader)
            finally:
                reader.close()
        write.apply(conn)
        reached("sql-applied")
    reached("committed")
    return made


def uri(path: Path, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"file:{quote(str(path.resolve()))}?{query}"


def restore(path: Path, backup: Path) -> None:
    """Write the backup's pages into the live database, then fold the WAL back in.

    A busy database is refused (exit 3); the backup API changes the database in one transaction,
    so a reader sees either the old content or the restored one."""
    try:
        src = sqlite3.connect(uri(backup, mode="ro", immutable="1"), uri=True)
    except sqlite3.Error as exc:
        raise TdocError(f"{backup}: not a readable SQLite backup ({exc})") from None
    try:
        dest = sqlite3.connect(str(path), timeout=0, isolation_level=None)
        try:
            src.backup(dest)
            if dest.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                dest.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError as exc:
            if _busy(exc):
                raise RefusedError(f"{path}: database is in use; cannot restore {backup} now") from None
            raise TdocError(f"{path}: cannot restore {backup} ({exc}); nothing changed") from None
        finally:
            dest.close()
    finally:
        src.close()

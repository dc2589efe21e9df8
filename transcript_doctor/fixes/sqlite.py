"""Safe SQLite access for scanning and healing databases a running agent may hold open.

* Scans open read-only (`mode=ro`), and with `immutable=1` when the directory is not writable
  (SQLite would otherwise try to create `-wal`/`-shm` files there). WAL databases held open by
  another process read fine in `mode=ro`.
* Heals write through `transcript_doctor.heal.database` (docs/heal.md).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from ..model import TdocError

SQLITE_MAGIC = b"SQLite format 3\x00"


def _uri(path: Path, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"file:{quote(str(path.resolve()))}?{query}"


def open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection that never writes to the database or its directory."""
    if not path.is_file():
        raise TdocError(f"{path}: no such file")
    params = {"mode": "ro"}
    if not Path(f"{path}-wal").exists() and (_is_wal_mode(path) or not _dir_writable(path.parent)):
        # Without a live writer there is nothing to coordinate with, and a read-only WAL open
        # would otherwise create -wal/-shm files beside the database.
        params["immutable"] = "1"
    try:
        conn = sqlite3.connect(_uri(path, **params), uri=True, timeout=5.0)
        conn.execute("PRAGMA query_only=ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise TdocError(f"{path}: not a readable SQLite database ({exc})") from None
    return conn


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

"""Safe SQLite access for scanning and healing databases a running agent may hold open.

* Scans open read-only (`mode=ro`), and with `immutable=1` when the directory is not writable
  (SQLite would otherwise try to create `-wal`/`-shm` files there). WAL databases held open by
  another process read fine in `mode=ro`.
* Heals write through `transcript_doctor.heal.database` (docs/heal.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from ..errors import require_regular, sqlite_failure

if TYPE_CHECKING:  # sqlite3 loads when a database is opened: detection by SQLITE_MAGIC needs none
    import sqlite3

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
    import sqlite3

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
    import sqlite3

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
    import sqlite3

    pragma = "integrity_check" if deep else "quick_check"
    try:
        rows = [r[0] for r in conn.execute(f"PRAGMA {pragma}")]
    except sqlite3.DatabaseError as exc:
        return [str(exc)]
    return [] if rows == ["ok"] else rows


class IntegrityCheck:
    """A store's `integrity_problems`, begun early on a thread of its own (over a connection of
    its own) so that it runs while the scan's rules work on the caller's thread.

    SQLite releases the GIL while it checks, so on a machine with a second core the check costs
    a scan no wall time. `problems(conn, deep)` gives what `integrity_problems(conn, deep)` gives,
    whenever the thread finished: it takes the started check when that one checks the same way,
    else (none started, another depth, a thread that could not open its connection or failed)
    checks on `conn`. `cancel()` interrupts a started check nobody will ask for."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._job: _CheckThread | None = None

    def start(self, deep: bool) -> None:
        if self._job is None:
            self._job = _CheckThread(self.path, deep)

    def problems(self, conn: sqlite3.Connection, deep: bool) -> list[str]:
        job, self._job = self._job, None
        if job is not None and job.deep == deep:
            found = job.result()
            if found is not None:
                return found
        elif job is not None:
            job.cancel()
        return integrity_problems(conn, deep)

    def cancel(self) -> None:
        job, self._job = self._job, None
        if job is not None:
            job.cancel()


class _CheckThread:
    """One `integrity_problems` on its own connection and daemon thread."""

    def __init__(self, path: Path, deep: bool) -> None:
        import threading

        self.path, self.deep = path, deep
        self._result: list[str] | None = None
        self._conn: sqlite3.Connection | None = None
        self._ready = threading.Event()  # the thread's connection is set (or will never be)
        self._closing = threading.Lock()  # an interrupt never meets a connection being closed
        self._thread = threading.Thread(target=self._run, name="tdoc-integrity-check", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            conn = self._conn = open_readonly(self.path)
        except Exception:  # noqa: BLE001 - the caller checks on its own connection instead
            return
        finally:
            self._ready.set()
        try:
            self._result = integrity_problems(conn, self.deep)
        except Exception:  # noqa: BLE001 - nothing is printed from here: the caller checks itself
            self._result = None
        finally:
            with self._closing:
                conn.close()
                self._conn = None

    def result(self) -> list[str] | None:
        """The problems found, or None when the thread could not check."""
        self._join()
        return self._result

    def cancel(self) -> None:
        while not self._ready.wait(_WAIT_SLICE):
            pass
        with self._closing:
            if self._conn is not None:
                self._conn.interrupt()
        self._join()

    def _join(self) -> None:
        """`Thread.join()` in slices: a Ctrl-C the kernel hands to this check's thread instead of
        the main one would not interrupt a join without a timeout (see `parallel._result`)."""
        while self._thread.is_alive():
            self._thread.join(_WAIT_SLICE)


_WAIT_SLICE = 0.25  # seconds

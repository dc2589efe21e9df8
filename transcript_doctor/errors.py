"""Operating-system and SQLite failures as the messages and exit codes users get.

Every message names the file and the cause in words (no errno numbers, no transcript text).
Exit 3 (`RefusedError`) when the store is in use or changed under tdoc: a locked or busy
database, a file that shrank or was replaced while it was read. Exit 2 (`TdocError`) for the
rest: no permission, a read-only file system, a full disk, a file that vanished, a damaged
database. See docs/errors.md §"Errors and exit codes".

The two exception classes live here, not beside the data model, so the command line can catch
them without loading the model (`tdoc --version`, start-up: issue 20); `model` re-exports them.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path
from typing import BinaryIO


class TdocError(Exception):
    """A problem to report to the user (bad input, usage, I/O). Exit code 2 unless set."""

    exit_code = 2

    def __init__(self, message: str, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class RefusedError(TdocError):
    """The store is in use or changed while tdoc worked: exit code 3, nothing written."""

    exit_code = 3


_CAUSES = {
    errno.ENOENT: "no such file (it vanished, or never existed)",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "read-only file system",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EISDIR: "is a directory",
    errno.ENOTDIR: "a component of the path is not a directory",
    errno.ELOOP: "too many levels of symbolic links",
    errno.EIO: "input/output error (a failing disk or network file system)",
    errno.ENAMETOOLONG: "file name too long",
    errno.EMFILE: "too many open files",
    errno.ENXIO: "no such device",
}


def cause(exc: OSError) -> str:
    """The cause of an OS error in words."""
    if exc.errno in _CAUSES:
        return _CAUSES[exc.errno]
    return exc.strerror or type(exc).__name__


def os_failure(display: str | os.PathLike[str], exc: OSError, doing: str = "read") -> TdocError:
    """The error to raise for `exc`, met while trying to `doing` the file `display`."""
    return TdocError(f"{display}: cannot {doing}: {cause(exc)}")


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def is_regular(path: Path) -> bool:
    """Whether `path` is a regular file (following symlinks); never opens it, never blocks."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def require_regular(path: Path, display: str | os.PathLike[str] | None = None) -> os.stat_result:
    """`os.stat(path)`, refusing anything but a regular file before it is opened (a FIFO would block)."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise os_failure(display or path, exc) from None
    if not stat.S_ISREG(st.st_mode):
        raise TdocError(f"{display or path}: {_kind_of(st.st_mode)}, not a store file; tdoc reads regular files only")
    return st


def open_regular(path: Path, display: str | os.PathLike[str] | None = None) -> BinaryIO:
    """Open a regular file for reading without ever blocking on a FIFO or device.

    The open is non-blocking and the type is checked on the open descriptor, so a file replaced
    by a FIFO between a check and the open is refused too.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise os_failure(display or path, exc) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise TdocError(f"{display or path}: {_kind_of(mode)}, not a store file; tdoc reads regular files only")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def sqlite_failure(display: str | os.PathLike[str], exc: BaseException, doing: str = "read") -> TdocError:
    """The error to raise for an exception the sqlite3 module raised on the database `display`."""
    if isinstance(exc, UnicodeError):
        return TdocError(f"{display}: damaged SQLite database: its schema holds bytes that are not UTF-8")
    text = str(exc)
    low = text.lower()
    if "locked" in low or "busy" in low:
        return RefusedError(f"{display}: database is locked by another process (tdoc does not wait); "
                            "run again when the agent has finished writing")
    if "malformed" in low or "not a database" in low or "corrupt" in low:
        return TdocError(f"{display}: damaged SQLite database ({text}); it cannot be {doing} as it is")
    journal = Path(f"{os.fspath(display)}-journal")
    if ("readonly" in low or "unable to open" in low) and journal.exists():
        return TdocError(f"{display}: the database has an unfinished write ({journal.name} beside it) "
                         "that only a writable open can roll back; tdoc opens read-only")
    if "disk i/o" in low:
        return TdocError(f"{display}: input/output error while reading the database ({text})")
    if "full" in low:
        return TdocError(f"{display}: no space left on the device ({text})")
    if is_sqlite_error(exc) and "unable to open" in low:
        return TdocError(f"{display}: cannot open the database ({text}): check it exists and its directory is readable")
    return TdocError(f"{display}: cannot {doing} the SQLite database ({text})")


def is_sqlite_error(exc: BaseException) -> bool:
    """Whether the sqlite3 module raised `exc`. Without sqlite3 loaded nothing could have: it is
    not imported for the question."""
    sqlite3 = sys.modules.get("sqlite3")
    return sqlite3 is not None and isinstance(exc, sqlite3.Error)

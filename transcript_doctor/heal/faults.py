"""Named points in the write path where a test can have tdoc killed, and OS error messages.

`TDOC_TEST_KILL_AT=<point>` makes the process SIGKILL itself when it reaches that point (the
fault-injection tests use it instead of timing a kill). Unset, `reached` costs one dict lookup.
"""

from __future__ import annotations

import errno
import os
import signal

from ..model import TdocError

KILL_ENV = "TDOC_TEST_KILL_AT"

POINTS = (
    "backup-partial",  # part of the backup copy written under its temporary name
    "backup-synced",  # the temporary backup is complete and fsynced, not yet renamed
    "backup-done",  # the backup is under its final name
    "temp-partial",  # part of the healed content written to the temporary file
    "temp-synced",  # the temporary file is complete and fsynced
    "replaced",  # os.replace done, directory not yet fsynced
    "sql-applied",  # the statements ran inside the transaction, not yet committed
    "committed",  # the transaction committed, not yet re-verified
)


def reached(point: str) -> None:
    """Die here if the test environment asks for it."""
    if os.environ.get(KILL_ENV) == point:
        os.kill(os.getpid(), signal.SIGKILL)


def os_failure(path: object, exc: OSError, doing: str, after: str = "nothing changed") -> TdocError:
    """A clear message for an OS error in the write path: which file, what failed, why."""
    name = errno.errorcode.get(exc.errno or 0, "")
    why = exc.strerror or str(exc)
    where = exc.filename if exc.filename not in (None, "") else path
    return TdocError(f"{where}: cannot {doing}: {why}{f' ({name})' if name else ''}; {after}")

"""Whether a file is a Hermes `state.db` or session export, by its first bytes.

Imported by the package at discovery, before any file has matched: the database check opens the
file (and imports the reader) only when the head is SQLite's.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from ...fixes.sqlite import SQLITE_MAGIC


@cache
def _export_head() -> re.Pattern[bytes]:
    """An export's first line; compiled for the first line that names `"source"`, as every one
    it matches does (a scan of another store's file need not pay for it: start-up, issue 20)."""
    return re.compile(rb'^\s*\{\s*"id"\s*:\s*"[^"\n]{1,200}"\s*,\s*"source"\s*:')


def sniff_db(path: Path, head: bytes) -> bool:
    if not head.startswith(SQLITE_MAGIC):
        return False
    import sqlite3

    from ...model import TdocError
    from .reader import is_hermes_schema, open_database

    try:
        conn = open_database(path)
    except TdocError:
        return False
    try:
        return is_hermes_schema(conn)
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()


def sniff_export(path: Path, head: bytes) -> bool:
    first = head.split(b"\n", 1)[0]
    if b'"source"' not in first or not _export_head().match(first):
        return False
    return b'"messages"' in first or len(first) == len(head)

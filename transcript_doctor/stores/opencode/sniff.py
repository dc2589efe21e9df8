"""Whether a file is an `opencode.db` or an `opencode export` document, by its first bytes.

Imported by the package at discovery, before any file has matched: the database check opens the
file (and imports the reader) only when the head is SQLite's.
"""

from __future__ import annotations

from pathlib import Path

from ...fixes.sqlite import SQLITE_MAGIC


def sniff_db(path: Path, head: bytes) -> bool:
    if not head.startswith(SQLITE_MAGIC):
        return False
    import sqlite3

    from ...model import TdocError
    from .reader import MESSAGE_TABLE, PART_TABLE, open_db

    try:
        conn = open_db(path)
    except TdocError:
        return False
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()
    return {MESSAGE_TABLE, PART_TABLE} <= names


def sniff_export(path: Path, head: bytes) -> bool:
    """An `opencode export` document: an object whose session `info` has a `ses_` id and `messages`."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"{"):
        return False
    return b'"messages"' in text and b'"info"' in text and b'"ses_' in text

"""The OpenCode reader reads a session's TEXT cells with sqlite3's own UTF-8 decoding (no Python
call per cell), and reads a session again through `decode_text`, the connection's general text
factory, when one of its cells is not UTF-8: both ways must give the same session."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from transcript_doctor.fixes.sqlite import decode_text
from transcript_doctor.stores.opencode.reader import DbReader, OcSession, open_db

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "opencode" / "opencode.db"


def _damaged(tmp_path: Path) -> Path:
    """The fixture with a part id, and a message id (and its parts' message_id), that are not UTF-8."""
    path = tmp_path / "opencode.db"
    shutil.copy(FIXTURE, path)
    conn = sqlite3.connect(path)
    (pid,) = conn.execute("SELECT id FROM part ORDER BY id LIMIT 1 OFFSET 3").fetchone()
    conn.execute("UPDATE part SET id = CAST(x'7072745fff41' AS TEXT) WHERE id = ?", (pid,))
    (mid,) = conn.execute("SELECT id FROM message ORDER BY id DESC LIMIT 1").fetchone()
    conn.execute("UPDATE message SET id = CAST(x'6d73675fc328' AS TEXT) WHERE id = ?", (mid,))
    conn.execute("UPDATE part SET message_id = CAST(x'6d73675fc328' AS TEXT) WHERE message_id = ?", (mid,))
    conn.commit()
    conn.close()
    return path


def _read_all(path: Path, general: bool) -> list[OcSession]:
    conn = open_db(path)
    try:
        if general:  # the same decoding, but not `decode_text` itself: the reader takes the general path
            conn.text_factory = lambda raw: decode_text(raw)
        reader = DbReader(conn, str(path))
        sessions = [reader.read_session(row) for row in reader.sessions()]
        assert general or conn.text_factory is decode_text  # put back after every session
        return sessions
    finally:
        conn.close()


def test_sessions_read_the_same_through_either_text_decoding(tmp_path: Path) -> None:
    for path in (FIXTURE, _damaged(tmp_path)):
        fast, general = _read_all(path, general=False), _read_all(path, general=True)
        assert fast == general and fast


def test_a_cell_that_is_not_utf8_is_read_as_decode_text_reads_it(tmp_path: Path) -> None:
    ids = {p.id for s in _read_all(_damaged(tmp_path), general=False) for m in s.messages for p in m.parts}
    assert decode_text(b"prt_\xffA") in ids

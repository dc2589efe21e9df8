"""`tdoc sessions`: every session in the given stores (or the default locations), one row each.

A row says which session it is, which agent wrote it, when it was last active, how big it is and
how many findings of each severity a scan reports for it, so a user can pick the one to look at.
Databases list each session they hold (their `session_activity`); a file that is one session is
described by the id and last record time its store records (`Store.session_identity`), else by its
file's name and modification time, and by its size.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .core import Report, ScanConfig, scan
from .model import FileResult, Finding, TdocError
from .stores import kinds, open_store

SEVERITIES = ("error", "warning", "info")
STORE_LEVEL = "-"  # the row for a database's findings that belong to no session


@dataclass
class SessionRow:
    id: str
    agent: str
    format: str
    path: str
    last_activity: float | None  # Unix seconds
    size: int
    size_unit: str  # "bytes" for a file that is one session, "records" for a session in a database
    findings: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SEVERITIES, 0))
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "agent": self.agent,
            "format": self.format,
            "path": self.path,
            "last_activity": iso_time(self.last_activity),
            "size": self.size,
            "size_unit": self.size_unit,
            "findings": dict(self.findings),
            "error": self.error,
        }


def iso_time(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def list_sessions(paths: Iterable[str], config: ScanConfig) -> list[SessionRow]:
    """Scan `paths` and describe each session found, most recently active first."""
    report: Report = scan(list(paths), config)
    rows: list[SessionRow] = []
    for fr in report.files:
        rows.extend(_rows_of(fr, config))
    rows.sort(key=lambda r: (-(r.last_activity or 0.0), r.path, r.id))
    return rows


def _rows_of(fr: FileResult, config: ScanConfig) -> list[SessionRow]:
    path = Path(fr.path)
    agent = _agent(fr.format)
    if fr.error or fr.format is None:
        return [SessionRow(_file_session_id(path), agent, fr.format or "?", fr.path, _mtime(path), _size(path),
                           "bytes", error=fr.error)]  # fmt: skip
    activity = _activity(path, fr, config)
    if not activity:
        sid, last = fr.identity
        row = SessionRow(sid or _file_session_id(path), agent, fr.format, fr.path, last or _mtime(path), _size(path),
                         "bytes")  # fmt: skip
        _count(row, fr.findings)
        return [row]
    rows = {sid: SessionRow(sid, agent, fr.format, fr.path, last, n, "records") for sid, (last, n) in activity.items()}
    loose = [f for f in fr.findings if f.session not in rows]
    for sid, row in rows.items():
        _count(row, [f for f in fr.findings if f.session == sid])
    out = list(rows.values())
    if loose:
        store_row = SessionRow(STORE_LEVEL, agent, fr.format, fr.path, _mtime(path), _size(path), "bytes")
        _count(store_row, loose)
        out.append(store_row)
    return out


def _activity(path: Path, fr: FileResult, config: ScanConfig) -> dict[str, tuple[float | None, int]]:
    if fr.sessions <= 1 and not _is_sqlite(path):
        return {}
    try:
        store = open_store(path, fr.path, config.options, config.input_format)
    except TdocError:
        return {}
    try:
        return store.session_activity()
    finally:
        store.close()


def _count(row: SessionRow, findings: list[Finding]) -> None:
    for f in findings:
        row.findings[f.severity] += 1


def _agent(format_id: str | None) -> str:
    kind = kinds().get(format_id or "")
    return kind.system if kind is not None else "?"


def _file_session_id(path: Path) -> str:
    """kimi-code keeps `<session>/agents/<agent>/wire.jsonl`; other agents name the file after the session."""
    if path.parent.parent.name == "agents" and len(path.parents) > 2:
        agent = path.parent.name
        session = path.parents[2].name
        return session if agent == "main" else f"{session}/{agent}"
    return path.stem


def _is_sqlite(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def as_table(rows: list[SessionRow]) -> tuple[list[str], list[list[str]]]:
    headers = ["session", "agent", "last activity", "size", "error", "warning", "info", "path"]
    body = [
        [r.id, r.agent, iso_time(r.last_activity) or "-", _human_size(r), *(str(r.findings[s]) for s in SEVERITIES),
         r.path + (f"  (unreadable: {r.error})" if r.error else "")]
        for r in rows
    ]  # fmt: skip
    return headers, body


def _human_size(row: SessionRow) -> str:
    if row.size_unit == "records":
        return f"{row.size} msgs"
    size = float(row.size)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{row.size} B"

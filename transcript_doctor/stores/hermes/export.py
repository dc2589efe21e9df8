"""`hermes sessions export` JSONL: one session object per line (sessions columns + `messages`).

Messages are already decoded (list content is a JSON array, `tool_calls` parsed) and only active
rows are exported. The file is streamed: an index pass records each session's line and offset,
and sessions are re-read one line at a time when checked or replayed. Findings point at the line
(`location.line`) and name the message id in `evidence.message_id`; they carry no fix, because
Hermes resumes from `state.db`, not from an export.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import values
from ...conversation import Conversation
from ...heal.plan import HealPlan
from ...model import Finding, RefusedError, TdocError
from ...rules.registry import finding
from ..base import HealOptions, Options, Store
from .checks import SessionScan, scan_session, session_pass
from .reader import SessionInfo, session_from_mapping
from .replay import replay_session
from .rows import Row, row_from_mapping


@dataclass
class LineProblem:
    line: int
    code: str  # F501 | F502 | F504
    message: str
    offset: int


class HermesExportStore(Store):
    format = "hermes-export"
    system = "hermes"

    def __init__(self, path: Path, display: str, options: Options | None = None) -> None:
        super().__init__(path, display)
        self.sessions: dict[str, SessionInfo] = {}
        self._lines: list[tuple[int, int, str]] = []  # (line number, byte offset, session id)
        self.problems: list[LineProblem] = []
        self._records = 0
        self._native = session_pass()
        self._index()

    def _index(self) -> None:
        try:
            fh = open(self.path, "rb")
        except OSError as exc:
            raise TdocError(f"{self.display}: cannot read: {exc.strerror or exc}") from None
        with fh:
            offset = 0
            for number, raw in enumerate(fh, start=1):
                self._index_line(number, offset, raw)
                offset += len(raw)
        if not self._lines and not self.problems:
            raise TdocError(f"{self.display}: empty file, no Hermes sessions to read")

    def _index_line(self, number: int, offset: int, raw: bytes) -> None:
        if not raw.strip():
            return
        try:
            obj = values.loads(raw)
        except values.ValueProblem as exc:
            self.problems.append(LineProblem(number, "F504", f"holds a value tdoc cannot carry: {exc}", offset))
            return
        except ValueError as exc:  # not JSON, or not UTF-8
            torn = not raw.endswith(b"\n")
            code = "F501" if torn else "F502"
            self.problems.append(LineProblem(number, code, f"not valid JSON ({str(exc)[:120]})", offset))
            return
        if not isinstance(obj, dict) or not isinstance(obj.get("messages"), list) or not values.is_id(obj.get("id")):
            self.problems.append(LineProblem(number, "F504", "not a Hermes session object (id + messages)", offset))
            return
        info = session_from_mapping(obj, line=number)
        self.sessions[info.id] = info
        self._lines.append((number, offset, info.id))
        self._records += len(obj["messages"])

    @property
    def session_count(self) -> int:
        return len(self._lines)

    @property
    def record_count(self) -> int:
        return self._records

    def iter_sessions(self, session_ids: list[str] | None = None) -> Iterator[tuple[str, list[Row]]]:
        wanted = set(session_ids) if session_ids is not None else None
        try:
            fh = open(self.path, "rb")
        except OSError as exc:
            raise TdocError(f"{self.display}: cannot read: {exc.strerror or exc}") from None
        with fh:
            for number, offset, sid in self._lines:
                if wanted is not None and sid not in wanted:
                    continue
                obj = self._reread(fh, number, offset)
                yield sid, [_row(m, sid, number) for m in obj["messages"] if isinstance(m, dict)]

    def _reread(self, fh: Any, number: int, offset: int) -> dict[str, Any]:
        """The session object of line `number` again; the file changing under tdoc is exit 3."""
        fh.seek(offset)
        try:
            obj = values.loads(fh.readline())
        except ValueError:
            obj = None
        if not isinstance(obj, dict) or not isinstance(obj.get("messages"), list):
            raise RefusedError(f"{self.display}: changed while tdoc was reading it (line {number} is no longer "
                               "the session it indexed); run again when nothing writes to it")
        return obj

    def session_scans(self) -> Iterator[SessionScan]:
        for sid, rows in self.iter_sessions():
            yield SessionScan(self.display, self.format, sid, rows, export=True)

    def scan_sessions(self) -> Iterator[Finding]:
        """Every finding of every exported session, shared rules included."""
        for scan in self.session_scans():
            yield from scan_session(scan)

    def conversations(self, options: Options) -> Iterator[Conversation]:
        yield from self._native.conversations(self.session_scans())

    def native_findings(self, options: Options, codes: frozenset[str]) -> Iterator[Finding]:
        yield from self.line_findings(codes)
        yield from self._native.findings(self.session_scans, codes)

    def line_findings(self, codes: Collection[str]) -> Iterator[Finding]:
        for p in self.problems:
            if p.code not in codes:
                continue
            yield finding(p.code, f"line {p.line}: {p.message}", path=self.display, format=self.format,
                          line=p.line, end_line=p.line, evidence={"byte_offset": p.offset})

    def replay(self, options: Options) -> Any:
        if options.session and options.session not in self.sessions:
            raise TdocError(f"{self.display}: no session {options.session!r}")
        wanted = [options.session] if options.session else None
        objects = [replay_session(self, sid, rows) for sid, rows in self.iter_sessions(wanted)]
        return objects[0] if options.session else objects

    def locate(self, position: int, session: str | None = None) -> dict[str, Any] | None:
        from .resume import build

        sid = session or (self._lines[0][2] if len(self._lines) == 1 else None)
        for _, rows in self.iter_sessions([sid] if sid else []):
            entries, _ = build(rows)
            for e in entries:
                if e.message.position == position:
                    return {"session": sid, "line": e.row.line, "end_line": e.row.line, "row": None,
                            "table": None, "role": e.row.role, "message_id": e.row.id}
        return None

    def plan_heal(self, findings: list[Finding], options: HealOptions) -> HealPlan:
        return HealPlan(
            warnings=["Hermes resumes from state.db, not from an export: heal the database instead"],
            skipped=[{"code": f.code, "session": f.session, "line": f.line, "reason": "exports are not healed"}
                     for f in findings])


def _row(message: dict[str, Any], session_id: str, line: int) -> Row:
    data = dict(message)
    data.setdefault("session_id", session_id)
    return row_from_mapping(data, line=line)

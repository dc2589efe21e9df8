"""Values passed between the layers: read -> replay -> rules -> report/fix.

Everything here is plain data. Readers build `Message`s, rules build `Finding`s, reporters and
fixers consume them. Nothing in this module does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

# Defined in errors.py (the CLI catches them without loading this module); imported from here across the layers.
from .errors import RefusedError as RefusedError
from .errors import TdocError as TdocError

Severity = Literal["error", "warning", "info"]
Applicability = Literal["safe", "unsafe", "none"]
SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}


# --------------------------------------------------------------------------- messages


@dataclass
class Loc:
    """Where a message or record lives in its store."""

    line: int | None = None
    end_line: int | None = None
    row: int | str | None = None
    table: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "end_line": self.end_line, "row": self.row, "table": self.table}


@dataclass
class Part:
    """One content part in the shared message model.

    kind: text | reasoning | media | other. `signed` is meaningful for reasoning parts only.
    """

    kind: str
    text: str = ""
    signed: bool = False
    # Where the part lives when the store keeps parts as records of their own (OpenCode's part
    # table), and the evidence naming it; a finding about the part points there.
    source: Loc | None = None
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass
class ToolCall:
    """A tool call of an assistant message, as the shared rules read it."""

    id: str
    name: str = ""
    arguments: str | None = None
    state: str | None = None  # store-specific status (OpenCode: pending/running/completed/error)


@dataclass
class Message:
    """A message in the shared model that the store-independent rules read.

    `position` is the index of the message in the request the provider would receive, `None`
    when it is not sent. `extra` holds store-specific facts the store's own rules need.
    """

    role: str
    parts: list[Part] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    is_error: bool = False
    loc: Loc = field(default_factory=Loc)
    position: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # Added to the evidence of every shared-rule finding about this message (e.g. the store's id).
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def visible_text(self) -> str:
        return "".join(p.text for p in self.parts if p.kind == "text")


# --------------------------------------------------------------------------- findings


@dataclass(frozen=True)
class Edit:
    """One record-level change. JSONL: op delete/replace/insert at `line`.

    SQLite: op update/delete on (`table`, `row`) with `set` holding column values.
    """

    op: str
    line: int | None = None
    text: str | None = None
    table: str | None = None
    row: int | str | None = None
    set: dict[str, Any] | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op}
        for key in ("line", "text", "table", "row", "set"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True)
class Fix:
    """How a finding can be healed: its applicability (safe, unsafe, none) and the edits."""

    applicability: Applicability
    summary: str
    edits: tuple[Edit, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "applicability": self.applicability,
            "summary": self.summary,
            "edits": [e.as_dict() for e in self.edits],
        }


@dataclass
class Finding:
    """One reported problem: the rule, where it is (line or row, session), its fix if any."""

    code: str
    name: str
    severity: Severity
    message: str
    path: str
    format: str
    session: str | None = None
    line: int | None = None
    end_line: int | None = None
    row: int | str | None = None
    table: str | None = None
    position: int | None = None
    engine: str | None = None
    fix: Fix | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    # What the finding is about, stable when lines shift (a step uuid, call id, message id, row),
    # set by the store that makes it; heal matches findings before and after by it. Not reported.
    subject: str | None = None

    def sort_key(self) -> tuple[Any, ...]:
        return (
            self.path,
            self.session or "",
            self.line if self.line is not None else -1,
            str(self.row) if self.row is not None else "",
            self.code,
            self.message,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "path": self.path,
            "format": self.format,
            "session": self.session,
            "location": {
                "line": self.line,
                "end_line": self.end_line,
                "row": self.row,
                "table": self.table,
                "position": self.position,
            },
            "engine": self.engine,
            "fix": self.fix.as_dict() if self.fix else None,
            "evidence": self.evidence,
        }


@dataclass
class FileResult:
    """What the scan of one input gave: its format, counts and findings, or the error that stopped it."""

    path: str
    format: str | None
    sessions: int = 0
    records: int = 0
    error: str | None = None
    findings: list[Finding] = field(default_factory=list)
    refused: bool = False  # the error is a refusal (store locked/changed): exit 3, not 2

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "sessions": self.sessions,
            "records": self.records,
            "error": self.error,
        }

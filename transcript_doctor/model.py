"""Values passed between the layers: read -> replay -> rules -> report/fix.

Everything here is plain data. Readers build `Message`s, rules build `Finding`s, reporters and
fixers consume them. Nothing in this module does I/O.
"""

from __future__ import annotations

from typing import Any, Literal

# Defined in errors.py (the CLI catches them without loading this module); imported from here across the layers.
from .errors import RefusedError as RefusedError
from .errors import TdocError as TdocError
from .value_types import FrozenValue, Value

Severity = Literal["error", "warning", "info"]
Applicability = Literal["safe", "unsafe", "none"]
SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}


# --------------------------------------------------------------------------- messages


class Loc(Value):
    """Where a message or record lives in its store."""

    __slots__ = ("line", "end_line", "row", "table")

    def __init__(self, line: int | None = None, end_line: int | None = None, row: int | str | None = None,
                 table: str | None = None) -> None:  # fmt: skip
        self.line = line
        self.end_line = end_line
        self.row = row
        self.table = table

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "end_line": self.end_line, "row": self.row, "table": self.table}


class Part(Value):
    """One content part in the shared message model.

    kind: text | reasoning | media | other. `signed` is meaningful for reasoning parts only.
    `source`: where the part lives when the store keeps parts as records of their own (OpenCode's
    part table), and `evidence` names it; a finding about the part points there.
    """

    __slots__ = ("kind", "text", "signed", "source", "evidence")

    def __init__(self, kind: str, text: str = "", signed: bool = False, source: Loc | None = None,
                 evidence: dict[str, Any] | None = None) -> None:  # fmt: skip
        self.kind = kind
        self.text = text
        self.signed = signed
        self.source = source
        self.evidence: dict[str, Any] = {} if evidence is None else evidence


class ToolCall(Value):
    """A tool call of an assistant message, as the shared rules read it.

    `state`: the store-specific status (OpenCode: pending/running/completed/error).
    """

    __slots__ = ("id", "name", "arguments", "state")

    def __init__(self, id: str, name: str = "", arguments: str | None = None, state: str | None = None) -> None:
        self.id = id
        self.name = name
        self.arguments = arguments
        self.state = state


class Message(Value):
    """A message in the shared model that the store-independent rules read.

    `position` is the index of the message in the request the provider would receive, `None`
    when it is not sent. `extra` holds store-specific facts the store's own rules need;
    `evidence` is added to the evidence of every shared-rule finding about this message (e.g.
    the store's id).
    """

    __slots__ = ("role", "parts", "tool_calls", "tool_call_id", "is_error", "loc", "position", "extra", "evidence")

    def __init__(self, role: str, parts: list[Part] | None = None, tool_calls: list[ToolCall] | None = None,
                 tool_call_id: str | None = None, is_error: bool = False, loc: Loc | None = None,
                 position: int | None = None, extra: dict[str, Any] | None = None,
                 evidence: dict[str, Any] | None = None) -> None:  # fmt: skip
        self.role = role
        self.parts: list[Part] = [] if parts is None else parts
        self.tool_calls: list[ToolCall] = [] if tool_calls is None else tool_calls
        self.tool_call_id = tool_call_id
        self.is_error = is_error
        self.loc: Loc = Loc() if loc is None else loc
        self.position = position
        self.extra: dict[str, Any] = {} if extra is None else extra
        self.evidence: dict[str, Any] = {} if evidence is None else evidence

    @property
    def visible_text(self) -> str:
        return "".join(p.text for p in self.parts if p.kind == "text")


# A conversation with a locator (`conversation.Locator`) places its messages and parts only when a
# finding names them. Until then a message's `loc` is this one and its (and its parts') `evidence`
# this mapping: shared by all of them, so nothing may change either (tests/test_unplaced.py).
UNPLACED = Loc()
NAMED_LATER: dict[str, Any] = {}


# Readers build these four by the thousand. Calling a Python class costs about twice what `__new__`
# and the slot assignments cost (CPython 3.11 does not inline `__init__`), so the hot paths use
# the functions below: each is its constructor with every field given, and builds an object equal
# to the constructor's (tests/test_model_builders.py).
_new = object.__new__


def make_loc(line: int | None, end_line: int | None, row: int | str | None, table: str | None) -> Loc:
    """`Loc(line, end_line, row, table)`."""
    loc = _new(Loc)
    loc.line = line
    loc.end_line = end_line
    loc.row = row
    loc.table = table
    return loc


def make_part(kind: str, text: str, signed: bool, source: Loc | None, evidence: dict[str, Any]) -> Part:
    """`Part(kind, text, signed, source, evidence)`."""
    part = _new(Part)
    part.kind = kind
    part.text = text
    part.signed = signed
    part.source = source
    part.evidence = evidence
    return part


def make_call(id: str, name: str, arguments: str | None, state: str | None) -> ToolCall:
    """`ToolCall(id, name, arguments, state)`."""
    call = _new(ToolCall)
    call.id = id
    call.name = name
    call.arguments = arguments
    call.state = state
    return call


def make_message(role: str, parts: list[Part], tool_calls: list[ToolCall], tool_call_id: str | None,
                 is_error: bool, loc: Loc, position: int | None, extra: dict[str, Any],
                 evidence: dict[str, Any]) -> Message:  # fmt: skip
    """`Message(role, parts, tool_calls, tool_call_id, is_error, loc, position, extra, evidence)`."""
    msg = _new(Message)
    msg.role = role
    msg.parts = parts
    msg.tool_calls = tool_calls
    msg.tool_call_id = tool_call_id
    msg.is_error = is_error
    msg.loc = loc
    msg.position = position
    msg.extra = extra
    msg.evidence = evidence
    return msg


# --------------------------------------------------------------------------- findings


class Edit(FrozenValue):
    """One record-level change. JSONL: op delete/replace/insert at `line`.

    SQLite: op update/delete on (`table`, `row`) with `set` holding column values.
    """

    __slots__ = ("op", "line", "text", "table", "row", "set")
    op: str
    line: int | None
    text: str | None
    table: str | None
    row: int | str | None
    set: dict[str, Any] | None

    def __init__(self, op: str, line: int | None = None, text: str | None = None, table: str | None = None,
                 row: int | str | None = None, set: dict[str, Any] | None = None) -> None:  # fmt: skip
        self.assign(op, line, text, table, row, set)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op}
        for key in ("line", "text", "table", "row", "set"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


class Fix(FrozenValue):
    """How a finding can be healed: its applicability (safe, unsafe, none) and the edits."""

    __slots__ = ("applicability", "summary", "edits")
    applicability: Applicability
    summary: str
    edits: tuple[Edit, ...]

    def __init__(self, applicability: Applicability, summary: str, edits: tuple[Edit, ...] = ()) -> None:
        self.assign(applicability, summary, edits)

    def as_dict(self) -> dict[str, Any]:
        return {
            "applicability": self.applicability,
            "summary": self.summary,
            "edits": [e.as_dict() for e in self.edits],
        }


class Finding(Value):
    """One reported problem: the rule, where it is (line or row, session), its fix if any.

    `subject`: what the finding is about, stable when lines shift (a step uuid, call id, message
    id, row), set by the store that makes it; heal matches findings before and after by it. Not
    reported.
    """

    __slots__ = ("code", "name", "severity", "message", "path", "format", "session", "line", "end_line", "row",
                 "table", "position", "engine", "fix", "evidence", "subject")  # fmt: skip

    def __init__(self, code: str, name: str, severity: Severity, message: str, path: str, format: str,
                 session: str | None = None, line: int | None = None, end_line: int | None = None,
                 row: int | str | None = None, table: str | None = None, position: int | None = None,
                 engine: str | None = None, fix: Fix | None = None, evidence: dict[str, Any] | None = None,
                 subject: str | None = None) -> None:  # fmt: skip
        self.code = code
        self.name = name
        self.severity: Severity = severity
        self.message = message
        self.path = path
        self.format = format
        self.session = session
        self.line = line
        self.end_line = end_line
        self.row = row
        self.table = table
        self.position = position
        self.engine = engine
        self.fix = fix
        self.evidence: dict[str, Any] = {} if evidence is None else evidence
        self.subject = subject

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


class FileResult(Value):
    """What the scan of one input gave: its format, counts and findings, or the error that stopped it.

    `refused`: the error is a refusal (store locked/changed): exit 3, not 2.
    """

    __slots__ = ("path", "format", "sessions", "records", "error", "findings", "refused", "identity")

    def __init__(self, path: str, format: str | None, sessions: int = 0, records: int = 0, error: str | None = None,
                 findings: list[Finding] | None = None, refused: bool = False,
                 identity: tuple[str | None, float | None] = (None, None)) -> None:  # fmt: skip
        self.path = path
        self.format = format
        self.sessions = sessions
        self.records = records
        self.error = error
        self.findings: list[Finding] = [] if findings is None else findings
        self.refused = refused
        # (session id, last activity) of a store of one session (`Store.session_identity`), for
        # `tdoc sessions`; not part of the report
        self.identity = identity

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "sessions": self.sessions,
            "records": self.records,
            "error": self.error,
        }

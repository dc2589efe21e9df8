"""Streaming reader for kimi-code `wire.jsonl` journals.

Yields one `Record` per non-empty line, in order, each with its 1-based line number and byte
offset. Lines that do not parse become `LineProblem`s (torn final line, corrupt line) instead of
exceptions. The metadata header is recognised and in-memory migrations that touch history
(1.0 -> 1.1 tool-call flattening) are applied to the parsed record, never to the file.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .... import values

READ_BUFFER = 1 << 20  # line iteration over a 1 MiB buffer costs half what the default 8 KiB costs
KNOWN_VERSIONS = ("1.0", "1.1", "1.2", "1.3", "1.4", "1.5")
LATEST_VERSION = "1.5"


@dataclass(slots=True, repr=False, eq=False)
class Record:
    line: int
    offset: int
    type: str | None
    data: dict[str, Any]


@dataclass(slots=True, repr=False, eq=False)
class LineProblem:
    line: int
    offset: int
    kind: str  # "torn" | "corrupt" | "not-object"
    detail: str
    length: int


@dataclass(repr=False, eq=False)
class Header:
    line: int
    protocol_version: str | None
    created_at: Any
    valid: bool


@dataclass(repr=False, eq=False)
class ReadStats:
    lines: int = 0
    records: int = 0
    bytes: int = 0
    crlf: bool = False
    final_newline: bool = True
    problems: list[LineProblem] = field(default_factory=list)
    hasher: Any = None  # a hashlib object fed every byte read, when set
    may_nest: bool = False  # some line had brackets enough to nest beyond values.MAX_DEPTH


def parse_line(raw: bytes) -> Any:
    """One line's JSON value under the reader-boundary rule (`transcript_doctor.values`): what JS
    JSON.parse accepts (lone surrogates too) minus what later stages cannot use (Infinity, nesting
    orjson cannot write). Raises ValueError (UnicodeDecodeError for bytes that are not UTF-8)."""
    return values.loads(raw)


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    if not isinstance(version, str):
        return None
    try:
        return tuple(int(x) for x in version.split("."))
    except ValueError:
        return None


def header_of(rec: Record) -> Header | None:
    if rec.type != "metadata":
        return None
    version = rec.data.get("protocol_version")
    created = rec.data.get("created_at")
    valid = isinstance(version, str) and isinstance(created, (int, float)) and not isinstance(created, bool)
    return Header(rec.line, version if isinstance(version, str) else None, created, valid)


def flatten_tool_calls(message: Any) -> None:
    """1.0 -> 1.1: `{type, id, function: {name, arguments}}` becomes `{type, id, name, arguments}`."""
    if not isinstance(message, dict):
        return
    calls = message.get("toolCalls")
    if not isinstance(calls, list):
        return
    for i, call in enumerate(calls):
        if isinstance(call, dict) and isinstance(call.get("function"), dict):
            flat = {k: v for k, v in call.items() if k != "function"}
            flat["name"] = call["function"].get("name")
            flat["arguments"] = call["function"].get("arguments")
            calls[i] = flat


def _body(raw: bytes) -> bytes:
    """A physical line without its line ending."""
    if raw.endswith(b"\n"):
        raw = raw[:-1]
        if raw.endswith(b"\r"):
            raw = raw[:-1]
    return raw


Take = Callable[[int, int, dict[str, Any]], bool]
TakeEvent = Callable[[int, int, dict[str, Any], dict[str, Any]], bool]
LOOP = "context.append_loop_event"


def read_records(fh: Iterable[bytes], stats: ReadStats, hot: Mapping[str, Take] | None = None,
                 keep: Container[str | None] = (), depth_check: bool = True,
                 loop: Mapping[str, TakeEvent] | None = None) -> Iterator[Record | LineProblem]:
    """Parse every non-empty line (one pass, no copy of a line that parses: JSON allows the
    line ending as trailing whitespace); the header's version decides the in-memory migrations.

    With `hot` (the replay's hot path), every record after the first (migrated) is handled in
    this loop before a `Record` is made for it: a record whose type has a handler in `hot` is
    offered to it, `handler(line, offset, data)`, and consumed when it returns True; a loop-event
    record whose event is an object of a kind with a handler in `loop` is offered to that one,
    `handler(line, offset, data, event)` (one call per record, no dispatch of its own); a record
    of any other type not in `keep` is consumed unread. The rest are yielded.

    `depth_check=False` skips the nesting test (values.MAX_DEPTH) for lines orjson parses: only
    for lines known to be shallow (a heal's replay of its own output, when the read of the
    original found no line with brackets enough: `ReadStats.may_nest`)."""
    migrate_1_0 = False
    first = True
    offset = number = records = 0
    update = stats.hasher.update if stats.hasher is not None else None
    loads = orjson.loads
    depth_exceeds, may_be_deep = values.depth_exceeds, values.may_be_deep
    never = 1 << 62  # (no line is that long: no depth test)
    deep_text = 2 * values.MAX_DEPTH if depth_check else never  # fewer bytes cannot hold that many brackets and their closes
    deep_objects = 5 * values.MAX_DEPTH if depth_check else never  # nor, with no `[`, that many objects (values.may_be_deep)
    crlf = False
    try:
        for raw in fh:
            number += 1
            start = offset
            offset += len(raw)
            if update is not None:
                update(raw)
            if raw[-2:] != b"}\n":  # the commonest ending settles both questions at once
                if raw[-1:] != b"\n":
                    stats.final_newline = False
                elif not crlf and raw[-2:-1] == b"\r":  # (a one-byte slice is a cached object)
                    crlf = stats.crlf = True
            try:
                obj = loads(raw)
                size = offset - start
                maybe_deep = size >= deep_objects or (size >= deep_text and 91 in raw)  # values.may_be_deep's first tests
                if maybe_deep and may_be_deep(raw):
                    stats.may_nest = True
                    if depth_exceeds(obj):
                        raise orjson.JSONDecodeError("too deep", "", 0)  # parse_line says why
            except orjson.JSONDecodeError:
                body = _body(raw)
                if not body.strip():
                    continue
                try:
                    obj = parse_line(body)
                except ValueError as exc:  # UnicodeDecodeError and values.ValueProblem too
                    # Only the last line can lack its newline: a torn write, which the runtimes drop.
                    kind = "torn" if not stats.final_newline else "corrupt"
                    problem = LineProblem(number, start, kind, _describe(exc), len(body))
                    stats.problems.append(problem)
                    yield problem
                    continue
            if obj.__class__ is not dict:
                detail = f"a JSON {type(obj).__name__}, not an object"
                problem = LineProblem(number, start, "not-object", detail, len(_body(raw)))
                stats.problems.append(problem)
                yield problem
                continue
            rtype = obj.get("type")
            if rtype.__class__ is not str:
                rtype = None
            records += 1
            if first:
                first = False
                rec = Record(number, start, rtype, obj)
                head = header_of(rec)
                migrate_1_0 = head is not None and version_tuple(head.protocol_version) == (1, 0)
                yield rec
                continue
            if migrate_1_0 and rtype == "context.append_message":
                flatten_tool_calls(obj.get("message"))
            if hot is not None:
                if rtype == LOOP and loop is not None:
                    event: Any = obj.get("event")
                    event_kind = event.get("type") if event.__class__ is dict else None
                    taker = loop.get(event_kind) if event_kind.__class__ is str else None
                    if taker is not None and taker(number, start, obj, event):
                        continue
                else:
                    handler = hot.get(rtype)  # type: ignore[arg-type]
                    if handler is not None:
                        if handler(number, start, obj):
                            continue
                    elif rtype not in keep:
                        continue
            yield Record(number, start, rtype, obj)
    finally:  # also when the consumer stops early: the counts cover what was read
        stats.records += records
        stats.lines = number
        stats.bytes = offset


def _describe(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return f"invalid UTF-8 at byte {exc.start} of the line"
    if isinstance(exc, values.ValueProblem):
        return f"a value tdoc cannot carry: {exc}"
    return f"invalid JSON ({str(exc).splitlines()[0][:120]})"


def agent_id_for(path: Path) -> str | None:
    """The agent a journal belongs to (`agents/<id>/wire.jsonl`), or None when not in that layout."""
    parent = path.parent
    if parent.parent.name == "agents":
        return parent.name
    return None

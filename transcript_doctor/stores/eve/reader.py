"""Read an eve session stream (NDJSON) into turns, streaming line by line.

The format is decided by content: a line `{"type", "data", "meta"}` is the envelope of stream
versions <= 26; `{"at", "facts": [...]}` or `{"progress": ...}` is version 27. The first usable
record decides; a record of the other shape later on is reported, not applied. Lines that cannot
be used become `Problem`s (F501 torn tail, F502 corrupt line, F504 invalid record); only a file
with no usable record at all is an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ... import values
from ...model import TdocError
from .builder import Builder
from .turns import Problem, Stream
from .v26 import EVENT_TYPES, V26Decoder
from .v27 import FACT_TYPES, V27Decoder, record_shape

V26 = "<=26"
V27 = "27"
_SNIFF_LINES = 5
# The start of a first line too long to fit in the sniffed head.
_HEAD_V26 = re.compile(rb'\s*\{\s*"type"\s*:\s*"([a-z.]+)"')
_HEAD_V27 = re.compile(rb'\s*\{\s*"(?:at"\s*:\s*"[^"]*"\s*,\s*"facts|progress)"\s*:')


def shape_of(record: Any) -> str | None:
    """Which stream format a parsed line belongs to, if any."""
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("type"), str) and "facts" not in record:
        return V26
    if record_shape(record):
        return V27
    return None


def sniff(head: bytes) -> bool:
    """Whether the first records in `head` are eve stream records of a known event type."""
    lines = head.split(b"\n")
    complete = lines[:-1] if len(lines) > 1 else []
    tried = 0
    for raw in complete:
        if not raw.strip():
            continue
        try:
            return _known(orjson.loads(raw))
        except orjson.JSONDecodeError:
            tried += 1  # a corrupt first line: decide on the next one
            if tried >= _SNIFF_LINES:
                return False
    tail = lines[-1]
    m = _HEAD_V26.match(tail)
    if m:
        return m.group(1).decode() in EVENT_TYPES
    return bool(_HEAD_V27.match(tail))


def _known(record: Any) -> bool:
    shape = shape_of(record)
    if shape == V26:
        return record["type"] in EVENT_TYPES
    if shape == V27:
        facts = record.get("facts") if "facts" in record else [record.get("progress")]
        return isinstance(facts, list) and any(isinstance(f, dict) and f.get("type") in FACT_TYPES for f in facts)
    return False


def _lines(path: Path) -> Iterator[tuple[int, int, bytes, bool]]:
    """(line number, byte offset, content without the line end, ended with a newline)."""
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise TdocError(f"{path}: cannot read: {exc.strerror or exc}") from None
    offset = 0
    with fh:
        for number, raw in enumerate(fh, start=1):
            ended = raw.endswith(b"\n")
            yield number, offset, raw.rstrip(b"\r\n"), ended
            offset += len(raw)


def read_stream(path: Path, display: str | None = None) -> Stream:
    """Rebuild the stream at `path`. Raises TdocError only when nothing in it can be read."""
    reader = _Reader()
    for number, offset, body, ended in _lines(path):
        reader.feed(number, offset, body, ended)
    stream = reader.finish()
    if stream.events == 0 and stream.duplicates == 0:
        first = f" ({stream.problems[0].message})" if stream.problems else ""
        raise TdocError(f"{display or path}: no readable eve stream event{first}")
    return stream


class _Reader:
    def __init__(self) -> None:
        self.version: str | None = None
        self.builder: Builder | None = None
        self.v26: V26Decoder | None = None
        self.v27: V27Decoder | None = None
        self.pending: list[Problem] = []  # problems seen before the format is known
        self.records = 0

    def feed(self, number: int, offset: int, body: bytes, ended: bool) -> None:
        if not body.strip():
            return
        self.records += 1
        try:
            record = values.loads(body)
        except values.ValueProblem as exc:  # JSON, but a value later stages cannot carry
            evidence = {"offset": offset, "bytes": len(body), "reason": str(exc)}
            self._problem(Problem("F504", number, f"line {number} holds {exc}", evidence))
            return
        except ValueError as exc:
            self._problem(_parse_problem(number, offset, body, ended, exc))
            return
        shape = shape_of(record)
        if shape is None:
            what = "not a JSON object" if not isinstance(record, dict) else "neither an event nor a commit"
            code = "F502" if not isinstance(record, dict) else "F504"
            self._problem(Problem(code, number, f"line {number} is {what}", {"offset": offset}))
            return
        if self.builder is None:
            self._start(shape)
        if shape != self.version:
            self._problem(Problem("F504", number, f"a version {shape} record in a version {self.version} stream"))
            return
        self._apply(number, record)

    def _start(self, shape: str) -> None:
        self.version = shape
        self.builder = Builder(shape)
        if shape == V26:
            self.v26 = V26Decoder(self.builder)
        else:
            self.v27 = V27Decoder(self.builder)
        self.builder.stream.problems.extend(self.pending)
        self.pending = []

    def _apply(self, number: int, record: dict[str, Any]) -> None:
        assert self.builder is not None
        self.builder.begin_line(number)
        if self.v26 is not None:
            reason = self.v26.apply(record)
        else:
            assert self.v27 is not None
            reason = self.v27.apply_record(record)
        self.builder.end_line()
        if reason:
            self._problem(Problem("F504", number, f"line {number}: {reason}"))

    def _problem(self, problem: Problem) -> None:
        if self.builder is None:
            self.pending.append(problem)
        else:
            self.builder.stream.problems.append(problem)

    def finish(self) -> Stream:
        if self.builder is None:
            stream = Stream(version="unknown", problems=self.pending)
        else:
            stream = self.builder.finish()
        stream.records = self.records
        return stream


def _parse_problem(number: int, offset: int, body: bytes, ended: bool, exc: Exception) -> Problem:
    try:
        body.decode("utf-8")
        reason = f"invalid JSON: {str(exc)[:120]}"
    except UnicodeDecodeError as err:
        reason = f"not UTF-8 at byte {offset + err.start}"
    evidence = {"offset": offset, "bytes": len(body), "reason": reason}
    if not ended:
        return Problem("F501", number, f"line {number} is a torn final line ({reason})", evidence)
    return Problem("F502", number, f"line {number} is corrupt: {reason}", evidence)

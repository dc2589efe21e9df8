"""Read an eve session stream (NDJSON) into turns, streaming line by line.

The format is decided by content: a line `{"type", "data", "meta"}` is the envelope of stream
versions <= 26; `{"at", "facts": [...]}` or `{"progress": ...}` is version 27. The first usable
record decides; a record of the other shape later on is reported, not applied. Lines that cannot
be used become `Problem`s (F501 torn tail, F502 corrupt line, F504 invalid record); only a file
with no usable record at all is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ... import values
from ...model import TdocError
from ..collector import collector_paused
from .builder import Builder
from .sniff import V26, shape_of
from .sniff import sniff as sniff  # where callers have looked for it
from .turns import Problem, Stream
from .v26 import V26Decoder
from .v27 import V27Decoder


def read_stream(path: Path, display: str | None = None) -> Stream:
    """Rebuild the stream at `path`. Raises TdocError only when nothing in it can be read."""
    reader = _Reader()
    try:
        fh = open(path, "rb")
    except OSError as exc:
        raise TdocError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with fh, collector_paused():
        reader.read_lines(fh)
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
        self.decode: Callable[[dict[str, Any]], str | None] | None = None  # the decoder's record handler
        self.pending: list[Problem] = []  # problems seen before the format is known
        self.records = 0

    def read_lines(self, lines: Iterable[bytes]) -> None:
        """Every line as read, with its line end: through `feed`, the general path, until the first
        usable record decides the format, then the rest through the decoder's `read_lines` (the
        common record parsed and applied inline, anything else through `feed`)."""
        rest = iter(lines)
        number = offset = 0
        for raw in rest:
            number += 1
            self.feed(number, offset, raw.rstrip(b"\r\n"), raw.endswith(b"\n"))
            offset += len(raw)
            if self.builder is not None:
                break
        inline = 0  # not `self.records += ...`: `feed` counts its own lines meanwhile
        if self.v26 is not None:
            inline = self.v26.read_lines(rest, number, offset, self.feed)
        elif self.v27 is not None:
            inline = self.v27.read_lines(rest, number, offset, self.feed, self._reject)
        self.records += inline

    def feed(self, number: int, offset: int, body: bytes, ended: bool) -> None:
        """One line without its line end (`ended`: it had one): the general path."""
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
            self.decode = self.v26.apply
        else:
            self.v27 = V27Decoder(self.builder)
            self.decode = self.v27.apply_record
        self.builder.stream.problems.extend(self.pending)
        self.pending = []

    def _apply(self, number: int, record: dict[str, Any]) -> None:
        assert self.builder is not None
        assert self.decode is not None
        reason = self.builder.apply_line(number, self.decode, record)
        if reason:
            self._reject(number, reason)

    def _reject(self, number: int, reason: str) -> None:
        """Line `number` holds a record of this stream's version that cannot be (wholly) used."""
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
        # A decoder's handler table holds its bound methods, a cycle that reaches the builder and
        # so every turn read: broken here, the stream is freed as soon as its caller drops it
        # instead of at the next full collection (which, until then, walks all of it).
        for decoder in (self.v26, self.v27):
            if decoder is not None:
                decoder.close()
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

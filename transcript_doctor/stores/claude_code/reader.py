"""Read a Claude Code session file (JSONL) into `Record`s, streaming line by line.

What the reader decides (docs/claude-code-sessions.md, sections "Records" and "Provider errors"):
* a line that is one JSON object is one record, whatever its type (unknown types are kept and ignored);
* a line holding two or more complete JSON objects with no newline between them is a concatenated
  line (F509): every object on it becomes a record marked unreadable, because Claude Code parses
  line by line and loses all of them; a piece whose `uuid` is written again on a later line is a
  twin that a split drops;
* a last line without a newline that is complete JSON is a record (Entire's copies end that way);
  one that is not is a torn tail (F501); any other line that is not an object is corrupt (F502).
"""

from __future__ import annotations

import gc
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ... import values
from ...model import TdocError
from .records import Names, Record, make_record
from .sniff import sniff as sniff  # where callers have looked for it

BUFFER = 1 << 20
_DECODER = values.DECODER  # the reader-boundary number checks (docs/errors.md)


@dataclass
class Problem:
    code: str  # F501 | F502
    line: int
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass
class Concatenated:
    """A line holding several records (F509)."""

    line: int
    offset: int
    pieces: list[str]  # the exact text of each record, in order
    twins: list[int] = field(default_factory=list)  # pieces whose uuid is written again later


@dataclass
class Transcript:
    path: Path
    records: list[Record] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    concatenated: list[Concatenated] = field(default_factory=list)
    lines: int = 0
    size: int = 0
    session: str | None = None
    last_timestamp: Any = None  # the `timestamp` of the last record that has one (tdoc sessions)
    noted: list[Record] = field(default_factory=list)  # records with metadata (errors, boundaries), in order

    def by_line(self, line: int) -> list[Record]:
        """The records of one line (several on a concatenated line), found by bisection: records are in line order."""
        records = self.records
        start = bisect_left(records, line, key=_line_of)
        end = bisect_right(records, line, lo=start, key=_line_of)
        return records[start:end]


def _line_of(rec: Record) -> int:
    return rec.line




@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic collections while the record index (or the request over it) is built: records hold no
    cycles, and a full collection every few thousand allocations over a heap that grows with the file
    made reading quadratic."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


_FROZEN = [0]  # open stores whose index is frozen


def freeze_index() -> None:
    """Move the objects alive now (the index just read) out of the collector's reach until the store
    closes: they hold no cycles, and every full collection would otherwise walk all of them again."""
    _FROZEN[0] += 1
    gc.freeze()


def frozen_stores() -> int:
    return _FROZEN[0]


def refreeze() -> None:
    """Freeze what was built on top of a frozen index (the request's messages) as well."""
    if _FROZEN[0] > 0:
        gc.freeze()


def thaw_index() -> None:
    """Undo `freeze_index` once the last open store has closed."""
    if _FROZEN[0] > 0:
        _FROZEN[0] -= 1
        if _FROZEN[0] == 0:
            gc.unfreeze()


def read_transcript(path: Path, display: str, *, keep_text: bool = False) -> Transcript:
    """Every record of the file at `path`; TdocError only when no record at all can be read."""
    with gc_paused():
        return _read(path, display, keep_text)


def _read(path: Path, display: str, keep_text: bool) -> Transcript:
    out = Transcript(path)
    try:
        with open(path, "rb", buffering=BUFFER) as fh:
            _read_lines(out, fh, keep_text)
    except OSError as exc:
        raise TdocError(f"{display}: cannot read: {exc.strerror or exc}") from None
    _mark_twins(out)
    records = out.records
    if not records:
        first = f" ({out.problems[0].message})" if out.problems else ""
        raise TdocError(f"{display}: no readable Claude Code record{first}")
    out.session = next((r.session for r in reversed(records) if r.session), None)
    return out


def _read_lines(out: Transcript, lines: Iterable[bytes], keep_text: bool) -> None:
    """The hot loop: one orjson parse and one slim record per line; the rest goes to `_slow_line`."""
    records, noted, append = out.records, out.noted, out.records.append
    names = Names()
    loads = orjson.loads
    may_be_deep, depth_exceeds, deep_text = values.may_be_deep, values.depth_exceeds, 2 * values.MAX_DEPTH
    number = offset = 0
    stamp = None
    for raw in lines:
        number += 1
        size = len(raw)
        if size > 2 or raw.strip():  # orjson takes the line with its ending: no copy per line
            # Text kept whole for F507: a NUL escape. A lone surrogate makes orjson refuse the line, so such
            # lines take the slow path, which keeps their text whole too.
            suspect = b"\\u0000" in raw
            try:
                obj = loads(raw)
                if size >= deep_text and may_be_deep(raw, obj) and depth_exceeds(obj):
                    raise orjson.JSONDecodeError("too deep", "", 0)  # orjson reads 1024 levels, writes 254
            except orjson.JSONDecodeError:
                ended = raw.endswith(b"\n")
                _slow_line(out, number, offset, raw.rstrip(b"\r\n") if ended else raw, ended, keep_text, names)
            else:
                if type(obj) is dict:
                    stamp = obj.get("timestamp", stamp)
                    rec = make_record(obj, len(records), number, 0, offset, keep_text, suspect, names)
                    append(rec)
                    if rec.meta is not None:
                        noted.append(rec)
                else:
                    out.problems.append(Problem("F502", number, f"line {number} is not a JSON object",
                                                {"offset": offset}))  # fmt: skip
        offset += size
    out.lines, out.size, out.last_timestamp = number, offset, stamp


def _slow_line(out: Transcript, number: int, offset: int, body: bytes, ended: bool, keep_text: bool,
               names: Names) -> None:  # fmt: skip
    """A line orjson rejects: lone surrogates (stdlib json reads them), concatenated records, or junk."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        _bad(out, number, offset, ended, f"not UTF-8 at byte {offset + err.start}", len(body))
        return
    pieces = split_values(text)
    if pieces is None:
        try:
            obj = values.loads(text)  # refuses what later stages cannot write back (too deep, 1e400)
        except values.ValueProblem as exc:
            _bad(out, number, offset, ended, f"invalid JSON: {str(exc)[:120]}", len(body))
            return
        except ValueError:
            _bad(out, number, offset, ended, values.why_unparsable(body), len(body))
            return
        pieces = [(text, obj)]
    reason = next((r for r in (values.problem(obj) for _, obj in pieces) if r is not None), None)
    if reason is not None:
        _bad(out, number, offset, ended, f"invalid JSON: {reason}", len(body))
        return
    if not all(isinstance(obj, dict) for _, obj in pieces):
        _bad(out, number, offset, ended, "not a JSON object", len(body))
        return
    if len(pieces) > 1:
        out.concatenated.append(Concatenated(number, offset, [p for p, _ in pieces]))
    for k, (_, obj) in enumerate(pieces):
        rec = make_record(obj, len(out.records), number, k, offset, keep_text, True, names)
        rec.readable = len(pieces) == 1
        out.records.append(rec)
        if rec.meta is not None:
            out.noted.append(rec)


def split_values(text: str) -> list[tuple[str, Any]] | None:
    """The JSON values written back to back on one line, with their exact text; None if not so."""
    pieces: list[tuple[str, Any]] = []
    pos, end = 0, len(text)
    while pos < end:
        try:
            obj, stop = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return None
        pieces.append((text[pos:stop], obj))
        pos = stop
        while pos < end and text[pos] in " \t":
            pos += 1
    return pieces if len(pieces) > 1 else None


def _bad(out: Transcript, number: int, offset: int, ended: bool, reason: str, size: int) -> None:
    evidence = {"offset": offset, "bytes": size, "reason": reason}
    if not ended:
        out.problems.append(Problem("F501", number, f"line {number} is a torn final line ({reason})", evidence))
    else:
        out.problems.append(Problem("F502", number, f"line {number} is corrupt: {reason}", evidence))


def _mark_twins(out: Transcript) -> None:
    """A piece of a concatenated line whose uuid another line holds too is a twin (kept once)."""
    if not out.concatenated:
        return
    readable = {rec.uuid for rec in out.records if rec.uuid is not None and rec.readable}
    pieces = {(r.line, r.piece): r for r in out.records if not r.readable}
    for cat in out.concatenated:
        for k in range(len(cat.pieces)):
            rec = pieces.get((cat.line, k))
            if rec is not None and rec.uuid in readable:
                cat.twins.append(k)

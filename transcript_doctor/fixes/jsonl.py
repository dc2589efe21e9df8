"""Line-level edits on JSONL files, applied while streaming.

Untouched lines are copied byte for byte (line endings, key order and number formatting kept);
only replaced lines are new bytes, written with the file's own line ending.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import IO, Protocol

from ..model import Edit, TdocError


@dataclass
class LinePlan:
    """Edits keyed by 1-based line number: None deletes the line, bytes replace it."""

    changes: dict[int, bytes | None] = field(default_factory=dict)

    @classmethod
    def from_edits(cls, edits: Iterable[Edit]) -> LinePlan:
        plan = cls()
        for edit in edits:
            plan.add(edit)
        return plan

    def add(self, edit: Edit) -> None:
        if edit.line is None or edit.op not in ("delete", "replace"):
            raise TdocError(f"cannot apply a {edit.op!r} edit to a JSONL file")
        value = None if edit.op == "delete" else (edit.text or "").encode("utf-8")
        if edit.line in self.changes and self.changes[edit.line] != value:
            raise ConflictError(edit.line)
        self.changes[edit.line] = value

    def conflicts_with(self, edits: Iterable[Edit]) -> bool:
        for edit in edits:
            value = None if edit.op == "delete" else (edit.text or "").encode("utf-8")
            if edit.line in self.changes and self.changes[edit.line] != value:
                return True
        return False

    def __bool__(self) -> bool:
        return bool(self.changes)


class ConflictError(TdocError):
    def __init__(self, line: int) -> None:
        super().__init__(f"two fixes edit line {line} differently")
        self.line = line


def _ending(raw: bytes) -> bytes:
    if raw.endswith(b"\r\n"):
        return b"\r\n"
    return b"\n" if raw.endswith(b"\n") else b""


def iter_applied(src: Iterable[bytes], plan: LinePlan) -> Iterator[bytes]:
    """The lines of `src` with the plan applied, each with its line ending (streamed).

    Runs of untouched lines are passed through by `islice`, chained in C: no Python step per
    line, only one per edit. A replacement gets the line ending of the line it replaces; its
    inner line breaks get the file's own ending (that of the line before, for a last line
    without one)."""
    return chain.from_iterable(applied_pieces(_Lines(iter(src)), plan))


class LineSource(Protocol):
    """Where `applied_pieces` takes lines from: whole runs of them, one line, or the rest."""

    def run(self, count: int) -> Iterable[bytes]: ...

    def line(self) -> bytes: ...  # b"" at the end

    def rest(self) -> Iterable[bytes]: ...


class _Lines:
    """A `LineSource` over an iterator of lines."""

    def __init__(self, lines: Iterator[bytes]) -> None:
        self.lines = lines

    def run(self, count: int) -> Iterable[bytes]:
        return islice(self.lines, count)

    def line(self) -> bytes:
        return next(self.lines, b"")

    def rest(self) -> Iterable[bytes]:
        return self.lines


def applied_pieces(source: LineSource, plan: LinePlan) -> Iterator[Iterable[bytes]]:
    """The pieces of the edited content, to be chained in order; each is used up before the next
    is made (a run of untouched lines, the line before an edit, a replacement's lines)."""
    done = 0  # lines consumed
    previous = b""
    for number in sorted(plan.changes):
        if number - 2 > done:
            yield source.run(number - 2 - done)
            done = number - 2
        if number - 1 > done:
            previous = source.line()
            if not previous:
                return
            yield (previous,)
            done += 1
        raw = source.line()
        if not raw:
            return
        done += 1
        value = plan.changes[number]
        before, previous = previous, raw
        if value is not None:
            yield replacement_lines(value, raw, before)
    yield source.rest()


def context_lines(src: IO[bytes], wanted: set[int]) -> dict[int, bytes]:
    """The raw bytes (line ending included) of the wanted lines."""
    out: dict[int, bytes] = {}
    if not wanted:
        return out
    last = max(wanted)
    for number, raw in enumerate(src, start=1):
        if number in wanted:
            out[number] = raw
        if number >= last:
            break
    return out


NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(src: IO[bytes], plan: LinePlan, old_name: str, new_name: str, context: int = 2) -> str:
    """A unified diff of the plan that `patch`/`git apply` accept, read from `src` (only the lines
    near edits are loaded). Lines keep their own endings (CRLF included); a last line without a
    newline gets the usual `\\ No newline at end of file` marker."""
    edited = sorted(plan.changes)
    wanted = {n for e in edited for n in range(max(1, e - context), e + context + 1)}
    text = context_lines(src, wanted)
    out = [f"--- {old_name}\n", f"+++ {new_name}\n"]
    shift = 0
    for start, end in _hunks(edited, context, max(text) if text else 0):
        body, old_count, new_count = _hunk_body(start, end, plan, text)
        out.append(f"@@ -{_range(start, old_count)} +{_range(start + shift, new_count)} @@\n")
        out.extend(body)
        shift += new_count - old_count
    return "".join(out)


def _range(start: int, count: int) -> str:
    return f"{start - 1 if count == 0 else start},{count}"


def _hunks(edited: list[int], context: int, last_line: int) -> Iterator[tuple[int, int]]:
    start = end = None
    for line in edited:
        lo, hi = max(1, line - context), min(last_line, line + context)
        if start is None or end is None:
            start, end = lo, hi
        elif lo <= end + 1:
            end = max(end, hi)
        else:
            yield start, end
            start, end = lo, hi
    if start is not None and end is not None:
        yield start, end


def _hunk_body(start: int, end: int, plan: LinePlan, text: dict[int, bytes]) -> tuple[list[str], int, int]:
    body: list[str] = []
    old = new = 0
    for n in range(start, end + 1):
        if n not in text:
            continue
        raw = text[n]
        old += 1
        if n not in plan.changes:
            body.append(_diff_line(" ", raw))
            new += 1
            continue
        body.append(_diff_line("-", raw))
        value = plan.changes[n]
        if value is not None:
            for piece in replacement_lines(value, raw, text.get(n - 1, b"")):
                body.append(_diff_line("+", piece))
                new += 1
    return body, old, new


def replacement_lines(value: bytes, raw: bytes, before: bytes) -> list[bytes]:
    """The lines that replace `raw` (the line `before` precedes it): see `iter_applied`. A last
    line without a newline stays without one."""
    this_ending = _ending(raw)
    ending = this_ending or _ending(before) or b"\n"
    pieces = value.split(b"\n")
    return [p + ending for p in pieces[:-1]] + [pieces[-1] + this_ending]


def _diff_line(mark: str, raw: bytes) -> str:
    line = mark + raw.decode("utf-8", "replace")
    return line if line.endswith("\n") else line + "\n" + NO_NEWLINE

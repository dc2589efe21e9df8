"""Line edits applied to a whole file in large blocks (the heal's write pass).

`iter_applied` (fixes/jsonl.py) hands out one bytes object per line, which suits a consumer that
parses every line. Writing a healed copy needs no lines: `iter_applied_blocks` yields the same
bytes as `b"".join(iter_applied(...))` in blocks of up to a mebibyte, splitting only around the
edited lines, so the cost of a write pass is a read, a newline count and a write of the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from typing import IO

from .jsonl import LinePlan, applied_pieces

BLOCK = 1 << 20


class LineBlocks:
    """A binary stream read in blocks, handed out as runs of whole lines.

    Each block's line endings are counted once, when it is read; a run that ends inside a block
    finds its last line endings one by one. Every byte is counted once and found at most once, so
    the work stays linear however many edits the runs are cut by."""

    def __init__(self, src: IO[bytes], size: int = BLOCK) -> None:
        self.src, self.size = src, size
        self.buf, self.pos, self.left = b"", 0, 0  # left: line endings in buf after pos

    def _fill(self) -> bool:
        """A new block when the current one is used up; False at the end of the stream."""
        if self.pos < len(self.buf):
            return True
        self.buf, self.pos = self.src.read(self.size), 0
        self.left = self.buf.count(b"\n")
        return bool(self.buf)

    def _take(self, end: int) -> bytes:
        piece = self.buf[self.pos:end] if self.pos or end < len(self.buf) else self.buf
        self.pos = end
        return piece

    def run(self, count: int) -> Iterator[bytes]:
        """The bytes of the next `count` lines (fewer at the end of the stream)."""
        while count > 0 and self._fill():
            if self.left < count:  # every line ending left in this block belongs to the run
                count -= self.left
                self.left = 0
                yield self._take(len(self.buf))
                continue
            end, find = self.pos, self.buf.index
            for _ in range(count):
                end = find(b"\n", end) + 1
            self.left -= count
            yield self._take(end)
            return

    def line(self) -> bytes:
        """The next line with its ending; b"" at the end of the stream."""
        parts: list[bytes] = []
        while self._fill():
            end = self.buf.find(b"\n", self.pos)
            if end >= 0:
                self.left -= 1
                parts.append(self._take(end + 1))
                break
            parts.append(self._take(len(self.buf)))
        return b"".join(parts)

    def rest(self) -> Iterator[bytes]:
        """Everything after what was handed out."""
        while self._fill():
            self.left = 0
            yield self._take(len(self.buf))


def iter_applied_blocks(src: IO[bytes], plan: LinePlan, size: int = BLOCK) -> Iterator[bytes]:
    """The bytes of `src` with the plan applied, in blocks; the same bytes `iter_applied` gives."""
    return chain.from_iterable(applied_pieces(LineBlocks(src, size), plan))

"""Helpers the eve fast-path tests share."""

from __future__ import annotations

from pathlib import Path

from transcript_doctor.stores.eve.reader import _Reader
from transcript_doctor.stores.eve.turns import Stream


def read_by_feed(path: Path) -> Stream:
    """`path` read line by line through the reader's general path (`feed`) alone: the reference
    the inline paths of `read_stream` are pinned to."""
    reader = _Reader()
    offset = 0
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            reader.feed(number, offset, raw.rstrip(b"\r\n"), raw.endswith(b"\n"))
            offset += len(raw)
    return reader.finish()

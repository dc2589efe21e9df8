"""The kimi reader's use of the depth pre-check (`values.may_be_deep`, tested on its own in
tests/test_depth_precheck.py): a line nested too deep is a problem, its neighbours records, and
the read says whether some line might nest that deep.
"""

from __future__ import annotations

import io

from transcript_doctor import values
from transcript_doctor.stores.kimi.read.reader import ReadStats, read_records

LIMIT = values.MAX_DEPTH
HEADER = b'{"type":"metadata","protocol_version":"1.4","created_at":1}\n'


def _objects(depth: int, key: str = "") -> bytes:
    """The shortest object-only nesting of `depth` levels: `{"":{"":...{}...}}`."""
    text = "{}"
    for _ in range(depth - 1):
        text = '{"' + key + '":' + text + "}"
    return text.encode()


def _record(value: bytes) -> bytes:
    return b'{"type":"context.append_message","message":' + value + b"}\n"


def test_a_deep_line_is_a_problem_and_its_neighbours_are_records() -> None:
    deep = _record(_objects(LIMIT))  # the record adds one level: LIMIT + 1 in all
    fine = _record(_objects(LIMIT - 1))
    stats = ReadStats()
    items = list(read_records(io.BytesIO(HEADER + fine + deep + fine), stats))
    kinds = [getattr(item, "kind", "record") for item in items]
    assert kinds == ["record", "record", "corrupt", "record"]


def test_the_read_says_whether_some_line_might_nest_too_deep() -> None:
    fine = _record(_objects(3))
    deep_enough_to_check = _record(b"[" + b"[]," * LIMIT + b"[]]")  # brackets enough, two levels deep
    for lines, expected in (([fine, fine], False), ([fine, deep_enough_to_check], True),
                            ([_record(_objects(LIMIT))], True)):
        stats = ReadStats()
        list(read_records(io.BytesIO(HEADER + b"".join(lines)), stats))
        assert stats.may_nest is expected


def test_without_the_depth_check_a_deep_line_parses() -> None:
    """The check a heal's replay of its own output may skip (when the original read found no line
    that might nest too deep) is the one that makes such a line a problem."""
    deep = _record(_objects(LIMIT))
    for check, kind in ((True, "corrupt"), (False, "record")):
        items = list(read_records(io.BytesIO(HEADER + deep), ReadStats(), depth_check=check))
        assert getattr(items[1], "kind", "record") == kind

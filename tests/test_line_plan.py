"""Streaming line edits (fixes/jsonl.py) against a one-line-at-a-time reference model."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.fixes.blocks import iter_applied_blocks
from transcript_doctor.fixes.jsonl import LinePlan, iter_applied


def reference(lines: list[bytes], changes: dict[int, bytes | None]) -> list[bytes]:
    """Walk every line; a replacement's inner breaks take the newest line ending seen so far."""
    out: list[bytes] = []
    ending = b"\n"
    for number, raw in enumerate(lines, start=1):
        this_ending = b"\r\n" if raw.endswith(b"\r\n") else b"\n" if raw.endswith(b"\n") else b""
        ending = this_ending or ending
        if number not in changes:
            out.append(raw)
        elif changes[number] is not None:
            pieces = changes[number].split(b"\n")  # type: ignore[union-attr]
            out.extend(piece + ending for piece in pieces[:-1])
            out.append(pieces[-1] + this_ending)
    return out


@st.composite
def files_and_plans(draw: st.DrawFn) -> tuple[list[bytes], dict[int, bytes | None]]:
    endings = draw(st.lists(st.sampled_from([b"\n", b"\r\n"]), max_size=12))
    lines = [b'{"n":%d}' % i + e for i, e in enumerate(endings)]
    if lines and draw(st.booleans()):
        lines[-1] = lines[-1].rstrip(b"\r\n")  # a torn last line
    changes = draw(st.dictionaries(st.integers(1, len(lines) + 2),
                                   st.sampled_from([None, b"x", b"a\nb", b"a\nb\nc"]), max_size=6))
    return lines, changes


@settings(max_examples=1500, deadline=None)
@given(files_and_plans())
def test_streamed_edits_equal_the_line_by_line_model(case: tuple[list[bytes], dict[int, bytes | None]]) -> None:
    lines, changes = case
    assert list(iter_applied(lines, LinePlan(dict(changes)))) == reference(lines, changes)


def test_untouched_runs_pass_through_as_the_same_objects() -> None:
    lines = [b"%d\n" % i for i in range(1000)]
    out = list(iter_applied(lines, LinePlan({500: None})))
    assert len(out) == 999 and all(a is b for a, b in zip(out, lines[:499] + lines[500:]))


@st.composite
def raw_files_and_plans(draw: st.DrawFn) -> tuple[bytes, dict[int, bytes | None], int]:
    """Arbitrary bytes cut into lines of any length (empty lines, CRLF, a bare CR, no final newline)."""
    pieces = draw(st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\r\n", b"\r", b"{}", b"xyz" * 5]), max_size=40))
    data = b"".join(pieces)
    lines = data.count(b"\n") + 1
    changes = draw(st.dictionaries(st.integers(1, lines + 2), st.sampled_from([None, b"x", b"a\nb", b""]),
                                   max_size=6))
    return data, changes, draw(st.integers(1, 9))


@settings(max_examples=1500, deadline=None)
@given(raw_files_and_plans())
def test_block_writes_give_the_bytes_of_the_line_writes(case: tuple[bytes, dict[int, bytes | None], int]) -> None:
    """Any block size, any place a block boundary falls (inside a line, inside a CRLF)."""
    data, changes, size = case
    plan = LinePlan(dict(changes))
    want = b"".join(iter_applied(io.BytesIO(data), plan))
    assert b"".join(iter_applied_blocks(io.BytesIO(data), plan, size)) == want


def test_block_writes_pass_untouched_blocks_through_whole() -> None:
    data = b"".join(b'{"n":%d}\n' % i for i in range(5000))
    out = list(iter_applied_blocks(io.BytesIO(data), LinePlan({2500: None}), size=1 << 12))
    assert b"".join(out) == b"".join(iter_applied(io.BytesIO(data), LinePlan({2500: None})))
    assert len(out) < 30  # blocks, not one piece per line (5,000 lines)

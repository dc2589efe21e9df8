"""The eve reader's inline path (the decoders' `read_lines`) is pinned to its general path (`feed`).

Streams are made from the fixture streams' lines, shuffled and mixed with blank, corrupt,
CRLF-ended, deep, other-version and torn lines; reading them with `read_stream` (inline path
first) and line by line through `feed` alone must give equal `Stream`s. The builder's shortcut to
the step it returned last (`Builder._recent`) is pinned the same way to the lookup it skips.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_doctor.model import TdocError
from transcript_doctor.stores.eve import reader
from transcript_doctor.stores.eve.builder import Builder
from transcript_doctor.stores.eve.reader import read_stream
from transcript_doctor.stores.eve.turns import Step

from .eve.support import read_by_feed

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "eve"
LINES = {p.name: p.read_bytes().splitlines() for p in sorted(FIXTURES.glob("*.ndjson"))}
ODD = [
    b"", b"   ", b"{not json", b"[1, 2]", b'{"a": 1e400}', b'"text"', b"\xff\xfe",
    b'{"type": "turn.started", "data": {"turnId": "\\ud800"}}',  # a lone surrogate orjson refuses
    b'{"type": "turn.started", "data": ' + b"[" * 210 + b"]" * 210 + b"}",  # deeper than the rule allows
    b'{"type": "turn.started", "data": {"turnId": "t", "pad": ' + b"[" * 150 + b"]" * 150 + b"}}",
    b'{"at": "x", "facts": [{"type": "turn.started", "scope": {"turnId": "t9"}}]}',
    b'{"progress": {"type": "content.delta", "data": {"delta": "hi"}}}',
]


def _general(path: Path) -> object:
    stream = read_by_feed(path)
    if stream.events == 0 and stream.duplicates == 0:
        return "unreadable"
    return stream


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    source = LINES[draw(st.sampled_from(sorted(LINES)))]
    pool = source + ODD + [line for lines in LINES.values() for line in lines[:3]]
    lines = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=40))
    if draw(st.booleans()):
        lines = source[: draw(st.integers(1, len(source)))] + lines
    ends = [draw(st.sampled_from([b"\n", b"\r\n"])) for _ in lines]
    body = b"".join(line + end for line, end in zip(lines, ends))
    if draw(st.booleans()):
        body = body.rstrip(b"\r\n")  # a final line without its line end
    return body


def _read_or_unreadable(path: Path) -> object:
    """`read_stream(path)`, or "unreadable" where it refuses the file."""
    try:
        return read_stream(path)
    except TdocError:
        return "unreadable"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(streams())
def test_inline_path_reads_what_the_general_path_reads(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "stream.ndjson"
    path.write_bytes(data)
    assert _read_or_unreadable(path) == _general(path)


def test_fixture_streams_read_alike() -> None:
    for name in LINES:
        path = FIXTURES / name
        assert read_stream(path) == _general(path)


class _NoShortcut(Builder):
    """A builder that always looks a step up in its turn (`_recent` forgotten before each call)."""

    def step(self, turn_id: str | None, key: str | None) -> Step:
        self._recent = None
        return super().step(turn_id, key)

    def start_step(self, turn_id: str | None, key: str, retry_reason: str | None = None) -> Step:
        self._recent = None
        return super().start_step(turn_id, key, retry_reason)


def _read_without_shortcut(path: Path) -> object:
    original = reader.Builder
    reader.Builder = _NoShortcut  # type: ignore[misc]
    try:
        return _read_or_unreadable(path)
    finally:
        reader.Builder = original  # type: ignore[misc]


def _without_turn(line: bytes) -> bytes:
    """`line` with no turn id anywhere (its records then belong to the open turn)."""
    record = orjson.loads(line)
    for fact in record.get("facts", [record]):
        for part in (fact.get("data"), fact.get("scope")):
            if isinstance(part, dict):
                part.pop("turnId", None)
    return orjson.dumps(record)


ANONYMOUS = [_without_turn(line) for lines in LINES.values() for line in lines]


@st.composite
def anonymous_streams(draw: st.DrawFn) -> bytes:
    """Fixture lines mixed with copies that name no turn: steps of one key in several turns."""
    source = LINES[draw(st.sampled_from(sorted(LINES)))]
    pool = source + [line for line in ANONYMOUS if line.startswith(source[0][:2])]
    lines = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=60))
    return b"".join(line + b"\n" for line in lines)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.one_of(streams(), anonymous_streams()))
def test_recent_step_shortcut_finds_what_the_lookup_finds(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "stream.ndjson"
    path.write_bytes(data)
    assert _read_or_unreadable(path) == _read_without_shortcut(path)


def test_fixture_streams_read_alike_without_the_shortcut() -> None:
    for name in LINES:
        path = FIXTURES / name
        assert read_stream(path) == _read_without_shortcut(path)

"""`values.may_be_deep`, the cheap test every reader puts before the exact nesting walk.

It may say "maybe" for a text that is fine (`values.depth_exceeds` then says no), never "no" for
a text nested beyond `values.MAX_DEPTH`; on bytes and on str alike, on short texts (counted) and
long ones (whose braces are found one by one). Each store's reader then turns such a row or line
into a record problem (test at the end, for the stores whose rows are longest).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.stores import FIXTURES
from transcript_doctor import values
from transcript_doctor.core import ScanConfig, scan

LIMIT = values.MAX_DEPTH
LONG = values.LONG_TEXT
WALK = values.WALK_FIRST


def _objects(depth: int, key: str = "") -> bytes:
    """The shortest object-only nesting of `depth` levels: `{"":{"":...{}...}}`."""
    text = "{}"
    for _ in range(depth - 1):
        text = '{"' + key + '":' + text + "}"
    return text.encode()


def _record(value: bytes, padding: int = 0) -> bytes:
    return b'{"type":"context.append_message","pad":"' + b"x" * padding + b'","message":' + value + b"}\n"


def _both(raw: bytes) -> list[bytes | str]:
    return [raw, raw.decode()]


def test_the_shortest_object_nesting_beyond_the_limit_is_caught() -> None:
    raw = _record(_objects(LIMIT + 1))
    assert values.depth_exceeds(orjson.loads(raw))
    assert all(values.may_be_deep(text) for text in _both(raw))
    assert len(_objects(LIMIT)) < 5 * LIMIT  # the bound the pre-check uses is tight


def test_a_shallow_text_is_let_through_without_a_walk() -> None:
    for raw in (_record(_objects(3)), _record(_objects(3), 5 * LONG), _record(b"[1, 2, 3]", 3 * LIMIT)):
        assert not any(values.may_be_deep(text) for text in _both(raw))


NESTING = st.lists(st.sampled_from(["[", "{", "k", "pad"]), min_size=LIMIT - 5, max_size=LIMIT + 5)


def _nest(shape: list[str]) -> bytes:
    """A value nested one level per `[`/`{`/`k` entry (`k`: an object with a long key), with
    `pad` entries adding sibling text at that level."""
    inner = b"0"
    for step in reversed(shape):
        if step == "[":
            inner = b"[" + inner + b"]"
        elif step == "{":
            inner = b'{"":' + inner + b"}"
        elif step == "k":
            inner = b'{"key with [brackets] in it":' + inner + b"}"
        else:
            inner = b'["pad", ' + inner + b"]"
    return inner


@settings(max_examples=200, deadline=None)
@given(NESTING, st.sampled_from([0, LONG]))
def test_the_pre_check_holds_for_every_text_nested_too_deep(shape: list[str], padding: int) -> None:
    raw = _record(_nest(shape), padding)
    if values.depth_exceeds(orjson.loads(raw)):
        assert all(values.may_be_deep(text) for text in _both(raw))


@settings(max_examples=100, deadline=None)
@given(st.integers(LIMIT - 3, LIMIT + 3), st.sampled_from(["", "k", "a key"]), st.sampled_from([0, 700, LONG]))
def test_the_pre_check_holds_for_object_chains(depth: int, key: str, padding: int) -> None:
    raw = _record(_objects(depth, key), padding)
    if values.depth_exceeds(orjson.loads(raw)):
        assert all(values.may_be_deep(text) for text in _both(raw))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2 * LIMIT), st.integers(0, 3 * LONG), st.booleans())
def test_the_verdict_is_the_bracket_count_wherever_it_is_not_ruled_out_by_length(
    braces: int, padding: int, bracket: bool
) -> None:
    """Braces counted on a short text and found one by one on a long one: the verdict is the
    same, `count > limit`, except where a text without `[` is too short to hold that many levels."""
    raw = b'{"output":"' + b"{" * braces + b"x" * padding + (b"[" if bracket else b"") + b'"}\n'
    counted = raw.count(b"[") + raw.count(b"{") > LIMIT
    expected = counted and (bracket or len(raw) >= 5 * LIMIT)
    assert [values.may_be_deep(text) for text in _both(raw)] == [expected, expected]


@settings(max_examples=200, deadline=None)
@given(NESTING, st.sampled_from([0, LONG, WALK]))
def test_given_the_parsed_value_the_pre_check_still_never_misses_a_text_nested_too_deep(
        shape: list[str], padding: int) -> None:  # fmt: skip
    raw = _record(_nest(shape), padding)
    value = orjson.loads(raw)
    if values.depth_exceeds(value):
        assert all(values.may_be_deep(text, value) for text in _both(raw))


@pytest.mark.parametrize("depth", [LIMIT - 1, LIMIT, LIMIT + 1])
def test_a_long_text_is_cleared_by_its_containers_only_while_they_number_at_most_the_limit(depth: int) -> None:
    # the record is one object, its message `depth` more: `depth + 1` containers in all
    raw = _record(_objects(depth), WALK)
    value = orjson.loads(raw)
    deep = values.depth_exceeds(value)
    assert deep == (depth + 1 > LIMIT)
    assert values.may_be_deep(raw, value) == deep  # cleared by the walk, or judged by the text
    assert values._few_containers(value, LIMIT) == (depth + 1 <= LIMIT)


def test_a_long_text_of_few_containers_and_many_brackets_in_its_strings_is_cleared_by_the_walk() -> None:
    raw = _record(b'"' + b"{[" * LIMIT + b'"', WALK)
    value = orjson.loads(raw)
    assert values.may_be_deep(raw) and not values.may_be_deep(raw, value)  # the text alone cannot tell
    short = _record(b'"' + b"{[" * LIMIT + b'"')
    assert len(short) < WALK and values.may_be_deep(short, orjson.loads(short))  # a short text is counted


def test_many_shallow_containers_fall_back_to_the_text() -> None:
    raw = _record(b"[" + b",".join([b"[]"] * (LIMIT + 10)) + b"]", WALK)
    value = orjson.loads(raw)
    assert not values._few_containers(value, LIMIT)
    assert values.may_be_deep(raw, value) == values.may_be_deep(raw)  # both True: counted brackets
    assert not values.depth_exceeds(value)


@pytest.mark.parametrize("padding", [0, 700, LONG, WALK])
@pytest.mark.parametrize("shape", ["objects", "arrays"])
def test_an_opencode_row_nested_too_deep_is_a_record_problem(tmp_path: Path, padding: int, shape: str) -> None:
    """The OpenCode reader takes a row's data straight from orjson when the pre-check clears it."""
    path = tmp_path / "opencode.db"
    shutil.copy(FIXTURES / "opencode" / "opencode.db", path)
    deep = _objects(LIMIT) if shape == "objects" else b"[" * LIMIT + b"]" * LIMIT
    conn = sqlite3.connect(path)
    (pid,) = conn.execute("SELECT id FROM part ORDER BY id LIMIT 1").fetchone()
    data = b'{"type":"text","text":"' + b"x" * padding + b'","deep":' + deep + b"}"
    conn.execute("UPDATE part SET data = ? WHERE id = ?", (data.decode(), pid))
    conn.commit()
    conn.close()
    report = scan([str(path)], ScanConfig(jobs=1))
    assert report.files[0].error is None
    assert any(f.code == "F504" and f.row == pid for f in report.findings)


LINE_STORES = [
    "fixtures/claude-code/real/entirecli-069f0cb7b375-0.jsonl",
    "fixtures/codex/real/simonw-sample_codex_session-0.77.jsonl",
    "fixtures/eve/support-chat.v26.ndjson",
    "fixtures/eve/nightly-report.v27.ndjson",
]


def _with_last_line(tmp_path: Path, name: str, make) -> tuple[Path, int]:
    """A copy of the fixture with one more line, made from its last record by `make`."""
    lines = (FIXTURES.parent / name).read_bytes().splitlines()
    path = tmp_path / Path(name).name
    path.write_bytes(b"\n".join([*lines, make(orjson.loads(lines[-1]))]) + b"\n")
    return path, len(lines) + 1


def _line_problems(path: Path, line: int) -> list[str]:
    report = scan([str(path)], ScanConfig(jobs=1))
    assert report.files[0].error is None
    return [f.code for f in report.findings if f.line == line and f.code in ("F502", "F504")]


@pytest.mark.parametrize("name", LINE_STORES)
def test_a_long_line_nested_too_deep_is_a_line_problem_in_every_line_store(tmp_path: Path, name: str) -> None:
    def deep(record: dict) -> bytes:
        record["pad"] = "x" * WALK
        return orjson.dumps(record)[:-1] + b',"deep":' + _objects(LIMIT + 1) + b"}"

    path, line = _with_last_line(tmp_path, name, deep)
    assert _line_problems(path, line)


@pytest.mark.parametrize("name", LINE_STORES)
def test_a_long_shallow_line_with_brackets_in_its_text_is_read(tmp_path: Path, name: str) -> None:
    def bracketed(record: dict) -> bytes:
        record["pad"] = "{[" * (2 * LIMIT) + "x" * WALK
        return orjson.dumps(record)

    path, line = _with_last_line(tmp_path, name, bracketed)
    assert _line_problems(path, line) == []

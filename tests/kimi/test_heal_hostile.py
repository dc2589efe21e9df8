"""Values the reader accepts through its standard-library fallback (a lone surrogate escape,
numbers beyond 64 bits or beyond a double) must not crash the heal's planner or its rewrites."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.stores.kimi.replay.step_edits import rewrite_count
from transcript_doctor.values import MAX_DEPTH

runner = CliRunner()
HEADER = b'{"type":"metadata","protocol_version":"1.4","created_at":1}\n'
USER = b'{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"%s"}],' \
       b'"toolCalls":[],"origin":{"kind":"user"}}}\n'


def _vacuous_step(uuid: bytes, turn: bytes) -> bytes:
    begin = b'{"type":"context.append_loop_event","event":{"type":"step.begin","uuid":%s,"turnId":%s,"step":1}}\n'
    part = (b'{"type":"context.append_loop_event","event":{"type":"content.part","uuid":"p","turnId":"1","step":1,'
            b'"stepUuid":%s,"part":{"type":"think","think":""}}}\n')
    end = (b'{"type":"context.append_loop_event","event":{"type":"step.end","uuid":%s,"turnId":%s,"step":1,'
           b'"finishReason":"filtered"}}\n')
    return begin % (uuid, turn) + part % uuid + end % (uuid, turn)


def _seed(step: bytes, compaction: bytes) -> bytes:
    """The seed case (a vacuous step below a legacy cut) with the given vacuous step and legacy compaction."""
    return HEADER + USER % b"u1" + step + USER % b"u2" + compaction


LEGACY = b'{"type":"context.apply_compaction","summary":"SUM","compactedCount":2,"tokensBefore":1,"tokensAfter":1}\n'
CASES = {
    "lone surrogate in the compaction's summary": _seed(
        _vacuous_step(b'"s"', b'"1"'),
        b'{"type":"context.apply_compaction","summary":"S\\ud800M","compactedCount":2,"tokensAfter":1}\n'),
    "lone surrogate in an unread field after the count": _seed(
        _vacuous_step(b'"s"', b'"1"'),
        b'{"type":"context.apply_compaction","summary":"SUM","compactedCount":2,"note":"\\udfff"}\n'),
    "turnId beyond a double": _seed(_vacuous_step(b'"s"', b"1e400"), LEGACY),
    "turnId beyond 64 bits": _seed(_vacuous_step(b'"s"', b"123456789012345678901234567890"), LEGACY),
    "uuid beyond a double": _seed(_vacuous_step(b"1e400", b'"1"'), LEGACY),
    "uuid beyond 64 bits": _seed(_vacuous_step(b"123456789012345678901234567890", b'"1"'), LEGACY),
}


@pytest.mark.parametrize("data", list(CASES.values()), ids=list(CASES))
def test_heal_survives_values_only_the_stdlib_reads(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "wire.jsonl"
    path.write_bytes(data)
    out = tmp_path / "healed.jsonl"
    result = runner.invoke(app, ["heal", str(path), "--output", str(out)])
    assert result.exit_code in (0, 1), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    if out.exists():  # whatever was written scans without a traceback either
        again = runner.invoke(app, ["scan", str(out)])
        assert again.exception is None or isinstance(again.exception, SystemExit), repr(again.exception)


def test_a_count_rewrite_keeps_a_lone_surrogate_escape_byte_for_byte() -> None:
    raw = b'{"type":"context.apply_compaction","summary":"S\\ud800M","compactedCount":2}'
    assert rewrite_count(raw, "compactedCount", 1) == raw.replace(b'"compactedCount":2', b'"compactedCount":1')


def test_the_seed_case_with_a_surrogate_summary_is_healed(tmp_path: Path) -> None:
    path = tmp_path / "wire.jsonl"
    path.write_bytes(CASES["lone surrogate in the compaction's summary"])
    result = runner.invoke(app, ["heal", "--in-place", str(path)])
    assert result.exit_code == 0, result.output
    text = path.read_bytes()
    assert b'"compactedCount":1' in text and b"S\\ud800M" in text and b"step.begin" not in text



def test_a_rewrite_the_stdlib_cannot_parse_at_this_stack_depth_is_a_value_error() -> None:
    """Found by the fuzz harness: the count rewrite falls back to the stdlib (orjson refuses the
    lone surrogate), whose recursion depends on the caller's stack. With the stack made shallow on
    purpose, the fallback must refuse with a ValueError (the C201 fix is then unavailable), never
    let a RecursionError escape as an internal error."""
    import inspect
    import sys

    nested = b"[" * 300 + b"]" * 300
    raw = b'{"summary":"S\\ud800M","compactedCount":2,"compactedCount":3,"note":' + nested + b"}"
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + 150)
    try:
        with pytest.raises(ValueError, match="nested too deeply"):
            rewrite_count(raw, "compactedCount", 1)
    finally:
        sys.setrecursionlimit(old)


@pytest.mark.parametrize("surrogate", [False, True], ids=["orjson", "stdlib"])
def test_a_record_nested_beyond_the_reader_boundary_is_refused_at_any_stack_depth(surrogate: bool) -> None:
    """The same refusal with the stack as it is, on every interpreter (CPython 3.12's stdlib parser
    no longer stops at the Python recursion limit): a record nested deeper than MAX_DEPTH is not
    rewritten. Near miss: one nested exactly MAX_DEPTH levels is."""
    summary = b'"S\\ud800M"' if surrogate else b'"S"'
    record = b'{"summary":' + summary + b',"compactedCount":2,"compactedCount":3,"note":%s}'
    too_deep = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH  # MAX_DEPTH + 1 levels with the record itself
    with pytest.raises(ValueError, match="nested too deeply"):
        rewrite_count(record % too_deep, "compactedCount", 1)
    deepest = b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1)
    rewritten = rewrite_count(record % deepest, "compactedCount", 1)
    assert b'"compactedCount":1' in rewritten and b"compactedCount\":3" not in rewritten
    assert rewritten.count(b"[") == MAX_DEPTH - 1

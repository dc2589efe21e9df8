"""Step edits for kimi journals (docs/kimi-code.md, "Heal"): which steps can go, the line deletes
that remove one, and the count edits that keep legacy compactions aligned once they are gone.

Pure functions over a `KimiReplay`, below both of their users: the checks attach them to the
W101/C201/C203 findings as fixes, and the heal plan (heal/plan.py) builds on them; the heal
verifies every plan by replaying the healed journal with both engines before it writes anything.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import orjson

from ....model import Edit, RefusedError, TdocError
from ....values import MAX_DEPTH, nested_too_deep
from .driver import KimiReplay, LegacyCompaction
from .step_index import StepRecords

FAILED = ("error", "interrupted")


def is_phantom(step: StepRecords) -> bool:
    """A step that never settled on its own: no `step.end`, or one that reports failure."""
    return step.begin is not None and (not step.ends or step.finish in FAILED)


def step_is_vacuous(state: KimiReplay, step: StepRecords) -> bool:
    """No tool calls or results, and every part it recorded is vacuous (or it recorded none)."""
    return not step.calls and not step.results and step.vacuous


def removable_steps(state: KimiReplay) -> list[Any]:
    """The default removal set: every step v2 drops at settle, plus vacuous steps that never
    settled (v2 keeps them partial forever, v1 keeps them visible). Only a step whose every
    record is vacuous: v2 may have dropped one incarnation of a step whose uuid a later
    `step.begin` reuses for real content (or whose content arrived after the settle), and
    removing its records would delete that content."""
    out = []
    for uuid, step in state.steps.steps.items():
        if step.begin is None or not step_is_vacuous(state, step):
            continue
        if uuid in state.v2_dropped or is_phantom(step):
            out.append(uuid)
    return out


def step_subject(uuid: Any) -> str:
    """The `Finding.subject` of a finding about a step: what the heal matches before and after."""
    return f"step:{uuid}"


def step_delete_edits(step: StepRecords) -> tuple[Edit, ...]:
    return tuple(Edit("delete", line=n) for n in step.lines)


def new_count(lc: LegacyCompaction, removed: set[Any]) -> int:
    """The compaction's count once the removed steps below its cut are gone from the writer history."""
    return lc.count - sum(1 for uuid in lc.vacuous_below if uuid in removed)


@cache
def _count_key(name: str) -> re.Pattern[bytes]:
    """`"name": N` in a raw record (compiled when a heal first rewrites a count, not with a scan)."""
    return re.compile(rb'(?<!\\)"' + name.encode() + rb'"(\s*:\s*)(-?\d+)')


def loads(raw: bytes) -> Any:
    """Parse one record as the reader does: orjson, else the standard library, which also reads
    what orjson refuses (a lone surrogate escape, an integer beyond 64 bits, a huge float).

    A record nested deeper than the reader boundary allows (`values.MAX_DEPTH`) is refused with a
    ValueError, whatever the interpreter: how deep the standard library gets depends on the
    caller's stack under CPython 3.11 and not under 3.12, so without this a rewrite of such a
    record would succeed or fail by where it was called from."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(raw)
        except RecursionError:
            raise ValueError(TOO_DEEP) from None
    if nested_too_deep(raw, value):
        raise ValueError(TOO_DEEP)
    return value


TOO_DEEP = f"JSON nested too deeply to rewrite (more than {MAX_DEPTH} levels)"


def dumps(record: Any) -> bytes:
    """Serialise a record tdoc writes; values orjson refuses (integers beyond 64 bits, lone
    surrogates) go through the standard library, escaped to ASCII."""
    try:
        return orjson.dumps(record)
    except TypeError:
        return json.dumps(record, ensure_ascii=True, separators=(",", ":")).encode()


def rewrite_count(raw: bytes, field: str, value: int) -> bytes:
    """`raw` with its top-level `field` set to `value`, every other byte unchanged when possible."""
    matches = list(_count_key(field).finditer(raw))
    if len(matches) == 1:
        m = matches[0]
        candidate = raw[: m.start(2)] + str(value).encode() + raw[m.end(2) :]
        if _same_but(raw, candidate, field, value):
            return candidate
    data = loads(raw)
    data[field] = value
    return dumps(data)


def _same_but(raw: bytes, candidate: bytes, field: str, value: int) -> bool:
    try:
        before, after = loads(raw), loads(candidate)
    except ValueError:  # json.JSONDecodeError and UnicodeDecodeError are ValueErrors
        return False
    if not isinstance(before, dict) or not isinstance(after, dict):
        return False
    before[field] = value
    return _same(before, after)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values (NaN, which the standard library reads, equals itself here)."""
    return a == b or (orjson_safe_repr(a) == orjson_safe_repr(b))


def orjson_safe_repr(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True, allow_nan=True)


def read_line(state: KimiReplay, offset: int) -> bytes:
    """The raw bytes of the line starting at `offset` (without its line ending)."""
    with open(state.path, "rb") as fh:
        fh.seek(offset)
        line = fh.readline()
    if not line.strip():  # the journal shrank or was replaced since it was read
        raise RefusedError(f"{state.path}: changed while tdoc was working on it (no record at byte {offset} any more)")
    return line.rstrip(b"\n").rstrip(b"\r")


def count_edit(state: KimiReplay, lc: LegacyCompaction, value: int) -> Edit:
    """The edit that sets the legacy compaction's count to `value` (TdocError when its line cannot
    be rewritten: the fix is then unavailable)."""
    raw = read_line(state, lc.offset)
    try:
        text = rewrite_count(raw, lc.field, value)
    except ValueError as exc:
        raise TdocError(f"line {lc.line}: cannot rewrite the compaction count ({exc})") from None
    return Edit("replace", line=lc.line, text=text.decode("utf-8", "surrogatepass"))

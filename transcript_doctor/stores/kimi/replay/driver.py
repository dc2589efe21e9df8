"""Replay a wire journal through both engines in one streaming pass.

The driver feeds every record to engine v1, engine v2 and both transcript reducers (in scans the
reducers follow their live engines, see transcript/live_mirror.py), and keeps the bookkeeping the rules need: the header, unreadable lines, every step's records, the steps v2
dropped, and at each legacy compaction what legacy.py notes (the v2-dropped step assistants below
its cut and, when there are some, what each engine's slice keeps that the other's does not).
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..engines.engine_v1 import EngineV1, crash_text
from ..engines.engine_v2 import EngineV2
from ..engines.messages import Msg, appended, for_transcript, public, settle_arguments
from ..projection.request import Projection, project
from ..read.reader import READ_BUFFER, Header, LineProblem, ReadStats, Record, agent_id_for, header_of, read_records
from ..read.records import HISTORY_TYPES, is_valid_v2
from ..transcript.live_mirror import DIVERGENT, Mirror, NoTranscript
from ..transcript.reducers import TranscriptV1, TranscriptV2
from .hot_path import READ_TYPES, HotPath
from .legacy import LegacyCompaction as LegacyCompaction  # (re-exported: step_edits and the heal name them here)
from .legacy import message_key as message_key
from .legacy import note_legacy
from .step_index import NoStepIndex, StepIndex

if TYPE_CHECKING:
    from ....fixes.fingerprint import Fingerprint


@dataclass(repr=False, eq=False)
class KimiReplay:
    path: Path
    stats: ReadStats = field(default_factory=ReadStats)
    header: Header | None = None
    v1: EngineV1 = field(default_factory=EngineV1)
    v2: EngineV2 = field(default_factory=EngineV2)
    t1: TranscriptV1 = field(default_factory=TranscriptV1)
    t2: TranscriptV2 = field(default_factory=TranscriptV2)
    steps: StepIndex = field(default_factory=StepIndex)
    v2_dropped: dict[Any, int] = field(default_factory=dict)  # step uuid -> line of the settle
    legacy: list[LegacyCompaction] = field(default_factory=list)
    restorable: set[Any] = field(default_factory=set)  # what aligned C201 fixes give back to v2 (_fix_aligns)
    invalid: list[tuple[Record, str]] = field(default_factory=list)  # (record, type) failing the schema
    crash: dict[str, str] = field(default_factory=dict)  # engine -> message
    first_line: int | None = None
    v1_before_finish: list[Msg] = field(default_factory=list)  # v1 history before the end-of-resume close
    fingerprint: Fingerprint | None = None
    full: bool = True  # transcripts keep every entry (needed to print a replay)
    projections: dict[tuple[str, bool, bool], Projection] = field(default_factory=dict)
    m1: Mirror | None = None  # light mode: the transcripts follow their live engines
    m2: Mirror | None = None
    engines_only: bool = False  # no step index, no transcripts (see replay_stream)
    transcripts: bool = True  # the transcript reducers were folded (C202 can be checked)

    @property
    def problems(self) -> list[LineProblem]:
        return self.stats.problems


def replay_file(path: Path, full: bool = True, fingerprint: bool = False, transcripts: bool = True) -> KimiReplay:
    """Read and replay a journal; never raises on bad content (only on I/O errors).

    With `fingerprint`, the file's status as read is kept (and its SHA-256, unless the file had
    been still long before the read: see fixes/fingerprint.py), so a heal can tell whether it
    changed since. `transcripts=False` (with `full=False`): no transcript reducers, so no C202.
    """
    if fingerprint:  # a heal's read only (start-up: a scan need not load it)
        from ....fixes.fingerprint import Fingerprint, settled
    with open(path, "rb", buffering=READ_BUFFER) as fh:
        taken = time.time_ns()
        st = os.fstat(fh.fileno())
        hasher = _sha256() if fingerprint and not settled(st, taken) else None
        state = replay_stream(path, fh, hasher, full, transcripts=transcripts)
    if fingerprint:
        state.fingerprint = Fingerprint.from_stat(st, hasher.hexdigest() if hasher is not None else "", taken)
    return state


def _sha256() -> Any:
    import hashlib  # OpenSSL loads only when a heal asks for the fingerprint, not for a scan (issue 20)

    return hashlib.sha256()


def replay_stream(path: Path, fh: IO[bytes], hasher: Any = None, full: bool = True, *,
                  hot_path: bool = True, engines_only: bool = False, transcripts: bool = True,
                  agent_of: Path | None = None, depth_check: bool = True) -> KimiReplay:
    """Replay the journal `fh` (named `path`: its `agents/<id>/` layout names the agent, unless
    `agent_of` is given, whose layout does: a heal's replay of the healed copy of a journal).

    `full=False` keeps only what the checks need: the transcript reducers then forget entries
    behind each compaction, so memory follows the live history instead of the file size; loop
    events then take the hot path of hot_path.py (`hot_path=False` is the reference it must match).
    `engines_only` (with `full=False`) runs just the two live engines: no step index, no
    transcripts, so no checks can run on the result (a heal's acceptance check needs none).
    `transcripts=False` (with `full=False`) keeps the step index but folds no transcripts: every
    check but C202 can run on the result (a heal's verification replay of a journal to write).
    `depth_check=False`: every line is known to nest within values.MAX_DEPTH (see read_records).
    """
    state = KimiReplay(path=path, full=full, engines_only=engines_only and not full)
    agent = agent_id_for(agent_of if agent_of is not None else path)
    state.v2 = EngineV2(agent, on_drop=state.v2_dropped.__setitem__)  # (no cycle through state)
    if state.engines_only:
        state.steps = NoStepIndex()
        state.m1 = state.m2 = NoTranscript()  # type: ignore[assignment]
    elif not full and not transcripts:
        state.transcripts = False
        state.steps = StepIndex(prune=True)
        state.m1 = state.m2 = NoTranscript()  # type: ignore[assignment]
    elif not full:
        state.t1 = TranscriptV1(light=True)
        state.t2 = TranscriptV2(light=True)
        state.steps = StepIndex(prune=True)
        state.m1 = Mirror(state.t1, state.v1, "v1")
        state.m2 = Mirror(state.t2, state.v2, "v2")
    state.stats.hasher = hasher
    hot = HotPath(state) if hot_path and not full else None
    routes = hot.routes() if hot is not None else None
    loop = hot.loop_routes() if hot is not None else None
    collecting = gc.isenabled()
    gc.disable()  # see _stream; `_finish` seals the step index, as acyclic as what it indexes
    try:
        try:
            _stream(state, read_records(fh, state.stats, routes, READ_TYPES, depth_check, loop), hot)
        finally:
            if hot is not None:
                hot.release()
        _finish(state)
    finally:
        if collecting:
            gc.enable()
    return state


def _stream(state: KimiReplay, items: Iterator[Record | LineProblem], hot: HotPath | None) -> None:
    """Feed the general path what the hot path did not take.

    The loop allocates an object or more per record and frees them by reference counting; JSON
    values are trees and no fold links back to what holds it, so the loop makes no reference
    cycles. The cyclic collector, which would run every few hundred allocations and find
    nothing, stays off meanwhile (a tenth of a scan's time on short records).
    """
    for item in items:
        if item.__class__ is Record:
            if hot is not None:
                hot.split()  # the general path sees each engine's own messages
            _feed(state, item)  # type: ignore[arg-type]
            if hot is not None:
                hot.reopen()


UNDOING = ("context.undo", "context.clear")


def _feed(state: KimiReplay, rec: Record) -> None:
    if state.first_line is None:
        state.first_line = rec.line
        state.header = header_of(rec)
        if state.header is None:
            state.v1.error(rec.line, "the first record is not a metadata header; v1 refuses to replay")
    rtype = rec.type
    if rtype not in HISTORY_TYPES and rtype != "swarm_mode.enter":
        return
    data = rec.data
    valid = is_valid_v2(rtype, data)
    if not valid:
        state.invalid.append((rec, rtype))
    try:
        state.steps.observe(rec)
    except TypeError:
        pass  # an unhashable id: the record indexes no step (the engines report what they make of it)
    if rtype == "context.apply_compaction" and "v1" not in state.crash:
        try:
            note_legacy(state, data, rec)
        except (TypeError, ValueError):
            pass
    elif state.restorable and rtype in UNDOING:
        # v1 keeps what a fix gives back to v2 before its summary, v2 after it, so an undo can take
        # it from v2 alone: what earlier fixes give back is no longer followed (legacy.py)
        state.restorable.clear()
    # One tagged copy of an appended message serves all four folds: none of them mutates it.
    msg = appended(data.get("message"), rec.line) if rtype == "context.append_message" else None
    line = rec.line
    crash = state.crash
    if "v1" not in crash:
        try:
            _apply_side(state.v1, state.t1, state.m1, rtype, data, line, msg)
        except Exception as exc:  # noqa: BLE001 - any failure is that engine failing on this input
            crash["v1"] = crash_text(exc, line, rtype)
    if valid and "v2" not in crash and state.v2.same_agent(data):
        try:
            _apply_side(state.v2, state.t2, state.m2, rtype, data, line, msg, True)
        except Exception as exc:  # noqa: BLE001
            crash["v2"] = crash_text(exc, line, rtype)


def _apply_side(live: Any, transcript: Any, mirror: Mirror | None, rtype: str, data: dict[str, Any], line: int,
                msg: Msg | None, *extra: Any) -> None:
    """One engine's live fold and its transcript reducer (directly, or through its mirror)."""
    if mirror is None:
        live.apply(rtype, data, line, msg, *extra)
        transcript.apply(rtype, data, line, msg)
        return
    if mirror.active or rtype in DIVERGENT:
        mirror.before(rtype, data, line, msg)
    live.apply(rtype, data, line, msg, *extra)
    if mirror.active:
        mirror.after()


def _finish(state: KimiReplay) -> None:
    for mirror in (state.m1, state.m2):
        if mirror is not None:
            mirror.sync()  # the transcripts see no end-of-resume close
    state.steps.seal()
    state.v1_before_finish = list(state.v1.history)
    if "v1" not in state.crash:
        state.v1.finish()
    for held in (state.v1.history, state.v2.history, state.t1.entries, state.t2.entries):
        settle_arguments(held)  # tool-call arguments are serialised only for calls still held


# --------------------------------------------------------------------------- output


def replay_object(state: KimiReplay, engine: str) -> dict[str, Any]:
    """The replay object (`schemas/replay.schema.json`) for one engine."""
    if not state.full:
        raise ValueError("replay_object needs a full replay (replay_file(path, full=True))")
    base: dict[str, Any] = {"format": "kimi-wire", "engine": engine}
    if engine in state.crash:
        return {**base, "crash": state.crash[engine]}
    history, transcript, folded = _views(state, engine)
    if engine == "v2":  # the v2 reducer's entries carry only the display keys
        transcript = [for_transcript(m) for m in transcript]
    normal = projected(state, engine)
    strict = projected(state, engine, strict=True)
    if normal is None or strict is None:
        return {**base, "crash": state.crash[engine]}
    return {
        **base,
        "history": [public(m) for m in history],
        "transcript": {"entries": [public(m) for m in transcript], "foldedLength": folded},
        "projection": normal.messages,
        "anomalies": normal.anomalies,
        "strictProjection": strict.messages,
        "strictAnomalies": strict.anomalies,
        "errors": list(state.v1.errors) if engine == "v1" else [],
    }


def projected(state: KimiReplay, engine: str, *, strict: bool = False, prefix: bool = False) -> Projection | None:
    """The engine's request projection of its live history, or None when the engine fails.

    v1 applies records without validating them, so its history can hold values of any shape; a
    projection that cannot handle them is that engine failing on this journal (recorded in
    `state.crash`), never an exception for the caller.
    """
    if engine in state.crash:
        return None
    key = (engine, strict, prefix)
    cached = state.projections.get(key)
    if cached is None:
        history = state.v1.history if engine == "v1" else state.v2.history
        try:
            cached = project(history, engine, strict=strict, prefix=prefix)
        except (TypeError, AttributeError, ValueError, KeyError, IndexError) as exc:
            state.crash[engine] = f"the {engine} projection fails on this history ({type(exc).__name__})"
            return None
        state.projections[key] = cached
    return cached


def _views(state: KimiReplay, engine: str) -> tuple[list[Msg], list[Msg], int]:
    if engine == "v1":
        return state.v1.history, state.t1.entries, state.t1.folded
    return state.v2.history, state.t2.entries, state.t2.folded_length

"""Legacy compaction records, noted before either engine applies one: what a C201 finding
reports and what a heal needs to re-align the count (docs/kimi-code.md §Legacy compaction alignment).

The count indexes the writer's (v1's) history. When v2 had dropped vacuous steps below the cut, the
messages each engine really keeps there are compared by identity (`lost`, `extra`), and whether
lowering the count by those steps would make v2 keep exactly v1's messages (`fix_aligns`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterator
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from ....text import excerpt
from ..engines import compaction as cx
from ..engines.engine_v1 import compaction_shape_v1
from ..engines.engine_v2 import compaction_shape_v2
from ..engines.messages import Msg
from ..engines.vacuous import is_vacuous_content
from ..read.reader import Record
from ..read.records import is_valid_v2

if TYPE_CHECKING:
    from .driver import KimiReplay

Identity = Callable[[Msg], tuple[Any, ...]]  # a message's identity (`_identity`, or a memo of it)


@dataclasses.dataclass
class LegacyCompaction:
    """A legacy compaction record as v1 applied it, with what a heal needs to re-align it.

    When v2 had dropped steps below the cut, `lost` and `extra` compare what each engine really
    keeps of its history at this record (docs/kimi-code.md §Legacy compaction alignment)."""

    line: int
    offset: int
    field: str  # "compactedCount" or "count"
    count: int
    v1_len: int  # v1 history length when it was applied
    v1_branch: str  # "tail" | "kept-users"
    vacuous_below: list[Any]  # uuids of vacuous step assistants in v1 history[:min(count, len)]
    dropped_below: list[Any]  # those of them v2 had already dropped: the misalignment D
    lost: list[dict[str, Any]]  # v1-kept messages v2's slice lacks (role, line, text), v2-dropped steps aside
    tail_steps: list[Any] | None = None  # v1 tail history[C:len] when it is made only of vacuous steps
    lost_keys: list[tuple[Any, ...]] = dataclasses.field(default_factory=list)  # stable keys of `lost` (see message_key)
    extra: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # messages v2's slice keeps that v1 does not
    extra_keys: list[tuple[Any, ...]] = dataclasses.field(default_factory=list)  # stable keys of `extra`
    # Worked out only when some dropped step is below the cut (see `_compare_slices`):
    v1_keeps: str | None = None  # what v1 keeps: "tail" | "kept-users" | "all" (it applies nothing)
    v2_applies: bool | None = None  # v2 applies the record (its schema and agent checks pass, it has not failed)
    fix_aligns: bool = False  # lowering the count by the dropped steps makes v2 keep exactly v1's messages
    v2_count: int | None = None  # the least count at which v2's slice is exactly v1's messages (None: none is)
    # With `fix_aligns`: vacuous steps v2 still holds below its lowered cut that v1 does not count
    # there (a failed step v2 keeps partial, say). A heal removing one moves v2's slice as well.
    v2_held_below: list[Any] = dataclasses.field(default_factory=list)


def note_legacy(state: KimiReplay, record: dict[str, Any], rec: Record) -> None:
    if cx.is_number(record.get("keptUserMessageCount")) or record.get("legacyTail") is False:
        state.restorable.clear()  # a kept-users shape selects anew: what a heal gives v2 back is not followed
        return  # (what is left v2 reads as legacy: `legacyTail` true, or no numeric kept count)
    field_name = "compactedCount" if cx.is_number(record.get("compactedCount")) else "count"
    count: Any = record.get(field_name)
    if not cx.is_number(count):
        state.restorable.clear()
        return
    history = state.v1.history
    cut = max(0, min(int(count), len(history)))
    vacuous = _vacuous_step_uuids(history[:cut])
    dropped = [u for u in vacuous if u in state.v2_dropped]
    tail = "keptUserMessageCount" not in record and count < len(history)
    after = history[max(int(count), 0):] if tail else []
    tail_steps = [m["_src"][1] for m in after] if after and all(_is_vacuous_step(m) for m in after) else None
    lc = LegacyCompaction(
        line=rec.line,
        offset=rec.offset,
        field=field_name,
        count=int(count),
        v1_len=len(history),
        v1_branch="tail" if tail else "kept-users",
        vacuous_below=vacuous,
        dropped_below=dropped,
        lost=[],
        tail_steps=tail_steps,
    )
    # C201's premise is a dropped step below the cut; without one, the slices are compared only while
    # earlier fixes have messages to give v2 back (the work stays off the common path).
    if dropped or state.restorable:
        _compare_slices(state, record, rec.line, lc, bool(dropped))
    state.legacy.append(lc)


def _compare_slices(state: KimiReplay, record: dict[str, Any], line: int, lc: LegacyCompaction,
                    report: bool) -> None:
    """What v2 keeps at this record that v1 does not and the reverse, by message identity, in
    O(both kept slices), noted on `lc` when `report`; and whether lowering the count by the
    dropped steps would align them. What a heal gives v2 back is followed to the next record."""
    v1_kept, v1_keeps = _v1_keeps(state.v1.history, record, line)
    wanted = [m for m in v1_kept if not _dropped_step(state, m)]  # no projection sends those
    ident = _memo()  # each message's identity worked out once here, however many lists hold it
    v2_history = state.v2.history
    applies = "v2" not in state.crash and is_valid_v2("context.apply_compaction", record) and state.v2.same_agent(record)
    restorable = state.restorable
    if "v2" in state.crash:
        restorable.clear()
        return  # v2 fails before this record: it keeps no slice to compare
    v2_kept = _made_by_others(compaction_shape_v2(v2_history, record, line), line) if applies else v2_history
    lost = _unmatched(wanted, v2_kept, ident)
    if report:
        lc.v1_keeps, lc.v2_applies = v1_keeps, applies
        lc.lost, lc.lost_keys = _described(lost)
        lc.extra, lc.extra_keys = _described(_unmatched(v2_kept, wanted, ident))
    if not applies:
        restorable.clear()
        return  # v2 ignores the count, so no count aligns it
    ids = list(map(ident, wanted))
    at = len(v2_history) - len(ids)  # v1's messages would have to be v2's last ones
    if report and at >= 0 and list(map(ident, v2_history[at:])) == ids:
        lc.v2_count = at
    aligns = _fix_aligns(state, lc.count - len(lc.dropped_below), ids, v2_history, ident)
    lc.fix_aligns = aligns and report
    if lc.fix_aligns:
        start = cx.slice_start(lc.count - len(lc.dropped_below), len(v2_history))
        counted = set(lc.vacuous_below)
        lc.v2_held_below = [u for u in _vacuous_step_uuids(v2_history[:start]) if u not in counted]
    # Once healed, v2 keeps here exactly v1's messages: what it lacks of them now is given back.
    restorable.clear()
    if aligns:
        restorable.update(map(ident, lost))


def _fix_aligns(state: KimiReplay, count: int, ids: list[tuple[Any, ...]], v2_history: list[Msg],
                ident: Identity) -> bool:
    """Whether v2, reading `count` (the count less the dropped steps below the cut, whose removal
    leaves v2's history as it is), keeps exactly the messages `ids` v1 keeps. v2's history is taken
    with what earlier aligned fixes give back to it (`_given_back`), each where v1 has it."""
    back = _given_back(state, v2_history, ident)
    core = [i for i in ids if i not in back] if back else ids  # what v2 holds already, as its last messages
    at = len(v2_history) - len(core)
    if at < 0 or list(map(ident, v2_history[at:])) != core:
        return False
    below = len(back) - (len(ids) - len(core))  # given back below the cut: they come before
    return cx.slice_start(count, len(v2_history) + len(back)) == at + below


def _given_back(state: KimiReplay, v2_history: list[Msg], ident: Identity) -> set[tuple[Any, ...]]:
    """What the aligned fixes of earlier compactions give back to v2 (the messages they lost there,
    never a dropped step) that v2 lacks and v1 still holds; `state.restorable` is kept to those.
    A pass over each history, only while there are some."""
    kept = state.restorable
    if kept:
        held = _keys_of(v2_history, ident)
        kept.difference_update([i for i in kept if i[:2] in held])
    if kept:
        held = _keys_of(state.v1.history, ident)
        kept.intersection_update([i for i in kept if i[:2] in held])
    return set(kept)


def _keys_of(history: list[Msg], ident: Identity) -> set[tuple[Any, ...]]:
    """The identities of a history's messages, elision aside."""
    return {i[:2] for i in map(ident, history)}


def _v1_keeps(history: list[Msg], record: dict[str, Any], line: int) -> tuple[list[Msg], str]:
    """The messages of `history` v1's shape for this record keeps, and which branch it takes
    (docs/kimi-code.md §Compaction): v1 reads only `compactedCount`, and a non-text summary
    without `tokensAfter` makes it apply nothing."""
    if not isinstance(cx.live_summary(record), str) and record.get("tokensAfter") is None:
        return history, "all"
    count: Any = record.get("compactedCount")
    branch = "tail" if "keptUserMessageCount" not in record and cx.is_number(count) and count < len(history) \
        else "kept-users"
    return _made_by_others(compaction_shape_v1(history, record, line), line), branch


def _made_by_others(shape: list[Msg], line: int) -> list[Msg]:
    """A compaction shape without the messages the record on `line` makes (summary, elision):
    what it keeps of the history (kept users keep the `_src` of the message they copy)."""
    made = ("rec", line)
    return [m for m in shape if m.get("_src") != made]


def _dropped_step(state: KimiReplay, m: Msg) -> bool:
    """A step assistant v2 dropped: its uuid's settle drop came after this `step.begin` (a reused
    uuid's later incarnation begins at or after that settle)."""
    if _src_kind(m) != "step":
        return False
    src = m["_src"]
    settled = state.v2_dropped.get(src[1])
    return settled is not None and (len(src) < 3 or src[2] < settled)


def _identity(m: Msg) -> tuple[Any, ...]:
    """What makes a kept message the same in both histories: its `message_key` (with its
    `step.begin` line for a step: a uuid can begin more than once), and whether it is a
    compaction elision (the elision and the summary of one record share their source)."""
    src: tuple[Any, ...] = m.get("_src") or (None, id(m))
    key = src[1]
    if key.__class__ is not str and key.__class__ is not int:
        try:
            hash(key)
        except TypeError:  # an unhashable step uuid: equal values print alike
            key = repr(key)
    if src[0] == "step" and len(src) > 2:
        key = (key, src[2])
    origin = m.get("origin")
    return (src[0], key, origin.__class__ is dict and origin.get("variant") == cx.ELISION_VARIANT)


def _memo() -> Identity:
    """`_identity`, remembered by object for the messages of one comparison: a message sits in
    several of its lists (v1's kept slice, v2's history and its kept slice), and the comparison
    asks each list more than once (on a journal of 250 legacy compactions whose counts each cut a
    short prefix, `_identity` was 1.45 million calls, 41% of the scan). The messages outlive the
    comparison, so no id is reused while the table is in use."""
    known: dict[int, tuple[Any, ...]] = {}

    def ident(m: Msg) -> tuple[Any, ...]:
        key = id(m)
        found = known.get(key)
        if found is None:
            found = known[key] = _identity(m)
        return found

    return ident


def _unmatched(ours: list[Msg], theirs: list[Msg], ident: Identity | None = None) -> list[Msg]:
    """The messages of `ours` that `theirs` does not hold, as multisets of identities (with
    repeats, the first ones of `ours` are matched), in `ours` order."""
    ident = ident or _identity
    have = Counter(map(ident, theirs))
    out = []
    for m in ours:
        key = ident(m)
        if have[key] > 0:
            have[key] -= 1
        else:
            out.append(m)
    return out


def _vacuous_step_uuids(messages: list[Msg]) -> list[Any]:
    """The uuids of the vacuous step assistants among `messages`, in order. Only the steps are
    looked at: where each message came from is read in one C-level pass."""
    sources: Iterator[Any] = map(dict.get, messages, repeat("_src"))
    try:
        kinds = list(map(itemgetter(0), sources))
    except (TypeError, IndexError):  # a message without a source (none is made so): one by one
        return [m["_src"][1] for m in messages if _is_vacuous_step(m)]
    uuids = []
    i = -1
    for _ in range(kinds.count("step")):
        i = kinds.index("step", i + 1)
        m = messages[i]  # `_is_vacuous_step(m)`, its source known to be a step's
        if not m.get("toolCalls") and is_vacuous_content(m.get("content") or ()):
            uuids.append(m["_src"][1])
    return uuids


def _is_vacuous_step(m: Msg) -> bool:
    if m.get("toolCalls"):  # the cheapest test first: most steps of a history make calls or say something
        return False
    src: Any = m.get("_src")
    return bool(src) and src[0] == "step" and is_vacuous_content(m.get("content") or [])


def message_key(m: Msg) -> tuple[Any, ...] | None:
    """What names a history message across a heal: its step, its synthetic call, or (for an
    appended record) its line, which a heal renumbers (the caller maps it back)."""
    src: Any = m.get("_src")
    if not src:
        return None
    return (src[0], src[1])


def _described(messages: list[Msg]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Each message as a finding names it (role, journal line, text excerpt), and its `message_key`."""
    items = []
    for m in messages:
        content = m.get("content")
        parts = content if isinstance(content, list) else ()  # v1 applies content unchecked
        text = " ".join(p["text"] for p in parts if isinstance(p, dict) and p.get("type") == "text"
                        and isinstance(p.get("text"), str))
        src = m.get("_src") or ()
        items.append({"role": m.get("role"), "line": src[-1] if src and src[0] != "synth" else None,
                      "text": excerpt(text)})
    return items, [message_key(m) for m in messages]


def _src_kind(m: Msg) -> str | None:
    src: Any = m.get("_src")
    return src[0] if src else None

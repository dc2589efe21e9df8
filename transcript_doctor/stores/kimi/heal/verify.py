"""Verifying a kimi heal plan (docs/kimi-code.md §Heal): one streamed replay of the healed
journal, compared with the original by what each engine sends.

A plan is accepted when, replaying the healed journal:

* no engine fails that did not fail before, and v1 reports no new unknown-step records;
* v1's history is the original one minus the removed step assistants (a tombstoned one appears
  as the empty assistant it became);
* each engine's normal and strict projections send the same messages as before. The removed
  steps were vacuous, so the projections never sent them; a tombstone is an empty assistant,
  which every projection drops silently. The one accepted difference: messages a C201 finding
  reported as lost by v2, which the lowered count brings back (the purpose of the heal), and the
  messages they merge with.

When the whole plan fails, the failing steps are found by bisection over the candidates
(a prefix of them applied, the rest kept): O(b log K) replays for b failing steps among K,
after a few prefixes tried back from the end (see `_first_failure`).
"""

from __future__ import annotations

import bisect
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ....fixes.jsonl import LinePlan, iter_applied
from ....model import Edit, RefusedError, TdocError
from ..engines.messages import public
from ..projection.request import Projection
from ..read.reader import READ_BUFFER
from ..replay.driver import KimiReplay, message_key, projected, replay_stream
from .plan import KEEP, TOMB, KimiPlan, demote

Restored = tuple[Any, set[Any]]  # (original line -> healed line, keys of the original v1 history)


def verify_plan(state: KimiReplay, plan: KimiPlan) -> None:
    """Verify the plan, demoting failing steps until it passes; leaves the verified replay (and
    the hash of its bytes, when writing) on the plan. Raises RefusedError if the journal changed."""
    check_unchanged(state, stat_only=True)
    lo = 0  # the first `lo` candidates (in their current states) are known to pass
    while True:
        if _verify(state, plan):
            break
        check_unchanged(state)  # a journal that grew since the scan fails every plan: say so (exit 3)
        if not plan.candidates or all(plan.status[u] == KEEP for u in plan.candidates):
            raise TdocError(f"{state.path}: the planned edits would change what an engine replays; nothing written")
        culprit = _first_failure(state, plan, lo)
        if plan.status[culprit] == KEEP:  # the edits that are not step removals fail by themselves
            raise TdocError(f"{state.path}: the planned edits would change what an engine replays; nothing written")
        lo = plan.candidates.index(culprit)
        if culprit in plan.effective(state)[1]:  # a tombstone (planned, or against a branch flip)
            plan.status[culprit] = TOMB
        demote(plan, culprit, state)
    # Size and mtime again: a record appended while the verification read the journal would
    # otherwise be written along. (A failed verification above compared the full hash; the
    # write compares the bytes it writes with the verified hash, and --in-place the fingerprint
    # once more right before the replace.)
    check_unchanged(state, stat_only=True)


def check_unchanged(state: KimiReplay, stat_only: bool = False) -> None:
    """RefusedError when the journal is not the one the scan read (size and mtime; with
    `stat_only=False` the full check of fixes/fingerprint.py: status, and content when the
    file was modified close to the read)."""
    fp = state.fingerprint
    if fp is None:
        return
    try:
        st = os.stat(state.path)
        changed = st.st_size != fp.size or st.st_mtime_ns != fp.mtime_ns
        if not changed and not stat_only:
            changed = not fp.matches(state.path)
    except OSError as exc:
        raise RefusedError(f"{state.path}: disappeared while tdoc was working ({exc.strerror}); left untouched") from exc
    if changed:
        raise RefusedError(f"{state.path}: changed while tdoc was working (is the agent still running?); "
                           "left untouched")


GALLOP = 4  # prefixes tried from the end, each twice as far back, before the plain bisection


def _first_failure(state: KimiReplay, plan: KimiPlan, lo: int) -> Any:
    """A candidate whose inclusion makes the prefix plan fail: prefix `lo` passes and the whole
    fails, so some boundary between them has a passing prefix followed by a failing one.

    The search first tries prefixes back from the end (all but the last 1, 2, 4, 8 candidates):
    what a step changes is mostly forgotten at the next compaction that cuts it away, so a
    failure that reaches the engines' final requests is most often near the end of the journal,
    found in one or two replays. Then it bisects what is left. Right after a step was demoted to
    a tombstone (the candidate at `lo`), that tombstone is tried first: when it fails too, the
    step is found again in one replay. At most 1 + GALLOP + log2(K) replays in all."""
    hi = len(plan.candidates)
    if lo + 1 < hi and plan.status[plan.candidates[lo]] == TOMB:  # just demoted: does its tombstone fail too?
        if not _verify(state, plan, upto=lo + 1, keep=False):
            return plan.candidates[lo]
        lo += 1
    back = 1
    for _ in range(GALLOP):
        mid = hi - back
        if mid <= lo:
            break
        if _verify(state, plan, upto=mid, keep=False):
            lo = mid
            break
        hi, back = mid, back * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _verify(state, plan, upto=mid, keep=False):
            lo = mid
        else:
            hi = mid
    return plan.candidates[hi - 1]


def _verify(state: KimiReplay, plan: KimiPlan, upto: int | None = None, keep: bool = True) -> bool:
    """Replay the journal the (prefix) plan would write, streamed, and compare it with the original.

    The replay of the whole plan (`keep`) of a heal that writes also produces the bytes to write:
    into the pipeline's spool when it gave one (the write is then done), else through a SHA-256
    the pipeline's own write must reproduce."""
    edits = plan.edits(state, upto)
    writing = plan.writing and keep
    out = _open_spool(plan) if writing else None
    digest = hashlib.sha256() if writing and out is None else None
    plan.replays += 1
    with open(state.path, "rb", buffering=READ_BUFFER) as src:
        lines = iter_applied(src, LinePlan.from_edits(edits))
        # (v2 reads the records of the original's agent: agents/<id>/wire.jsonl names it)
        # (no line of it can nest too deep unless some original line had brackets enough: the
        # plan's own records copy the nesting of those they replace, or are flat)
        healed = replay_stream(Path("<healed>"), lines, digest if out is None else _Sink(out), full=False,  # type: ignore[arg-type]
                               engines_only=not writing, transcripts=False, agent_of=state.path,
                               depth_check=state.stats.may_nest)
    removed, tombs = plan.effective(state, upto)
    if not accepts(state, healed, set(removed), set(tombs), edits):
        return False
    if keep:
        plan.healed, plan.healed_sha256 = healed, digest.hexdigest() if digest is not None else None
        plan.spooled = out is not None
    return True


class _Sink:
    """Takes every raw line the replay reads (where a hasher would) and writes it out."""

    def __init__(self, out: IO[bytes]) -> None:
        self.update = out.write


def _open_spool(plan: KimiPlan) -> IO[bytes] | None:
    """A fresh spool file, or None (no spool given, or it cannot be created here: the pipeline's
    own write then reports why)."""
    plan.spooled = False
    if plan.spool is None:
        return None
    try:
        out: IO[bytes] = plan.spool.open()
    except TdocError:
        return None
    return out


# --------------------------------------------------------------------------- acceptance


def accepts(original: KimiReplay, healed: KimiReplay, removed: set[Any], tombstoned: set[Any],
            edits: list[Edit]) -> bool:
    if healed.crash.keys() - original.crash.keys():
        return False
    if len(healed.v1.unknown_step_lines) > len(original.v1.unknown_step_lines):
        return False
    if "v1" not in original.crash and not _v1_history_ok(original, healed, removed, tombstoned):
        return False
    restored = _restored(original, removed | tombstoned, edits) if "v2" not in original.crash else None
    for engine in ("v1", "v2"):
        for strict in (False, True):
            before = projected(original, engine, strict=strict)
            if before is None:
                continue
            after = projected(healed, engine, strict=strict)
            if after is None:
                return False
            history = healed.v1.history if engine == "v1" else healed.v2.history
            if not same_sends(before, original_history(original, engine), after, history,
                              restored if engine == "v2" else None):
                return False
    return True


def original_history(state: KimiReplay, engine: str) -> list[dict[str, Any]]:
    return state.v1.history if engine == "v1" else state.v2.history


def _v1_history_ok(original: KimiReplay, healed: KimiReplay, removed: set[Any], tombstoned: set[Any]) -> bool:
    empty = {"role": "assistant", "content": [], "toolCalls": []}
    want = [empty if _step_in(m, tombstoned) else public(m) for m in original.v1.history if not _step_in(m, removed)]
    got = healed.v1.history
    return len(got) == len(want) and all(public(m) == w for m, w in zip(got, want))


def _step_in(m: dict[str, Any], uuids: set[Any]) -> bool:
    src: tuple[Any, ...] = m.get("_src") or ()
    return len(src) > 1 and src[0] == "step" and src[1] in uuids


def same_sends(before: Projection, before_history: list[dict[str, Any]], after: Projection,
               after_history: list[dict[str, Any]], restored: Restored | None = None) -> bool:
    """The healed projection sends what the original did. With `restored` (a C201 fix), healed
    messages built from v1 messages the original did not send are accepted, and so is the
    change to the original messages they merge with."""
    if before.messages == after.messages:
        return True
    if restored is None:
        return False
    shift, v1_keys = restored
    before_keys = [{_mapped(_key(before_history, j), shift) for j in sources} for sources in before.sources]
    sent = set().union(*before_keys) if before_keys else set()
    touched: set[int] = set()
    affected: set[Any] = set()
    for i, sources in enumerate(after.sources):
        keys = {_key(after_history, j) for j in sources}
        new = keys - sent
        if new and new <= v1_keys:
            touched.add(i)
            affected |= keys
    if not touched:
        return False
    kept_after = [m for i, m in enumerate(after.messages) if i not in touched]
    kept_before = [m for m, keys in zip(before.messages, before_keys) if not keys & affected]
    return kept_after == kept_before


def _mapped(key: Any, shift: Any) -> Any:
    return ("rec", shift(key[1])) if key is not None and key[0] == "rec" else key


def _key(history: list[dict[str, Any]], index: int) -> Any:
    m = history[index] if 0 <= index < len(history) else None
    return message_key(m) if isinstance(m, dict) else None


def _restored(original: KimiReplay, changed: set[Any], edits: list[Edit]) -> Restored | None:
    """When the plan removes (lowering a legacy count) or tombstones (which v2 then keeps) a step
    v2 had dropped below a legacy cut (a C201 fix): the line map and
    the keys (in the healed journal's line numbers) of every message of the original v1 history.
    A lowered count brings back the messages the misaligned slice skipped (or left orphaned),
    and through them what later compactions kept of them."""
    if not any(u in changed for lc in original.legacy for u in lc.dropped_below):
        return None
    shift = _line_shift(edits)
    return shift, {_mapped(message_key(m), shift) for m in original.v1.history} - {None}


def _line_shift(edits: list[Edit]) -> Callable[[Any], Any]:
    """Original line -> healed line, for lines the edits leave in place."""
    deltas: dict[int, int] = {}
    for e in edits:
        if e.line is None:
            continue
        deltas[e.line] = -1 if e.op == "delete" else (e.text or "").count("\n")
    lines = sorted(deltas)
    running, total = [], 0
    for n in lines:
        total += deltas[n]
        running.append(total)

    def shift(line: Any) -> Any:
        if not isinstance(line, int):
            return line
        i = bisect.bisect_left(lines, line)
        return line + (running[i - 1] if i else 0)

    return shift

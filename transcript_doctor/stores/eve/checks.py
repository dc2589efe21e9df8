"""The rules for eve streams: S302, S303, S306, T403, C203, E601, and the reader's F-rules.

C203 covers every attempt that never settled: failed, abandoned by a retry or by the turn's end,
or still open when the stream ends (then the finding says whether the stream may still be live).

Every finding points at the stream line of its record (`location.line`, 1-based) and names its turn
in `evidence.turn`. `location.position` is set only by E601, to the request index the provider's
error names: eve's model history lives in workflow state, so a stream line cannot be mapped to a
request position with certainty.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterator
from typing import TYPE_CHECKING, Any

from ...model import Edit, Finding, Fix
from ...patterns import RejectionMatch, match_rejection
from ...rules.registry import RULES
from ...text import excerpt, is_blank, js_trim
from .filler import LazyEvidence, judge, may_be_filler
from .markers import classify, normalise
from .turns import TERMINAL_FINISH, Failure, Reply, Step, Turn

if TYPE_CHECKING:
    from .store import EveStore

TURN_CODES = frozenset({"S302", "S303", "S306", "T403", "C203"})


def _find(store: EveStore, code: str, message: str, line: int | None, **fields: Any) -> Finding:
    rule = RULES[code]  # what `registry.finding` fills in, without a second pass over the keywords
    stream = store.stream
    return Finding(code, rule.name, rule.severity, message, store.display, store.format, stream.session_id, line, **fields)


def _quote(text: str, limit: int = 80) -> str:
    return repr(excerpt(text, limit))


def native_findings(store: EveStore, codes: Collection[str]) -> Iterator[Finding]:
    """Every eve finding of the selected `codes` (the rule engine keeps only those)."""
    yield from _problems(store)
    if TURN_CODES & set(codes):
        turns = store.stream.turns
        has_human = functools.cache(lambda: any(turn.human for turn in turns))  # asked by S306 findings only
        for turn in turns:
            replies = turn.replies  # built once per turn: a property that sorts
            if replies:  # without a reply, the reply rules find nothing (no generators made)
                marked: set[int] = set()
                yield from _markers(store, turn, replies, marked)
                final = _final_reply(replies)
                if final is not None and not turn.human:  # S306 reads unattended turns only
                    yield from _filler(store, turn, final, has_human, id(final) in marked)
                if final is not None and turn.outcome is not None:  # T403: turns that ended
                    yield from _non_terminal(store, turn, final)
            if not _all_completed(turn):
                yield from _phantoms(store, turn)
    if "E601" in codes:
        yield from _rejections(store)


# --------------------------------------------------------------------------- F50x


def _problems(store: EveStore) -> Iterator[Finding]:
    for p in store.stream.problems:
        fix = None
        if p.code == "F501":
            fix = Fix("safe", f"drop the torn final line {p.line}", (Edit("delete", line=p.line),))
        yield _find(store, p.code, p.message, p.line, fix=fix, evidence=dict(p.evidence), subject=f"line:{p.line}")


# --------------------------------------------------------------------------- S302 / S303


def delivered(turn: Turn, reply: Reply) -> bool:
    """Whether the reply's text went out (v27 names the delivered reply parts on `turn.settled`)."""
    if reply.text is None or is_blank(reply.text):
        return False
    if turn.reply_parts is not None and reply.phase == "reply":
        return reply.key in turn.reply_parts
    return True


def _markers(store: EveStore, turn: Turn, replies: list[Reply], marked: set[int]) -> Iterator[Finding]:
    """S302/S303 over the turn's `replies`; the `id` of each delivered one with a marker goes to `marked`."""
    for reply in replies:
        if not delivered(turn, reply):
            continue
        assert reply.text is not None
        kind = classify(reply.text)
        if kind is None:
            continue
        marked.add(id(reply))
        evidence = _reply_evidence(turn, reply)
        if kind == "in-prose":
            message = (
                f"{reply.phase} in turn {turn.id} holds the exact empty-delivery marker inside longer text "
                f"({_quote(reply.text)}): an anywhere-matching eve silenced this answer, an exact-matching "
                "one posted the literal tag"
            )
            yield _find(store, "S303", message, reply.line, evidence=evidence)
            continue
        evidence["normalised"] = excerpt(normalise(reply.text))
        evidence["form"] = kind
        if kind == "exact":
            detail = "is exactly the empty-delivery marker, yet the stream records it as delivered text"
        else:
            detail = "is a mangled empty-delivery marker that strict matching does not recognise"
        message = f"{reply.phase} in turn {turn.id} {detail}: {_quote(reply.text)} was posted as a message"
        yield _find(store, "S302", message, reply.line, evidence=evidence)


def _reply_evidence(turn: Turn, reply: Reply) -> dict[str, Any]:
    return {
        "turn": turn.id,
        "step": reply.step,
        "attempt": reply.attempt,
        "phase": reply.phase,
        "finish_reason": reply.finish_reason,
        "text": excerpt(reply.text or ""),
        "reemitted": reply.reemitted,
    }


# --------------------------------------------------------------------------- S306


def _final_reply(replies: list[Reply]) -> Reply | None:
    """The last reply with text (`replies`: a turn's, `Turn.replies`)."""
    for reply in reversed(replies):
        if reply.text is not None and not is_blank(reply.text):
            return reply
    return None


def _filler(
    store: EveStore, turn: Turn, reply: Reply | None, session_has_human: Callable[[], bool], marked: bool
) -> Iterator[Finding]:
    """`turn`: one no person's message started or fed (the caller tests `turn.human`); `marked`:
    `reply` is delivered and `classify` finds a marker in it (`_markers` tested it)."""
    if reply is None or reply.phase != "reply" or reply.finish_reason == "tool-calls":
        return
    if marked or not delivered(turn, reply) or not may_be_filler(reply.text):
        return
    assert reply.text is not None  # `delivered`
    verdict = judge(js_trim(reply.text), _turn_evidence(turn))  # `filler_kind`, tested just above
    if verdict is None:
        return
    evidence = _reply_evidence(turn, reply)
    evidence.update(
        filler=verdict.kind,
        trigger=turn.trigger,
        inputs=[{"line": i.line, "kind": i.kind} for i in turn.inputs],
        session_has_human=session_has_human(),
    )
    retry = _retry_evidence(turn, reply)
    evidence["empty_response_retry"] = retry
    why = _FILLER_WHY.get(verdict.kind, "talk about its own progress that carries nothing from the turn")
    after = f" after an empty model reply (line {retry['empty_line']})" if retry.get("empty_line") else ""
    if retry.get("retry_reason") and not after:
        after = " after an empty-response retry"
    message = (
        f"unattended turn {turn.id} ({_trigger_label(turn)}) delivered filler{after}: "
        f"{_quote(reply.text or '')} is {why}, not a report"
    )
    yield _find(store, "S306", message, reply.line, evidence=evidence)


_FILLER_WHY = {
    "promise": "a promise of content that never came",
    "acknowledgement": "an acknowledgement with nothing in it",
    "self-narration": "talk about its own progress that carries nothing from the turn's tool results",
}


def _turn_evidence(turn: Turn) -> LazyEvidence:
    """The turn's tool results and runtime deliveries (what a real answer would carry), and its task."""
    results: list[Any] = [i.text for i in turn.inputs if not i.human]
    for step in turn.steps:
        for call in step.calls:
            results.extend(v for v in (call.output, call.error) if v is not None)
    trigger = turn.trigger or {}
    task = [str(v) for v in trigger.values() if isinstance(v, str)] + [i.text for i in turn.inputs]
    return LazyEvidence(results, "\n".join(task))  # `TurnEvidence.collect`, as far as it is asked


def _trigger_label(turn: Turn) -> str:
    trigger = turn.trigger or {}
    kind, name = trigger.get("kind"), trigger.get("name")
    if kind:
        return f"{kind} {name!r}" if name else str(kind)
    kinds = sorted({i.kind for i in turn.inputs if i.kind})
    return f"started by {', '.join(kinds)}" if kinds else "no human message"


def _step_of(turn: Turn, reply: Reply) -> Step | None:
    """The attempt that completed `reply`."""
    for step in turn.steps:
        for r in step.replies:
            if r is reply:
                return step
    return None


def _retry_evidence(turn: Turn, reply: Reply) -> dict[str, Any]:
    """What the stream shows of an empty reply retried before this one (v27 shows most)."""
    step = _step_of(turn, reply)
    out: dict[str, Any] = {"retry_reason": step.retry_reason if step else None, "empty_line": None}
    for other in turn.steps:
        if other.line >= reply.line or other is step:
            continue
        if other.settled and other.vacuous and other.finish_reason != "tool-calls":
            out["empty_line"] = other.line
    return out


# --------------------------------------------------------------------------- T403


def _non_terminal(store: EveStore, turn: Turn, reply: Reply | None) -> Iterator[Finding]:
    """`reply`: the turn's final reply (`_final_reply`)."""
    if turn.outcome is None:
        return  # still running when the stream ends
    if reply is None:
        return
    reason = _non_terminal_reason(turn, reply)
    if reason is None:
        return
    evidence = _reply_evidence(turn, reply)
    evidence.update(reason=reason, turn_outcome=turn.outcome)
    message = (
        f"turn {turn.id} ended ({turn.outcome}) on a {reply.phase} that is not a final answer: {reason}; "
        f"last text {_quote(reply.text or '')}"
    )
    yield _find(store, "T403", message, reply.line, evidence=evidence)


def _non_terminal_reason(turn: Turn, reply: Reply) -> str | None:
    step = _step_of(turn, reply)
    if reply.phase == "narration":
        return "it is narration before tool activity and no reply followed"
    finish = reply.finish_reason or (step.finish_reason if step else None)
    if finish is not None and finish not in TERMINAL_FINISH:
        return f"finish reason {finish!r}"
    if step is not None and step.calls:
        return "its step also requested tool calls"
    if step is not None and step.status in ("failed", "abandoned"):
        return f"its step {step.status}"
    later = [s for s in turn.steps if s.line > reply.line and s.status in ("failed", "abandoned")]
    if later:
        return f"a later step {later[-1].status} (line {later[-1].line})"
    if turn.outcome in ("failed", "cancelled"):
        return f"the turn {turn.outcome} after it"
    return None


# --------------------------------------------------------------------------- C203


def _phantoms(store: EveStore, turn: Turn) -> Iterator[Finding]:
    for index, step in enumerate(turn.steps):
        state = _unsettled(turn, step, index)
        if state is None:
            continue
        later = [s for s in turn.steps if s.line > step.line]
        partial = step.streamed_text
        vacuous, end_line = step.vacuous, step.end_line
        evidence: dict[str, Any] = {
            "turn": turn.id,
            "step": step.key,
            "attempt": step.attempt,
            "status": "open" if state == "open-at-end" else state,
            "partial_text": excerpt(partial) if partial else None,
            "partial_chars": len(partial),
            "tool_calls": [c.id for c in step.calls],
            "error": {"code": step.error.code, "message": excerpt(step.error.message)} if step.error else None,
            "retried_at": later[0].line if later else None,
            "vacuous": vacuous,
            "open_at_stream_end": state == "open-at-end",
            "stream_may_be_live": state == "open-at-end" and _may_be_live(store, turn),
        }
        yield _find(
            store,
            "C203",
            _phantom_message(store, turn, step, partial, later, evidence["stream_may_be_live"]),
            step.line,
            end_line=end_line if end_line != step.line else None,
            fix=_phantom_fix(step, vacuous),
            evidence=evidence,
            subject=f"step:{turn.id}:{step.key}:{step.attempt}",
        )


def _all_completed(turn: Turn) -> bool:
    """Every attempt of the turn completed: no C203 (`_unsettled` is None for each)."""
    for step in turn.steps:
        if step.status != "completed":
            return False
    return True


def _unsettled(turn: Turn, step: Step, index: int) -> str | None:
    """How an attempt failed to settle: `failed`, `abandoned` (a retry or the turn's end left it
    open), `open-at-end` (nothing settled it before the stream ended), or None when it settled."""
    if step.status in ("failed", "abandoned"):
        return step.status
    if step.status != "open":
        return None
    if index + 1 < len(turn.steps):
        return "abandoned"  # a later step of the turn started: this one will never settle
    return "open-at-end"


def _may_be_live(store: EveStore, turn: Turn) -> bool:
    """Nothing after the open step says the session moved on: it may still be running."""
    stream = store.stream
    return stream.outcome is None and turn.outcome is None and bool(stream.turns) and stream.turns[-1] is turn


def _phantom_message(
    store: EveStore, turn: Turn, step: Step, partial: str, later: list[Step], live: bool
) -> str:
    noun = "model run" if store.stream.version == "27" else "step"
    what = f"{noun} {step.key}"
    streamed = f" after streaming partial text {_quote(partial)}" if partial else " with no output"
    if step.calls and not partial:
        streamed = f" after requesting {len(step.calls)} tool call(s) and no text"
    if step.status == "open" and not later:
        rebuilt = "eve rebuilds it as a partial assistant" if partial else "eve rebuilds it as a phantom assistant"
        tail = (
            f"; the stream may still be live, and the {noun} may yet settle"
            if live
            else f"; the turn was never settled{' and the session ended' if store.stream.outcome else ''}"
        )
        return (
            f"{what} of turn {turn.id} (attempt {step.attempt}) was still open when the stream ended"
            f"{streamed}: {rebuilt}{tail}"
        )
    ended = "failed" if step.status == "failed" else "never settled"
    if step.error:
        ended += f" ({excerpt(step.error.message, 80)})"
    then = f"; the turn went on at line {later[0].line}" if later else f"; the turn ended {turn.outcome or 'open'}"
    return f"{what} of turn {turn.id} (attempt {step.attempt}) {ended}{streamed}{then}"


def _phantom_fix(step: Step, vacuous: bool) -> Fix | None:
    """Safe only for an attempt that left nothing (`vacuous`: `step.vacuous`): no output, no error
    record, lines of its own."""
    if not vacuous or step.error is not None or step.status not in ("abandoned", "open") or step.shared:
        return None
    lines = sorted(step.lines)
    edits = tuple(Edit("delete", line=n) for n in lines)
    what = "abandoned" if step.status == "abandoned" else "unsettled"
    return Fix("safe", f"remove the {len(lines)} line(s) of the {what} attempt {step.attempt}", edits)


# --------------------------------------------------------------------------- E601


def _rejections(store: EveStore) -> Iterator[Finding]:
    groups: dict[tuple[str | None, str], list[Failure]] = {}
    for failure in store.stream.all_failures():
        if failure.message:
            groups.setdefault((failure.turn, failure.message), []).append(failure)
    matches: dict[str, RejectionMatch | None] = {}  # a wedged session fails the same way on every retry
    for (turn_id, text), records in groups.items():
        if text not in matches:
            matches[text] = match_rejection(text)
        match = matches[text]
        if match is None:
            continue
        lines = sorted({f.line for f in records})
        pattern = match.pattern
        evidence = {
            "turn": turn_id,
            "lines": lines,
            "scopes": [f.scope for f in records],
            "code": records[0].code,
            "error": excerpt(text),
            "pattern": pattern.id,
            "provider": pattern.provider,
            "points_to": pattern.rule,
            "position": match.position,
            "position_kind": match.position_kind,
            "position_record": None,  # the stream does not hold the request eve sent
        }
        where = f"turn {turn_id}" if turn_id else "the session"
        at = f" (request index {match.position})" if match.position is not None else ""
        message = (
            f"{where} recorded a structural rejection from {pattern.provider} ({pattern.id}){at}: "
            f"{_quote(text, 120)}; the history eve sends is malformed (see {pattern.rule}), "
            "so every retry of it fails the same way"
        )
        yield _find(
            store,
            "E601",
            message,
            lines[0],
            end_line=lines[-1] if len(lines) > 1 else None,
            position=match.position,
            evidence=evidence,
        )

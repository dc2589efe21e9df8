"""Findings only a Claude Code store can see: F501/F502/F509, C206, W110, T405, E601, and the
shared-rule findings in records only a repaired chain reaches (marked unreachable)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from ...conversation import Conversation
from ...encode import dumps
from ...model import Edit, Finding, Fix, Message, ToolCall
from ...patterns import match_rejection, unwrap
from ...rules.engine import check_conversation
from ...rules.registry import finding
from ...rules.shared.w101_vacuous_assistant import RULE as VACUOUS_ASSISTANT
from ...rules.shared.w102_blank_text_part import RULE as BLANK_TEXT_PART
from ...rules.shared.w103_orphan_tool_call import RULE as ORPHAN_TOOL_CALL
from ...rules.shared.w104_orphan_tool_result import RULE as ORPHAN_TOOL_RESULT
from ...rules.shared.w105_duplicate_tool_call_id import RULE as DUPLICATE_TOOL_CALL_ID
from ...rules.shared.w106_duplicate_tool_result import RULE as DUPLICATE_TOOL_RESULT
from ...rules.shared.w107_displaced_tool_result import RULE as DISPLACED_TOOL_RESULT
from ...rules.shared.w108_leading_non_user import RULE as LEADING_NON_USER
from ...text import excerpt
from ...value_types import replace
from .request import RequestMessage
from .resume import FORMAT

if TYPE_CHECKING:
    from .store import ClaudeCodeStore

# The shared rules that apply: W109 is left out, two assistant messages in a row are W110's concern.
SHARED_CODES = frozenset({
    VACUOUS_ASSISTANT.code, BLANK_TEXT_PART.code, ORPHAN_TOOL_CALL.code, ORPHAN_TOOL_RESULT.code,
    DUPLICATE_TOOL_CALL_ID.code, DUPLICATE_TOOL_RESULT.code, DISPLACED_TOOL_RESULT.code, LEADING_NON_USER.code,
    "F507", "F508",
})


def running_calls(store: ClaudeCodeStore) -> tuple[Message, list[ToolCall]] | None:
    """The unanswered calls of the last request message while the session is live (work in progress)."""
    messages = store.resume.cli.messages
    if not store.live or not messages or messages[-1].role != "assistant" or not messages[-1].tool_calls:
        return None
    return messages[-1], list(messages[-1].tool_calls)


def sent_messages(store: ClaudeCodeStore) -> list[Message]:
    """The request for the shared rules; calls still running are reported by `_running` instead."""
    messages = store.resume.cli.messages
    running = running_calls(store)
    if running is None:
        return messages
    last, _ = running
    quiet = replace(last, tool_calls=[], extra={**last.extra, "not_vacuous": True})
    return [*messages[:-1], quiet]


def native(store: ClaudeCodeStore, codes: frozenset[str]) -> Iterator[Finding]:
    yield from _problems(store, codes)
    if ORPHAN_TOOL_CALL.code in codes:
        yield from _running(store)
    if "F509" in codes:
        yield from _concatenated(store)
    if "C206" in codes:
        yield from _breaks(store)
    request = store.resume.cli.request.messages
    if "W110" in codes:
        yield from _interleaved(store, request)
    if "T405" in codes:
        yield from _thinking_only_findings(store, request)
    if "E601" in codes:
        yield from _recorded_errors(store)
    if store.resume.broken:
        yield from _unreachable(store, codes)


def _find(store: ClaudeCodeStore, code: str, text: str, line: int | None, **fields: Any) -> Finding:
    return finding(code, text, path=store.display, format=FORMAT, session=store.transcript.session, line=line,
                   **fields)  # fmt: skip


def _running(store: ClaudeCodeStore) -> Iterator[Finding]:
    running = running_calls(store)
    if running is None:
        return
    msg, calls = running
    for call in calls:
        fix = store.editor.answer_call(msg, call)
        text = (f"tool call {call.id!r} ({call.name or 'unnamed'}) in assistant message at request position "
                f"{msg.position} is still running: the session was live when the file was read")
        yield _find(store, ORPHAN_TOOL_CALL.code, text, msg.loc.line, end_line=msg.loc.end_line, position=msg.position,
                    severity="warning", fix=fix, evidence={"tool_call_id": call.id, "tool_name": call.name,
                                                           "where": "trailing", "running": True})  # fmt: skip


def _problems(store: ClaudeCodeStore, codes: frozenset[str]) -> Iterator[Finding]:
    for p in store.transcript.problems:
        if p.code in codes:
            fix = None
            if p.code == "F501":
                fix = Fix("safe", f"drop the torn final line {p.line}", (Edit("delete", line=p.line),))
            yield _find(store, p.code, p.message, p.line, fix=fix, evidence=dict(p.evidence))


def _concatenated(store: ClaudeCodeStore) -> Iterator[Finding]:
    resume = store.resume
    lost = len(resume.repaired.reached - resume.cli.reached)
    for cat in store.transcript.concatenated:
        recs = store.transcript.by_line(cat.line)
        evidence = {"records": len(cat.pieces), "offset": cat.offset, "uuids": [r.uuid for r in recs],
                    "types": [r.type for r in recs], "twins": list(cat.twins),
                    "unreachable_records": lost}  # fmt: skip
        twin = f", {len(cat.twins)} of them written again later" if cat.twins else ""
        text = (f"line {cat.line} holds {len(cat.pieces)} JSON records with no newline between them{twin}; "
                f"Claude Code cannot read any of them")  # fmt: skip
        fix = store.editor.split_line(cat.line, len(cat.pieces), len(cat.twins))
        yield _find(store, "F509", text, cat.line, fix=fix, evidence=evidence)


def _breaks(store: ClaudeCodeStore) -> Iterator[Finding]:
    resume = store.resume
    if not resume.real_dangling:
        return
    stats = resume.stats()
    repaired = resume.repaired.chain
    for rec in resume.real_dangling:
        on_chain = rec is resume.cli.chain.cut
        evidence = {"parent": resume.cli.chain.parent_of(rec), "uuid": rec.uuid, "on_resume_chain": on_chain,
                    "reachable": stats["reachable"], "total": stats["total"],
                    "reachable_when_relinked": len(resume.repaired.reached)}  # fmt: skip
        target = repaired.by_uuid.get(repaired.relinked.get(rec.uuid or "", ""))
        fix = store.editor.relink(rec.index, target.uuid, target.line) if target and target.uuid else None
        where = "the resume stops here" if on_chain else "a branch the resume does not take"
        text = (f"line {rec.line}: parentUuid {excerpt(str(evidence['parent']), 60)!r} names no record ({where}; "
                f"the resume reaches {stats['reachable']} of {stats['total']} records)")  # fmt: skip
        yield _find(store, "C206", text, rec.line, fix=fix, severity=None if on_chain else "warning",
                    evidence=evidence)  # fmt: skip


def _has_thinking(msg: RequestMessage) -> bool:
    return any(s.block.kind in ("thinking", "redacted_thinking") for s in msg.slots)


def _thinking_only(msg: RequestMessage) -> bool:
    return bool(msg.slots) and all(s.block.kind in ("thinking", "redacted_thinking") for s in msg.slots)


def _vacuous(msg: RequestMessage) -> bool:
    return all(s.block.kind == "text" and s.block.blank for s in msg.slots)


def _intruder(prev: RequestMessage, msg: RequestMessage) -> tuple[RequestMessage | None, str]:
    """The response to remove: a vacuous one, else a thinking-only one (its thinking goes)."""
    for candidate in (prev, msg):
        if _vacuous(candidate):
            return candidate, "vacuous"
    for candidate in (prev, msg):
        if _thinking_only(candidate):
            return candidate, "thinking-only"
    return None, ""


def _interleaved(store: ClaudeCodeStore, request: list[RequestMessage]) -> Iterator[Finding]:
    for prev, msg in pairwise(request):
        if prev.role != "assistant" or msg.role != "assistant" or prev.msg_id == msg.msg_id:
            continue
        if not (_has_thinking(prev) or _has_thinking(msg)):
            continue
        intruder, kind = _intruder(prev, msg)
        fix = None
        if intruder is not None:
            lines = f"{intruder.lines[0]}-{intruder.lines[1]}"
            fix = store.editor.remove_records([r.index for r in intruder.records],
                                              f"remove the {kind} response of line(s) {lines}", "unsafe")
        text = (f"assistant turn at request positions {prev.position}-{msg.position} mixes responses "
                f"{prev.msg_id!r} and {msg.msg_id!r}; the provider merges them and the thinking block moves")
        yield _find(store, "W110", text, prev.lines[0], end_line=msg.lines[1], position=msg.position, fix=fix,
                    evidence={"message_ids": [prev.msg_id, msg.msg_id], "positions": [prev.position, msg.position],
                              "intruder": intruder.msg_id if intruder else None})  # fmt: skip


def _thinking_only_final(request: list[RequestMessage], k: int) -> bool:
    if k + 1 == len(request):
        return True
    nxt = request[k + 1]
    return nxt.role == "user" and not any(s.block.kind == "tool_result" for s in nxt.slots)


def _thinking_only_turns(request: list[RequestMessage]) -> Iterator[RequestMessage]:
    for k, msg in enumerate(request):
        if msg.role == "assistant" and _thinking_only(msg) and _thinking_only_final(request, k):
            yield msg


def _thinking_only_findings(store: ClaudeCodeStore, request: list[RequestMessage]) -> Iterator[Finding]:
    for msg in _thinking_only_turns(request):
        first, last = msg.lines
        text = (f"assistant message at request position {msg.position} ends its turn with only thinking "
                f"(an interrupt while thinking streamed)")  # fmt: skip
        yield _find(store, "T405", text, first, end_line=last, position=msg.position,
                    evidence={"message_id": msg.msg_id, "blocks": len(msg.slots)})  # fmt: skip


def _error_text(rec: Any) -> str | None:
    if rec.type == "assistant" and rec.api_error:
        return rec.text()
    if rec.subtype == "api_error" and rec.meta:
        err = rec.meta.get("error")
        if isinstance(err, dict):
            return dumps(err)  # the reader keeps lone surrogates, which orjson refuses to write
        return err if isinstance(err, str) else None
    return None


def _recorded_errors(store: ClaudeCodeStore) -> Iterator[Finding]:
    for rec in store.transcript.noted:  # an error record always carries its metadata
        text = _error_text(rec)
        if not text:
            continue
        status = unwrap(text).status
        if status is not None and status >= 500:
            continue
        match = match_rejection(text)
        if match is None:
            continue
        target = store.resume.locate(match.position) if match.position is not None else None
        evidence = {"pattern": match.pattern.id, "provider": match.pattern.provider, "rule": match.pattern.rule,
                    "status": status, "text": excerpt(text), "named_position": match.position,
                    "record": target}  # fmt: skip
        message = f"line {rec.line} records a provider rejection ({match.pattern.id}, points at {match.pattern.rule})"
        if target:
            message += f"; messages.{match.position} is line {target['line']}"
        yield _find(store, "E601", message, rec.line, position=match.position, evidence=evidence)


def _unreachable(store: ClaudeCodeStore, codes: frozenset[str]) -> Iterator[Finding]:
    """Shared-rule findings on messages only the repaired chain sends: reported, marked unreachable.

    Those messages are not sent now, so they carry no request position; the position they take once
    the chain is repaired is in `evidence.repaired_position`.
    """
    resume = store.resume
    reached = resume.cli.reached
    messages, unreached = [], {}
    for msg in resume.repaired.messages:
        if any(r in reached for r in msg.extra.get("records") or ()):
            messages.append(msg)
            continue
        quiet = replace(msg, position=None)
        unreached[id(quiet)] = msg.position
        messages.append(quiet)
    if not unreached:
        return
    conversation = Conversation(path=store.display, format=FORMAT, session=store.transcript.session,
                                messages=messages, editor=store.editor, codes=SHARED_CODES)  # fmt: skip
    by_loc = {(m.loc.line, m.loc.end_line): m for m in messages if id(m) in unreached}
    for f in check_conversation(conversation, SHARED_CODES & codes):
        target = by_loc.get((f.line, f.end_line))
        if target is None or f.position is not None:
            continue  # on a message the resume reaches: the engine reports it on the request itself
        f.message += " (unreachable until the parent chain is repaired)"
        f.evidence = {**f.evidence, "unreachable": True, "repaired_position": unreached[id(target)]}
        yield f

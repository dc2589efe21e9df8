"""The rules over OpenCode sessions: one pass per session, every code at once.

T401/T402/T403 (run verdicts, `completion`), T404 (tool parts left pending/running), S307
(upstream empty-response placeholders), E601 (stored provider errors that are structural
rejections), F504 (unreadable rows), F506 (SQLite integrity) and the store-independent
conversation rules (`rules.conversation`) over the request OpenCode would send.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ...model import Edit, Finding, Fix, Message
from ...patterns import match_rejection
from ...rules import checker, finding
from ...rules.conversation import conversation_findings
from ...text import excerpt
from . import completion
from .projection import project
from .reader import OcMessage, OcPart
from .runs import Run, SessionView

# W109 is left out: the AI SDK providers merge adjacent assistant messages, and OpenCode sends a
# multi-step reply as one assistant message per step by design.
CONVERSATION_CODES = ("W101", "W102", "W103", "W104", "W105", "W106", "W107", "W108", "F507", "F508")
STEP_MARKERS = ("step-start", "step-finish")
_STOP_REASON = re.compile(r"'stop_reason': '([A-Za-z_]{1,40})'")


class Context:
    """Builds findings located in one session of one store."""

    def __init__(self, store: Any, view: SessionView) -> None:
        self.store = store
        self.view = view
        self.by_id = {m.id: m for m in view.session.messages}

    def make(self, code: str, text: str, msg: OcMessage | None, part: OcPart | None = None, *,
             position: int | None = None, fix: Fix | None = None, evidence: dict[str, Any] | None = None,
             severity: Any = None) -> Finding:
        loc = part.loc if part is not None else msg.loc if msg is not None else None
        return finding(
            code, text, path=self.store.display, format=self.store.format, severity=severity, fix=fix,
            session=self.view.session.id, position=position, evidence=evidence or {},
            line=loc.line if loc else None, end_line=loc.end_line if loc else None,
            row=loc.row if loc else None, table=loc.table if loc else None,
            subject=f"{loc.table or 'export'}:{loc.row if loc.row is not None else loc.line}" if loc else None,
        )

    def conversation_make(self, code: str, text: str, msg: Message, severity: Any = None, fix: Any = None,
                          evidence: dict[str, Any] | None = None) -> Finding:
        oc = self.by_id.get(msg.extra.get("message_id", ""))
        part = None
        evidence = dict(evidence or {})
        evidence["message_id"] = oc.id if oc else None
        if code == "W101" and oc is not None:
            fix = vacuous_fix(oc, msg)
        elif code == "W102" and oc is not None:
            pid = msg.extra["part_of"][evidence["part_index"]]
            part = next((p for p in oc.parts if p.id == pid), None)
            evidence["part_id"] = pid
            fix = Fix("safe", f"delete the blank text part {pid}", (Edit("delete", table="part", row=pid),))
        return self.make(code, text, oc, part, position=msg.position, fix=fix, evidence=evidence, severity=severity)


def delete_message_fix(oc: OcMessage, summary: str, applicability: str = "safe") -> Fix:
    edits = [Edit("delete", table="part", row=p.id) for p in oc.parts]
    edits.append(Edit("delete", table="message", row=oc.id))
    return Fix(applicability, summary, tuple(edits))  # type: ignore[arg-type]


def vacuous_fix(oc: OcMessage, msg: Message) -> Fix:
    """Delete the vacuous step's parts, or the whole message when only step markers would remain."""
    block = set(msg.extra.get("part_ids", ()))
    if all(p.id in block or p.type in STEP_MARKERS for p in oc.parts):
        return delete_message_fix(oc, f"delete assistant message {oc.id} and its {len(oc.parts)} parts")
    ids = [p.id for p in oc.parts if p.id in block]
    return Fix("safe", f"delete the {len(ids)} empty part(s) of the step", tuple(Edit("delete", table="part", row=i) for i in ids))


# --------------------------------------------------------------------------- per session


@checker("opencode-db", "opencode-export")
def check_opencode(store: Any, options: Any) -> Iterator[Finding]:
    """Every OpenCode rule, one session at a time (a database is never held in memory whole)."""
    yield from store.store_findings(options)
    for view in store.views(options):
        yield from session_findings(store, view)


def session_findings(store: Any, view: SessionView) -> Iterator[Finding]:
    ctx = Context(store, view)
    for p in view.session.problems:
        yield finding("F504", f"{p.table or 'export'} record {p.row or '?'} is unreadable: {p.detail}; it was skipped",
                      path=store.display, format=store.format, session=view.session.id, row=p.row, table=p.table,
                      line=p.line, evidence={"detail": p.detail})
    yield from conversation_findings(view.projection.messages, make=ctx.conversation_make, codes=CONVERSATION_CODES)
    for run in view.runs:
        yield from run_findings(ctx, run)
    for msg in view.session.messages:
        if msg.role != "assistant":
            continue
        yield from dangling_tools(ctx, msg)
        yield from placeholders(ctx, msg)
    yield from recorded_errors(ctx)


def _run_evidence(run: Run, final: OcMessage, d: completion.Decision) -> dict[str, Any]:
    prompt = completion.visible_text([p.data for p in run.user.parts]) if run.user else None
    return {
        "retry_safe": d.retry_safe,
        "run": run.index,
        "user_message": run.user.id if run.user else None,
        "prompt": excerpt(prompt) if prompt is not None else None,
        "final_message": final.id,
        "messages_in_run": len(run.assistants),
        "finish": d.finish,
        "finish_normalised": completion.normalise_finish(d.finish) or None,
        "reasons": d.reasons,
        "text": excerpt(d.text),
        "error": _error_summary(d.error),
        **{f"run_{k}": v for k, v in run.evidence().as_dict().items()},
    }


def run_findings(ctx: Context, run: Run) -> Iterator[Finding]:
    d, final = run.decision, run.final
    if d is None or d.code is None or final is None:
        return
    where = f"run {run.index + 1}"
    if d.code == "T401":
        finish = run.evidence().finish or "missing"
        text = (f"{where} ended on an empty completion recorded as success: no visible text, zero tokens and cost, "
                f"finish {finish}, no tool or reasoning activity; safe to retry the prompt once")
    elif d.code == "T402":
        text = (f"{where} ended on an empty completion recorded as success, but work happened "
                f"({', '.join(d.reasons)}); do not replay it automatically")
    else:
        text = f"{where}'s last assistant message is not a final answer: {'; '.join(d.reasons)}"
    yield ctx.make(d.code, text, final, position=ctx.view.position(final), evidence=_run_evidence(run, final, d))


def _status(part: OcPart) -> Any:
    state = part.data.get("state")
    return state.get("status") if isinstance(state, dict) else None


def dangling_tools(ctx: Context, msg: OcMessage) -> Iterator[Finding]:
    time = msg.info.get("time") if isinstance(msg.info.get("time"), dict) else {}
    finished = time.get("completed") is not None or bool(msg.info.get("error"))
    if not finished:
        return
    for part in msg.parts:
        status = _status(part)
        if part.type == "tool" and status in ("pending", "running"):
            state = "errored" if msg.info.get("error") else "completed"
            yield ctx.make(
                "T404",
                f"tool call {part.data.get('callID')!r} ({part.data.get('tool')}) is still {status} in a {state} "
                "message; OpenCode replays it as interrupted, its outcome is unknown",
                msg, part, position=ctx.view.projection.part_position.get(part.id),
                evidence={"message_id": msg.id, "part_id": part.id, "call_id": part.data.get("callID"),
                          "tool": part.data.get("tool"), "status": status, "message_state": state},
            )


def placeholders(ctx: Context, msg: OcMessage) -> Iterator[Finding]:
    for part in msg.parts:
        text = part.data.get("text")
        if part.type != "text" or not completion.is_placeholder(text):
            continue
        m = _STOP_REASON.search(text[:4096])
        yield ctx.make(
            "S307",
            "text part is an upstream empty-response placeholder (a serialised provider response), not an answer",
            msg, part, position=ctx.view.projection.part_position.get(part.id),
            fix=Fix("unsafe", f"delete the placeholder text part {part.id}", (Edit("delete", table="part", row=part.id),)),
            evidence={"message_id": msg.id, "part_id": part.id, "text": excerpt(text),
                      "stop_reason": m.group(1) if m else None},
        )


# --------------------------------------------------------------------------- E601


def _error_summary(error: Any) -> dict[str, Any] | None:
    if not isinstance(error, dict):
        return None
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    message = data.get("message")
    return {"name": error.get("name"), "status_code": data.get("statusCode"),
            "message": excerpt(message) if isinstance(message, str) else None}


def _error_texts(error: Any) -> str:
    data = error.get("data") if isinstance(error, dict) and isinstance(error.get("data"), dict) else {}
    pieces = [data.get("message"), data.get("responseBody")]
    return "\n".join(p for p in pieces if isinstance(p, str))


def _stored_errors(msg: OcMessage) -> Iterator[tuple[OcPart | None, dict[str, Any]]]:
    error = msg.info.get("error")
    if isinstance(error, dict) and error.get("name") != "MessageAbortedError":
        yield None, error
    for part in msg.parts:
        if part.type == "retry" and isinstance(part.data.get("error"), dict):
            yield part, part.data["error"]


def recorded_errors(ctx: Context) -> Iterator[Finding]:
    messages = ctx.view.session.messages
    for index, msg in enumerate(messages):
        if msg.role != "assistant":
            continue
        for part, error in _stored_errors(msg):
            match = match_rejection(_error_texts(error))
            if match is None:
                continue
            summary = _error_summary(error) or {}
            yield ctx.make(
                "E601",
                f"stored {summary.get('name') or 'provider error'} is a structural rejection "
                f"({match.pattern.provider}: {match.pattern.description}); see {match.pattern.rule}",
                msg, part, position=None,
                evidence={"message_id": msg.id, "part_id": part.id if part else None, "error": summary,
                          "pattern": match.pattern.id, "provider": match.pattern.provider,
                          "rule": match.pattern.rule, "named_position": match.position,
                          "position_kind": match.position_kind,
                          "record": _request_record(messages[:index], match.position)},
            )


def _request_record(before: list[OcMessage], position: int | None) -> dict[str, Any] | None:
    """The record at `position` of the request that failed (the history before the errored message)."""
    if position is None:
        return None
    wire = project(before).wire
    if position >= len(wire):
        return {"position": position, "found": False, "request_length": len(wire)}
    origin = wire[position]["origin"]
    return {"position": position, "found": True, "request_length": len(wire), "role": wire[position]["role"],
            "message_id": origin["message"], "part_ids": origin["parts"]}

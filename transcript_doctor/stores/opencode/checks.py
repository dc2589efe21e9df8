"""The rules over OpenCode sessions: the conversation the shared rules read, and OpenCode's own.

T401/T402/T403 (run verdicts, `completion`), T404 (tool parts left pending/running), S307
(upstream empty-response placeholders), E601 (stored provider errors that are structural
rejections), F504 (unreadable rows); F506 (SQLite integrity) is the store's. The shared rules
read the request OpenCode would send (`projection`), located at OpenCode's messages and parts.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from typing import Any

from ...conversation import Conversation
from ...model import Edit, Finding, Fix, Loc, Message, ToolCall
from ...patterns import match_rejection
from ...rules import finding
from ...rules.engine import check_conversation, shared_codes
from ...rules.shared import w109_consecutive_assistants as w109
from ...text import excerpt
from ..session_pass import SessionPass
from . import completion
from .projection import project
from .reader import OcMessage, OcPart
from .runs import Run, SessionView

# W109 is left out: the AI SDK providers merge adjacent assistant messages, and OpenCode sends a
# multi-step reply as one assistant message per step by design.
SHARED_CODES = shared_codes() - {w109.RULE.code}
NATIVE_CODES = frozenset({"F504", "T401", "T402", "T403", "T404", "S307", "E601"})
STEP_MARKERS = ("step-start", "step-finish")
_STOP_REASON = re.compile(r"'stop_reason': '([A-Za-z_]{1,40})'")


class Context:
    """Builds findings located in one session of one store."""

    def __init__(self, store: Any, view: SessionView) -> None:
        self.store = store
        self.view = view
        self._by_id: dict[str, OcMessage] | None = None

    @property
    def by_id(self) -> dict[str, OcMessage]:
        """The session's messages by id (the last of a repeated id), built when first asked for."""
        if self._by_id is None:
            self._by_id = {m.id: m for m in self.view.session.messages}
        return self._by_id

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


# --------------------------------------------------------------------------- the shared model


class OpencodeEditor:
    """How the shared rules' fixes are written in OpenCode: rows of the part and message tables.

    A vacuous assistant step loses its parts (or the message, when only step markers would be
    left) and a blank text part is deleted. Tool results are parts of the assistant message that
    made the call, so removing or adding one is not offered.
    """

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def _origin(self, msg: Message) -> OcMessage | None:
        return self.ctx.by_id.get(msg.extra.get("message_id", ""))

    def remove_message(self, msg: Message) -> Fix | None:
        oc = self._origin(msg)
        return vacuous_fix(oc, msg) if oc is not None and msg.role == "assistant" else None

    def drop_part(self, msg: Message, index: int) -> Fix | None:
        if self._origin(msg) is None:
            return None
        pid = msg.extra["part_of"][index]
        return Fix("safe", f"delete the blank text part {pid}", (Edit("delete", table="part", row=pid),))

    def answer_call(self, msg: Message, call: ToolCall) -> Fix | None:
        return None


def conversation(store: Any, view: SessionView) -> Conversation:
    """The request OpenCode would send, each message placed at the OpenCode message behind it when
    a finding names it (`Locator`)."""
    ctx = Context(store, view)
    return Conversation(store.display, store.format, view.session.id, view.projection.messages,
                        editor=OpencodeEditor(ctx), codes=SHARED_CODES, locator=Locator(ctx))


class Locator:
    """Where a projected message or part lives, found as OpenCode finds a row: by id. The message
    is the one its `extra["message_id"]` names and the part that message's part its
    `extra["part_of"]` names, the last holder of an id that repeats (a damaged store or export);
    with unique ids, the very message and part it was projected from."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._parts: dict[str, dict[str, OcPart]] = {}

    def __call__(self, msg: Message, part: int | None) -> tuple[Loc, dict[str, Any]]:
        oc = self.ctx.by_id.get(msg.extra.get("message_id", ""))
        loc = oc.loc if oc is not None else Loc()
        evidence: dict[str, Any] = {"message_id": oc.id if oc is not None else None}
        part_of = msg.extra.get("part_of", ())
        if part is not None and part < min(len(msg.parts), len(part_of)):
            pid = part_of[part]
            found = self._parts_of(oc).get(pid) if oc is not None else None
            if found is not None:
                loc = found.loc
            evidence["part_id"] = pid
        return loc, evidence

    def _parts_of(self, oc: OcMessage) -> dict[str, OcPart]:
        parts = self._parts.get(oc.id)
        if parts is None:
            parts = self._parts[oc.id] = {p.id: p for p in oc.parts}
        return parts


def session_pass(store: Any) -> SessionPass[SessionView]:
    """Conversations and OpenCode-only findings from one read of each session."""
    return SessionPass(lambda view: conversation(store, view), lambda view, codes: native_findings(store, view, codes),
                       NATIVE_CODES)


# --------------------------------------------------------------------------- per session


def session_findings(store: Any, view: SessionView) -> Iterator[Finding]:
    """Every finding of one session, shared rules included (what a heal re-checks)."""
    yield from check_conversation(conversation(store, view), SHARED_CODES)
    yield from native_findings(store, view, NATIVE_CODES)


def native_findings(store: Any, view: SessionView, codes: Collection[str]) -> Iterator[Finding]:
    """The findings only OpenCode can see in one session (the engine keeps the selected ones)."""
    ctx = Context(store, view)
    if "F504" in codes:
        for p in view.session.problems:
            yield finding("F504", f"{p.table or 'export'} record {p.row or '?'} is unreadable: {p.detail}; it was skipped",
                          path=store.display, format=store.format, session=view.session.id, row=p.row, table=p.table,
                          line=p.line, evidence={"detail": p.detail})
    for run in view.runs:
        if run.decision is not None and run.decision.code is not None:  # most runs end on an answer
            yield from run_findings(ctx, run)
    errored: list[int] = []  # the assistant messages that may hold a stored error (E601)
    for index, msg in enumerate(view.session.messages):
        if msg.role != "assistant":
            continue
        left_running, placeholder, stored_error = _notable_parts(msg)
        if left_running:
            yield from dangling_tools(ctx, msg)
        if placeholder:
            yield from placeholders(ctx, msg)
        if stored_error:
            errored.append(index)
    if "E601" in codes:
        yield from recorded_errors(ctx, errored)


def _notable_parts(msg: OcMessage) -> tuple[bool, bool, bool]:
    """Whether the message may have a T404 (a tool part pending or running), an S307 (a placeholder
    text part) or an E601 (a stored error): one pass over its parts, so that the checks of each
    only read the few messages that have one."""
    running = placeholder = False
    stored_error = isinstance(msg.info.get("error"), dict)
    for part in msg.parts:
        kind = part.type
        if kind == "tool":
            if not running:
                state = part.data.get("state")
                running = isinstance(state, dict) and state.get("status") in ("pending", "running")
        elif kind == "text":
            placeholder = placeholder or completion.is_placeholder(part.data.get("text"))
        elif kind == "retry":
            stored_error = True
    return running, placeholder, stored_error


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
    time: dict[str, Any] = msg.info["time"] if isinstance(msg.info.get("time"), dict) else {}
    finished = time.get("completed") is not None or bool(msg.info.get("error"))
    if not finished:
        return
    for part in msg.parts:
        if part.type != "tool":
            continue
        status = _status(part)
        if status in ("pending", "running"):
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
        if part.type != "text" or not isinstance(text, str) or not completion.is_placeholder(text):
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
    data: dict[str, Any] = error["data"] if isinstance(error.get("data"), dict) else {}
    message = data.get("message")
    return {"name": error.get("name"), "status_code": data.get("statusCode"),
            "message": excerpt(message) if isinstance(message, str) else None}


def _error_texts(error: Any) -> str:
    data: dict[str, Any] = error["data"] if isinstance(error, dict) and isinstance(error.get("data"), dict) else {}
    pieces = [data.get("message"), data.get("responseBody")]
    return "\n".join(p for p in pieces if isinstance(p, str))


def _stored_errors(msg: OcMessage) -> Iterator[tuple[OcPart | None, dict[str, Any]]]:
    error = msg.info.get("error")
    if isinstance(error, dict) and error.get("name") != "MessageAbortedError":
        yield None, error
    for part in msg.parts:
        if part.type == "retry" and isinstance(part.data.get("error"), dict):
            yield part, part.data["error"]


def recorded_errors(ctx: Context, indices: list[int] | None = None) -> Iterator[Finding]:
    """E601 over the session's assistant messages (or the ones at `indices`, in order)."""
    messages = ctx.view.session.messages
    for index in range(len(messages)) if indices is None else indices:
        msg = messages[index]
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

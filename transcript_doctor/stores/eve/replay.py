"""`tdoc replay` for an eve stream: the reconstructed turns, and the history they imply.

eve keeps its model history in workflow state, not in the stream, so `history` here is rebuilt from
what the stream shows, in the AI SDK `ModelMessage` shape eve uses: a person's or a delivery's
message as `user`, each settled step's text, reasoning and tool calls as one `assistant`
message, its tool results as one `tool` message. Failed or abandoned attempts and intentional
silence (`message: null`) add nothing; a clear empties the history; a compaction replaces it with
its summary when the stream records one.
"""

from __future__ import annotations

from typing import Any

from .markers import classify
from .turns import Call, ContextOp, Reply, Step, Stream, Turn

HISTORY_NOTE = "rebuilt from the event stream; eve keeps the model history itself in workflow state"


def replay(stream: Stream, path: str) -> dict[str, Any]:
    return {
        "format": "eve-stream",
        "path": path,
        "session": stream.session_id,
        "stream_version": stream.version,
        "text_mode": stream.text_mode,
        "outcome": stream.outcome,
        "records": stream.records,
        "events": stream.events,
        "duplicates_skipped": stream.duplicates,
        "turns": [_turn(t) for t in stream.turns],
        "history": history(stream),
        "history_note": HISTORY_NOTE,
        "errors": [{"code": p.code, "line": p.line, "message": p.message} for p in stream.problems],
    }


def _turn(turn: Turn) -> dict[str, Any]:
    return {
        "id": turn.id,
        "line": turn.line,
        "end_line": turn.end_line,
        "trigger": turn.trigger,
        "human": turn.human,
        "outcome": turn.outcome,
        "inputs": [
            {"line": i.line, "kind": i.kind, "human": i.human, "text": i.text} for i in turn.inputs
        ],
        "steps": [_step(s) for s in turn.steps],
        "replies": [_reply(r) for r in turn.replies],
        "failures": [
            {"line": f.line, "scope": f.scope, "code": f.code, "message": f.message} for f in turn.failures
        ],
        "context": [_context(c) for c in turn.context],
    }


def _step(step: Step) -> dict[str, Any]:
    return {
        "key": step.key,
        "attempt": step.attempt,
        "line": step.line,
        "end_line": step.end_line,
        "status": step.status,
        "finish_reason": step.finish_reason,
        "retry_reason": step.retry_reason,
        "output_tokens": step.output_tokens,
        "partial_text": "".join(step.partial.values()) or None,
        "reasoning": step.reasoning or None,
        "calls": [_call(c) for c in step.calls],
        "error": {"line": step.error.line, "code": step.error.code, "message": step.error.message}
        if step.error
        else None,
    }


def _call(call: Call) -> dict[str, Any]:
    return {
        "id": call.id,
        "name": call.name,
        "line": call.line,
        "input": call.input,
        "result_line": call.result_line,
        "outcome": call.outcome,
        "output": call.output,
        "error": call.error,
    }


def _reply(reply: Reply) -> dict[str, Any]:
    return {
        "line": reply.line,
        "step": reply.step,
        "attempt": reply.attempt,
        "phase": reply.phase,
        "finish_reason": reply.finish_reason,
        "silent": reply.silent,
        "text": reply.text,
        "marker": classify(reply.text),
        "reemitted": reply.reemitted,
    }


def _context(op: ContextOp) -> dict[str, Any]:
    return {"line": op.line, "op": op.op, "status": op.status, "summary": op.summary}


# --------------------------------------------------------------------------- history


def history(stream: Stream) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for op in stream.context:
        messages = _apply_context(messages, op)
    for turn in stream.turns:
        for item in _turn_items(turn):
            if isinstance(item, ContextOp):
                messages = _apply_context(messages, item)
            else:
                messages.extend(item)
    return messages


def _turn_items(turn: Turn) -> list[Any]:
    """The turn's inputs, settled steps and context operations, in stream order."""
    items: list[tuple[int, Any]] = [(i.line, [{"role": "user", "content": i.text}]) for i in turn.inputs]
    latest = {s.key: s for s in turn.steps}
    items += [(s.line, _step_messages(s)) for s in turn.steps if s.settled and latest[s.key] is s]
    items += [(c.line, c) for c in turn.context if c.status == "completed"]
    items.sort(key=lambda pair: pair[0])
    return [item for _, item in items]


def _step_messages(step: Step) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    if step.reasoning:
        content.append({"type": "reasoning", "text": step.reasoning})
    content += [{"type": "text", "text": r.text} for r in step.replies if r.text]
    content += [
        {"type": "tool-call", "toolCallId": c.id, "toolName": c.name, "input": c.input} for c in step.calls
    ]
    if not content:
        return []
    out = [{"role": "assistant", "content": content}]
    results = [
        {
            "type": "tool-result",
            "toolCallId": c.id,
            "toolName": c.name,
            "output": c.output if c.error is None else {"error": c.error},
        }
        for c in step.calls
        if c.result_line is not None
    ]
    if results:
        out.append({"role": "tool", "content": results})
    return out


def _apply_context(messages: list[dict[str, Any]], op: ContextOp) -> list[dict[str, Any]]:
    if op.status != "completed":
        return messages
    if op.op == "clear":
        return []
    summary = op.summary or "(compaction summary not recorded in the stream)"
    return [{"role": "user", "content": summary}]

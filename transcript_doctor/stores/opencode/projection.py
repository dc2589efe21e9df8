"""The model messages OpenCode would send for a session (`MessageV2.toModelMessages` + AI SDK).

Rules (docs/opencode.md §3, checked against `message-v2.ts`):

* History starts at the newest compaction whose summary completed (`filterCompacted`): the
  user message holding the `compaction` part, or its `tail_start_id` when that is kept.
* Messages with no parts are skipped. An assistant message with `error` is skipped entirely
  unless the error is `MessageAbortedError` and it has a part other than step-start/reasoning.
* User parts: `text` unless `ignored`; `file` (not text/plain or a directory) as media;
  `compaction` -> "What did we do so far?"; `subtask` -> "The following tool was executed by
  the user".
* Assistant parts: text, reasoning, tool. Provider metadata (reasoning signatures) is dropped
  when the message came from another model than the one the session now uses. Tool parts:
  completed -> result (compacted ones "[Old tool result content cleared]"), error -> error
  result (or the kept output of an interrupted call), pending/running -> error result
  "[Tool execution was interrupted]".
* A message made only of step-start parts is dropped. The AI SDK splits an assistant message at
  each step-start: every step becomes an assistant message followed by a tool message holding
  the results of that step's calls.

Positions count the non-system messages (what Anthropic's `messages.N` counts): OpenCode puts its
system prompt in front, outside this list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...encode import dumps
from ...model import Message, Part, ToolCall
from .reader import OcMessage, OcPart

COMPACTION_PROMPT = "What did we do so far?"
SUBTASK_PROMPT = "The following tool was executed by the user"
CLEARED_OUTPUT = "[Old tool result content cleared]"
INTERRUPTED_OUTPUT = "[Tool execution was interrupted]"
_SIGNATURE_KEYS = ("signature", "redactedData", "redacted_data", "reasoningEncryptedContent", "encryptedContent")


@dataclass
class Projection:
    wire: list[dict[str, Any]] = field(default_factory=list)  # the request, position == index
    messages: list[Message] = field(default_factory=list)  # shared model for the conversation rules
    anomalies: list[dict[str, Any]] = field(default_factory=list)
    first_position: dict[str, int] = field(default_factory=dict)  # OpenCode message id -> first position
    part_position: dict[str, int] = field(default_factory=dict)  # OpenCode part id -> position
    start: int = 0  # index (in the session's messages) where the sent history starts


def history_start(messages: list[OcMessage]) -> int:
    """Index of the first message `filterCompacted` keeps (0 when nothing was compacted)."""
    completed: set[Any] = set()
    index_of = {m.id: i for i, m in enumerate(messages)}
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        info = msg.info
        if msg.role == "user" and msg.id in completed:
            part = next((p for p in msg.parts if p.type == "compaction"), None)
            if part is not None:
                tail = part.data.get("tail_start_id")
                return min(index_of.get(tail, i), i) if isinstance(tail, str) else i
        if msg.role == "assistant" and info.get("summary") and info.get("finish") and not info.get("error"):
            completed.add(info.get("parentID"))
    return 0


def current_model(messages: list[OcMessage]) -> tuple[Any, Any] | None:
    """(providerID, modelID) of the newest user message: the model the next request goes to."""
    for msg in reversed(messages):
        model = msg.info.get("model")
        if msg.role == "user" and isinstance(model, dict):
            return model.get("providerID"), model.get("modelID")
    return None


def is_signed(data: dict[str, Any]) -> bool:
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        return False
    return any(
        isinstance(v, dict) and any(v.get(k) is not None for k in _SIGNATURE_KEYS) for v in metadata.values()
    )


def _skips_errored(msg: OcMessage) -> bool:
    error = msg.info.get("error")
    if not error:
        return False
    aborted = isinstance(error, dict) and error.get("name") == "MessageAbortedError"
    return not (aborted and any(p.type not in ("step-start", "reasoning") for p in msg.parts))


def project(messages: list[OcMessage]) -> Projection:
    out = Projection()
    out.start = history_start(messages)
    if out.start:
        out.anomalies.append({"kind": "compacted_history", "messages_before": out.start,
                              "from_message": messages[out.start].id})
    model = current_model(messages)
    for msg in messages[out.start:]:
        if not msg.parts:
            continue
        if msg.role == "user":
            _user(out, msg)
        elif msg.role == "assistant":
            if _skips_errored(msg):
                out.anomalies.append({"kind": "errored_assistant_skipped", "message": msg.id,
                                      "error": _error_name(msg)})
                continue
            same = model is None or model == (msg.info.get("providerID"), msg.info.get("modelID"))
            _assistant(out, msg, same)
    return out


def _error_name(msg: OcMessage) -> Any:
    error = msg.info.get("error")
    return error.get("name") if isinstance(error, dict) else str(error)


def _emit(out: Projection, msg: OcMessage, role: str, content: list[dict[str, Any]], part_ids: list[str],
          part_of: list[str] | None = None, **kw: Any) -> Message:
    """Append one request message (wire shape) and its shared-model twin; returns the twin.

    `part_ids`: the OpenCode parts behind it; `part_of`: the part id of each shared-model part.
    """
    position = len(out.wire)
    out.wire.append({"role": role, "content": content, "origin": {"message": msg.id, "parts": part_ids}})
    out.first_position.setdefault(msg.id, position)
    for pid in part_ids:
        out.part_position.setdefault(pid, position)
    extra = {"message_id": msg.id, "part_ids": part_ids, "part_of": part_of if part_of is not None else part_ids}
    m = Message(role=role, loc=msg.loc, position=position, extra=extra, **kw)  # conversation() locates it again
    out.messages.append(m)
    return m


def _user(out: Projection, msg: OcMessage) -> None:
    parts: list[Part] = []
    wire: list[dict[str, Any]] = []
    ids: list[str] = []
    for p in msg.parts:
        d = p.data
        if p.type == "text" and d.get("ignored") is not True:
            text = d.get("text") if isinstance(d.get("text"), str) else ""
            parts.append(Part("text", text))
            wire.append({"type": "text", "text": text})
        elif p.type == "text":
            out.anomalies.append({"kind": "ignored_part_dropped", "message": msg.id, "part": p.id})
            continue
        elif p.type == "file" and d.get("mime") not in ("text/plain", "application/x-directory"):
            parts.append(Part("media"))
            wire.append({"type": "file", "mediaType": d.get("mime"), "filename": d.get("filename")})
        elif p.type in ("compaction", "subtask"):
            text = COMPACTION_PROMPT if p.type == "compaction" else SUBTASK_PROMPT
            parts.append(Part("text", text))
            wire.append({"type": "text", "text": text})
        else:
            continue
        ids.append(p.id)
    if parts:
        _emit(out, msg, "user", wire, ids, parts=parts)


def _tool_output(out: Projection, msg: OcMessage, p: OcPart) -> tuple[str, bool, bool] | None:
    """(output text, is_error, interrupted placeholder) of a tool part; None if it is not replayed."""
    state = p.data.get("state")
    status = state.get("status") if isinstance(state, dict) else None
    if status == "completed":
        time = state.get("time") if isinstance(state.get("time"), dict) else {}
        if time.get("compacted"):
            out.anomalies.append({"kind": "tool_output_cleared", "message": msg.id, "part": p.id})
            return CLEARED_OUTPUT, False, False
        output = state.get("output")
        return (output if isinstance(output, str) else dumps(output)), False, False
    if status == "error":
        meta = state.get("metadata") if isinstance(state.get("metadata"), dict) else {}
        if meta.get("interrupted") is True and isinstance(meta.get("output"), str):
            return meta["output"], False, False
        error = state.get("error")
        return (error if isinstance(error, str) else str(error)), True, False
    if status in ("pending", "running"):
        out.anomalies.append({"kind": "interrupted_tool", "message": msg.id, "part": p.id, "status": status})
        return INTERRUPTED_OUTPUT, True, True
    out.anomalies.append({"kind": "unknown_tool_state", "message": msg.id, "part": p.id, "status": status})
    return None


def _arguments(state: Any) -> str | None:
    value = state.get("input") if isinstance(state, dict) else None
    if value is None:
        return None
    return value if isinstance(value, str) else dumps(value)  # escaped JSON when orjson refuses (lone surrogates)


def _assistant(out: Projection, msg: OcMessage, same_model: bool) -> None:
    steps: list[list[tuple[OcPart, Any]]] = [[]]
    for p in msg.parts:
        if p.type == "step-start":
            steps.append([])
        elif p.type in ("text", "reasoning"):
            steps[-1].append((p, None))
        elif p.type == "tool":
            result = _tool_output(out, msg, p)
            if result is not None:  # OpenCode leaves out a tool part in a state it does not know
                steps[-1].append((p, result))
    steps = [s for s in steps if s]
    if not steps:
        out.anomalies.append({"kind": "step_markers_only_dropped", "message": msg.id})
        return
    for step in steps:
        _step(out, msg, step, same_model)


def _step(out: Projection, msg: OcMessage, step: list[tuple[OcPart, Any]], same_model: bool) -> None:
    parts: list[Part] = []
    calls: list[ToolCall] = []
    wire: list[dict[str, Any]] = []
    results: list[tuple[OcPart, ToolCall, tuple[str, bool, bool]]] = []
    part_of: list[str] = []
    for p, result in step:
        d = p.data
        kind = p.type
        if kind == "text" or kind == "reasoning":
            text = d.get("text")
            if not isinstance(text, str):
                text = ""
            part_of.append(p.id)
            if kind == "text":
                parts.append(Part("text", text))
                wire.append({"type": "text", "text": text})
            else:
                signed = same_model and is_signed(d)
                parts.append(Part("reasoning", text, signed=signed))
                wire.append({"type": "reasoning", "text": text, "signed": signed})
            continue
        provider_executed = _provider_executed(d)
        state = d.get("state") if isinstance(d.get("state"), dict) else {}
        call = ToolCall(str(d.get("callID") or ""), str(d.get("tool") or ""), _arguments(state), state.get("status"))
        wire.append({"type": "tool-call", "toolCallId": call.id, "toolName": call.name, "input": state.get("input")})
        if provider_executed:  # the provider ran it: its result travels inline
            part_of.append(p.id)
            parts.append(Part("other", result[0]))
            wire.append({"type": "tool-result", "toolCallId": call.id, "toolName": call.name,
                         "output": {"type": "error-text" if result[1] else "text", "value": result[0]}})
            continue
        calls.append(call)
        results.append((p, call, result))
    _emit(out, msg, "assistant", wire, [p.id for p, _ in step], part_of, parts=parts, tool_calls=calls)
    if results:
        _tool_results(out, msg, results)


def _provider_executed(data: dict[str, Any]) -> bool:
    meta = data.get("metadata")
    return isinstance(meta, dict) and bool(meta.get("providerExecuted"))


def _tool_results(out: Projection, msg: OcMessage, results: list[tuple[OcPart, ToolCall, tuple[str, bool, bool]]]) -> None:
    """One request message with every result of the step; one shared-model message per result
    (the conversation rules pair calls and results one by one), all at the same position."""
    content = [
        {"type": "tool-result", "toolCallId": call.id, "toolName": call.name,
         "output": {"type": "error-text" if err else "text", "value": text}}
        for _, call, (text, err, _) in results
    ]
    first = _emit(out, msg, "tool", content, [p.id for p, _, _ in results])
    out.messages.pop()
    for p, call, (text, err, placeholder) in results:
        out.messages.append(Message(
            role="tool", parts=[Part("text", text)], tool_call_id=call.id, is_error=err, loc=first.loc,
            position=first.position,
            extra={"message_id": msg.id, "part_ids": [p.id], "part_of": [p.id], "placeholder": placeholder}))

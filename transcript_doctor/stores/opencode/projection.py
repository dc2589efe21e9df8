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

from typing import Any

import orjson

from ...encode import dumps
from ...model import NAMED_LATER, UNPLACED, Message, Part, ToolCall, make_call, make_message, make_part
from .reader import OcMessage, OcPart

COMPACTION_PROMPT = "What did we do so far?"
SUBTASK_PROMPT = "The following tool was executed by the user"
CLEARED_OUTPUT = "[Old tool result content cleared]"
INTERRUPTED_OUTPUT = "[Tool execution was interrupted]"
_SIGNATURE_KEYS = ("signature", "redactedData", "redacted_data", "reasoningEncryptedContent", "encryptedContent")


class Projection:
    """The request OpenCode would send for one session, in two shapes built in one walk.

    `wire`: the request, position == index (built only when asked for: a scan reads `messages`
    alone). `messages`: the shared model the conversation rules read. They are not located as
    they are built (most are never named by a finding): `extra` names the OpenCode message behind
    each (`message_id`) and the part behind each of its parts (`part_of`), and the conversation's
    locator (`checks.Locator`) places one when a finding asks. `first_position` /
    `part_position` (OpenCode message / part id -> its first position) are derived from
    `messages` when first asked for: only a finding needs them.
    """

    __slots__ = ("_wire", "sent", "messages", "anomalies", "start", "_first", "_parts")

    def __init__(self, wire: bool = True) -> None:
        self._wire: list[dict[str, Any]] | None = [] if wire else None
        self.sent = 0  # request messages so far (the next one's position)
        self.messages: list[Message] = []
        self.anomalies: list[dict[str, Any]] = []
        self.start = 0  # index (in the session's messages) where the sent history starts
        self._first: dict[str, int] | None = None
        self._parts: dict[str, int] | None = None

    @property
    def wire(self) -> list[dict[str, Any]]:
        if self._wire is None:
            raise RuntimeError("this projection was built without the request: project(..., wire=True)")
        return self._wire

    @property
    def first_position(self) -> dict[str, int]:
        if self._first is None:
            first: dict[str, int] = {}
            for m in self.messages:
                first.setdefault(m.extra["message_id"], m.position)  # type: ignore[arg-type]
            self._first = first
        return self._first

    @property
    def part_position(self) -> dict[str, int]:
        """A part's first position: the step that holds it (its result, if any, comes later)."""
        if self._parts is None:
            found: dict[str, int] = {}
            for m in self.messages:
                for pid in m.extra["part_ids"]:
                    found.setdefault(pid, m.position)  # type: ignore[arg-type]
            self._parts = found
        return self._parts


def history_start(messages: list[OcMessage]) -> int:
    """Index of the first message `filterCompacted` keeps (0 when nothing was compacted)."""
    completed: set[Any] = set()  # the parents of completed summaries (most sessions have none)
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        role = msg.role
        if role == "assistant":
            info = msg.info
            if info.get("summary") and info.get("finish") and not info.get("error"):
                completed.add(info.get("parentID"))
        elif completed and role == "user" and msg.id in completed:
            part = next((p for p in msg.parts if p.type == "compaction"), None)
            if part is not None:
                tail = part.data.get("tail_start_id")
                if not isinstance(tail, str):
                    return i
                index_of = {m.id: k for k, m in enumerate(messages)}  # the last message of a repeated id
                return min(index_of.get(tail, i), i)
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
    for value in metadata.values():
        if isinstance(value, dict):
            for key in _SIGNATURE_KEYS:
                if value.get(key) is not None:
                    return True
    return False


def _skips_errored(msg: OcMessage) -> bool:
    error = msg.info.get("error")
    if not error:
        return False
    aborted = isinstance(error, dict) and error.get("name") == "MessageAbortedError"
    return not (aborted and any(p.type not in ("step-start", "reasoning") for p in msg.parts))


def project(messages: list[OcMessage], wire: bool = True) -> Projection:
    """The request for `messages`; `wire=False` leaves out its wire shape (`Projection.wire`)."""
    out = Projection(wire)
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


def _part(kind: str, text: str, signed: bool = False) -> Part:
    """A shared-model part; `part_of` names the OpenCode part behind it."""
    return make_part(kind, text, signed, None, NAMED_LATER)


def _emit(out: Projection, msg: OcMessage, role: str, content: list[dict[str, Any]] | None, part_ids: list[str],
          part_of: list[str], parts: list[Part], calls: list[ToolCall]) -> int:
    """Append one request message (wire shape) and its shared-model twin; returns its position.

    `part_ids`: the OpenCode parts behind it; `part_of`: the part id of each shared-model part.
    """
    position = out.sent
    out.sent = position + 1
    mid = msg.id
    if content is not None:
        out.wire.append({"role": role, "content": content, "origin": {"message": mid, "parts": part_ids}})
    out.messages.append(make_message(role, parts, calls, None, False, UNPLACED, position,
                                     {"message_id": mid, "part_ids": part_ids, "part_of": part_of}, NAMED_LATER))
    return position


def _user(out: Projection, msg: OcMessage) -> None:
    parts: list[Part] = []
    wire: list[dict[str, Any]] | None = [] if out._wire is not None else None
    ids: list[str] = []
    for p in msg.parts:
        d = p.data
        kind = p.type
        if kind == "text" and d.get("ignored") is not True:
            text = d.get("text")
            if not isinstance(text, str):
                text = ""
            parts.append(_part("text", text))
            if wire is not None:
                wire.append({"type": "text", "text": text})
        elif kind == "text":
            out.anomalies.append({"kind": "ignored_part_dropped", "message": msg.id, "part": p.id})
            continue
        elif kind == "file" and d.get("mime") not in ("text/plain", "application/x-directory"):
            parts.append(_part("media", ""))
            if wire is not None:
                wire.append({"type": "file", "mediaType": d.get("mime"), "filename": d.get("filename")})
        elif kind == "compaction" or kind == "subtask":
            text = COMPACTION_PROMPT if kind == "compaction" else SUBTASK_PROMPT
            parts.append(_part("text", text))
            if wire is not None:
                wire.append({"type": "text", "text": text})
        else:
            continue
        ids.append(p.id)
    if parts:
        _emit(out, msg, "user", wire, ids, ids, parts, [])


def _tool_output(out: Projection, msg: OcMessage, p: OcPart) -> tuple[str, bool, bool] | None:
    """(output text, is_error, interrupted placeholder) of a tool part; None if it is not replayed."""
    state = p.data.get("state")
    status = state.get("status") if isinstance(state, dict) else None
    if status == "completed":
        time = state.get("time")  # type: ignore[union-attr]
        if isinstance(time, dict) and time.get("compacted"):
            out.anomalies.append({"kind": "tool_output_cleared", "message": msg.id, "part": p.id})
            return CLEARED_OUTPUT, False, False
        output = state.get("output")  # type: ignore[union-attr]
        return (output if isinstance(output, str) else dumps(output)), False, False
    if status == "error":
        meta = state.get("metadata") if isinstance(state.get("metadata"), dict) else {}  # type: ignore[union-attr]
        if meta.get("interrupted") is True and isinstance(meta.get("output"), str):
            return meta["output"], False, False
        error = state.get("error")  # type: ignore[union-attr]
        return (error if isinstance(error, str) else str(error)), True, False
    if status in ("pending", "running"):
        out.anomalies.append({"kind": "interrupted_tool", "message": msg.id, "part": p.id, "status": status})
        return INTERRUPTED_OUTPUT, True, True
    out.anomalies.append({"kind": "unknown_tool_state", "message": msg.id, "part": p.id, "status": status})
    return None


def _arguments(state: Any) -> str | None:
    """The call's arguments as the shared rules read them: the input when it is stored as text, and
    the JSON encoding of any other input that orjson cannot encode (a lone surrogate, an integer
    beyond 64 bits: `encode.dumps` then escapes it). None for the rest: orjson's encoding of it is
    valid JSON with no NUL or surrogate in its text, so F507 and F508 could find nothing in it, and
    a scan neither keeps the text nor parses it again (`tests/opencode/test_scan_paths.py` checks
    that the rules say the same as they do of the encoding)."""
    value = state.get("input") if isinstance(state, dict) else None
    if value is None or value.__class__ is str:
        return value
    try:
        orjson.dumps(value)
    except orjson.JSONEncodeError:
        return dumps(value)
    return None


def _assistant(out: Projection, msg: OcMessage, same_model: bool) -> None:
    """The AI SDK's split of one assistant message: one request message per step (each step-start
    begins a new one), each followed by the results of its calls."""
    step: list[OcPart] = []
    emitted = False
    for p in msg.parts:
        kind = p.type
        if kind == "text" or kind == "reasoning" or kind == "tool":
            step.append(p)
        elif kind == "step-start" and step:
            emitted = _step(out, msg, step, same_model) or emitted
            step = []
    if step:
        emitted = _step(out, msg, step, same_model) or emitted
    if not emitted:
        out.anomalies.append({"kind": "step_markers_only_dropped", "message": msg.id})


def _step(out: Projection, msg: OcMessage, step: list[OcPart], same_model: bool) -> bool:
    """Emit the request message of one step (its text, reasoning and tool parts) and its tool
    results; False, emitting nothing, when none of its parts is replayed."""
    parts: list[Part] = []
    calls: list[ToolCall] = []
    wire: list[dict[str, Any]] | None = [] if out._wire is not None else None
    results: list[tuple[OcPart, ToolCall, tuple[str, bool, bool]]] = []
    part_of: list[str] = []
    ids: list[str] = []
    for p in step:
        d = p.data
        kind = p.type
        if kind != "tool":  # text or reasoning
            text = d.get("text")
            if not isinstance(text, str):
                text = ""
            pid = p.id
            ids.append(pid)
            part_of.append(pid)
            if kind == "text":
                parts.append(make_part("text", text, False, None, NAMED_LATER))  # `_part`, written out: the hot path
                if wire is not None:
                    wire.append({"type": "text", "text": text})
            else:
                signed = same_model and is_signed(d)
                parts.append(make_part("reasoning", text, signed, None, NAMED_LATER))
                if wire is not None:
                    wire.append({"type": "reasoning", "text": text, "signed": signed})
            continue
        result = _tool_output(out, msg, p)
        if result is None:  # OpenCode leaves out a tool part in a state it does not know
            continue
        ids.append(p.id)
        state = d["state"]  # a tool part with a result has a state object
        call = make_call(str(d.get("callID") or ""), str(d.get("tool") or ""), _arguments(state), state.get("status"))
        if wire is not None:
            wire.append({"type": "tool-call", "toolCallId": call.id, "toolName": call.name, "input": state.get("input")})
        if _provider_executed(d):  # the provider ran it: its result travels inline
            part_of.append(p.id)
            parts.append(_part("other", result[0]))
            if wire is not None:
                wire.append({"type": "tool-result", "toolCallId": call.id, "toolName": call.name,
                             "output": {"type": "error-text" if result[1] else "text", "value": result[0]}})
            continue
        calls.append(call)
        results.append((p, call, result))
    if not ids:
        return False
    position = _emit(out, msg, "assistant", wire, ids, part_of, parts, calls)
    if results:
        _tool_results(out, msg, position, results)
    return True


def _provider_executed(data: dict[str, Any]) -> bool:
    meta = data.get("metadata")
    return isinstance(meta, dict) and bool(meta.get("providerExecuted"))


def _tool_results(out: Projection, msg: OcMessage, position: int,
                  results: list[tuple[OcPart, ToolCall, tuple[str, bool, bool]]]) -> None:
    """One request message with every result of the step; one shared-model message per result
    (the conversation rules pair calls and results one by one), all at the same position."""
    mid = msg.id
    out.sent += 1
    if out._wire is not None:
        content = [
            {"type": "tool-result", "toolCallId": call.id, "toolName": call.name,
             "output": {"type": "error-text" if err else "text", "value": text}}
            for _, call, (text, err, _) in results
        ]
        out._wire.append({"role": "tool", "content": content, "origin": {"message": mid, "parts": [p.id for p, _, _ in results]}})
    for p, call, (text, err, placeholder) in results:
        ids = [p.id]
        out.messages.append(make_message(
            "tool", [make_part("text", text, False, None, NAMED_LATER)], [], call.id, err, UNPLACED, position + 1,
            {"message_id": mid, "part_ids": ids, "part_of": ids, "placeholder": placeholder}, NAMED_LATER))

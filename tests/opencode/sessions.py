"""Hypothesis strategies for OpenCode sessions as the reader hands them over (no tests here).

Sessions mix users and assistants (some errored, aborted, from another model, compacted), parts
of every kind the projection reads (signed reasoning, provider-executed and compacted tools,
ignored and synthetic text, finish reasons of every shape, files, compaction and subtask markers, step markers, placeholders), and ids that
repeat when `repeat_ids` is drawn (a damaged store or a hand-edited export).
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from transcript_doctor.model import Loc
from transcript_doctor.stores.opencode.reader import OcMessage, OcPart, OcSession

TOOL_STATES = ["pending", "running", "completed", "error", "weird"]
_TEXT = st.sampled_from(["", " ", "hi", "Empty response: {'stop_reason': 'end_turn'}", "\u00a0"])


def _tool(status: str, provider: bool, compacted: bool, interrupted: bool) -> dict[str, Any]:
    state: dict[str, Any] = {"status": status, "input": {"command": "ls"} if status != "weird" else "raw"}
    if status == "completed":
        state.update(output="ok" if not compacted else {"o": 1}, time={"start": 1, "compacted": 2} if compacted else {})
    elif status == "error":
        state.update(error="boom", metadata={"interrupted": True, "output": "half"} if interrupted else {})
    part: dict[str, Any] = {"type": "tool", "callID": "call_x", "tool": "bash", "state": state}
    if provider:
        part["metadata"] = {"providerExecuted": True}
    return part


TEXT_PART = st.builds(lambda t, ig, syn: {"type": "text", "text": t, **({"ignored": True} if ig else {}),
                                         **({"synthetic": True} if syn else {})}, _TEXT, st.booleans(), st.booleans())
PART_DATA = st.one_of(
    st.just({"type": "step-start"}),
    st.builds(lambda r: {"type": "step-finish", "reason": r}, st.sampled_from(["stop", "tool-calls", " ", "unknown"])),
    TEXT_PART,
    st.builds(lambda t, sig: {"type": "reasoning", "text": t, **({"metadata": {"anthropic": {"signature": "s"}}} if sig else {})},
              _TEXT, st.booleans()),
    st.builds(_tool, st.sampled_from(TOOL_STATES), st.booleans(), st.booleans(), st.booleans()),
    st.sampled_from([{"type": "file", "mime": "image/png", "filename": "a.png"}, {"type": "file", "mime": "text/plain"},
                     {"type": "compaction"}, {"type": "subtask"}, {"type": "patch"}, {"type": 3}, {"text": "untyped"}]),
)
_ERROR = st.sampled_from([None, {"name": "APIError", "data": {"message": "x"}}, {"name": "MessageAbortedError"}, "text"])
_MODEL = st.sampled_from(["claude-sonnet-5", "gpt-6"])
ABSENT = object()
FINISH = st.sampled_from(["stop", "stop", "end_turn", "length", "tool-calls", "", " ", " Stop\u00a0", None, 1, ABSENT])


def _info(is_user: bool, error: Any, model: str, completed: bool, parent: int | None, finish: Any) -> dict[str, Any]:
    if is_user:
        return {"role": "user", "model": {"providerID": "anthropic", "modelID": model}}
    info: dict[str, Any] = {"role": "assistant", "providerID": "anthropic", "modelID": model,
                            "time": {"created": 1, **({"completed": 2} if completed else {})},
                            "tokens": {"input": 0, "output": 0, "cache": {"read": 0}}, "cost": 0}
    if finish is not ABSENT:
        info["finish"] = finish
    if parent is not None:
        info["parentID"] = f"m{parent}"
    if error is not None:
        info["error"] = error
    return info


MESSAGE_SPEC = st.tuples(st.booleans(), st.lists(PART_DATA, max_size=7), _ERROR, _MODEL, st.booleans(),
                         st.one_of(st.none(), st.integers(0, 6)), FINISH)


@st.composite
def sessions(draw: Any, repeat_ids: bool | None = None) -> OcSession:
    """An `OcSession` of DB rows (located by table and row), ids unique unless repeats are drawn."""
    specs = draw(st.lists(MESSAGE_SPEC, max_size=8))
    repeat = draw(st.booleans()) if repeat_ids is None else repeat_ids
    session = OcSession("ses_h")
    for n, (is_user, parts, error, model, completed, parent, finish) in enumerate(specs):
        mid = f"m{draw(st.integers(0, 2)) if repeat else n}"
        msg = OcMessage(mid, "ses_h", _info(is_user, error, model, completed, parent, finish),
                        loc=Loc(None, None, mid, "message"))
        for i, data in enumerate(parts):
            pid = f"p{n}_{draw(st.integers(0, 1)) if repeat else i}"
            msg.parts.append(OcPart(pid, mid, {**data, "id": pid}, Loc(None, None, pid, "part")))
        session.messages.append(msg)
    return session


_FINAL_PART = st.sampled_from([
    {"type": "text", "text": "hi"}, {"type": "text", "text": " hi\u00a0"}, {"type": "text", "text": "\u00a0 "},
    {"type": "text", "text": "Empty response: {'stop_reason': 'end_turn'}"}, {"type": "text", "text": "x", "synthetic": True},
    {"type": "text", "text": "x", "ignored": True}, {"type": "text", "text": 7}, {"type": "text"},
    {"type": "step-start"}, {"type": "step-finish", "reason": "stop"}, {"type": "step-finish", "reason": "length"},
    {"type": "step-finish", "reason": " "}, {"type": "step-finish"}, {"type": "reasoning", "text": "think"},
    {"type": "tool", "callID": "c", "tool": "bash", "state": {"status": "completed", "output": "ok"}}, {"type": "patch"},
])


def single_run(answers: list[tuple[Any, bool, Any, list[dict[str, Any]]]]) -> OcSession:
    """A prompt and the assistant messages answering it, each given as (error, completed, finish,
    part data); `finish` may be `ABSENT`."""
    session = OcSession("ses_r")
    session.messages.append(OcMessage("u", "ses_r", _info(True, None, "m", True, None, "stop")))
    for n, (error, completed, finish, parts) in enumerate(answers):
        info = _info(False, error, "m", completed, None, finish)
        info["parentID"] = "u"
        msg = OcMessage(f"a{n}", "ses_r", info)
        msg.parts.extend(OcPart(f"p{n}_{i}", msg.id, data) for i, data in enumerate(parts))
        session.messages.append(msg)
    return session


@st.composite
def single_runs(draw: Any) -> OcSession:
    """`single_run` drawn: finals of every shape, most of them completed, unerrored and holding
    text (the verdict's one-pass path)."""
    answer = st.tuples(st.sampled_from([None, None, None, {"name": "APIError"}, "text", {}]),
                       st.sampled_from([True, True, True, False]), FINISH, st.lists(_FINAL_PART, max_size=5))
    return single_run(draw(st.lists(answer, min_size=1, max_size=3)))

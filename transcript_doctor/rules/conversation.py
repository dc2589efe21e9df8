"""Store-independent checks over the request a runtime would send (a list of `model.Message`).

Stores rebuild the conversation their runtime would replay, in order, and call
`conversation_findings(messages, make=...)`. The checks here decide *what* is wrong; the store's
`make` callback decides *where* it is (path, session, line/row, position) and *how* to fix it:

    make(code, message_text, msg, severity=None, fix=None, evidence=None) -> Finding

Codes reported: W101-W109, F507, F508. A store passes `codes=` to run only the ones that fit its
runtime (for example, a runtime that merges consecutive assistants does not want W109).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..model import Finding, Message, Part
from ..text import excerpt, is_blank

Make = Callable[..., Finding]

ALL_CODES = frozenset(
    {"W101", "W102", "W103", "W104", "W105", "W106", "W107", "W108", "W109", "F507", "F508"}
)
# A tool result a runtime writes when a call was cut off; a real result for the same call wins.
_BAD_CHAR = re.compile("[\x00\ud800-\udfff]")  # a character class: linear, no backtracking
_PLACEHOLDER_WORDS = ("interrupted", "outcome unknown", "no result provided", "was cancelled", "aborted")


# --------------------------------------------------------------------------- predicates


def part_is_vacuous(part: Part) -> bool:
    """Blank text, or unsigned reasoning with blank text. Media and other parts carry content."""
    if part.kind == "text":
        return is_blank(part.text)
    if part.kind == "reasoning":
        return not part.signed and is_blank(part.text)
    return False


def is_vacuous(msg: Message, *, empty_parts_vacuous: bool = True) -> bool:
    """An assistant message the provider rejects as empty (W101's test).

    `msg.extra["not_vacuous"]` lets a store veto the verdict (e.g. content kept out of the parts).
    """
    if msg.role != "assistant" or msg.tool_calls or msg.extra.get("not_vacuous"):
        return False
    if not msg.parts:
        return empty_parts_vacuous
    return all(part_is_vacuous(p) for p in msg.parts)


def is_placeholder_result(msg: Message) -> bool:
    """A synthetic 'interrupted / outcome unknown' tool result (stores may flag it in `extra`)."""
    if "placeholder" in msg.extra:
        return bool(msg.extra["placeholder"])
    if not msg.is_error:
        return False
    text = msg.visible_text.lower()
    return len(text) <= 300 and any(w in text for w in _PLACEHOLDER_WORDS)


def encoding_problem(text: str) -> tuple[str, int] | None:
    """('nul' | 'lone-surrogate', index) for the first character a JSON parser rejects."""
    m = _BAD_CHAR.search(text)
    if m is None:
        return None
    return ("nul" if m.group() == "\x00" else "lone-surrogate", m.start())


def arguments_error(arguments: str | None) -> str | None:
    """Why tool-call arguments are not valid JSON; None when they parse (or are absent/blank)."""
    if arguments is None or is_blank(arguments):
        return None
    try:
        orjson.loads(arguments)
    except orjson.JSONDecodeError as exc:
        return str(exc)
    except TypeError:
        return "not a string"
    return None


# --------------------------------------------------------------------------- checks


def _describe(msg: Message) -> str:
    where = f"request position {msg.position}" if msg.position is not None else "a message not sent"
    return f"{msg.role} message at {where}"


def check_vacuous(messages: list[Message], make: Make, empty_parts_vacuous: bool) -> Iterator[Finding]:
    for msg in messages:
        if is_vacuous(msg, empty_parts_vacuous=empty_parts_vacuous):
            kinds = [p.kind for p in msg.parts]
            detail = "has no content" if not kinds else "has only empty " + "/".join(sorted(set(kinds))) + " parts"
            yield make(
                "W101",
                f"{_describe(msg)} {detail} and no tool calls; the provider rejects it as empty",
                msg,
                evidence={"parts": kinds, "tool_calls": 0},
            )


def check_blank_parts(messages: list[Message], make: Make, empty_parts_vacuous: bool) -> Iterator[Finding]:
    for msg in messages:
        if not any(p.kind == "text" and is_blank(p.text) for p in msg.parts):
            continue
        if is_vacuous(msg, empty_parts_vacuous=empty_parts_vacuous):
            continue  # the whole message is W101
        has_other = bool(msg.tool_calls) or any(not part_is_vacuous(p) for p in msg.parts)
        if not has_other:
            continue
        for index, part in enumerate(msg.parts):
            if part.kind == "text" and is_blank(part.text):
                yield make(
                    "W102",
                    f"{_describe(msg)} has a blank text part (index {index}) beside other content",
                    msg,
                    evidence={"part_index": index, "text": excerpt(part.text)},
                )


@dataclass
class _CallSite:
    index: int  # index in `messages` of the assistant message carrying the call
    name: str
    position: int | None = None
    answered_by: int | None = None  # index of the tool message that answers it


@dataclass
class _Pairing:
    calls: dict[str, _CallSite] = field(default_factory=dict)


def check_tool_pairing(messages: list[Message], make: Make, codes: frozenset[str]) -> Iterator[Finding]:
    """W103-W107: every call answered once, right after it; every result answers a call."""
    state = _Pairing()
    for i, msg in enumerate(messages):
        if msg.role == "assistant":
            yield from _register_calls(msg, i, state, make, codes)
        elif msg.role == "tool":
            yield from _match_result(messages, msg, i, state, make, codes)
    if "W103" in codes:
        yield from _unanswered(messages, make)


def _register_calls(msg: Message, i: int, state: _Pairing, make: Make, codes: frozenset[str]) -> Iterator[Finding]:
    for k, call in enumerate(msg.tool_calls):
        if call.id in state.calls:
            if "W105" in codes:
                first = state.calls[call.id]
                yield make(
                    "W105",
                    f"{_describe(msg)} reuses tool call id {call.id!r} (first issued at position {first.position})",
                    msg,
                    evidence={"tool_call_id": call.id, "call_index": k, "tool_name": call.name,
                              "first_position": first.position},
                )
            continue
        state.calls[call.id] = _CallSite(i, call.name, msg.position)


def _match_result(
    messages: list[Message], msg: Message, i: int, state: _Pairing, make: Make, codes: frozenset[str]
) -> Iterator[Finding]:
    call_id = msg.tool_call_id or ""
    site = state.calls.get(call_id)
    if site is None:
        if "W104" in codes:
            yield make(
                "W104",
                f"tool result at request position {msg.position} answers {call_id!r}, which no earlier call issued",
                msg,
                evidence={"tool_call_id": call_id},
            )
        return
    if site.answered_by is not None:
        earlier = messages[site.answered_by]
        # A real result replaces an "interrupted" placeholder; otherwise the later copy goes.
        target, kept = (earlier, i) if is_placeholder_result(earlier) and not is_placeholder_result(msg) else (msg, site.answered_by)
        if "W106" in codes:
            yield make(
                "W106",
                f"second tool result for call {call_id!r}; the one at request position {messages[kept].position} is kept",
                target,
                evidence={"tool_call_id": call_id, "kept_position": messages[kept].position,
                          "dropped_placeholder": target is earlier},
            )
        site.answered_by = kept
        return
    site.answered_by = i
    between = [m for m in messages[site.index + 1 : i] if m.role != "tool"]
    if between and "W107" in codes:
        yield make(
            "W107",
            f"tool result for {call_id!r} is separated from its call by {len(between)} non-tool message(s)",
            msg,
            evidence={"tool_call_id": call_id, "call_position": site.position,
                      "separating_roles": [m.role for m in between]},
        )


def _unanswered(messages: list[Message], make: Make) -> Iterator[Finding]:
    """W103: a call with no result among the tool messages that directly follow it."""
    seen: set[str] = set()
    for i, msg in enumerate(messages):
        if msg.role != "assistant" or not msg.tool_calls:
            continue
        j = i + 1
        answered: set[str] = set()
        while j < len(messages) and messages[j].role == "tool":
            answered.add(messages[j].tool_call_id or "")
            j += 1
        trailing = j >= len(messages)
        for call in msg.tool_calls:
            if call.id in answered or call.id in seen:
                continue
            seen.add(call.id)
            where = "at the end of the history" if trailing else f"before the next {messages[j].role} message"
            yield make(
                "W103",
                f"tool call {call.id!r} ({call.name or 'unnamed'}) in {_describe(msg)} has no result {where}",
                msg,
                evidence={"tool_call_id": call.id, "tool_name": call.name,
                          "where": "trailing" if trailing else "mid-history",
                          "next_role": None if trailing else messages[j].role},
            )


def check_leading(messages: list[Message], make: Make) -> Iterator[Finding]:
    body = [m for m in messages if m.role not in ("system", "developer")]
    if not body or body[0].role == "user":
        return
    before = next((k for k, m in enumerate(body) if m.role == "user"), len(body))
    yield make(
        "W108",
        f"the history starts with a {body[0].role} message, not a user message",
        body[0],
        evidence={"first_role": body[0].role, "messages_before_first_user": before},
    )


def check_consecutive_assistants(messages: list[Message], make: Make) -> Iterator[Finding]:
    for prev, msg in zip(messages, messages[1:]):
        if prev.role == "assistant" and msg.role == "assistant":
            yield make(
                "W109",
                f"{_describe(msg)} directly follows another assistant message",
                msg,
                evidence={"previous_position": prev.position},
            )


def _texts(msg: Message) -> Iterator[tuple[str, str]]:
    for index, part in enumerate(msg.parts):
        yield f"parts[{index}]", part.text
    for index, call in enumerate(msg.tool_calls):
        if call.arguments:
            yield f"tool_calls[{index}].arguments", call.arguments
        if call.name:
            yield f"tool_calls[{index}].name", call.name


def _has_bad_char(msg: Message) -> bool:
    search = _BAD_CHAR.search
    return any(search(p.text) for p in msg.parts) or any(
        search(c.arguments or "") or search(c.name) for c in msg.tool_calls
    )


def _escaped(text: str) -> str:
    return excerpt(text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00"))


def check_encoding(messages: list[Message], make: Make) -> Iterator[Finding]:
    for msg in messages:
        if not _has_bad_char(msg):
            continue
        for where, text in _texts(msg):
            problem = encoding_problem(text)
            if problem:
                kind, offset = problem
                label = "a NUL byte" if kind == "nul" else "a lone UTF-16 surrogate"
                yield make(
                    "F507",
                    f"{_describe(msg)} has {label} in {where} (offset {offset}); the request is not valid JSON",
                    msg,
                    evidence={"field": where, "problem": kind, "offset": offset,
                              "text": _escaped(text[max(0, offset - 40) : offset + 40])},
                )
                break  # one finding per message


def check_arguments(messages: list[Message], make: Make) -> Iterator[Finding]:
    for msg in messages:
        for index, call in enumerate(msg.tool_calls):
            error = arguments_error(call.arguments)
            if error:
                yield make(
                    "F508",
                    f"arguments of tool call {call.id!r} ({call.name or 'unnamed'}) are not valid JSON",
                    msg,
                    evidence={"tool_call_id": call.id, "call_index": index, "error": excerpt(error),
                              "arguments": excerpt(call.arguments or "")},
                )


# --------------------------------------------------------------------------- entry point


def conversation_findings(
    messages: Iterable[Message],
    *,
    make: Make,
    codes: Iterable[str] | None = None,
    empty_parts_vacuous: bool = True,
) -> Iterator[Finding]:
    """Every store-independent finding over `messages` (the request, in order)."""
    msgs = list(messages)
    wanted = ALL_CODES if codes is None else frozenset(codes) & ALL_CODES
    if "W101" in wanted:
        yield from check_vacuous(msgs, make, empty_parts_vacuous)
    if "W102" in wanted:
        yield from check_blank_parts(msgs, make, empty_parts_vacuous)
    if wanted & {"W103", "W104", "W105", "W106", "W107"}:
        yield from check_tool_pairing(msgs, make, wanted)
    if "W108" in wanted:
        yield from check_leading(msgs, make)
    if "W109" in wanted:
        yield from check_consecutive_assistants(msgs, make)
    if "F507" in wanted:
        yield from check_encoding(msgs, make)
    if "F508" in wanted:
        yield from check_arguments(msgs, make)


def simple_make(path: str, format: str, session: str | None = None) -> Make:
    """A `make` that fills location from `msg.loc` and `msg.position`; handy for stores and tests."""
    from .registry import finding

    def make(code: str, message_text: str, msg: Message, severity: Any = None, fix: Any = None,
             evidence: dict[str, Any] | None = None) -> Finding:
        return finding(
            code, message_text, path=path, format=format, severity=severity, fix=fix,
            session=session, line=msg.loc.line, end_line=msg.loc.end_line, row=msg.loc.row,
            table=msg.loc.table, position=msg.position, evidence=evidence or {},
        )

    return make

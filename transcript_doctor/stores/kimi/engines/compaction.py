"""Compaction shapes shared by both kimi-code engines: token estimate, user-message selection,
summary and elision messages, and the transcript's `foldedLength` recovery."""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable
from itertools import accumulate, compress, repeat
from operator import not_
from typing import Any

from ....value_types import Value
from ..read.js_stringify import js_stringify
from .messages import call_arguments

MAX_USER_TOKENS = 20000
HEAD_USER_TOKENS = 2000
MEDIA_TOKENS = 2000
ELISION_VARIANT = "compaction_elision"
NO_SUMMARY = "(no summary available)"
Msg = dict[str, Any]


# --------------------------------------------------------------------------- predicates


def origin_kind(m: Msg) -> str | None:
    origin = m.get("origin")
    return origin.get("kind") if isinstance(origin, dict) else None


def is_injection(m: Msg) -> bool:
    return origin_kind(m) == "injection"


def is_real_user_input(m: Msg) -> bool:
    """The undo anchor: a prompt a person typed (or a slash command they ran)."""
    if m.get("role") != "user":
        return False
    origin = m.get("origin")
    if not isinstance(origin, dict):
        return True
    kind = origin.get("kind")
    if kind is None or kind == "user":
        return True
    return kind in ("skill_activation", "plugin_command") and origin.get("trigger") == "user-slash"


def compactable_users(messages: list[Msg], start: int = 0) -> list[Msg]:
    """The messages from `start` on that a kept-users compaction can keep, in order: real user
    input (which is never a compaction summary). History messages are dicts, and few of them
    are users: their roles are read in one C-level pass and only the users are looked at, the
    commonest (a prompt whose origin says `user`) without a call of `is_real_user_input`."""
    segment = messages[start:] if start else messages
    roles = list(map(dict.get, segment, repeat("role")))
    users: list[Msg] = []
    i = -1
    for _ in range(roles.count("user")):
        i = roles.index("user", i + 1)
        m = segment[i]
        origin = m.get("origin")
        if (origin.__class__ is dict and origin.get("kind") == "user") or is_real_user_input(m):
            users.append(m)
    return users


class KeptUsers:
    """The compactable users a live history's last compaction left before its summary.

    A compaction puts its summary at a known place (first in the legacy shape, last in the
    kept-users shape), after the users it kept. Nothing is ever inserted before it and an undo
    stops at it (or takes it too), so while that place still holds that summary the users
    before it are the ones remembered, and a later compaction walks only what follows it.
    """

    __slots__ = ("summary", "at", "users")

    def __init__(self) -> None:
        self.summary: Msg | None = None
        self.at = 0
        self.users: list[Msg] = []

    def users_of(self, history: list[Msg]) -> list[Msg]:
        """`compactable_users(history)`."""
        at = self.at
        if self.summary is not None and len(history) > at and history[at] is self.summary:
            return self.users + compactable_users(history, at + 1)
        return compactable_users(history)

    def remember(self, shape: list[Msg], at: int, kept: list[Msg]) -> None:
        """A compaction made `shape`, its summary at `at`, keeping the users `kept` before it."""
        summary = shape[at]
        self.summary, self.at, self.users = summary, at, kept + compactable_users([summary])


# --------------------------------------------------------------------------- token estimate


def est_text(text: str) -> int:
    ascii_count = len(text) if text.isascii() else len(text.encode("ascii", "ignore"))
    return -(-ascii_count // 4) + (len(text) - ascii_count)


def est_part(part: Any) -> int:
    if not isinstance(part, dict):
        return 0
    kind = part.get("type")
    if kind == "text":
        return est_text(_str(part.get("text")))
    if kind == "think":
        return est_text(_str(part.get("think")))
    if kind in ("image_url", "audio_url", "video_url"):
        return MEDIA_TOKENS
    return 0


def est_message(m: Msg) -> int:
    """The token estimate of a message (cached on user messages under the private key `_est`)."""
    cached = m.get("_est")
    if cached is not None:
        return cached
    total = est_text(_str(m.get("role")))
    for part in m.get("content") or ():
        total += est_part(part)
    for call in m.get("toolCalls") or ():
        if isinstance(call, dict):
            total += est_text(_str(call.get("name"))) + est_text(js_stringify(call_arguments(call)))
    if m.get("role") == "user":  # appended user messages never change; a step's content still grows
        m["_est"] = total
    return total


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


# --------------------------------------------------------------------------- truncation


def _text_of(m: Msg) -> str:
    return "".join(_str(p.get("text")) for p in m.get("content") or () if isinstance(p, dict) and p.get("type") == "text")


def _prefix_within(text: str, budget: int) -> str:
    """The longest beginning of `text` whose estimate stays within `budget`."""
    if text.isascii():  # ceil(n / 4) <= budget  <=>  n <= 4 * budget
        return text[: max(budget, 0) * 4]
    ascii_count = other = 0
    for i, ch in enumerate(text):
        if ord(ch) <= 127:
            ascii_count += 1
        else:
            other += 1
        if -(-ascii_count // 4) + other > budget:
            return text[:i]
    return text


def _suffix_within(text: str, budget: int) -> str:
    """The longest end of `text` whose estimate stays within `budget`."""
    return _prefix_within(text[::-1], budget)[::-1]


def truncated(m: Msg, text: str) -> Msg:
    copy = dict(m)
    copy.pop("_est", None)
    copy["content"] = [{"type": "text", "text": text}]
    copy["toolCalls"] = []
    return copy


# --------------------------------------------------------------------------- selection


class Selection(Value):
    """The messages a compaction keeps: the oldest (`head`), the newest (`tail`), and whether
    (`elided`) and how many (`omitted`) it left out between them."""

    __slots__ = ("head", "tail", "elided", "omitted")

    def __init__(self, head: list[Msg] | None = None, tail: list[Msg] | None = None, elided: bool = False,
                 omitted: int = 0) -> None:  # fmt: skip
        self.head: list[Msg] = [] if head is None else head
        self.tail: list[Msg] = [] if tail is None else tail
        self.elided = elided
        self.omitted = omitted


def costs_of(messages: list[Msg]) -> list[int]:
    """Each message's token estimate: the cached ones (`_est`, users) read in one C-level pass,
    the rest worked out (`m.get("_est") or est_message(m)`, message by message)."""
    costs = list(map(dict.get, messages, repeat("_est")))
    if not all(costs):
        for i in compress(range(len(costs)), map(not_, costs)):
            costs[i] = est_message(messages[i])
    return costs


def _newest_within(costs: list[int], budget: int) -> tuple[int, int]:
    """A walk from the newest message that takes each whole message while the budget lasts:
    (how many it takes whole, the budget left for the next one, which it cuts). From the
    running totals of the newest messages: estimates are never negative, so the totals rise."""
    newest = list(accumulate(reversed(costs)))
    k = bisect_left(newest, budget)  # the first total that reaches the budget
    if k < len(newest) and newest[k] == budget:
        return k + 1, 0  # that one fits exactly: nothing is left to cut the next with
    return k, budget - (newest[k - 1] if k else 0)


def select_recent(messages: list[Msg], budget: int = MAX_USER_TOKENS) -> list[Msg]:
    """Tail-only selection: newest first while budget remains; the boundary keeps its beginning.
    (The walk of `select_oldest` over the reversed list, from running totals.)"""
    if budget <= 0:
        return []
    whole, left = _newest_within(costs_of(messages), budget)
    n = len(messages)
    if whole >= n or left <= 0:
        return messages[n - whole:] if whole else []
    boundary = messages[n - whole - 1]
    return [truncated(boundary, _prefix_within(_text_of(boundary), left)), *messages[n - whole:]]


def select_head_tail(
    messages: list[Msg], budget: int = MAX_USER_TOKENS, head_budget: int = HEAD_USER_TOKENS
) -> Selection:
    """Head/tail selection: the oldest input and the most recent, with the middle elided."""
    costs = costs_of(messages)
    total = sum(costs)
    if total <= budget:
        return Selection(tail=list(messages))
    tail, candidates = _tail_and_rest(messages, costs, budget - head_budget)
    head = select_oldest(candidates, head_budget)
    kept = sum(costs_of(head + tail))
    return Selection(head=head, tail=tail, elided=True, omitted=max(0, total - kept))


def _tail_and_rest(messages: list[Msg], costs: list[int], budget: int) -> tuple[list[Msg], list[Msg]]:
    """The newest messages within `budget` (the boundary keeps its end), and what is left for the
    head: the older messages, and the boundary's cut-off beginning when it is non-empty
    (docs/kimi-code.md §Compaction: a boundary whose whole text fits but whose media do not adds
    nothing)."""
    if budget <= 0:
        return [], list(messages)
    whole, left = _newest_within(costs, budget)
    n = len(messages)
    b = n - whole - 1  # the boundary (total > budget: there is one unless a total fit exactly)
    if b < 0:  # all of them fit (a head budget below zero leaves the tail more than the whole budget)
        return list(messages), []
    if left <= 0:
        return messages[b + 1:], messages[: b + 1]
    text = _text_of(messages[b])
    end = _suffix_within(text, left)
    rest = text[: len(text) - len(end)]
    candidates = [*messages[:b], truncated(messages[b], rest)] if rest else messages[:b]
    return [truncated(messages[b], end), *messages[b + 1:]], candidates


def select_oldest(messages: list[Msg], budget: int) -> list[Msg]:
    picked: list[Msg] = []
    remaining = budget
    for m in messages:
        if remaining <= 0:
            break
        cost = m.get("_est") or est_message(m)
        if cost <= remaining:
            picked.append(m)
            remaining -= cost
        else:
            picked.append(truncated(m, _prefix_within(_text_of(m), remaining)))
            break
    return picked


# --------------------------------------------------------------------------- messages


def summary_message(text: Any) -> Msg:
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "toolCalls": [],
        "origin": {"kind": "compaction_summary"},
    }


def elision_message(omitted: int) -> Msg:
    text = (
        "<system-reminder>\nSome of this conversation's user messages were omitted here during compaction: "
        "the messages above this note are the oldest user input, the messages below are the most recent, "
        f"and roughly {omitted} tokens in between were dropped. The omitted content is covered by the "
        "compaction summary at the end of the conversation.\n</system-reminder>"
    )
    return {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "toolCalls": [],
        "origin": {"kind": "injection", "variant": ELISION_VARIANT},
    }


def live_summary(record: Msg) -> Any:
    """Live folds read `contextSummary ?? summary` (whatever it is)."""
    value = record.get("contextSummary")
    return record.get("summary") if value is None else value


def live_summary_text(record: Msg) -> str:
    value = live_summary(record)
    return value if isinstance(value, str) else ""


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def kept_users_shape(selection: Selection, summary: Msg) -> list[Msg]:
    out = list(selection.head)
    if selection.elided:
        out.append(elision_message(selection.omitted))
    out.extend(selection.tail)
    out.append(summary)
    return out


def slice_start(start: Any, length: int) -> int:
    """Where JS `array.slice(start)` begins for a numeric `start` (negative counts from the end)."""
    if not is_number(start) or math.isnan(start):
        return 0
    if start >= length:
        return length
    if start < 0:
        return max(length + int(start), 0) if start > -length else 0
    return int(start)


def recover_folded_length(record: Msg, users_since_clear: Callable[[], list[Msg]], folded: int,
                          v1: bool = False) -> int:
    """The live length a transcript believes follows a compaction record (same in v1 and v2).
    `users_since_clear` is only called when the record's counts do not decide it. v1 tests the
    kept counts against `undefined` (a JSON null is present: `null + 1` is 1); v2 skips a record
    with a null count before it gets here."""
    kept = record.get("keptUserMessageCount")
    if v1 and "keptUserMessageCount" in record and (kept is None or is_number(kept)):
        return int(kept or 0) + (1 if "keptHeadUserMessageCount" not in record else 2)
    if is_number(kept):
        return int(kept) + (1 if record.get("keptHeadUserMessageCount") is None else 2)
    count = record.get("compactedCount")
    if is_number(count) and count < folded:
        return int(1 + (folded - count))
    return len(select_recent(users_since_clear())) + 1

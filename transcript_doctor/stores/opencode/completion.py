"""Is a run's final assistant message a real answer, an empty completion, or no final answer at all?

The decision of docs/opencode.md §4 (the opencode-telegram-bot empty-completion policy),
over plain MessageV2 `info` dicts and part dicts:

* Evidence per message: the five token counts and the cost, each *unknown* unless it is a finite
  number (unknown never counts as zero, so the retry check fails closed); the finish reason
  (`info.finish` if non-blank, else the last `step-finish` part's non-blank `reason`); tool
  activity (any `tool` part) and reasoning activity (any `reasoning` part).
* Evidence of a run: merged over its assistant messages in order. The first message's tokens and
  cost are taken as they are; afterwards a field stays known only while every message knew it
  (sums); the finish reason is the latest known one; activity flags are OR-ed.
* Visible text: non-synthetic, non-ignored text parts, minus upstream empty-response
  placeholders (a part starting `Empty response: {'` that contains `'stop_reason'`).
* Final message errored: never T401/T402, it is T403. Empty visible text: T401 when every token
  count and the cost are known zeros, nothing ran, and the finish reason is missing or one of
  unknown/invalid/none/null (trimmed, lower-cased); otherwise T402. Text: a real answer only with
  no tool activity and a finish reason on the terminal allowlist, else T403.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ...text import is_blank, js_trim

TOKEN_FIELDS = ("input", "output", "reasoning", "cache_read", "cache_write")
UNKNOWN_FINISH = frozenset({"unknown", "invalid", "none", "null"})
# OpenCode FinishReason literals: stop | length | tool-calls | content-filter | error | unknown;
# only `stop` is a delivered answer (`end_turn` is the Anthropic spelling of the same thing).
TERMINAL_FINISH = frozenset({"stop", "end_turn"})
PLACEHOLDER_PREFIX = "Empty response: {'"
PLACEHOLDER_MARK = "'stop_reason'"

ANSWER = "answer"
EMPTY_RETRY_SAFE = "empty-retry-safe"  # T401
EMPTY_WITH_WORK = "empty-with-work"  # T402
NOT_FINAL = "not-final"  # T403
IN_PROGRESS = "in-progress"
NO_REPLY = "no-reply"
CODES = {EMPTY_RETRY_SAFE: "T401", EMPTY_WITH_WORK: "T402", NOT_FINAL: "T403"}


def known_number(value: Any) -> float | None:
    """A finite number, or None (unknown). Booleans are not numbers."""
    kind = value.__class__
    if kind is int:  # the common case; an int is always finite
        return value
    if kind is not float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        return None
    return value if math.isfinite(value) else None


def normalise_finish(reason: str | None) -> str:
    return js_trim(reason).lower() if isinstance(reason, str) else ""


def has_unknown_finish(reason: str | None) -> bool:
    norm = normalise_finish(reason)
    return not norm or norm in UNKNOWN_FINISH


def is_terminal_finish(reason: str | None) -> bool:
    return normalise_finish(reason) in TERMINAL_FINISH


def is_placeholder(text: Any) -> bool:
    return isinstance(text, str) and text.startswith(PLACEHOLDER_PREFIX) and PLACEHOLDER_MARK in text


def is_visible_text_part(part: dict[str, Any]) -> bool:
    return (
        part.get("type") == "text"
        and part.get("synthetic") is not True
        and part.get("ignored") is not True
        and not is_placeholder(part.get("text"))
    )


def visible_text(parts: list[dict[str, Any]]) -> str:
    """The text of the parts `is_visible_text_part` keeps (one loop: it is read for every run)."""
    texts = []
    for p in parts:
        if p.get("type") != "text":  # the cheap test first: most parts are not text
            continue
        text = p.get("text")
        if (isinstance(text, str) and p.get("synthetic") is not True and p.get("ignored") is not True
                and not is_placeholder(text)):
            texts.append(text)
    return "".join(texts)


# --------------------------------------------------------------------------- evidence


class Evidence(NamedTuple):
    """What one message, or a run merged, shows (immutable; a named tuple: one is built per message)."""

    tokens: tuple[float | None, ...] = (None,) * len(TOKEN_FIELDS)
    cost: float | None = None
    finish: str | None = None
    tool_activity: bool = False
    reasoning_activity: bool = False
    turns: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "tokens": dict(zip(TOKEN_FIELDS, self.tokens)),
            "cost": self.cost,
            "finish": self.finish,
            "tool_activity": self.tool_activity,
            "reasoning_activity": self.reasoning_activity,
            "messages": self.turns,
        }


def _tokens(info: dict[str, Any]) -> tuple[float | None, ...]:
    tokens = info.get("tokens")
    if not isinstance(tokens, dict):
        return (None,) * len(TOKEN_FIELDS)
    cache = tokens.get("cache")
    if not isinstance(cache, dict):
        cache = {}
    counts = (tokens.get("input"), tokens.get("output"), tokens.get("reasoning"), cache.get("read"), cache.get("write"))
    for count in counts:
        if count.__class__ is not int:  # (a bool is not an int here: its class is bool)
            return tuple([known_number(count) for count in counts])
    return counts  # all ints, the common case: each is `known_number` of itself


# `_new_tuple(Evidence, (all six fields))` is `Evidence(...)` without the Python-level `__new__`
# a named tuple is built through (a third of `message_evidence`'s time: one is built per message).
_new_tuple = tuple.__new__


def finish_reason(info: dict[str, Any], parts: list[dict[str, Any]]) -> str | None:
    """`info.finish` (trimmed) when non-blank, else the last step-finish part's non-blank reason."""
    finish = info.get("finish")
    if isinstance(finish, str) and not is_blank(finish):
        return js_trim(finish)
    fallback = None
    for part in parts:
        reason = part.get("reason")
        if part.get("type") == "step-finish" and isinstance(reason, str) and not is_blank(reason):
            fallback = js_trim(reason)
    return fallback


def message_evidence(info: dict[str, Any], parts: list[dict[str, Any]]) -> Evidence:
    """One message's evidence; one pass over its parts (what `finish_reason` and the activity
    flags each read)."""
    tool = reasoning = False
    fallback = None
    for part in parts:
        kind = part.get("type")
        if kind == "tool":
            tool = True
        elif kind == "reasoning":
            reasoning = True
        elif kind == "step-finish":
            reason = part.get("reason")
            if isinstance(reason, str) and not is_blank(reason):
                fallback = reason
    finish = info.get("finish")
    if isinstance(finish, str) and not is_blank(finish):
        fallback = finish
    return _new_tuple(Evidence, (_tokens(info), known_number(info.get("cost")),
                                 None if fallback is None else js_trim(fallback), tool, reasoning, 1))


def _sum(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def merge(current: Evidence, nxt: Evidence) -> Evidence:
    """Fold one more message into a run's evidence (docs/opencode.md §4; the bot's mergeTaskAttemptEvidence)."""
    first = current.turns == 0
    return Evidence(
        tokens=nxt.tokens if first else tuple(_sum(a, b) for a, b in zip(current.tokens, nxt.tokens)),
        cost=nxt.cost if first else _sum(current.cost, nxt.cost),
        finish=nxt.finish if nxt.finish is not None else current.finish,
        tool_activity=current.tool_activity or nxt.tool_activity,
        reasoning_activity=current.reasoning_activity or nxt.reasoning_activity,
        turns=current.turns + 1,
    )


def work_evidence(ev: Evidence) -> list[str]:
    """Why an empty completion is not a safe zero-work one; empty means retry-safe."""
    reasons = []
    for name, value in zip(TOKEN_FIELDS, ev.tokens):
        if value is None:
            reasons.append(f"{name} tokens unknown")
        elif value != 0:
            reasons.append(f"{value:g} {name} tokens")
    if ev.cost is None:
        reasons.append("cost unknown")
    elif ev.cost != 0:
        reasons.append(f"cost {ev.cost:g}")
    if ev.tool_activity:
        reasons.append("tool activity")
    if ev.reasoning_activity:
        reasons.append("reasoning activity")
    if not has_unknown_finish(ev.finish):
        reasons.append(f"finish {ev.finish!r}")
    return reasons


def is_safe_zero_work(ev: Evidence) -> bool:
    return not work_evidence(ev)


# --------------------------------------------------------------------------- the decision


@dataclass
class Decision:
    verdict: str
    reasons: list[str] = field(default_factory=list)
    text: str = ""
    finish: str | None = None
    error: dict[str, Any] | None = None

    @property
    def code(self) -> str | None:
        return CODES.get(self.verdict)

    @property
    def retry_safe(self) -> bool:
        return self.verdict == EMPTY_RETRY_SAFE


def error_name(info: dict[str, Any]) -> str | None:
    error = info.get("error")
    if not error:
        return None
    if isinstance(error, dict) and isinstance(error.get("name"), str):
        return error["name"]
    return "error"


def decide(info: dict[str, Any], parts: list[dict[str, Any]], run: Evidence | Callable[[], Evidence], *,
           open_run: bool, own: Evidence | None = None) -> Decision:
    """The verdict on the final assistant message of a run.

    `run`: the run's merged evidence, or what computes it (only an empty final text reads it).
    `open_run`: no later user message exists, so a message that is neither completed nor errored
    may still be streaming (IN_PROGRESS rather than NOT_FINAL). `own`: the message's own
    `message_evidence`, when the caller has it already.
    """
    text = visible_text(parts)
    if own is None:
        own = message_evidence(info, parts)
    name = error_name(info)
    completed = isinstance(info.get("time"), dict) and info["time"].get("completed") is not None
    finish = own.finish
    if name is not None:
        error = info["error"] if isinstance(info.get("error"), dict) else {"name": name}
        return Decision(NOT_FINAL, [f"ended with {name}"], text, finish, error)
    if not completed:
        if open_run:
            return Decision(IN_PROGRESS, ["not completed yet"], text, finish)
        return Decision(NOT_FINAL, ["never completed (no time.completed) and a later prompt followed"], text, finish)
    if is_blank(text):
        reasons = work_evidence(run() if callable(run) else run)
        return Decision(EMPTY_WITH_WORK if reasons else EMPTY_RETRY_SAFE, reasons, text, finish)
    return judge_text(text, finish, own.tool_activity)


def judge_text(text: str, finish: str | None, tool_activity: bool) -> Decision:
    """The verdict on a completed, unerrored final message whose visible text is not blank: an
    answer only with no tool activity and a terminal finish reason."""
    reasons = []
    if tool_activity:
        reasons.append("tool activity in the final message")
    if not is_terminal_finish(finish):
        reasons.append("finish missing" if finish is None else f"finish {finish!r} is not terminal")
    return Decision(NOT_FINAL if reasons else ANSWER, reasons, text, finish)

"""What an eve session stream rebuilds into: turns, step attempts, replies, calls, failures.

One shape for both stream formats. A *step* is one model attempt: a `step.started` ... `step.completed`
/`step.failed` span in streams up to version 26 (a durable retry of the same step is a second
attempt with the same key), or one model run (`model.started` ... `model.settled`) in version 27.
Line numbers are 1-based lines of the stream file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

TERMINAL_FINISH = frozenset({"stop", "end_turn"})
_LINE = attrgetter("line")


@dataclass(slots=True)
class Problem:
    """A record the reader could not use (reported as an F-rule finding)."""

    code: str  # F501 | F502 | F504
    line: int
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Input:
    """A message that reached the agent: a person's message or a runtime delivery."""

    line: int
    kind: str | None  # the delivery kind (`task.result`, ...); None for a plain message
    text: str
    human: bool


@dataclass(slots=True)
class Call:
    id: str
    name: str
    input: Any
    line: int
    result_line: int | None = None
    outcome: str | None = None  # completed | failed | rejected | interrupted | abandoned
    output: Any = None
    error: Any = None


@dataclass(slots=True)
class Failure:
    """A recorded error: `step.failed`/`turn.failed`/`session.failed` or a failed v27 settle."""

    line: int
    scope: str  # step | turn | session
    code: str | None
    message: str
    turn: str | None = None
    step: str | None = None
    details: Any = None


@dataclass(slots=True)
class Reply:
    """One complete assistant text: `message.completed` (v<=26) or `content.completed` (v27)."""

    line: int
    turn: str
    step: str
    attempt: int
    key: str  # sequence (v<=26) or part id (v27): re-emissions of one key are one reply
    text: str | None  # None: intentional silence (`message: null`), nothing was posted
    phase: str  # reply | narration
    finish_reason: str | None
    streamed: str = ""  # the text that streamed as appends before completion
    reemitted: int = 0  # how many earlier copies of this reply a retry replaced

    @property
    def silent(self) -> bool:
        return self.text is None


@dataclass(slots=True)
class Step:
    key: str  # stepIndex (v<=26) or run id (v27)
    turn: str
    attempt: int  # 1 for the first attempt of this key
    line: int
    lines: list[int] = field(default_factory=list)
    status: str = "open"  # open | completed | failed | abandoned
    finish_reason: str | None = None
    retry_reason: str | None = None
    error: Failure | None = None
    chunks: dict[str, list[str]] = field(default_factory=dict)  # streamed text not (yet) completed
    reasoning_chunks: list[str] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    shared: bool = False  # one of its lines also holds records of something else
    output_tokens: int | None = None

    @property
    def end_line(self) -> int:
        return max(self.lines) if self.lines else self.line

    @property
    def partial(self) -> dict[str, str]:
        """Streamed text per reply key that no completion has closed."""
        return {key: "".join(chunks) for key, chunks in self.chunks.items()}

    @property
    def reasoning(self) -> str:
        return "".join(self.reasoning_chunks)

    @property
    def streamed_text(self) -> str:
        """Everything this attempt streamed, completed or not."""
        done = "".join(r.streamed or (r.text or "") for r in self.replies)
        return done + "".join("".join(chunks) for chunks in self.chunks.values())

    @property
    def vacuous(self) -> bool:
        """Produced nothing: no text, no reasoning, no tool calls."""
        if self.calls or any(self.reasoning_chunks):
            return False
        if any(r.streamed or r.text for r in self.replies):
            return False
        return not any(any(chunks) for chunks in self.chunks.values())

    @property
    def settled(self) -> bool:
        return self.status == "completed"


@dataclass(slots=True)
class ContextOp:
    """A compaction or a clear of the model history."""

    line: int
    op: str  # compaction | clear
    status: str  # requested | started | completed
    turn: str | None = None
    summary: str | None = None


@dataclass
class Turn:
    id: str
    line: int
    end_line: int | None = None
    trigger: dict[str, Any] | None = None
    inputs: list[Input] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)  # every attempt, in stream order
    outcome: str | None = None  # completed | failed | cancelled; None while open
    failures: list[Failure] = field(default_factory=list)
    context: list[ContextOp] = field(default_factory=list)
    reply_parts: list[str] | None = None  # v27 `turn.settled.data.reply`

    @property
    def human(self) -> bool:
        """Whether a person's message started or fed this turn."""
        for entry in self.inputs:  # `any(...)` without a generator: read for every turn
            if entry.human:
                return True
        return False

    @property
    def replies(self) -> list[Reply]:
        """The turn's complete replies, one per key (a re-emission replaces the earlier copy)."""
        answered = [step for step in self.steps if step.replies]
        if len(answered) < 2:  # one step's replies: one per key already, in line order
            return list(answered[0].replies) if answered else []
        latest: dict[tuple[str, str], Reply] = {}
        for step in answered:
            for reply in step.replies:
                latest[(reply.step, reply.key)] = reply
        return sorted(latest.values(), key=lambda r: r.line)

    def last_step(self, key: str) -> Step | None:
        for step in reversed(self.steps):
            if step.key == key:
                return step
        return None


@dataclass(slots=True)
class Stream:
    version: str  # "<=26" | "27"
    session_id: str | None = None
    text_mode: str | None = None  # delta | cumulative (v<=26 appends)
    turns: list[Turn] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)  # session-level
    context: list[ContextOp] = field(default_factory=list)  # outside any turn
    outcome: str | None = None  # the session's end, when recorded
    records: int = 0  # non-blank lines
    events: int = 0  # events applied
    duplicates: int = 0  # events skipped as re-deliveries of one already read
    problems: list[Problem] = field(default_factory=list)

    def all_failures(self) -> list[Failure]:
        out = list(self.failures)
        for turn in self.turns:  # loops, not a generator per turn: most turns hold no failure
            if turn.failures:
                out.extend(turn.failures)
            for step in turn.steps:
                if step.error is not None:
                    out.append(step.error)
        out.sort(key=_LINE)
        return out

"""Rebuild the history Codex resumes from, then the request it sends (docs/codex.md §3-§4).

`rebuild` replays the events forward: items are appended, a `compacted` line replaces everything
before it (with its `replacement_history`, or with the earlier user messages plus the summary when
it has none), and `thread_rolled_back` drops the newest N user turns. What is dropped or replaced is
kept as `unsent`, with the reason. Replaying forward gives the same history as Codex's newest-first
scan: each compaction and rollback applies to exactly what was recorded before it. (The user
messages a compaction rebuilt are not listed again when a later one replaces them: their
originals were listed when the first one did.)

`normalise` is what Codex does to that history before every request: a call without an output gets
a synthetic `"aborted"` output right after it, an output without a call is dropped. With the raw
Responses API target nothing is repaired. Each sent item gets its `input[N]` position.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .items import Item, synthetic_output, user_message
from .reader import Compaction, Event, Rollback

# Codex keeps the newest user messages up to a token budget when it rebuilds a compacted history;
# tdoc counts tokens as bytes / 4, the estimate Codex itself uses.
COMPACT_USER_TOKENS = 20_000
SUMMARY_MARKER = "[compaction summary]\n"
CODEX_TARGET = "codex"
RAW_TARGET = "responses"


@dataclass
class History:
    items: list[Item] = field(default_factory=list)
    unsent: list[tuple[Item, str]] = field(default_factory=list)  # (item, "rolled back" | "compacted")


@dataclass(slots=True)
class Entry:
    """One element of the request: a history item (or a synthetic output) and its input index."""

    item: Item
    position: int | None  # None: in the history but not sent (an orphan output Codex drops)


@dataclass
class Request:
    entries: list[Entry] = field(default_factory=list)
    added: list[Entry] = field(default_factory=list)  # synthetic outputs Codex inserts
    dropped: list[Item] = field(default_factory=list)  # orphan outputs Codex removes

    @property
    def sent(self) -> list[Entry]:
        return [e for e in self.entries if e.position is not None]


def rebuild(events: list[Event], before_line: int | None = None) -> History:
    """The history after the events (only those on lines before `before_line`, when given)."""
    history = History()
    turns: list[int] = []  # indexes in history.items where a user turn starts
    for event in events:
        line = event.line
        if before_line is not None and line >= before_line:
            break
        if isinstance(event, Item):
            if event.is_user_turn():
                turns.append(len(history.items))
            history.items.append(event)
        elif isinstance(event, Rollback):
            _roll_back(history, turns, event.turns)
        elif isinstance(event, Compaction):
            turns = _compact(history, event)
    return history


def _roll_back(history: History, turns: list[int], count: int) -> None:
    if not turns:
        return
    cut = turns[max(0, len(turns) - count)]
    history.unsent.extend((item, "rolled back") for item in history.items[cut:])
    del history.items[cut:]
    del turns[max(0, len(turns) - count):]


def _compact(history: History, event: Compaction) -> list[int]:
    before = history.items
    # A rebuilt user message is a copy of one an earlier compaction listed already: listing it again
    # at every later compaction repeated the same prompts, and made the list grow with the square
    # of a rollout that compacts often (every rebuilt prompt, at every compaction).
    history.unsent.extend((item, "replaced by compaction") for item in before if item.source != "rebuilt")
    if event.replacement is not None:
        history.items = list(event.replacement)
    else:
        history.items = _rebuilt(before, event)
    return [i for i, item in enumerate(history.items) if item.is_user_turn()]


def _rebuilt(before: list[Item], event: Compaction) -> list[Item]:
    """The user messages (newest first, up to the budget, then in order) and the summary."""
    kept: list[Item] = []
    budget = COMPACT_USER_TOKENS
    for item in reversed(before):
        if not item.is_user_turn() or item.source == "summary":
            continue
        cost = (len(item.text.encode("utf-8")) + 3) // 4
        if cost > budget:
            break
        budget -= cost
        kept.append(user_message(_full_text(item), event.line, "rebuilt"))
    kept.reverse()
    kept.append(user_message(SUMMARY_MARKER + event.summary, event.line, "summary"))
    return kept


def _full_text(item: Item) -> str:
    payload = item.payload
    if payload is not None:
        content = payload.get("content")
        if isinstance(content, list):
            return "".join(b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return item.text


def normalise(items: list[Item], target: str = CODEX_TARGET) -> Request:
    """The request Codex sends from `items` (or, for the raw target, the items as they are)."""
    request = Request()
    sent = [item for item in items if item.sent]
    if target == RAW_TARGET:
        request.entries = [Entry(item, n) for n, item in enumerate(sent)]
        return request
    calls = {item.call_id for item in sent if item.is_call}
    answered = {item.call_id for item in sent if item.is_output}
    position = 0
    for item in sent:
        if item.is_output and item.call_id not in calls:
            request.entries.append(Entry(item, None))
            request.dropped.append(item)
            continue
        request.entries.append(Entry(item, position))
        position += 1
        if item.is_call and item.call_id not in answered:
            answered.add(item.call_id)
            added = Entry(synthetic_output(item), position)
            request.entries.append(added)
            request.added.append(added)
            position += 1
    return request


__all__ = ["Compaction", "Entry", "History", "Request", "Rollback", "normalise", "rebuild"]

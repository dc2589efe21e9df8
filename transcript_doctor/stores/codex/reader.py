"""Read a Codex rollout (`rollout-*.jsonl`) in one streaming pass.

Every line is `{"timestamp", "type", "payload"}`. The reader turns the lines that shape the history
into events for the reconstruction (`response_item`, `compacted`, `event_msg thread_rolled_back`),
notes the session metadata (it repeats), the recorded provider errors, the store-rule problems of
each item, unreadable lines, and the byte offset of every line (heal rewrites lines in place).
Other line types (`turn_context`, most `event_msg`s, newer variants) are read and ignored. The
pre-envelope shape of the earliest builds (bare items, a bare header) is read too. docs/codex.md §2.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from ...model import TdocError
from ...values import MAX_DEPTH, depth_exceeds, may_be_deep, why_unparsable
from ..collector import collector_paused
from .issues import Issue, payload_issues
from .items import API_KINDS, Item, make_item
from .sniff import sniff as sniff  # where callers have looked for it

READ_BUFFER = 1 << 20
ERROR_EVENTS = frozenset({"error", "stream_error"})


@dataclass(slots=True)
class Rollback:
    line: int
    turns: int


@dataclass(slots=True)
class Compaction:
    line: int
    summary: str
    replacement: list[Item] | None  # None: rebuilt from the user messages and the summary


Event = Item | Rollback | Compaction


@dataclass(slots=True)
class Problem:
    """An unreadable line: `torn` when it is the unterminated last line (a crash mid-write)."""

    line: int
    offset: int
    detail: str
    torn: bool = False


@dataclass
class Rollout:
    """What one pass over a rollout keeps."""

    events: list[Event] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)  # session ids in order of appearance
    meta: dict[str, Any] = field(default_factory=dict)  # the newest session_meta (instructions dropped)
    issues: list[Issue] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)  # (line, recorded error text)
    problems: list[Problem] = field(default_factory=list)
    offsets: array[int] = field(default_factory=lambda: array("Q"))  # offsets[n - 1]: byte offset of line n
    size: int = 0
    records: int = 0
    line_types: dict[str, int] = field(default_factory=dict)
    last_timestamp: Any = None  # the `timestamp` of the last record that has one (tdoc sessions)

    @property
    def session(self) -> str | None:
        return self.sessions[0] if self.sessions else None

    @property
    def openai(self) -> bool:
        provider = self.meta.get("model_provider")
        return not isinstance(provider, str) or provider.lower() in ("openai", "azure", "")

    def span(self, line: int) -> tuple[int, int]:
        """(offset, length including the line ending) of 1-based `line`."""
        start = self.offsets[line - 1]
        end = self.offsets[line] if line < len(self.offsets) else self.size
        return start, end - start


def read_rollout(path: Path, display: str, keep: bool) -> Rollout:
    """Read `path`; `keep` holds the full item payloads (for `tdoc replay`)."""
    try:
        with open(path, "rb", buffering=READ_BUFFER) as fh:
            return read_stream(fh, keep)
    except OSError as exc:
        raise TdocError(f"{display}: cannot read: {exc.strerror or exc}") from None


def read_stream(fh: BinaryIO, keep: bool) -> Rollout:
    # what a rollout's reading and rebuilding keep is acyclic: no collector passes over it
    with collector_paused():
        return _read(fh, keep)


def _read(fh: BinaryIO, keep: bool) -> Rollout:
    state = Rollout()
    offsets = state.offsets
    offset = 0
    number = 0
    loads = orjson.loads
    for raw in fh:
        number += 1
        offsets.append(offset)
        offset += len(raw)
        if len(raw) < 3 and not raw.strip():
            continue
        try:
            obj = loads(raw)
        except orjson.JSONDecodeError:
            if not raw.strip():
                continue
            body = raw.rstrip(b"\r\n")
            state.problems.append(Problem(number, offsets[-1], why_unparsable(body), torn=not raw.endswith(b"\n")))
            continue
        if len(raw) > 2 * MAX_DEPTH and may_be_deep(raw, obj) and depth_exceeds(obj):
            # orjson reads up to 1024 levels but writes only 254 (and Codex's serde_json reads 128)
            state.problems.append(Problem(number, offsets[-1], f"JSON nested deeper than {MAX_DEPTH} levels"))
            continue
        if type(obj) is not dict:
            state.problems.append(Problem(number, offsets[-1], "not a JSON object"))
            continue
        state.records += 1
        stamp = obj.get("timestamp")
        if stamp is not None:
            state.last_timestamp = stamp
        _dispatch(state, obj, number, keep)
    state.size = offset
    return state


def _dispatch(state: Rollout, obj: dict[str, Any], line: int, keep: bool) -> None:
    kind = obj.get("type")
    payload = obj.get("payload")
    if type(payload) is not dict:
        _legacy(state, obj, line, keep)
        return
    types = state.line_types
    name = kind if isinstance(kind, str) else "?"
    types[name] = types.get(name, 0) + 1
    if kind == "response_item":
        _item(state, payload, line, keep)
    elif kind == "event_msg":
        _event(state, payload, line)
    elif kind == "compacted":
        _compacted(state, payload, line, keep)
    elif kind == "session_meta":
        _meta(state, payload)


def _item(state: Rollout, payload: dict[str, Any], line: int, keep: bool, index: int | None = None) -> Item | None:
    item = make_item(payload, line, keep=keep, source="line" if index is None else "replacement", index=index)
    if item is None:
        return None
    if item.kind in ("reasoning", "web_search_call") or "id" in payload:
        state.issues.extend(payload_issues(payload, line, index, state.openai))
    if index is None:
        state.events.append(item)
    return item


def _event(state: Rollout, payload: dict[str, Any], line: int) -> None:
    etype = payload.get("type")
    if etype == "thread_rolled_back":
        turns = payload.get("num_turns")
        if isinstance(turns, int) and not isinstance(turns, bool) and turns > 0:
            state.events.append(Rollback(line, turns))
    elif isinstance(etype, str) and etype in ERROR_EVENTS:  # a mutated type may be any JSON value
        message = payload.get("message")
        if isinstance(message, str):
            state.errors.append((line, message))


def _compacted(state: Rollout, payload: dict[str, Any], line: int, keep: bool) -> None:
    summary = payload.get("message")
    history = payload.get("replacement_history")
    replacement = None
    if isinstance(history, list):
        replacement = []
        for i, entry in enumerate(history):
            if isinstance(entry, dict):
                item = _item(state, entry, line, keep, index=i)
                if item is not None:
                    replacement.append(item)
    state.events.append(Compaction(line, summary if isinstance(summary, str) else "", replacement))


def _meta(state: Rollout, payload: dict[str, Any]) -> None:
    sid = payload.get("id")
    if isinstance(sid, str) and sid not in state.sessions:
        state.sessions.append(sid)
    state.meta = {k: v for k, v in payload.items() if k not in ("instructions", "base_instructions")}


def _legacy(state: Rollout, obj: dict[str, Any], line: int, keep: bool) -> None:
    """The earliest rollouts: a bare header line, bare items, `record_type: state` lines."""
    kind = obj.get("type")
    if isinstance(kind, str) and kind in API_KINDS:  # a mutated type may be any JSON value
        state.line_types["legacy_item"] = state.line_types.get("legacy_item", 0) + 1
        _item(state, obj, line, keep)
    elif line == 1 and "id" in obj and "timestamp" in obj and kind is None:
        _meta(state, obj)



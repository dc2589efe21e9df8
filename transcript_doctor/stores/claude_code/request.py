"""Rebuild the request Claude Code sends on resume from the chain (docs/claude-code-sessions.md, section "How the request is rebuilt on resume").

* One request message per assistant `message.id`: every line of the response (the chain's and
  its siblings off the chain, e.g. the later `tool_use` lines of parallel calls) merged in file order.
* The tool results of a response (user lines whose parent is one of its lines) follow it in one
  user message, in the order of the calls, wherever the chain put them and whichever line came first.
* Consecutive user records are one user message; attachments are user context.
* Synthetic assistant records (`<synthetic>` model, `isApiErrorMessage`, `No response requested.`)
  are not sent; progress, system and metadata records are not messages.
* Tool results a `microcompact_boundary` on the chain lists are sent cleared.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...model import Loc, Message, Part, ToolCall
from .chain import Chain
from .records import Block, Record

CLEARED = "[Old tool result content cleared]"


@dataclass(slots=True)
class Slot:
    """One block of a request message and the record (line) it comes from."""

    record: Record
    index: int  # block index within the record's content
    block: Block


@dataclass(slots=True)
class RequestMessage:
    role: str  # user | assistant
    slots: list[Slot] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    msg_id: str | None = None
    position: int = 0
    _held: set[int] = field(default_factory=set, repr=False, compare=False)  # id() of each of `records`

    def add(self, rec: Record) -> None:
        if id(rec) not in self._held:  # `rec not in self.records` (records compare by identity), in O(1):
            self._held.add(id(rec))  # one user message can gather thousands of records
            self.records.append(rec)
        self.slots.extend(Slot(rec, k, b) for k, b in enumerate(rec.blocks))

    @property
    def lines(self) -> tuple[int, int]:
        lines = [r.line for r in self.records]
        return min(lines), max(lines)


@dataclass
class Request:
    messages: list[RequestMessage]
    sent: set[int]  # record indexes the request uses
    cleared: set[str]  # tool ids whose results are sent cleared
    synthetic: list[Record]


def _groups(chain: Chain) -> dict[str, list[Record]]:
    groups: dict[str, list[Record]] = {}
    for rec in chain.records:
        if rec.type == "assistant" and rec.msg_id and not rec.synthetic:
            groups.setdefault(rec.msg_id, []).append(rec)
    return groups


def _is_result(rec: Record) -> bool:
    return rec.type == "user" and any(b.kind == "tool_result" for b in rec.blocks)


class _Builder:
    def __init__(self, chain: Chain) -> None:
        self.chain = chain
        self.groups = _groups(chain)
        self.out: list[RequestMessage] = []
        self.sent: set[int] = set()
        self.synthetic: list[Record] = []

    def user(self, rec: Record) -> None:
        if not self.out or self.out[-1].role != "user":
            self.out.append(RequestMessage("user"))
        self.out[-1].add(rec)
        self.sent.add(rec.index)

    def assistant(self, rec: Record) -> None:
        members = self.groups.get(rec.msg_id, [rec]) if rec.msg_id else [rec]
        members = [m for m in members if m.index not in self.sent] or [rec]
        msg = RequestMessage("assistant", msg_id=rec.msg_id)
        for m in members:
            msg.add(m)
            self.sent.add(m.index)
        self.out.append(msg)
        results = [c for m in members for c in self.chain.children.get(m.uuid or "", ())
                   if _is_result(c) and c.index not in self.sent]  # fmt: skip
        order = {s.block.id: k for k, s in enumerate(msg.slots) if s.block.kind == "tool_use"}
        results.sort(key=lambda r: (min((order.get(b.id, len(order)) for b in r.blocks), default=0), r.index))
        for res in results:
            self.user(res)

    def build(self) -> Request:
        cleared: set[str] = set()
        for rec in self.chain.path:
            if rec.subtype == "microcompact_boundary" and rec.meta:
                cleared.update(rec.meta.get("cleared") or ())
            if rec.index in self.sent:
                continue
            if rec.type == "assistant":
                if rec.synthetic:
                    self.synthetic.append(rec)
                else:
                    self.assistant(rec)
            elif rec.type in ("user", "attachment"):
                self.user(rec)
        for k, msg in enumerate(self.out):
            msg.position = k
        return Request(self.out, self.sent, cleared, self.synthetic)


def build_request(chain: Chain) -> Request:
    return _Builder(chain).build()


# --------------------------------------------------------------------------- shared model


def _part(block: Block) -> Part:
    if block.kind == "text":
        return Part("text", block.text)
    if block.kind in ("thinking", "redacted_thinking"):
        return Part("reasoning", block.text, signed=block.signed)
    if block.kind in ("image", "document"):
        return Part("media")
    return Part("other", block.name)


def _loc(records: list[Record]) -> Loc:
    lines = [r.line for r in records]
    return Loc(line=min(lines), end_line=max(lines))


def shared_messages(request: Request) -> list[Message]:
    """The request in the shared model: tool results become `tool` messages at their user's position.

    Each message is named (`extra["subject"]`) by its first record's uuid, a tool result by its
    call id: what a finding is about stays the same when a heal shifts lines."""
    out: list[Message] = []
    for msg in request.messages:
        made = [_assistant(msg)] if msg.role == "assistant" else _user(msg, request.cleared)
        first = next((r.uuid for r in msg.records if r.uuid is not None), None)
        for m in made:
            subject = f"call:{m.tool_call_id}" if m.role == "tool" else f"uuid:{first}" if first is not None else None
            if subject is not None:
                m.extra["subject"] = subject
        out.extend(made)
    return out


def _assistant(msg: RequestMessage) -> Message:
    parts: list[Part] = []
    calls: list[ToolCall] = []
    slots: list[tuple[int, int]] = []
    call_slots: list[tuple[int, int]] = []
    for s in msg.slots:
        if s.block.kind == "tool_use":
            calls.append(ToolCall(s.block.id or "", s.block.name, s.block.arguments))
            call_slots.append((s.record.index, s.index))
        else:
            parts.append(_part(s.block))
            slots.append((s.record.index, s.index))
    extra = {"records": [r.index for r in msg.records], "slots": slots, "call_slots": call_slots,
             "message_id": msg.msg_id}  # fmt: skip
    return Message("assistant", parts, calls, loc=_loc(msg.records), position=msg.position, extra=extra)


def _user(msg: RequestMessage, cleared: set[str]) -> list[Message]:
    out: list[Message] = []
    rest: list[Slot] = []
    for s in msg.slots:
        if s.block.kind != "tool_result":
            rest.append(s)
            continue
        is_cleared = s.block.id in cleared
        text = CLEARED if is_cleared else s.block.text
        extra = {"records": [s.record.index], "slots": [(s.record.index, s.index)], "cleared": is_cleared,
                 "placeholder": False}  # fmt: skip
        out.append(Message("tool", [Part("text", text)], tool_call_id=s.block.id or "", is_error=s.block.is_error,
                           loc=Loc(line=s.record.line, end_line=s.record.line), position=msg.position,
                           extra=extra))  # fmt: skip
    if rest:
        records = list(dict.fromkeys(s.record for s in rest))
        parts = [_part(s.block) for s in rest]
        extra = {"records": [r.index for r in records], "slots": [(s.record.index, s.index) for s in rest],
                 "not_vacuous": True}  # fmt: skip
        if any(r.type == "attachment" for r in records) and not parts:
            parts = [Part("other", "attachment")]
        out.append(Message("user", parts, loc=_loc(records), position=msg.position, extra=extra))
    elif not out:
        records = msg.records
        out.append(Message("user", [Part("other", "attachment")], loc=_loc(records), position=msg.position,
                           extra={"records": [r.index for r in records], "slots": []}))  # fmt: skip
    return out


def record_message(rec: Record, reason: str) -> Message:
    """A record the request does not carry, in the shared model (position None)."""
    if rec.type == "assistant":
        parts = [_part(b) for b in rec.blocks if b.kind != "tool_use"]
        calls = [ToolCall(b.id or "", b.name, b.arguments) for b in rec.blocks if b.kind == "tool_use"]
        return Message("assistant", parts, calls, loc=_loc([rec]), extra={"records": [rec.index], "reason": reason})
    parts = [_part(b) for b in rec.blocks if b.kind != "tool_result"]
    return Message("user", parts, loc=_loc([rec]), extra={"records": [rec.index], "reason": reason})

"""One session file, resumed: the chain, the request, what is reached, and the replay object.

`Resume.cli` is what Claude Code sends now; `Resume.repaired` is what it sends once the file's
breaks are mended (concatenated lines split, dangling parents re-linked), built only when the
file has such a break. Findings in records only the repaired view reaches are reported as
unreachable (docs/claude-code-sessions.md, section "Findings").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ... import values
from ...model import Message
from .chain import Chain, build_chain
from .reader import Transcript
from .records import Record
from .request import CLEARED, Request, build_request, record_message, shared_messages

FORMAT = "claude-code"


@dataclass
class View:
    chain: Chain
    request: Request

    @cached_property
    def messages(self) -> list[Message]:
        return shared_messages(self.request)

    @cached_property
    def reached(self) -> set[int]:
        """Record indexes the resume reads: the chain and the sibling lines the request pulls in
        (built once: `Resume.unsent_reason` asks for each record the resume leaves out)."""
        return {r.index for r in self.chain.path} | self.request.sent


def view(records: list[Record], *, repaired: bool) -> View:
    chain = build_chain(records, repaired=repaired)
    return View(chain, build_request(chain))


class Resume:
    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.cli = view(transcript.records, repaired=False)

    @property
    def broken(self) -> bool:
        return bool(self.transcript.concatenated or self.cli.chain.cut is not None or self.real_dangling)

    @cached_property
    def known_uuids(self) -> set[str]:
        return {r.uuid for r in self.transcript.records if r.uuid is not None}

    @cached_property
    def real_dangling(self) -> list[Record]:
        """Records whose parent names no record anywhere in the file (C206)."""
        return [r for r in self.cli.chain.dangling if self.cli.chain.parent_of(r) not in self.known_uuids]

    @cached_property
    def repaired(self) -> View:
        if not self.broken:
            return self.cli
        return view(self.transcript.records, repaired=True)

    def unsent_reason(self, rec: Record) -> str:
        chain = self.cli.chain
        if not rec.readable:
            return "unreadable"
        if rec.synthetic:
            return "synthetic"
        if rec.sidechain:
            return "sidechain"
        if chain.boundary is not None and rec.index < chain.boundary.index:
            return "before-compaction"
        if rec.index in self.repaired.reached:
            return "unreachable"
        return "off-chain"

    def unsent(self) -> list[Message]:
        reached = self.cli.reached
        return [record_message(r, self.unsent_reason(r)) for r in self.transcript.records
                if r.type in ("user", "assistant") and r.index not in reached]  # fmt: skip

    def stats(self) -> dict[str, Any]:
        records = self.transcript.records
        chained = [r for r in records if r.chained]
        reached = self.cli.reached
        boundary = self.cli.chain.boundary
        return {
            "total": len(records),
            "chain_records": len(chained),
            "reachable": len(reached),
            "before_compaction": sum(1 for r in chained if boundary is not None and r.index < boundary.index),
            "unreadable": sum(1 for r in records if not r.readable),
            "messages": len(self.cli.request.messages),
        }

    def running_call(self) -> bool:
        """The request ends on an assistant message whose calls have no result."""
        messages = self.cli.request.messages
        return bool(messages) and messages[-1].role == "assistant" and any(
            s.block.kind == "tool_use" for s in messages[-1].slots)

    def tail_only_progress(self) -> bool:
        """After the last request message the file holds progress records and no message."""
        messages = self.cli.request.messages
        if not messages:
            return False
        last = max(r.index for r in messages[-1].records)
        tail = self.transcript.records[last + 1 :]
        return any(r.type == "progress" for r in tail) and not any(
            r.type in ("user", "assistant") and not r.sidechain for r in tail)

    # ----------------------------------------------------------------------- replay output

    def replay_object(self, display: str) -> dict[str, Any]:
        request = self.cli.request
        history, sources = [], []
        for msg in request.messages:
            history.append({"role": msg.role, "content": _content(msg.records, request.cleared)})
            first, last = msg.lines
            sources.append({"position": msg.position, "line": first, "end_line": last,
                            "uuids": [r.uuid for r in msg.records], "message_id": msg.msg_id})  # fmt: skip
        chain = self.cli.chain
        return {
            "format": FORMAT,
            "path": display,
            "session": self.transcript.session,
            "leaf": _where(chain.leaf),
            "compaction": _where(chain.boundary),
            "cut": _where(chain.cut),
            "records": self.stats(),
            "history": history,
            "sources": sources,
            "skipped": [{"line": r.line, "uuid": r.uuid, "reason": "synthetic"} for r in request.synthetic],
            "errors": [{"line": p.line, "code": p.code, "message": p.message} for p in self.transcript.problems],
        }

    def locate(self, position: int) -> dict[str, Any] | None:
        messages = self.cli.request.messages
        if not 0 <= position < len(messages):
            return None
        msg = messages[position]
        first, last = msg.lines
        return {"session": self.transcript.session, "line": first, "end_line": last, "row": None,
                "table": None, "role": msg.role, "uuids": [r.uuid for r in msg.records]}  # fmt: skip


def _where(rec: Record | None) -> dict[str, Any] | None:
    return None if rec is None else {"line": rec.line, "uuid": rec.uuid, "type": rec.type}


def _content(records: list[Record], cleared: set[str]) -> list[Any]:
    blocks: list[Any] = []
    for rec in records:
        for block in rec.raw_content or []:
            if (isinstance(block, dict) and block.get("type") == "tool_result"
                    and values.is_id(block.get("tool_use_id")) and block["tool_use_id"] in cleared):
                block = {**block, "content": CLEARED}
            blocks.append(block)
    return blocks

"""Build Claude Code transcript records the way the CLI writes them (one line per content block)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import orjson

SIG = "RXVZQ2lRWUlCaEFDR0FJ"  # a base64 signature, as on real thinking blocks


@dataclass
class Session:
    """Appends records; `parent` is the uuid the next record chains to (None: a root)."""

    session: str = "0b8c2f5e-1111-4a2b-9c3d-5e6f7a8b9c0d"
    records: list[dict[str, Any]] = field(default_factory=list)
    parent: str | None = None
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def uid(self, prefix: str = "r") -> str:
        return f"{prefix}-{next(self._ids):04d}"

    def envelope(self, kind: str, parent: str | None, uuid: str) -> dict[str, Any]:
        return {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/work",
                "sessionId": self.session, "version": "2.1.37", "gitBranch": "main", "type": kind}

    def add(self, rec: dict[str, Any], *, chain: bool = True) -> dict[str, Any]:
        self.records.append(rec)
        if chain:
            self.parent = rec["uuid"]
        return rec

    def user(self, content: Any, *, parent: Any = "chain", **extra: Any) -> dict[str, Any]:
        uuid = self.uid("u")
        rec = self.envelope("user", self.parent if parent == "chain" else parent, uuid)
        rec["message"] = {"role": "user", "content": content}
        rec.update(uuid=uuid, timestamp="2026-02-01T10:00:00.000Z", **extra)
        return self.add(rec)

    def result(self, call_id: str, text: str = "ok", *, parent: Any = "chain", is_error: bool = False,
               chain: bool = True) -> dict[str, Any]:
        block: dict[str, Any] = {"tool_use_id": call_id, "type": "tool_result", "content": text}
        if is_error:
            block["is_error"] = True
        uuid = self.uid("u")
        rec = self.envelope("user", self.parent if parent == "chain" else parent, uuid)
        rec["message"] = {"role": "user", "content": [block]}
        rec.update(uuid=uuid, timestamp="2026-02-01T10:00:00.000Z")
        return self.add(rec, chain=chain)

    def block(self, msg_id: str, block: dict[str, Any], *, parent: Any = "chain", model: str = "claude-opus-4-6",
              chain: bool = True, **extra: Any) -> dict[str, Any]:
        uuid = self.uid("a")
        rec = self.envelope("assistant", self.parent if parent == "chain" else parent, uuid)
        rec["message"] = {"model": model, "id": msg_id, "type": "message", "role": "assistant",
                          "content": [block], "stop_reason": None}
        rec.update(requestId="req_" + msg_id, uuid=uuid, timestamp="2026-02-01T10:00:01.000Z", **extra)
        return self.add(rec, chain=chain)

    def text(self, msg_id: str, text: str, **kw: Any) -> dict[str, Any]:
        return self.block(msg_id, {"type": "text", "text": text}, **kw)

    def thinking(self, msg_id: str, **kw: Any) -> dict[str, Any]:
        return self.block(msg_id, {"type": "thinking", "thinking": "", "signature": SIG}, **kw)

    def call(self, msg_id: str, call_id: str, name: str = "Bash", **kw: Any) -> dict[str, Any]:
        return self.block(msg_id, {"type": "tool_use", "id": call_id, "name": name, "input": {"command": "ls"}}, **kw)

    def progress(self, tool_use: str = "toolu_x") -> dict[str, Any]:
        uuid = self.uid("p")
        rec = self.envelope("progress", self.parent, uuid)
        rec.update(data={"type": "hook_progress"}, toolUseID=tool_use, uuid=uuid, timestamp="2026-02-01T10:00:02Z")
        return self.add(rec)

    def system(self, subtype: str, **extra: Any) -> dict[str, Any]:
        uuid = self.uid("s")
        rec = self.envelope("system", self.parent, uuid)
        rec.update(subtype=subtype, uuid=uuid, timestamp="2026-02-01T10:00:03Z", **extra)
        return self.add(rec)

    def compact(self, preserved: dict[str, str] | None = None) -> dict[str, Any]:
        old = self.parent
        uuid = self.uid("s")
        rec = self.envelope("system", None, uuid)
        meta: dict[str, Any] = {"trigger": "auto", "preTokens": 150000}
        if preserved:
            meta["preservedSegment"] = preserved
        rec.update(subtype="compact_boundary", content="Conversation compacted", logicalParentUuid=old,
                   compactMetadata=meta, uuid=uuid, timestamp="2026-02-01T11:00:00Z")
        self.add(rec)
        return self.user("This session is being continued from a previous conversation. Summary: ...",
                         isCompactSummary=True, isVisibleInTranscriptOnly=True)

    def meta(self, kind: str, **extra: Any) -> dict[str, Any]:
        rec = {"type": kind, "sessionId": self.session, **extra}
        self.records.append(rec)
        return rec

    def lines(self) -> list[str]:
        return [orjson.dumps(r).decode() for r in self.records]

    def jsonl(self, trailing_newline: bool = True) -> str:
        return "\n".join(self.lines()) + ("\n" if trailing_newline else "")

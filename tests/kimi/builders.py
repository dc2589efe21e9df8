"""Small builders for kimi-code wire journals in tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson


class Journal:
    def __init__(self, version: str | None = "1.4") -> None:
        self.records: list[dict[str, Any]] = []
        self.time = 100
        if version is not None:
            self.records.append({"type": "metadata", "protocol_version": version, "created_at": 1})

    def add(self, record: dict[str, Any]) -> Journal:
        self.time += 1
        self.records.append({**record, "time": self.time})
        return self

    def user(self, text: str, kind: str = "user", **extra: Any) -> Journal:
        msg = {"role": "user", "content": [{"type": "text", "text": text}], "toolCalls": [], "origin": {"kind": kind}}
        msg.update(extra)
        return self.add({"type": "context.append_message", "message": msg})

    def message(self, msg: dict[str, Any]) -> Journal:
        return self.add({"type": "context.append_message", "message": msg})

    def event(self, event: dict[str, Any]) -> Journal:
        return self.add({"type": "context.append_loop_event", "event": event})

    def step(self, uuid: str, parts: list[dict[str, Any]], calls: list[tuple[str, str | None]] = (),
             finish: str | None = "end_turn", turn: str = "1") -> Journal:
        """A step: begin, its parts, tool calls (id, result text or None for no result), end."""
        self.event({"type": "step.begin", "uuid": uuid, "turnId": turn, "step": 1})
        for i, part in enumerate(parts):
            self.event({"type": "content.part", "uuid": f"{uuid}-p{i}", "turnId": turn, "step": 1,
                        "stepUuid": uuid, "part": part})
        for call_id, _ in calls:
            self.event({"type": "tool.call", "uuid": f"{uuid}-{call_id}", "turnId": turn, "step": 1,
                        "stepUuid": uuid, "toolCallId": call_id, "name": "Bash", "args": {"command": "ls"}})
        for call_id, result in calls:
            if result is not None:
                self.event({"type": "tool.result", "parentUuid": f"{uuid}-{call_id}", "toolCallId": call_id,
                            "result": {"output": result}})
        if finish is not None:
            self.event({"type": "step.end", "uuid": uuid, "turnId": turn, "step": 1, "finishReason": finish})
        return self

    def legacy_compaction(self, count: int, summary: str = "SUM") -> Journal:
        return self.add({"type": "context.apply_compaction", "summary": summary, "compactedCount": count,
                         "tokensBefore": 10, "tokensAfter": 5})

    def kept_compaction(self, kept: int, summary: str = "SUM") -> Journal:
        return self.add({"type": "context.apply_compaction", "summary": summary, "contextSummary": summary,
                         "compactedCount": 99, "keptUserMessageCount": kept})

    def bytes(self) -> bytes:
        return b"".join(orjson.dumps(r) + b"\n" for r in self.records)

    def write(self, path: Path) -> Path:
        path.write_bytes(self.bytes())
        return path


def think(text: str = "", **extra: Any) -> dict[str, Any]:
    return {"type": "think", "think": text, **extra}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def seed_case() -> Journal:
    """[user u1, step with only an empty think part, user u2] + legacy compaction count 2."""
    return Journal().user("u1").step("s1", [think()], finish="filtered").user("u2").legacy_compaction(2)

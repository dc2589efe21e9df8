"""A subagent transcript's link to the `Task` call that started it (docs/claude-code-sessions.md, section "Where the files are").

A subagent writes `agent-<id>.jsonl` beside its session (`<session>.jsonl`) or under
`<session>/subagents/`. The session's `Task` result carries the agent id (`toolUseResult.agentId`);
that result's `tool_use_id` is the call. Found by a streaming search of the parent file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from .reader import Transcript

_AGENT_FILE = re.compile(r"^agent-([A-Za-z0-9_-]{1,100})\.jsonl$")


def is_subagent(transcript: Transcript) -> bool:
    chained = [r for r in transcript.records if r.chained]
    return bool(chained) and all(r.sidechain for r in chained)


def _parent_files(path: Path, session: str) -> list[Path]:
    found = [path.parent / f"{session}.jsonl"]
    if path.parent.name == "subagents":
        found.append(path.parent.parent.parent / f"{session}.jsonl")
    return [p for p in found if p.is_file() and p.resolve() != path.resolve()]


def _task_call(line: bytes, agent: str) -> str | None:
    try:
        rec = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    result = rec.get("toolUseResult") if isinstance(rec, dict) else None
    if not isinstance(result, dict) or result.get("agentId") != agent:
        return None
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    for block in content if isinstance(content, list) else ():
        if isinstance(block, dict) and block.get("type") == "tool_result":
            call = block.get("tool_use_id")
            return call if isinstance(call, str) else None
    return None


def parent_link(path: Path, transcript: Transcript) -> dict[str, Any] | None:
    """{session, path, line, task_call} of the call that started this subagent, when it can be found."""
    m = _AGENT_FILE.match(path.name)
    if m is None or transcript.session is None or not is_subagent(transcript):
        return None
    agent = m.group(1)
    needle = f'"agentId":"{agent}"'.encode()
    for parent in _parent_files(path, transcript.session):
        with open(parent, "rb") as fh:
            for number, line in enumerate(fh, start=1):
                if needle in line:
                    call = _task_call(line, agent)
                    if call is not None:
                        return {"session": transcript.session, "path": str(parent), "line": number, "task_call": call}
    return {"session": transcript.session, "path": None, "line": None, "task_call": None}

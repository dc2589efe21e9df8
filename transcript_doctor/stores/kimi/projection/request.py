"""kimi-code request projection: the message list a provider receives for a given history.

`project(history, engine)` reproduces the normal request of engine v1 (`agent-core`,
options {dropOrphanResults}) or v2 (`agent-core-v2`, `project`); `strict=True` the strict resend
sent after a recognised structural 400 (v1 with all five repair options, v2 `projectStrict`).
`prefix=True` reproduces builds from before PR #1968, which kept (and sent) messages made only of
vacuous parts: that is the request behind `400 the message at position N ... must not be empty`.

History messages are plain dicts in the log's ContextMessage shape; request messages keep only
`role, name, content, toolCalls, toolCallId, partial, tools`.
"""

from __future__ import annotations

from transcript_doctor.model import TdocError

from ..engines.vacuous import is_vacuous_content
from .v1 import project_v1
from .v2 import project_v2

ENGINES = {"v1": project_v1, "v2": project_v2}


class Projection:
    """The request an engine's history projects to, with its anomalies and each message's sources."""

    __slots__ = ("messages", "anomalies", "sources")

    def __init__(self, messages: list[dict], anomalies: list[dict], sources: list[list[int]]) -> None:
        self.messages = messages  # request messages, in order
        self.anomalies = anomalies  # {kind, toolCallId?, role?, trailing?}, in the order reported
        self.sources = sources  # per request message: the history indices it was built from


def project(history: list[dict], engine: str, *, strict: bool = False, prefix: bool = False) -> Projection:
    run = ENGINES.get(engine)
    if run is None:
        raise TdocError(f"unknown kimi-code engine {engine!r} (expected 'v1' or 'v2')")
    items, anomalies = run(_usable(history), strict, prefix)
    return Projection([it.msg for it in items], anomalies, [list(it.sources) for it in items])


def _usable(history: list[dict]) -> list[dict]:
    """A non-dict entry cannot be sent by either engine: it stands in as a skipped (partial)
    message so history indices stay aligned."""
    return [m if isinstance(m, dict) else {"partial": True} for m in history]


def is_empty_assistant(msg: dict) -> bool:
    """An assistant request message the provider sees as empty: no calls, no tools, and
    nothing but vacuous parts (the pre-fix wedge, docs/kimi-replay.md §8)."""
    return (
        msg.get("role") == "assistant"
        and not msg.get("toolCalls")
        and not msg.get("tools")
        and is_vacuous_content(msg.get("content") or [])
    )


def prefix_vacuous_positions(history: list[dict], engine: str) -> list[tuple[int, int]]:
    """(history index, request position) of each message a pre-fix build sends as an empty
    assistant in its normal request."""
    projection = project(history, engine, prefix=True)
    return [
        (sources[0], position)
        for position, (msg, sources) in enumerate(zip(projection.messages, projection.sources))
        if sources and is_empty_assistant(msg)
    ]

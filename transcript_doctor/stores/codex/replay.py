"""`tdoc replay` for a rollout: the rebuilt history, the request Codex sends, what was left out."""

from __future__ import annotations

from typing import Any

from .items import Item
from .reader import Rollout
from .reconstruct import History, Request


def _item_view(item: Item) -> dict[str, Any]:
    return {"line": item.line, "source": item.source, "replacement_index": item.index,
            "item": item.payload if item.payload is not None else {"type": item.kind}}


def replay_object(rollout: Rollout, history: History, request: Request, target: str) -> dict[str, Any]:
    """`history`: the response items Codex resumes from; `request`: the input it sends, with positions."""
    return {
        "format": "codex-rollout",
        "session": rollout.session,
        "target": target,
        "meta": {k: rollout.meta.get(k) for k in ("id", "cwd", "originator", "cli_version", "model_provider", "source")},
        "history": [_item_view(i) for i in history.items],
        "request": [{"position": e.position, **_item_view(e.item)} for e in request.entries if e.position is not None],
        "repairs": ([{"kind": "synthetic_output", "call_id": e.item.call_id, "position": e.position,
                      "line": e.item.line} for e in request.added]
                    + [{"kind": "orphan_output_dropped", "call_id": i.call_id, "line": i.line} for i in request.dropped]),
        "unsent": [{"reason": reason, **_item_view(item)} for item, reason in history.unsent],
        "line_types": dict(rollout.line_types),
        "errors": [{"line": p.line, "detail": p.detail, "torn": p.torn} for p in rollout.problems],
    }

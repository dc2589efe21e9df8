"""The Codex store rules' checks (W121-W123) and the payload rewrites that fix them.

A check looks at one response item payload as written (a line's item, or one entry of a compacted
line's `replacement_history`) and says what the Responses API would reject. A rewrite changes a
copy of the payload so the API accepts it. Both are pure: no I/O. See docs/codex.md §5.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...text import excerpt

WEB_SEARCH_ACTIONS = frozenset({"search", "open_page", "find_in_page"})


def _accepted_action(kind: object) -> bool:
    """Whether the Responses API accepts this web search action type (any JSON value may stand there)."""
    return isinstance(kind, str) and kind in WEB_SEARCH_ACTIONS
OPENAI_CIPHERTEXT = "gAAAA"  # Fernet-style tokens the API issues start like this
ID_PREFIXES = {
    "message": "msg_",
    "reasoning": "rs_",
    "function_call": "fc_",
    "web_search_call": "ws_",
}
STORE_CODES = frozenset({"W121", "W122", "W123"})


@dataclass
class Issue:
    """One store-rule problem in a payload at `line` (`index`: inside replacement_history)."""

    code: str
    line: int
    index: int | None
    message: str
    evidence: dict[str, Any] = field(default_factory=dict)


def payload_issues(payload: dict[str, Any], line: int, index: int | None, openai: bool) -> list[Issue]:
    """Every W121-W123 problem of one item payload (`openai`: the session talks to OpenAI)."""
    kind = payload.get("type")
    found: list[Issue] = []
    if kind == "web_search_call":
        action = payload.get("action")
        atype = action.get("type") if isinstance(action, dict) else None
        if isinstance(action, dict) and not _accepted_action(atype):
            found.append(Issue("W121", line, index,
                               f"web_search_call with action type {excerpt(str(atype), 40)!r}; the Responses API "
                               "accepts only 'search', 'open_page' and 'find_in_page'",
                               {"action_type": atype}))
    elif kind == "reasoning" and openai:
        found.extend(_reasoning_issues(payload, line, index))
    item_id = payload.get("id")
    prefix = ID_PREFIXES.get(kind) if isinstance(kind, str) else None
    if prefix and isinstance(item_id, str) and item_id and not item_id.startswith(prefix):
        found.append(Issue("W123", line, index,
                           f"{kind} item id {excerpt(item_id, 60)!r} does not start with {prefix!r} "
                           "(invalid_id_prefix)", {"id": excerpt(item_id, 60), "expected_prefix": prefix}))
    return found


def _reasoning_issues(payload: dict[str, Any], line: int, index: int | None) -> list[Issue]:
    found = []
    cipher = payload.get("encrypted_content")
    if isinstance(cipher, str) and cipher and not cipher.startswith(OPENAI_CIPHERTEXT):
        found.append(Issue("W122", line, index,
                           "reasoning item carries encrypted_content OpenAI did not issue (it does not start "
                           f"{OPENAI_CIPHERTEXT!r}); the API cannot verify it",
                           {"problem": "foreign-ciphertext", "starts": excerpt(cipher[:12], 12)}))
    content = payload.get("content")
    if isinstance(content, list) and content:
        found.append(Issue("W122", line, index,
                           f"reasoning item carries {len(content)} plaintext content block(s); the API "
                           "refuses reasoning content it did not produce",
                           {"problem": "plaintext-content", "blocks": len(content)}))
    return found


def rewrite_payload(payload: dict[str, Any], codes: frozenset[str], lean: bool = False) -> bool:
    """Fix the selected problems of `payload` in place; True when something changed.

    `lean` also gives up optional keys a rewrite may spend to keep the line's length (a
    rewritten web search's `status`).
    """
    kind = payload.get("type")
    changed = False
    if kind == "web_search_call" and "W121" in codes:
        action = payload.get("action")
        if isinstance(action, dict) and not _accepted_action(action.get("type")):
            query = action.get("query")
            payload["action"] = {"type": "search", "query": query if isinstance(query, str) else ""}
            if lean:
                payload.pop("status", None)
            changed = True
    if kind == "reasoning" and "W122" in codes:
        cipher = payload.get("encrypted_content")
        if isinstance(cipher, str) and cipher and not cipher.startswith(OPENAI_CIPHERTEXT):
            del payload["encrypted_content"]
            changed = True
        content = payload.get("content")
        if isinstance(content, list) and content:
            del payload["content"]
            changed = True
    prefix = ID_PREFIXES.get(kind) if isinstance(kind, str) else None
    if "W123" in codes and prefix:
        item_id = payload.get("id")
        if isinstance(item_id, str) and item_id and not item_id.startswith(prefix):
            del payload["id"]
            changed = True
    return changed

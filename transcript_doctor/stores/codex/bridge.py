"""TEMPORARY: runs the shared conversation rules over `CodexStore.conversations()` until the shared
rule engine on main does it for every store (then this module and its import go).

It does what that engine does: the shared checks of the conversation's `codes` over its messages
(fixes through its `Editor`), each `Repair` as a finding of its own, one severity lower when the
runtime repairs it on every request (with the repair's `fix`), then the store's native findings.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...conversation import Conversation, Repair
from ...model import Finding, Fix, Message, Severity
from ...rules.conversation import conversation_findings
from ...rules.registry import RULES, checker, finding

LOWER: dict[str, Severity] = {"error": "warning", "warning": "info", "info": "info"}


def _fix(conv: Conversation, code: str, msg: Message, evidence: dict[str, Any]) -> Fix | None:
    if code == "W103":
        call = next((c for c in msg.tool_calls if c.id == evidence.get("tool_call_id")), None)
        return conv.editor.answer_call(msg, call) if call else None
    if code in ("W104", "W106"):
        return conv.editor.remove_message(msg)
    return None


def conversation_check(conv: Conversation) -> Iterator[Finding]:
    def make(code: str, text: str, msg: Message, severity: Any = None, fix: Any = None,
             evidence: dict[str, Any] | None = None) -> Finding:
        ev = dict(evidence or {})
        return finding(code, text, path=conv.path, format=conv.format, session=conv.session, severity=severity,
                       fix=fix or _fix(conv, code, msg, ev), line=msg.loc.line, end_line=msg.loc.end_line,
                       position=msg.position, evidence=ev)

    yield from conversation_findings(conv.messages, make=make, codes=conv.codes,
                                     empty_parts_vacuous=conv.empty_parts_vacuous)
    seen: set[tuple[str, str | None]] = set()
    for repair in conv.repairs:
        if (repair.code, repair.subject) not in seen:
            seen.add((repair.code, repair.subject))
            yield _repair_finding(conv, repair)


def _repair_finding(conv: Conversation, repair: Repair) -> Finding:
    severity = RULES[repair.code].severity
    return finding(repair.code, repair.message, path=conv.path, format=conv.format, session=conv.session,
                   severity=LOWER[severity] if repair.when == "every-request" else severity,
                   line=repair.source.line, end_line=repair.source.end_line, position=repair.position,
                   fix=repair.fix, evidence=dict(repair.evidence))


@checker("codex-rollout")
def check_codex(store: Any, options: Any) -> Iterator[Finding]:
    for conv in store.conversations(options):
        yield from conversation_check(conv)
    yield from store.native_findings(options, frozenset(RULES))

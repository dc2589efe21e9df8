"""TEMPORARY: runs the shared conversation rules over `CodexStore.conversations()` until the shared
rule engine on main does it for every store (then this module and its import go).

A finding whose problem Codex repairs before every request (`Repair`, matched by code and call id)
is reported one severity lower; a repair no shared rule reported becomes a finding of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...conversation import Conversation, Repair
from ...model import Finding, Fix, Loc, Message, Severity
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
    repaired = {(r.code, r.subject): r for r in conv.repairs}
    reported: set[tuple[str, str | None]] = set()

    def make(code: str, text: str, msg: Message, severity: Any = None, fix: Any = None,
             evidence: dict[str, Any] | None = None) -> Finding:
        ev = dict(evidence or {})
        key = (code, ev.get("tool_call_id"))
        rule_severity = severity or RULES[code].severity
        if key in repaired:
            reported.add(key)
            rule_severity = LOWER[rule_severity]
            ev["runtime_repair"] = repaired[key].message
        return finding(code, text, path=conv.path, format=conv.format, session=conv.session,
                       severity=rule_severity, fix=fix or _fix(conv, code, msg, ev),
                       line=msg.loc.line, end_line=msg.loc.end_line, position=msg.position, evidence=ev)

    yield from conversation_findings(conv.messages, make=make, codes=conv.codes,
                                     empty_parts_vacuous=conv.empty_parts_vacuous)
    for key, repair in repaired.items():
        if key not in reported:
            yield _repair_finding(conv, repair)


def _repair_finding(conv: Conversation, repair: Repair) -> Finding:
    source: Loc = repair.source
    return finding(repair.code, repair.message, path=conv.path, format=conv.format, session=conv.session,
                   severity=LOWER[RULES[repair.code].severity], line=source.line, end_line=source.end_line,
                   position=repair.position, evidence={"tool_call_id": repair.subject, **repair.evidence})


@checker("codex-rollout")
def check_codex(store: Any, options: Any) -> Iterator[Finding]:
    for conv in store.conversations(options):
        yield from conversation_check(conv)
    yield from store.native_findings(options, frozenset(RULES))

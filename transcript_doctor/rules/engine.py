"""The rule engine: shared rules over every conversation a store yields, plus its own findings.

For one store, `check_store` runs the check of each selected shared rule once over every
`Conversation` the store yields (`Store.conversations`), turns the runtime's own repairs into
findings (one severity lower when the runtime repairs the problem on every request), and adds
`Store.native_findings` for the selected codes. Work for deselected rules is skipped: no shared
check runs unless its rule is selected, and a store is told the selected codes.

Fixes come from the conversation's `Editor`: a rule says which operation fixes a hit (remove the
message, drop the part, answer the call); the store's editor realises it in its own format, and
the engine stamps it with the applicability the rule declares. See `docs/architecture.md`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import TYPE_CHECKING

from ..conversation import Conversation, Repair
from ..model import Finding, Fix, Loc, Severity
from ..text import json_safe
from ..value_types import replace
from .registry import CONVERSATION_CHECKS, RULES, Rule
from .shared.support import ConversationView, Hit

if TYPE_CHECKING:
    from ..stores.base import Options, Store

# A problem the runtime repairs before every request never reaches the provider.
ONE_LOWER: dict[Severity, Severity] = {"error": "warning", "warning": "info", "info": "info"}


def shared_codes() -> frozenset[str]:
    """The codes of the rules the engine checks over conversations."""
    return frozenset(CONVERSATION_CHECKS)


def check_store(store: Store, options: Options, codes: Collection[str]) -> list[Finding]:
    """Every selected finding of one store, sorted: shared rules, repairs, native findings."""
    wanted = frozenset(codes)
    store.start(options, wanted)
    found: list[Finding] = []
    if wanted & shared_codes():  # repairs are findings of shared rules too
        for conversation in store.conversations(options):
            found.extend(check_conversation(conversation, wanted))
            del conversation  # released before the store reads its next session (stores/collector.py)
    found.extend(f for f in store.native_findings(options, wanted) if f.code in wanted)
    found.sort(key=Finding.sort_key)
    return found


def check_conversation(conversation: Conversation, codes: Collection[str]) -> Iterator[Finding]:
    """The findings of the selected shared rules over one conversation, and of its repairs."""
    applicable = set(codes)
    if conversation.codes is not None:
        applicable &= conversation.codes
    view = ConversationView(conversation)
    for code, check in CONVERSATION_CHECKS.items():
        if code in applicable:
            rule = RULES[code]
            yield from (hit_finding(conversation, rule, hit) for hit in check(view))
    yield from repair_findings(conversation.repairs, conversation, codes)


def hit_finding(conversation: Conversation, rule: Rule, hit: Hit) -> Finding:
    """A finding of `rule` located where the hit's message (or part) lives, with its fix."""
    msg = hit.msg
    loc, named = conversation.where(msg, hit.part)
    evidence = {**hit.evidence, **named}
    return Finding(
        code=rule.code, name=rule.name, severity=rule.severity, message=hit.message,
        path=conversation.path, format=conversation.format, session=conversation.session,
        line=loc.line, end_line=loc.end_line, row=loc.row, table=loc.table, position=msg.position,
        fix=_fix(conversation, rule, hit), evidence=json_safe(evidence),
        subject=_subject(loc, hit),
    )


def _subject(loc: Loc, hit: Hit) -> str | None:
    """`Finding.subject` (what the heal matches before and after): what the store names the message
    by (`extra["subject"]`, when its lines shift under a heal: a record uuid), else the row, else the
    line; and the part."""
    where = hit.msg.extra.get("subject")
    if where is None:
        where = f"{loc.table}:{loc.row}" if loc.row is not None else f"line:{loc.line}" if loc.line is not None else None
    return f"{where}#{hit.part}" if where is not None and hit.part is not None else where


def _fix(conversation: Conversation, rule: Rule, hit: Hit) -> Fix | None:
    if hit.edit is None or rule.fix == "none":
        return None
    fix = hit.edit(conversation.editor)
    return replace(fix, applicability=rule.fix) if fix is not None else None


def repair_findings(repairs: Iterable[Repair], conversation: Conversation, codes: Collection[str]) -> Iterator[Finding]:
    """One finding per selected repair, once per (code, subject); one level lower on every request."""
    seen: set[tuple[str, str]] = set()
    for repair in repairs:
        if repair.code not in codes:
            continue
        if repair.subject is not None:
            if (repair.code, repair.subject) in seen:
                continue
            seen.add((repair.code, repair.subject))
        rule = RULES[repair.code]
        severity = ONE_LOWER[rule.severity] if repair.when == "every-request" else rule.severity
        src = repair.source
        yield Finding(
            code=rule.code, name=rule.name, severity=severity, message=repair.message,
            path=conversation.path, format=conversation.format, session=conversation.session,
            line=src.line, end_line=src.end_line, row=src.row, table=src.table, position=repair.position,
            engine=repair.engine, evidence=json_safe(dict(repair.evidence)),
            subject=repair.subject,
            fix=repair.fix,  # how the store writes the repair into the record, if it can
        )

"""The one rule registry.

A rule is defined once, with its metadata and the documentation `tdoc explain` prints. A shared
rule (one that reads the conversation model) lives in its own module under `rules/shared/`, its
documentation beside the check function that emits it (`@conversation_check(RULE)`); the rule
engine (`rules/engine.py`) runs only the checks of selected rules. A store-specific rule is
defined in its family module (`compaction`, `sentinel`, `terminal`, `integrity`, `errors`) and
emitted by the store's `native_findings`, which is handed the selected codes.

`fix` is the applicability of the rule's fix (safe | unsafe | none); `availability` says whether
every finding carries that fix (always), only some do, because the store cannot realise it in
every case (sometimes), or none does (never). `tests/test_rule_availability.py` checks each
declaration against the findings of the shipped fixtures. See `docs/rules.md`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal

from ..model import Applicability, Finding, Fix, Severity
from ..value_types import FrozenValue

if TYPE_CHECKING:
    from .shared.support import ConversationCheck

Availability = Literal["always", "sometimes", "never"]

CODE_RE = re.compile(r"^[WCSTFE][1-9]\d\d$")
NAME_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
FAMILIES = {
    "W": "wedge",
    "C": "compaction",
    "S": "sentinel",
    "T": "terminality",
    "F": "integrity",
    "E": "recorded-error",
}


class Rule(FrozenValue):
    """One rule of the catalogue: code, name, default severity, the systems it applies to, fix, documentation."""

    __slots__ = ("code", "name", "severity", "systems", "fix", "summary", "doc", "provider_errors", "availability")
    code: str
    name: str
    severity: Severity
    systems: tuple[str, ...]
    fix: Applicability
    summary: str
    doc: str
    provider_errors: tuple[str, ...]
    availability: Availability

    def __init__(self, code: str, name: str, severity: Severity, systems: tuple[str, ...], fix: Applicability,
                 summary: str, doc: str, provider_errors: tuple[str, ...] = (),
                 availability: Availability = "always") -> None:  # fmt: skip
        self.assign(code, name, severity, systems, fix, summary, doc, provider_errors, availability)

    @property
    def family(self) -> str:
        return FAMILIES[self.code[0]]

    @property
    def shared(self) -> bool:
        """Whether the rule engine checks it over the conversation model (not a store)."""
        return self.code in CONVERSATION_CHECKS

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "family": self.family,
            "severity": self.severity,
            "systems": list(self.systems),
            "fix": self.fix,
            "fix_availability": self.availability,
            "summary": self.summary,
            "provider_errors": list(self.provider_errors),
            "explanation": self.doc,
        }


RULES: dict[str, Rule] = {}
_BY_NAME: dict[str, Rule] = {}

CONVERSATION_CHECKS: dict[str, ConversationCheck] = {}


def define(
    code: str,
    name: str,
    severity: Severity,
    systems: Iterable[str],
    fix: Applicability,
    summary: str,
    doc: str,
    provider_errors: Iterable[str] = (),
    availability: Availability | None = None,
) -> Rule:
    """Add a rule to the catalogue; a duplicate code or name is a programming error.

    `availability` defaults to "never" for a rule without a fix and "always" otherwise.
    """
    if not CODE_RE.match(code) or not NAME_RE.match(name):
        raise ValueError(f"bad rule code or name: {code} {name}")
    if code in RULES or name in _BY_NAME:
        raise ValueError(f"duplicate rule: {code} {name}")
    if fix not in ("safe", "unsafe", "none"):
        raise ValueError(f"bad fix applicability for {code}: {fix}")
    availability = availability or ("never" if fix == "none" else "always")
    if fix == "none" and availability != "never":
        raise ValueError(f"{code}: a rule without a fix cannot declare availability {availability!r}")
    rule = Rule(code, name, severity, tuple(systems), fix, summary, doc.strip(), tuple(provider_errors), availability)
    RULES[code] = rule
    _BY_NAME[name] = rule
    return rule


def lookup(code_or_name: str) -> Rule | None:
    key = code_or_name.strip()
    return RULES.get(key.upper()) or _BY_NAME.get(key.lower())


def conversation_check(rule: Rule) -> Callable[[ConversationCheck], ConversationCheck]:
    """Register the check that emits shared rule `rule` over a conversation (one per rule)."""

    def register(fn: ConversationCheck) -> ConversationCheck:
        if rule.code in CONVERSATION_CHECKS:
            raise ValueError(f"{rule.code} already has a conversation check")
        CONVERSATION_CHECKS[rule.code] = fn
        return fn

    return register


def finding(
    code: str,
    message: str,
    *,
    path: str,
    format: str,
    severity: Severity | None = None,
    fix: Fix | None = None,
    **fields: Any,
) -> Finding:
    """Build a finding for rule `code`, filling name and default severity from the catalogue."""
    rule = RULES[code]
    return Finding(
        code=code,
        name=rule.name,
        severity=severity or rule.severity,
        message=message,
        path=path,
        format=format,
        fix=fix,
        **fields,
    )


def expand_selector(selector: str) -> set[str]:
    """`W101`, `W1`, `W`, `vacuous-assistant` or `ALL` -> the rule codes it names."""
    sel = selector.strip()
    if not sel:
        return set()
    if sel.upper() == "ALL":
        return set(RULES)
    rule = lookup(sel)
    if rule:
        return {rule.code}
    matched = {code for code in RULES if code.startswith(sel.upper())}
    if not matched:
        raise KeyError(sel)
    return matched


def selected_codes(select: Iterable[str] | None, ignore: Iterable[str] | None) -> set[str]:
    codes: set[str] = set(RULES)
    if select:
        codes = set()
        for s in select:
            codes |= expand_selector(s)
    for s in ignore or ():
        codes -= expand_selector(s)
    return codes

"""The one rule registry.

A rule is defined once, in its family module (`wedge`, `compaction`, `sentinel`, `terminal`,
`integrity`, `errors`), with its metadata and the documentation `tdoc explain` prints. Checks are
functions registered per store format with `@checker(format)`; a check may report any number of
rule codes, and the engine filters them with `--select`/`--ignore` afterwards.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..model import Finding, Fix, Severity

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
DOC_SECTIONS = ("What it detects", "Why it breaks a session", "Example", "Fix safety", "Provider errors")


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    systems: tuple[str, ...]
    fix: str  # safe | unsafe | none
    summary: str
    doc: str
    provider_errors: tuple[str, ...] = ()

    @property
    def family(self) -> str:
        return FAMILIES[self.code[0]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "family": self.family,
            "severity": self.severity,
            "systems": list(self.systems),
            "fix": self.fix,
            "summary": self.summary,
            "provider_errors": list(self.provider_errors),
            "explanation": self.doc,
        }


RULES: dict[str, Rule] = {}
_BY_NAME: dict[str, Rule] = {}

Check = Callable[..., Iterable[Finding]]
CHECKS: dict[str, list[Check]] = {}


def define(
    code: str,
    name: str,
    severity: Severity,
    systems: Iterable[str],
    fix: str,
    summary: str,
    doc: str,
    provider_errors: Iterable[str] = (),
) -> Rule:
    """Add a rule to the catalogue; a duplicate code or name is a programming error."""
    if not CODE_RE.match(code) or not NAME_RE.match(name):
        raise ValueError(f"bad rule code or name: {code} {name}")
    if code in RULES or name in _BY_NAME:
        raise ValueError(f"duplicate rule: {code} {name}")
    if fix not in ("safe", "unsafe", "none"):
        raise ValueError(f"bad fix applicability for {code}: {fix}")
    rule = Rule(code, name, severity, tuple(systems), fix, summary, doc.strip(), tuple(provider_errors))
    RULES[code] = rule
    _BY_NAME[name] = rule
    return rule


def lookup(code_or_name: str) -> Rule | None:
    key = code_or_name.strip()
    return RULES.get(key.upper()) or _BY_NAME.get(key.lower())


def checker(*formats: str) -> Callable[[Check], Check]:
    """Register a check function for the store formats named."""

    def register(fn: Check) -> Check:
        for fmt in formats:
            CHECKS.setdefault(fmt, []).append(fn)
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

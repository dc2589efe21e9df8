"""`tdoc scan --statistics`: how many findings each rule produced, most frequent first."""

from __future__ import annotations

from collections import Counter
from typing import Any, TextIO

import orjson

from ..core import Report
from ..rules import RULES
from .plain_table import plain_table


def counts(report: Report) -> list[dict[str, Any]]:
    """One entry per rule that fired: code, name, count, and how many of them `heal` fixes safely."""
    total: Counter[str] = Counter()
    fixable: Counter[str] = Counter()
    severities: dict[str, Counter[str]] = {}
    for f in report.findings:
        total[f.code] += 1
        severities.setdefault(f.code, Counter())[f.severity] += 1
        if f.fix and f.fix.applicability == "safe":
            fixable[f.code] += 1
    return [
        {"code": code, "name": RULES[code].name if code in RULES else "", "count": n, "fixable": fixable[code],
         "by_severity": {s: severities[code][s] for s in ("error", "warning", "info")}}
        for code, n in sorted(total.items(), key=lambda item: (-item[1], item[0]))
    ]  # fmt: skip


def render_human(report: Report, out: TextIO) -> None:
    rows = [[str(e["count"]), e["code"], e["name"], _severities(e["by_severity"]),
             f"{e['fixable']} fixable" if e["fixable"] else ""] for e in counts(report)]  # fmt: skip
    out.write(plain_table(["count", "code", "name", "severity", "fix"], rows) if rows else "No findings.\n")


def render_json(report: Report, out: TextIO) -> None:
    out.write(orjson.dumps(counts(report), option=orjson.OPT_INDENT_2).decode() + "\n")


def _severities(by: dict[str, int]) -> str:
    return ", ".join(f"{n} {s}" for s, n in by.items() if n)

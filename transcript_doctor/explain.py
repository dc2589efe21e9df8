"""`tdoc rules` and `tdoc explain`: the catalogue as a table, one rule's documentation."""

from __future__ import annotations

from typing import TextIO

import orjson
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from .model import TdocError
from .rules import RULES, lookup


def rules_table() -> Table:
    table = Table(title="tdoc rules", show_lines=False)
    for col in ("code", "name", "severity", "systems", "fix", "summary"):
        table.add_column(col)
    for rule in sorted(RULES.values(), key=lambda r: r.code):
        table.add_row(rule.code, rule.name, rule.severity, ", ".join(rule.systems), rule.fix, rule.summary)
    return table


def explain_rule(code_or_name: str, fmt: str, out: TextIO) -> None:
    rule = lookup(code_or_name)
    if rule is None:
        raise TdocError(f"unknown rule {code_or_name!r} (see `tdoc rules`)")
    if fmt == "json":
        out.write(orjson.dumps(rule.as_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    console = Console(file=out, highlight=False)
    console.print(f"{rule.code} {rule.name}", style="bold", markup=False)
    console.print(
        f"severity: {rule.severity}   systems: {', '.join(rule.systems)}   fix: {rule.fix}", markup=False
    )
    console.print(Markdown(rule.doc))


def explain_error(text: str, path: str | None, fmt: str, out: TextIO) -> int:
    raise TdocError("explain --error is not available yet")

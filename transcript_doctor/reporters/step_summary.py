"""`$GITHUB_STEP_SUMMARY`: a Markdown summary of a scan appended to the job's summary page.

Cells are escaped for GitHub-flavoured Markdown tables (`|`, backticks, HTML-significant
characters, line breaks) after `terminal_safe`, so model text cannot add rows, links or markup.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..text import excerpt, terminal_safe

if TYPE_CHECKING:
    from ..core import Report

MAX_ROWS = 50
VARIABLE = "GITHUB_STEP_SUMMARY"


def cell(value: object) -> str:
    import html  # with html.entities: only when a summary is written (start-up, issue 20)

    text = html.escape(terminal_safe(str(value)), quote=False)
    for char, escaped in (("|", "\\|"), ("`", "\\`"), ("[", "\\["), ("]", "\\]"), ("\r", " "), ("\n", " ")):
        text = text.replace(char, escaped)
    return text


def markdown(report: Report) -> str:
    from .statistics import counts

    data = report.as_dict()["summary"]
    sev = data["by_severity"]
    lines = ["## tdoc scan", "",
             f"{data['findings']} finding(s) in {data['files']} file(s): {sev['error']} error, "
             f"{sev['warning']} warning, {sev['info']} info; {data['fixable']} fixable with `tdoc heal`.", ""]
    unreadable = [fr for fr in report.files if fr.error]
    if unreadable:
        lines += [f"{len(unreadable)} file(s) could not be read.", ""]
    rules = counts(report)
    if rules:
        lines += ["| rule | name | count | fixable |", "|---|---|---:|---:|"]
        lines += [f"| {cell(e['code'])} | {cell(e['name'])} | {e['count']} | {e['fixable']} |" for e in rules]
        lines += ["", "| severity | where | rule | message |", "|---|---|---|---|"]
        for f in report.findings[:MAX_ROWS]:
            where = f"{f.path}:{f.line}" if f.line is not None else f"{f.path} {f.table or 'row'}#{f.row}" \
                if f.row is not None else f.path  # fmt: skip
            lines.append(f"| {f.severity} | {cell(where)} | {cell(f.code)} | {cell(excerpt(f.message, 300))} |")
        if len(report.findings) > MAX_ROWS:
            lines.append(f"\n{len(report.findings) - MAX_ROWS} more finding(s): see the job log or the SARIF upload.")
    return "\n".join(lines) + "\n"


def append_summary(report: Report) -> bool:
    """Append the summary when the variable names a file; whether it did."""
    target = os.environ.get(VARIABLE)
    if not target:
        return False
    with open(Path(target), "a", encoding="utf-8") as fh:
        fh.write(markdown(report))
    return True

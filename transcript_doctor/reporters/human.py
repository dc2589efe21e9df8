"""`--format human`: findings grouped by file, for a person at a terminal.

Transcript text is never interpreted: everything is printed through `rich.text.Text` (no markup)
after `terminal_safe` has escaped control characters.
"""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.text import Text

from ..core import Report
from ..model import SEVERITY_RANK, FileResult, Finding
from ..rules import RULES
from ..text import terminal_safe
from .options import RenderOptions, console_for

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _where(f: Finding) -> str:
    if f.line is not None:
        return f"{f.path}:{f.line}" + (f"-{f.end_line}" if f.end_line and f.end_line != f.line else "")
    if f.row is not None:
        return f"{f.path}:{f.table or 'row'}#{f.row}"
    return f.path


def _finding_line(f: Finding) -> Text:
    line = Text(no_wrap=False)
    line.append(terminal_safe(_where(f)), style="bold")
    line.append("  ")
    line.append(f"{f.severity:<7}", style=_STYLE[f.severity])  # the word, not only a colour (CI logs)
    line.append(" ")
    line.append(f.code, style=_STYLE[f.severity])
    line.append(f" {f.name} ", style="dim")
    line.append(terminal_safe(f.message))
    extras = []
    changed = severity_change(f)
    if changed:
        extras.append(changed)
    if f.session:
        extras.append(f"session {f.session}")
    if f.engine:
        extras.append(f"engine {f.engine}")
    if f.fix:
        extras.append(f"fix: {f.fix.applicability}")
    if extras:
        line.append(" [" + terminal_safe(", ".join(extras)) + "]", style="dim")
    return line


def severity_change(f: Finding) -> str | None:
    """When context moved a finding's severity off its rule's default, say so (the message says why)."""
    rule = RULES.get(f.code)
    if rule is None or rule.severity == f.severity:
        return None
    how = "raised" if SEVERITY_RANK[f.severity] > SEVERITY_RANK[rule.severity] else "lowered"
    return f"{how} from {f.code}'s default {rule.severity} by context, see the message"


def _file_block(console: Console, fr: FileResult) -> None:
    if fr.error:
        message = fr.error if fr.error.startswith(fr.path) else f"{fr.path}: {fr.error}"
        console.print(Text(terminal_safe(f"error: {message}"), style="bold red"))
        return
    for f in fr.findings:
        console.print(_finding_line(f))


def _summary(report: Report) -> Text:
    findings = report.findings
    counts = {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")}
    safe = sum(1 for f in findings if f.fix and f.fix.applicability == "safe")
    unsafe = sum(1 for f in findings if f.fix and f.fix.applicability == "unsafe")
    errors = sum(1 for fr in report.files if fr.error)
    text = Text()
    if not findings:
        text.append(f"No findings in {len(report.files)} file(s).", style="green")
    else:
        text.append(
            f"Found {len(findings)} finding(s) in {len(report.files)} file(s): "
            f"{counts['error']} error, {counts['warning']} warning, {counts['info']} info."
        )
        if safe:
            text.append(f"\n{safe} fixable with `tdoc heal`")
            text.append(f" ({unsafe} more with `--unsafe-fixes`)." if unsafe else ".")
        elif unsafe:
            text.append(f"\nNo safe fixes; {unsafe} fixable with `tdoc heal --unsafe-fixes`.")
    if errors:
        text.append(f"\n{errors} file(s) could not be read.", style="bold red")
    return text


def render(report: Report, out: TextIO, options: RenderOptions | None = None) -> None:
    options = options or RenderOptions()
    console: Console = console_for(out, options.color)
    for fr in report.files:
        _file_block(console, fr)
    if not options.quiet:
        console.print(_summary(report))

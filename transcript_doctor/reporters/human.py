"""`--format human`: findings grouped by file, for a person at a terminal.

Transcript text is never interpreted: everything is printed through `rich.text.Text` (no markup)
after `terminal_safe` has escaped control characters. Each line is built as styled spans; where
rich would print them unchanged (not a terminal, or `--color never`: `writes_plain`) they are
written as the same characters without loading rich (start-up, issue 20). `tests/test_human_plain.py`
pins the two ways byte for byte.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from ..model import SEVERITY_RANK, FileResult, Finding
from ..text import terminal_safe
from .options import RenderOptions, console_for, writes_plain

if TYPE_CHECKING:  # the scan API loads with the scan, not with the CLI
    from rich.console import Console
    from rich.text import Text

    from ..core import Report

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
# What rich's Text drops from every string it is given (`rich.control.STRIP_CONTROL_CODES`: BEL,
# BS, VT, FF, CR); `terminal_safe` has escaped them in model text already.
RICH_STRIPS = dict.fromkeys((7, 8, 11, 12, 13))


class Line:
    """One printed line: spans of (text, rich style) over a style for the whole line."""

    __slots__ = ("no_wrap", "spans", "style")

    def __init__(self, style: str = "", no_wrap: bool | None = None) -> None:
        self.style = style
        self.no_wrap = no_wrap
        self.spans: list[tuple[str, str | None]] = []

    def append(self, text: str, style: str | None = None) -> None:
        self.spans.append((text, style))

    def as_text(self) -> Text:
        from rich.text import Text

        text = Text(style=self.style, no_wrap=self.no_wrap)
        for part, style in self.spans:
            text.append(part, style=style)
        return text

    def plain(self) -> str | None:
        """The characters rich prints for this line without colour; None when rich must say
        (a tab: rich expands it by terminal cell widths)."""
        joined = "".join(part for part, _ in self.spans)
        return None if "\t" in joined else joined.translate(RICH_STRIPS)


class Printer:
    """Prints lines to `out` as `console_for(out, color)` would; rich loads only if needed."""

    def __init__(self, out: TextIO, color: str = "auto") -> None:
        self._out = out
        self._color = color
        self._plain = writes_plain(out, color)
        self._console: Console | None = None

    def print(self, line: Line) -> None:
        plain = line.plain() if self._plain else None
        if plain is None:
            self.console.print(line.as_text())
            return
        try:
            self._out.write(plain + "\n")  # a closed pipe raises BrokenPipeError, as console_for's does
        except UnicodeEncodeError:  # a stream that cannot encode the text: rich says so in its words
            self.console.print(line.as_text())
            return
        self._out.flush()

    @property
    def console(self) -> Console:
        if self._console is None:
            self._console = console_for(self._out, self._color)
        return self._console


def _where(f: Finding) -> str:
    if f.line is not None:
        return f"{f.path}:{f.line}" + (f"-{f.end_line}" if f.end_line and f.end_line != f.line else "")
    if f.row is not None:
        return f"{f.path}:{f.table or 'row'}#{f.row}"
    return f.path


def _finding_line(f: Finding) -> Line:
    line = Line(no_wrap=False)
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
    from ..rules import RULES  # the catalogue loads with the scan, not with the CLI

    rule = RULES.get(f.code)
    if rule is None or rule.severity == f.severity:
        return None
    how = "raised" if SEVERITY_RANK[f.severity] > SEVERITY_RANK[rule.severity] else "lowered"
    return f"{how} from {f.code}'s default {rule.severity} by context, see the message"


def _file_block(printer: Printer, fr: FileResult) -> None:
    if fr.error:
        message = fr.error if fr.error.startswith(fr.path) else f"{fr.path}: {fr.error}"
        line = Line(style="bold red")
        line.append(terminal_safe(f"error: {message}"))
        printer.print(line)
        return
    for f in fr.findings:
        printer.print(_finding_line(f))


def _summary(report: Report) -> Line:
    findings = report.findings
    counts = {s: sum(1 for f in findings if f.severity == s) for s in ("error", "warning", "info")}
    safe = sum(1 for f in findings if f.fix and f.fix.applicability == "safe")
    unsafe = sum(1 for f in findings if f.fix and f.fix.applicability == "unsafe")
    errors = sum(1 for fr in report.files if fr.error)
    read = len(report.files) - errors  # the files a scan could read (those it could not are counted below)
    summary = Line()
    if not report.files:
        summary.append("No store to scan.", style="yellow")
    elif not findings and not read:
        summary.append("No file could be scanned.", style="bold red")
    elif not findings:
        summary.append(f"No findings in {read} file(s).", style="green")
    else:
        summary.append(
            f"Found {len(findings)} finding(s) in {read} file(s): "
            f"{counts['error']} error, {counts['warning']} warning, {counts['info']} info."
        )
        if safe:
            summary.append(f"\n{safe} fixable with `tdoc heal`")
            summary.append(f" ({unsafe} more with `--unsafe-fixes`)." if unsafe else ".")
        elif unsafe:
            summary.append(f"\nNo safe fixes; {unsafe} fixable with `tdoc heal --unsafe-fixes`.")
    if errors:
        summary.append(f"\n{errors} file(s) could not be read.", style="bold red")
    return summary


def render(report: Report, out: TextIO, options: RenderOptions | None = None) -> None:
    options = options or RenderOptions()
    printer = Printer(out, options.color)
    for fr in report.files:
        _file_block(printer, fr)
    if not options.quiet:
        printer.print(_summary(report))

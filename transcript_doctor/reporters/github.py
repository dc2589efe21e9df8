"""`--format github`: GitHub Actions workflow commands, one annotation per finding.

`::error file=PATH,line=L,endLine=E,title=CODE name::message` (`warning` for warnings, `notice`
for info). Paths are relative to the working directory (the checkout) when they lie inside it.
Values are escaped as the runner expects (`%`, CR, LF; also `:` and `,` inside properties), so
transcript text can never start a workflow command of its own. ESC, BEL (so OSC 8 links and
title sequences), other control characters and bidi overrides from model text or file names are
escaped as `\\uXXXX` by the same function the human report uses.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from ..core import Report
from ..encode import printable
from ..model import FileResult, Finding
from ..text import terminal_safe
from .sarif import repo_relative

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def render(report: Report, out: TextIO) -> None:
    base = Path.cwd().resolve()
    for fr in report.files:
        if fr.error:
            out.write(_file_error(fr, base))
    for finding in report.findings:
        out.write(annotation(finding, base))


def annotation(f: Finding, base: Path) -> str:
    props = [f"file={_prop(repo_relative(f.path, base) or f.path)}"]
    if f.line is not None:
        props.append(f"line={f.line}")
        if f.end_line is not None and f.end_line >= f.line:
            props.append(f"endLine={f.end_line}")
    props.append(f"title={_prop(f'{f.code} {f.name}')}")
    return f"::{COMMANDS[f.severity]} {','.join(props)}::{_data(f.message + _where(f))}\n"


def _where(f: Finding) -> str:
    bits = []
    if f.row is not None:
        bits.append(f"{f.table or 'row'} row {f.row}")
    if f.session:
        bits.append(f"session {f.session}")
    if f.position is not None:
        bits.append(f"request position {f.position}")
    return f" ({', '.join(bits)})" if bits else ""


def _file_error(fr: FileResult, base: Path) -> str:
    path = _prop(repo_relative(fr.path, base) or fr.path)
    return f"::error file={path},title=tdoc could not scan this file::{_data(str(fr.error))}\n"


def _data(value: str) -> str:
    """Inert in an Actions log: the runner's own escapes (`%`, CR, LF), then control, bidi and OSC
    characters escaped as in the human report (`terminal_safe`), so no text can start a workflow
    command, colour the log, hide or reorder text, or add a link."""
    return terminal_safe(printable(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _prop(value: str) -> str:
    return _data(value).replace(":", "%3A").replace(",", "%2C")

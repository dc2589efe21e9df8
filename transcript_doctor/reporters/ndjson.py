"""`--format ndjson`: one finding per line, nothing else on stdout."""

from __future__ import annotations

from typing import TextIO

from ..core import Report
from ..encode import dumps


def render(report: Report, out: TextIO) -> None:
    for finding in report.findings:
        out.write(dumps(finding.as_dict()))
        out.write("\n")

"""`--format ndjson`: one finding per line, nothing else on stdout."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from ..encode import dumps

if TYPE_CHECKING:  # the scan API loads with the scan, not with the CLI
    from ..core import Report


def render(report: Report, out: TextIO) -> None:
    for finding in report.findings:
        out.write(dumps(finding.as_dict()))
        out.write("\n")

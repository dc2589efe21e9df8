"""`--format json`: the whole report as one JSON document."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from ..encode import dumps

if TYPE_CHECKING:  # the scan API loads with the scan, not with the CLI
    from ..core import Report


def render(report: Report, out: TextIO) -> None:
    out.write(dumps(report.as_dict(), indent=True))
    out.write("\n")

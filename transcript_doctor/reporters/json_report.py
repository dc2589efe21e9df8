"""`--format json`: the whole report as one JSON document."""

from __future__ import annotations

from typing import TextIO

from ..core import Report
from ..encode import dumps


def render(report: Report, out: TextIO) -> None:
    out.write(dumps(report.as_dict(), indent=True))
    out.write("\n")

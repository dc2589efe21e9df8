"""`--format json`: the whole report as one JSON document."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

import orjson

if TYPE_CHECKING:  # the scan API loads with the scan, not with the CLI
    from ..core import Report



def render(report: Report, out: TextIO) -> None:
    out.write(orjson.dumps(report.as_dict(), option=orjson.OPT_INDENT_2).decode())
    out.write("\n")

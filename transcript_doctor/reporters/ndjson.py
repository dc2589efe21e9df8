"""`--format ndjson`: one finding per line, nothing else on stdout."""

from __future__ import annotations

from typing import TextIO

import orjson

from ..core import Report


def render(report: Report, out: TextIO) -> None:
    for finding in report.findings:
        out.write(orjson.dumps(finding.as_dict()).decode())
        out.write("\n")

"""Output formats for scan reports; each reporter writes one Report to a text stream.

Every reporter writes only its data to the stream (stdout or `--output FILE`): talk goes to
stderr, and the exit code never depends on the format. `RenderOptions` carries what only some
formats use (colour and `--quiet` for `human`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from ..core import Report
from . import github, human, json_report, ndjson, sarif
from .options import RenderOptions

Reporter = Callable[[Report, TextIO, RenderOptions], None]

REPORTERS: dict[str, Reporter] = {
    "human": human.render,
    "json": lambda report, out, _options: json_report.render(report, out),
    "ndjson": lambda report, out, _options: ndjson.render(report, out),
    "sarif": lambda report, out, _options: sarif.render(report, out),
    "github": lambda report, out, _options: github.render(report, out),
    "html": lambda report, out, options: _html(report, out, options),
}


def _html(report: Report, out: TextIO, options: RenderOptions) -> None:
    from . import html  # the page machinery loads only when a page is asked for

    html.render(report, out, options, options.scan_config)

__all__ = ["REPORTERS", "RenderOptions", "Reporter"]

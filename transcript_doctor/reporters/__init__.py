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

Reporter = Callable[..., None]  # (report, out, options: RenderOptions | None = None)


def _machine(render: Callable[[Report, TextIO], None]) -> Reporter:
    """A format that has no options (json, ndjson, sarif, github)."""

    def reporter(report: Report, out: TextIO, options: RenderOptions | None = None) -> None:
        render(report, out)

    return reporter


def _html(report: Report, out: TextIO, options: RenderOptions | None = None) -> None:
    from . import html  # the page machinery loads only when a page is asked for

    html.render(report, out, options, options.scan_config if options else None)


REPORTERS: dict[str, Reporter] = {
    "human": human.render,
    "json": _machine(json_report.render),
    "ndjson": _machine(ndjson.render),
    "sarif": _machine(sarif.render),
    "github": _machine(github.render),
    "html": _html,
}

__all__ = ["REPORTERS", "RenderOptions", "Reporter"]

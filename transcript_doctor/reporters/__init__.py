"""Output formats for scan reports; each reporter writes one Report to a text stream.

Every reporter writes only its data to the stream (stdout or `--output FILE`): talk goes to
stderr, and the exit code never depends on the format. `RenderOptions` carries what only some
formats use (colour and `--quiet` for `human`, the scan configuration for `html`).

The format names are known without loading a reporter: a reporter's module (and what it needs:
rich for `human`, hashing for `sarif`, the page machinery for `html`) loads when its format is
written, so the command line can offer `--format` choices at start-up for nothing (issue 20).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from .options import RenderOptions

if TYPE_CHECKING:  # the scan API loads with the scan, not with the CLI
    from ..core import Report

Reporter = Callable[..., None]  # (report, out, options: RenderOptions | None = None)


def _loaded(module: str, *, takes_options: bool) -> Reporter:
    """The `render` of `reporters.<module>`, imported when a report is first written with it.
    A format without options (json, ndjson, sarif, github) is given none."""

    def reporter(report: Report, out: TextIO, options: RenderOptions | None = None) -> None:
        render = importlib.import_module(f"{__name__}.{module}").render
        if takes_options:
            render(report, out, options)
        else:
            render(report, out)

    reporter.__name__ = reporter.__qualname__ = f"render_{module}"
    return reporter


def _html(report: Report, out: TextIO, options: RenderOptions | None = None) -> None:
    from . import html

    html.render(report, out, options, options.scan_config if options else None)


REPORTERS: dict[str, Reporter] = {
    "human": _loaded("human", takes_options=True),
    "json": _loaded("json_report", takes_options=False),
    "ndjson": _loaded("ndjson", takes_options=False),
    "sarif": _loaded("sarif", takes_options=False),
    "github": _loaded("github", takes_options=False),
    "html": _html,
}

__all__ = ["REPORTERS", "RenderOptions", "Reporter"]

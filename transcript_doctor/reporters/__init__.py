"""Output formats for scan reports; each reporter writes one Report to a text stream.

Every reporter writes only its data to the stream (stdout): talk goes to stderr, and the exit
code never depends on the format.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from . import github, human, json_report, ndjson, sarif

if TYPE_CHECKING:  # the scan API loads with the scan, not with the CLI
    from ..core import Report

    Reporter = Callable[[Report, TextIO], None]

REPORTERS: dict[str, Reporter] = {
    "human": human.render,
    "json": json_report.render,
    "ndjson": ndjson.render,
    "sarif": sarif.render,
    "github": github.render,
}

"""Output formats for scan reports; each reporter writes one Report to a text stream."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from ..core import Report
from . import human, json_report, ndjson

Reporter = Callable[[Report, TextIO], None]

REPORTERS: dict[str, Reporter] = {
    "human": human.render,
    "json": json_report.render,
    "ndjson": ndjson.render,
}

"""The eve store kind: detection by content, loading, replay, line-edit heal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...fixes.jsonl_heal import line_heal_plan
from ...heal.plan import HealPlan
from ...model import Finding
from ..base import HealOptions, Options, Store, StoreKind
from ..collector import collector_paused
from .checks import native_findings as eve_findings
from .reader import read_stream
from .replay import replay
from .sniff import sniff_stream
from .turns import Stream

FORMAT = "eve-stream"


class EveStore(Store):
    format = FORMAT
    system = "eve"

    def __init__(self, path: Path, display: str, stream: Stream) -> None:
        super().__init__(path, display)
        self.stream = stream

    @property
    def session_count(self) -> int:
        return 1

    @property
    def record_count(self) -> int:
        return self.stream.records

    def session_identity(self) -> tuple[str | None, float | None]:
        return self.stream.session_id, None

    def replay(self, options: Options) -> Any:
        self.check_session(options, self.stream.session_id)
        return replay(self.stream, self.display)

    # No `conversations`: eve keeps the model history in workflow state, and a stream line cannot
    # be mapped to a request position with certainty, so the shared rules have nothing to read
    # (see docs/eve.md). Everything eve reports is its own.
    def native_findings(self, options: Options, codes: frozenset[str]) -> Iterator[Finding]:
        # The findings and their evidence hold no cycles: made with the collector paused, so a
        # full collection does not walk the whole rebuilt stream because they survived (issue 20).
        with collector_paused():
            found = list(eve_findings(self, codes))
        return iter(found)

    def plan_heal(self, findings: list[Finding], options: HealOptions) -> HealPlan:
        """Line edits only (a torn tail, the records of an attempt that left nothing)."""
        return line_heal_plan(self.path, findings)


class EveKind(StoreKind):
    format = FORMAT
    system = "eve"
    jsonl = True

    def sniff(self, path: Path, head: bytes) -> bool:
        return sniff_stream(path, head)

    def open(self, path: Path, display: str, options: Options) -> Store:
        return EveStore(path, display, read_stream(path, display))

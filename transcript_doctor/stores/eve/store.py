"""The eve store kind: detection by content, loading, replay, line-edit heal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...fixes.jsonl_heal import heal_lines, restore_lines
from ...model import Finding
from ..base import HealOptions, HealResult, Options, Store, StoreKind
from .reader import read_stream, sniff
from .replay import replay
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

    def replay(self, options: Options) -> Any:
        return replay(self.stream, self.display)

    def heal(self, findings: list[Finding], options: HealOptions) -> HealResult:
        """Line edits only (a torn tail, the records of an attempt that left nothing)."""
        return heal_lines(self, findings, options)

    def restore(self, backup: Path) -> None:
        restore_lines(self, backup)


class EveKind(StoreKind):
    format = FORMAT
    system = "eve"
    jsonl = True

    def sniff(self, path: Path, head: bytes) -> bool:
        return sniff(head)

    def open(self, path: Path, display: str, options: Options) -> Store:
        return EveStore(path, display, read_stream(path, display))

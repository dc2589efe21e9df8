"""A store kind known by its format and a lightweight sniffer; its package loads on first use.

Detection asks every kind whether a file is of its format. A `LazyKind` answers with a sniff
function from a module of the family's package that imports no more than the standard library
and orjson, so a scan of one file imports only the family that matched. Everything else (open,
heal, attributes of the real kind) goes to the family's `StoreKind`, imported on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .base import Options, Store, StoreKind

Sniffer = Callable[[Path, bytes], bool]


class LazyKind(StoreKind):
    """`target` names the real kind as `"package.module:ClassName"`."""

    def __init__(self, format: str, system: str, sniff: Sniffer, target: str, *, jsonl: bool = False,
                 splits_sessions: bool = False) -> None:  # fmt: skip
        self.format = format
        self.system = system
        self.jsonl = jsonl
        self.splits_sessions = splits_sessions  # declared here too: a scan asks before it opens the store
        self._sniff = sniff
        self._target = target
        self._kind: StoreKind | None = None

    @property
    def module(self) -> str:
        """The module that defines the real kind (what a worker pool preloads)."""
        return self._target.partition(":")[0]

    @property
    def kind(self) -> StoreKind:
        if self._kind is None:
            module, _, name = self._target.partition(":")
            kind = getattr(importlib.import_module(module), name)()
            if kind.format != self.format:
                raise TypeError(f"{self._target} is format {kind.format!r}, declared {self.format!r}")
            self._kind = kind
        return self._kind

    def sniff(self, path: Path, head: bytes) -> bool:
        return self._sniff(path, head)

    def open(self, path: Path, display: str, options: Options) -> Store:
        return self.kind.open(path, display, options)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.kind, name)

    def __repr__(self) -> str:
        return f"LazyKind({self.format!r} -> {self._target})"

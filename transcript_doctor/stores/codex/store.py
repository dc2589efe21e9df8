"""The Codex rollout store kind: detection by content, reconstruction, findings, replay, heal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...conversation import Conversation
from ...heal.plan import HealPlan
from ...model import Finding, TdocError
from ...text import iso_seconds
from ..base import HealOptions, Options, Store, StoreKind
from ..collector import collector_paused
from ..options import CodexOptions
from .convert import conversation
from .edits import CodexEditor
from .native import integrity_findings, locate_at, recorded_errors, store_findings
from .reader import Rollout, read_rollout
from .reconstruct import CODEX_TARGET, RAW_TARGET, History, Request, normalise, rebuild
from .replay import replay_object
from .sniff import sniff

FORMAT = "codex-rollout"
TARGETS = (CODEX_TARGET, RAW_TARGET)


def target_of(options: Options) -> str:
    target = options.get(CodexOptions).target or CODEX_TARGET
    if target not in TARGETS:
        raise TdocError(f"unknown --target {target!r} for Codex rollouts; use {' or '.join(TARGETS)}")
    return target


class CodexStore(Store):
    format = FORMAT
    system = "codex"

    def __init__(self, path: Path, display: str, rollout: Rollout) -> None:
        super().__init__(path, display)
        self.rollout = rollout
        self._built: dict[str, tuple[History, Request]] = {}

    @property
    def session_count(self) -> int:
        return 1

    @property
    def record_count(self) -> int:
        return self.rollout.records

    def built(self, target: str) -> tuple[History, Request]:
        """The rebuilt history and the request sent to `target` (computed once per target)."""
        if target not in self._built:
            with collector_paused():
                history = rebuild(self.rollout.events)
                self._built[target] = (history, normalise(history.items, target))
        return self._built[target]

    def conversations(self, options: Options) -> Iterator[Conversation]:
        target = target_of(options)
        history, request = self.built(target)
        with collector_paused():
            conv = conversation(self.display, FORMAT, self.rollout.session, request, history.unsent,
                                CodexEditor(self.path, self.rollout), target, live=False)
        yield conv

    def native_findings(self, options: Options, codes: frozenset[str]) -> Iterator[Finding]:
        target = target_of(options)
        _, request = self.built(target)
        yield from store_findings(self.path, self.display, FORMAT, self.rollout, request, codes)
        yield from integrity_findings(self.path, self.display, FORMAT, self.rollout, codes)
        if "E601" in codes:
            yield from recorded_errors(self.display, FORMAT, self.rollout, target)

    def session_identity(self) -> tuple[str | None, float | None]:
        return self.rollout.session, iso_seconds(self.rollout.last_timestamp)

    def replay(self, options: Options) -> Any:
        self.check_session(options, self.rollout.session)
        target = target_of(options)
        history, request = self.built(target)
        return replay_object(self.rollout, history, request, target)

    def locate(self, position: int, session: str | None = None) -> dict[str, Any] | None:
        item = locate_at(self.rollout, position, CODEX_TARGET)
        if item is None:
            return None
        kind = item["kind"]
        role = item["role"] or (None if kind == "message" or kind.endswith("_output") else "assistant")
        return {"session": self.rollout.session, "line": item["line"], "end_line": item["line"], "row": None,
                "table": None, "role": role, "kind": item["kind"], "source": item["source"]}

    def plan_heal(self, findings: list[Finding], options: HealOptions) -> HealPlan:
        from .heal import plan_rollout_heal

        return plan_rollout_heal(self, findings, options)


class CodexKind(StoreKind):
    format = FORMAT
    system = "codex"
    jsonl = True

    def sniff(self, path: Path, head: bytes) -> bool:
        return sniff(path, head)

    def open(self, path: Path, display: str, options: Options) -> Store:
        rollout = read_rollout(path, display, keep=options.full_replay)
        if rollout.records == 0:
            detail = f" (line {rollout.problems[0].line}: {rollout.problems[0].detail})" if rollout.problems else ""
            raise TdocError(f"{display}: no readable rollout line{detail}")
        return CodexStore(path, display, rollout)

"""The Claude Code store kind: a session transcript (`~/.claude/projects/<project>/<session>.jsonl`)."""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

from ...conversation import Conversation
from ...fixes.fingerprint import Fingerprint
from ...heal.plan import HealPlan
from ...model import Finding
from ...rules.engine import check_store
from ...text import iso_seconds
from ..base import HealOptions, Options, Store, StoreKind
from .checks import SHARED_CODES, native, sent_messages
from .editor import ClaudeEditor
from .live import claude_holders
from .reader import Transcript, freeze_index, gc_paused, read_transcript, refreeze, thaw_index
from .resume import FORMAT, Resume
from .sniff import sniff_transcript
from .subagents import parent_link

ALL_CODES = frozenset(SHARED_CODES | {"F501", "F502", "F509", "C206", "W110", "T405", "E601"})


class ClaudeCodeStore(Store):
    format = FORMAT
    system = "claude-code"

    def __init__(self, path: Path, display: str, transcript: Transcript, fingerprint: Fingerprint | None = None):
        super().__init__(path, display)
        self.transcript = transcript
        self.resume = Resume(transcript)
        self.editor = ClaudeEditor(transcript)
        self.fingerprint = fingerprint
        self._thaw: weakref.finalize | None = None

    @property
    def session_count(self) -> int:
        return 1

    @property
    def record_count(self) -> int:
        return len(self.transcript.records)

    @cached_property
    def live(self) -> bool:
        """The writer may still be appending: the file ends on a call that is still running."""
        return self.resume.running_call() and (self._tail_is_progress() or bool(claude_holders(self.path)))

    def _tail_is_progress(self) -> bool:
        return self.resume.tail_only_progress()

    def conversations(self, options: Options) -> Iterator[Conversation]:
        # The request's messages are built, and the shared rules run over them, on a heap as large as the
        # index: cyclic collections stay paused until the engine has taken the conversation.
        with gc_paused():
            messages, unsent = sent_messages(self), self.resume.unsent()
            if self._frozen:
                refreeze()
            yield Conversation(
                path=self.display,
                format=FORMAT,
                session=self.transcript.session,
                messages=messages,
                unsent=unsent,
                editor=self.editor,
                codes=SHARED_CODES,
                live=self.live,
                target="anthropic",
            )

    def native_findings(self, options: Options, codes: frozenset[str]) -> Iterator[Finding]:
        with gc_paused():
            return iter(list(native(self, codes)))

    def findings(self, codes: frozenset[str] = ALL_CODES) -> list[Finding]:
        """Every finding of this store (shared rules and its own), for the heal's re-scan."""
        with gc_paused():
            return check_store(self, Options(), codes)

    def session_identity(self) -> tuple[str | None, float | None]:
        return self.transcript.session, iso_seconds(self.transcript.last_timestamp)

    def replay(self, options: Options) -> Any:
        self.check_session(options, self.transcript.session)
        obj = self.resume.replay_object(self.display)
        obj["parent"] = parent_link(self.path, self.transcript)  # a subagent's Task call, else None
        return obj

    def locate(self, position: int, session: str | None = None) -> dict[str, Any] | None:
        return self.resume.locate(position)

    def plan_heal(self, findings: list[Finding], options: HealOptions) -> HealPlan:
        from .heal import plan_heal

        def rescan(t: Transcript) -> list[Finding]:
            return ClaudeCodeStore(t.path, self.display, t).findings()

        # The verification rebuilds the records, the chain and the request of the healed file beside
        # the original's: the full collections its allocations set off walked both (0.8 s of a 7 s
        # heal of 8,000 orphan calls), and none of it holds a cycle.
        with gc_paused():
            return plan_heal(self, findings, options, rescan)

    def freeze(self) -> None:
        """Keep the index out of cyclic collections while the store is open (`reader.freeze_index`);
        closed, or dropped without a close, the store thaws it."""
        if self._thaw is None:
            freeze_index()
            self._thaw = weakref.finalize(self, thaw_index)

    @property
    def _frozen(self) -> bool:
        return self._thaw is not None and self._thaw.alive

    def close(self) -> None:
        self.editor.close()
        if self._thaw is not None:
            self._thaw()  # runs once


class ClaudeCodeKind(StoreKind):
    format = FORMAT
    system = "claude-code"
    jsonl = True

    def sniff(self, path: Path, head: bytes) -> bool:
        return sniff_transcript(path, head)

    def open(self, path: Path, display: str, options: Options) -> Store:
        fingerprint = Fingerprint.of(path) if options.fingerprint else None
        with gc_paused():
            transcript = read_transcript(path, display, keep_text=options.full_replay)
            store = ClaudeCodeStore(path, display, transcript, fingerprint)
            store.freeze()
            return store

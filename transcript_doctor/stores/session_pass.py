"""One read of each session for both hooks the rule engine calls on a store.

The engine walks `Store.conversations` first and asks for `Store.native_findings` after. A store
whose native rules read the same session data keeps a `SessionPass`: while the conversations are
walked it gathers each session's native findings, and hands them over when asked. When the engine
did not walk the conversations (no shared rule selected) the pass reads the sessions itself, for
the selected codes only.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Generic, TypeVar

from ..conversation import Conversation
from ..model import Finding

S = TypeVar("S")


class SessionPass(Generic[S]):
    """Conversations and native findings of sessions of type `S`, read once per scan."""

    def __init__(
        self,
        conversation: Callable[[S], Conversation | None],
        natives: Callable[[S, Collection[str]], Iterable[Finding]],
        native_codes: Collection[str],
    ) -> None:
        self._conversation = conversation
        self._natives = natives
        self._native_codes = native_codes
        self._gathered: list[Finding] | None = None

    def conversations(self, sessions: Iterable[S]) -> Iterator[Conversation]:
        gathered: list[Finding] = []
        self._gathered = None
        for session in sessions:
            gathered.extend(self._natives(session, self._native_codes))
            conversation = self._conversation(session)
            if conversation is not None:
                yield conversation
            del session, conversation  # not held while the next session is read (stores/collector.py)
        self._gathered = gathered

    def findings(self, sessions: Callable[[], Iterable[S]], codes: Collection[str]) -> Iterator[Finding]:
        gathered, self._gathered = self._gathered, None
        if gathered is not None:
            yield from (f for f in gathered if f.code in codes)
            return
        for session in sessions():
            yield from self._natives(session, codes)

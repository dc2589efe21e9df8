"""Every kimi-code check: the repairs the projections make (for the shared rules) and the
findings only a kimi journal has (file integrity, steps, compaction, transcript, divergence).

`codes` is the selection: work for rules not in it is skipped (in particular the C201 fix, which
re-reads the journal line it rewrites, is only built when C201 is selected).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING

from ....conversation import Conversation
from ....model import Finding
from ....rules.shared.w101_vacuous_assistant import RULE as VACUOUS
from .file_integrity import _maker, file_findings
from .history import (
    compaction_findings,
    divergence_findings,
    has_misaligned_compaction,
    step_findings,
    transcript_findings,
    unknown_step_findings,
)
from .repairs import repairs

if TYPE_CHECKING:
    from ..store import KimiStore, Session


def conversations(store: KimiStore, engines: tuple[str, ...]) -> Iterator[Conversation]:
    """Per session, the repairs kimi-code makes before sending; no messages for the shared checks.

    kimi's W101, F507 and F508 are found on the journal's steps and records (with the request
    position a pre-fix build sends), so the conversation carries the repairs only.
    """
    for session in store.sessions:
        yield Conversation(store.display, store.format, session.id, [], codes=frozenset(),
                           repairs=list(repairs(session.replay, engines, session.member)))


def native_findings(store: KimiStore, engines: tuple[str, ...], codes: Collection[str]) -> Iterator[Finding]:
    for session in store.sessions:
        found = _session_findings(store, session, set(codes))
        yield from (f for f in found if f.engine in (None, "both") or f.engine in engines)


def _session_findings(store: KimiStore, session: Session, codes: set[str]) -> Iterator[Finding]:
    state = session.replay
    mk = _maker(store, session)
    yield from file_findings(store, session, codes)
    for engine, message in state.crash.items():
        yield mk("C204", f"engine {engine} fails to replay this journal: {message}",
                 line=None, engine=engine, severity="error", evidence={"crash": message})
    for line, message in state.v1.record_errors if "C204" in codes else ():  # records v1 throws on
        yield mk("C204", f"engine v1 fails on line {line}: {message}", line=line, engine="v1", severity="error",
                 evidence={"error": message})
    if codes & {VACUOUS.code, "C203"}:
        yield from step_findings(mk, state)
    if "C201" in codes:
        yield from compaction_findings(mk, state)
    if "C202" in codes:
        yield from transcript_findings(mk, state)
    if "C204" in codes:
        yield from divergence_findings(mk, state, has_misaligned_compaction(state))
    if "C205" in codes:
        yield from unknown_step_findings(mk, state)

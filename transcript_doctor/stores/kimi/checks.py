"""Every kimi-code check, registered for the `kimi-wire` format."""

from __future__ import annotations

from collections.abc import Iterator

from ...model import Finding
from ...rules import checker
from ..base import Options
from .checks_file import _maker, file_findings
from .checks_history import (
    compaction_findings,
    divergence_findings,
    step_findings,
    transcript_findings,
    unknown_step_findings,
)
from .checks_projection import anomaly_findings


@checker("kimi-wire")
def check_kimi(store, options: Options) -> Iterator[Finding]:
    engines = store.engines(options)
    for session in store.sessions:
        found = list(_session_findings(store, session, engines))
        yield from (f for f in found if _seen_by(f, engines))


def _session_findings(store, session, engines: tuple[str, ...]) -> Iterator[Finding]:
    state = session.replay
    mk = _maker(store, session)
    yield from file_findings(store, session)
    for engine, message in state.crash.items():
        yield mk("C204", f"engine {engine} fails to replay this journal: {message}",
                 line=None, engine=engine, severity="error", evidence={"crash": message})
    for line, message in state.v1.record_errors:  # a record v1 throws on (the resume reports it)
        yield mk("C204", f"engine v1 fails on line {line}: {message}", line=line, engine="v1", severity="error",
                 evidence={"error": message})
    yield from step_findings(mk, state)
    c201 = list(compaction_findings(mk, state))
    yield from c201
    yield from transcript_findings(mk, state)
    yield from divergence_findings(mk, state, bool(c201))
    yield from unknown_step_findings(mk, state)
    yield from anomaly_findings(mk, state, engines)


def _seen_by(f: Finding, engines: tuple[str, ...]) -> bool:
    return f.engine in (None, "both") or f.engine in engines

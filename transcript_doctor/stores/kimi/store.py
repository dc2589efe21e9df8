"""The kimi-code store kind: a `wire.jsonl` journal, or a debug export zip of a session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...conversation import Conversation
from ...model import Finding, TdocError
from ..base import HealOptions, Options, Store, StoreKind
from ..collector import collector_paused
from ..options import KimiOptions
from .checks import suite as checks
from .replay.driver import KimiReplay, projected, replay_file, replay_object, replay_stream
from .replay.step_index import StepRecords
from .sniff import journal_members, sniff_wire

if TYPE_CHECKING:  # the heal machinery loads when a heal is planned, not with a scan
    from ...heal.plan import HealPlan


class Session:
    """One agent's journal inside a store."""

    __slots__ = ("id", "member", "replay")

    def __init__(self, id: str | None, member: str | None, replay: KimiReplay) -> None:
        self.id = id
        self.member = member  # path inside an export zip
        self.replay = replay


class KimiStore(Store):
    format = "kimi-wire"
    system = "kimi"

    def __init__(self, path: Path, display: str, sessions: list[Session], readonly: bool) -> None:
        super().__init__(path, display)
        self.sessions = sessions
        self.readonly = readonly

    @property
    def session_count(self) -> int:
        return len(self.sessions)

    @property
    def record_count(self) -> int:
        return sum(s.replay.stats.records for s in self.sessions)

    def engines(self, options: Options) -> tuple[str, ...]:
        engine = options.get(KimiOptions).engine
        return ("v1", "v2") if engine in ("auto", "both") else (engine,)

    def replay(self, options: Options) -> Any:
        engine = options.get(KimiOptions).engine
        engine = engine if engine in ("v1", "v2") else "v2"
        chosen = [s for s in self.sessions if options.session in (None, s.id)]
        if not chosen:
            raise TdocError(f"{self.display}: no session {options.session!r}")
        objs = []
        for s in chosen:
            obj = replay_object(s.replay, engine)
            if s.id is not None:
                obj["session"] = s.id
            objs.append(obj)
        # One object for a journal or a chosen session; an export bundle is a list even with one agent.
        single = options.session is not None or (len(chosen) == 1 and chosen[0].id is None)
        return objs[0] if single else objs

    def locate(self, position: int, session: str | None = None) -> dict[str, Any] | None:
        for s in self.sessions:
            if session not in (None, s.id):
                continue
            return locate_position(s, position)
        return None

    # The rules project each engine's whole history several times (normal, strict, pre-fix) and keep
    # what they build; none of it holds a cycle. With the collector running, every full collection
    # walked all of it again: on a journal of 12,800 turns, 14 of them took 5.4 s of a 12 s scan.
    # So the collector stays paused while the shared rules run over each conversation (the engine
    # consumes it inside this generator) and while the store's own findings are made.

    def conversations(self, options: Options) -> Iterator[Conversation]:
        with collector_paused():
            yield from checks.conversations(self, self.engines(options))

    def native_findings(self, options: Options, codes: frozenset[str]) -> Iterator[Finding]:
        with collector_paused():
            return iter(list(checks.native_findings(self, self.engines(options), codes)))

    def plan_heal(self, findings: list, options: HealOptions) -> HealPlan:
        if self.readonly:
            raise TdocError(f"{self.display}: an export zip is read-only; heal the session's wire.jsonl instead")
        from .heal.driver import heal_store

        return heal_store(self, findings, options)


def locate_position(session: Session, position: int) -> dict[str, Any] | None:
    """The records behind the message a pre-fix v1 request sends at `position`."""
    state = session.replay
    if "v1" in state.crash:
        return None
    projection = projected(state, "v1", prefix=True)
    if projection is None or not 0 <= position < len(projection.messages):
        return None
    lines: list[int] = []
    for index in projection.sources[position]:
        lines.extend(message_lines(state, state.v1.history[index]))
    return {
        "session": session.id,
        "line": min(lines) if lines else None,
        "end_line": max(lines) if lines else None,
        "row": None,
        "table": None,
        "role": projection.messages[position].get("role"),
    }


def message_lines(state: KimiReplay, msg: dict[str, Any]) -> list[int]:
    """Journal lines that produced a history message."""
    src = msg.get("_src")
    if not src:
        return []
    if src[0] == "step":
        step: StepRecords | None = state.steps.steps.get(src[1])
        return step.lines if step else [src[2]]
    if src[0] == "rec":
        return [src[1]]
    return []


class KimiKind(StoreKind):
    format = "kimi-wire"
    system = "kimi"
    jsonl = True

    def sniff(self, path: Path, head: bytes) -> bool:
        return sniff_wire(path, head)

    def open(self, path: Path, display: str, options: Options) -> Store:
        if _is_zipfile(path):
            return _open_zip(path, display, options.full_replay)
        try:
            # the transcript reducers serve C202 alone, which no heal fixes (docs/kimi-code.md §Heal)
            state = replay_file(path, full=options.full_replay, fingerprint=options.fingerprint,
                                transcripts=not options.for_writing_heal)
        except OSError as exc:
            raise TdocError(f"{display}: cannot read: {exc.strerror or exc}") from None
        if state.stats.records == 0 and not state.problems:
            raise TdocError(f"{display}: empty journal, nothing to read")
        if state.stats.records == 0:
            first = state.problems[0]
            raise TdocError(f"{display}: no readable record (line {first.line}: {first.detail})")
        agent = path.parent.name if path.parent.parent.name == "agents" else None
        return KimiStore(path, display, [Session(agent, None, state)], readonly=False)


# A zip's end-of-central-directory signature; `zipfile.is_zipfile` looks for it in the last 64 KiB
# (the longest archive comment) plus the 22 bytes of the record.
_END_OF_ZIP = b"PK\x05\x06"
_END_WINDOW = (1 << 16) + 22


def _is_zipfile(path: Path) -> bool:
    """`zipfile.is_zipfile(path)`, asked only of a file whose tail holds the end-of-zip signature,
    so a journal does not load zipfile (start-up, issue 20)."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(size - _END_WINDOW, 0))
            if _END_OF_ZIP not in fh.read():
                return False
    except OSError:
        pass  # zipfile meets the same failure and answers no
    import zipfile

    return zipfile.is_zipfile(path)


def _open_zip(path: Path, display: str, full: bool) -> KimiStore:
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            sessions = []
            for member in journal_members(zf.namelist()):
                agent = member.rstrip("/").split("/")[-2]
                with zf.open(member) as fh:
                    sessions.append(Session(agent, member, replay_stream(Path(member), fh, full=full)))
    except (zipfile.BadZipFile, OSError) as exc:
        raise TdocError(f"{display}: unreadable export zip ({exc})") from None
    if not sessions:
        raise TdocError(f"{display}: export zip has no agents/<id>/wire.jsonl")
    return KimiStore(path, display, sessions, readonly=True)

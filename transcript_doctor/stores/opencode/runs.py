"""Runs: a user message and the assistant messages that answer it, with the verdict on each.

An assistant message belongs to the run of the user message its `parentID` names; without a
usable `parentID` it joins the run of the newest user message before it (or a leading run with
no user message). The verdict comes from `completion.decide` on the run's last assistant
message, with the evidence merged over all of the run's assistant messages in order. Taking the
last one is the bot's deferral at `session.idle`: an empty intermediate message that a real one
follows is never the run's result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...text import is_blank, js_trim
from . import completion
from .completion import Decision, Evidence
from .projection import Projection, project
from .reader import OcMessage, OcSession


@dataclass
class Run:
    index: int
    user: OcMessage | None
    assistants: list[OcMessage] = field(default_factory=list)
    open: bool = False  # no later run: the session may still be working on it
    decision: Decision | None = None
    _evidence: Evidence | None = None
    _final_evidence: Evidence | None = None  # the last assistant message's own evidence

    @property
    def final(self) -> OcMessage | None:
        return self.assistants[-1] if self.assistants else None

    def evidence(self) -> Evidence:
        """The run's merged evidence (computed once the run is complete, when first asked for)."""
        if self._evidence is None:
            assistants = self.assistants
            own = self._final_evidence if len(assistants) == 1 else None  # one message: its own evidence
            if own is not None:
                self._evidence = own
                return own
            ev = Evidence()
            for msg in assistants:
                self._final_evidence = completion.message_evidence(msg.info, [p.data for p in msg.parts])
                ev = completion.merge(ev, self._final_evidence)
            self._evidence = ev
        return self._evidence

    def as_dict(self, view: SessionView) -> dict[str, Any]:
        d = self.decision
        final = self.final
        return {
            "index": self.index,
            "user_message": self.user.id if self.user else None,
            "assistant_messages": [m.id for m in self.assistants],
            "final_message": final.id if final else None,
            "position": view.position(final),
            "verdict": d.verdict if d else completion.NO_REPLY,
            "rule": d.code if d else None,
            "retry_safe": d.retry_safe if d else False,
            "reasons": d.reasons if d else [],
            "finish": d.finish if d else None,
            "text_chars": len(d.text) if d else 0,
            "evidence": self.evidence().as_dict(),
        }


def build_runs(messages: list[OcMessage]) -> list[Run]:
    runs: list[Run] = []
    by_user: dict[str, Run] = {}
    for msg in messages:
        if msg.role == "user":
            run = Run(len(runs), msg)
            runs.append(run)
            by_user[msg.id] = run
        elif msg.role == "assistant":
            parent = msg.info.get("parentID")
            run = by_user.get(parent) if isinstance(parent, str) else None
            if run is None:
                if not runs:
                    runs.append(Run(0, None))
                run = runs[-1]
            run.assistants.append(msg)
    if runs:
        runs[-1].open = True
    for run in runs:
        final = run.final
        if final is not None:
            run.decision = _answered(final) or _decision(run, final)
    return runs


def _decision(run: Run, final: OcMessage) -> Decision:
    """`completion.decide` on the run's final message (the general path)."""
    parts = [p.data for p in final.parts]
    own = run._final_evidence = completion.message_evidence(final.info, parts)
    return completion.decide(final.info, parts, run.evidence, open_run=run.open, own=own)


def _answered(final: OcMessage) -> Decision | None:
    """The verdict of `_decision` for the common final message (completed, no error, visible text
    that is not blank), read in one pass over its parts; None for any other message, which
    `_decision` judges. The merged and the message's own evidence are not read for it: only an
    empty text needs them (pinned by tests/opencode/test_scan_paths.py)."""
    info = final.info
    time = info.get("time")
    if info.get("error") or time.__class__ is not dict or time.get("completed") is None:
        return None
    texts: list[str] = []
    tool = False
    reason = None  # the last step-finish part's non-blank reason
    for part in final.parts:
        kind = part.type
        if kind == "text":
            data = part.data
            text = data.get("text")
            if (isinstance(text, str) and data.get("synthetic") is not True and data.get("ignored") is not True
                    and not completion.is_placeholder(text)):
                texts.append(text)
        elif kind == "tool":
            tool = True
        elif kind == "step-finish":
            step = part.data.get("reason")
            if isinstance(step, str) and not is_blank(step):
                reason = step
    text = "".join(texts)
    if is_blank(text):
        return None
    finish = info.get("finish")
    if isinstance(finish, str) and not is_blank(finish):
        reason = finish
    return completion.judge_text(text, None if reason is None else js_trim(reason), tool)


@dataclass
class SessionView:
    """Everything the checks and `replay` need about one session."""

    session: OcSession
    projection: Projection
    runs: list[Run]

    def position(self, msg: OcMessage | None) -> int | None:
        return None if msg is None else self.projection.first_position.get(msg.id)

    def replay_dict(self, fmt: str) -> dict[str, Any]:
        s = self.session
        return {
            "format": fmt,
            "engine": None,
            "session": s.id,
            "title": s.title,
            "parent_session": s.parent_id,
            "history": self.projection.wire,
            "anomalies": self.projection.anomalies,
            "runs": [r.as_dict(self) for r in self.runs],
            "errors": [{"table": p.table, "row": p.row, "line": p.line, "detail": p.detail} for p in s.problems],
        }


def analyse(session: OcSession, wire: bool = True) -> SessionView:
    """The session's projection and runs; `wire=False`: without the request's wire shape (scans)."""
    return SessionView(session, project(session.messages, wire), build_runs(session.messages))

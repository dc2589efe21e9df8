"""How the shared rules' fixes are written in a Hermes `state.db`: as Hermes' own operations.

A removed message is deactivated (`active=0`, as Hermes' rewind does), a blank part or a reused
call is cut out of its row, a call with no result gets an "interrupted" error result only when it
ends the session (Hermes replays by id, so nothing can be inserted between existing rows; a call
in the middle of the history is removed instead), and bad characters become U+FFFD. Each fix
keeps the actions it was made from, so a heal composes actions, not guesses (see `plan.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...model import Fix, Message, ToolCall
from . import plan

if TYPE_CHECKING:
    from .checks import SessionScan


def fix_signature(fix: Fix) -> tuple[str, str]:
    """What identifies a fix's effect: its summary and edits (applicability aside)."""
    return fix.summary, repr([e.as_dict() for e in fix.edits])


class HermesEditor:
    """The `Editor` of one Hermes session (see `transcript_doctor.conversation.Editor`)."""

    def __init__(self, scan: SessionScan) -> None:
        self.scan = scan
        self.actions: dict[tuple[str, str], list[plan.Action]] = {}

    def _fix(self, actions: list[plan.Action], note: str = "") -> Fix | None:
        fix = plan.fix_of(actions, self.scan, note)
        if fix is not None:
            self.actions[fix_signature(fix)] = actions
        return fix

    def _row_id(self, msg: Message) -> object:
        row = msg.extra.get("row")
        return row.id if row is not None else None

    def remove_message(self, msg: Message) -> Fix | None:
        return self._fix([plan.Action("deactivate", self._row_id(msg), self.scan.session)])

    def drop_part(self, msg: Message, index: int) -> Fix | None:
        return self._fix([plan.Action("drop_part", self._row_id(msg), self.scan.session, index=index)])

    def drop_call(self, msg: Message, index: int) -> Fix | None:
        call = msg.tool_calls[index]
        return self._fix([plan.Action("drop_call", self._row_id(msg), self.scan.session, index=index, call_id=call.id)])

    def answer_call(self, msg: Message, call: ToolCall) -> Fix | None:
        row, sid = self._row_id(msg), self.scan.session
        if self._ends_session(msg):
            return self._fix([plan.Action("insert_result", row, sid, call_id=call.id, tool_name=call.name)])
        note = " (Hermes replays by id: no result row can be inserted between existing rows)"
        return self._fix([plan.Action("drop_call", row, sid, call_id=call.id)], note)

    def remove_leading(self, msg: Message) -> Fix | None:
        before = []
        for entry in self.scan.entries:
            if entry.row.role == "user":
                break
            if entry.row.role != "system":
                before.append(plan.Action("deactivate", entry.row.id, self.scan.session))
        return self._fix(before)

    def scrub_text(self, msg: Message) -> Fix | None:
        return self._fix([plan.Action("scrub", self._row_id(msg), self.scan.session)])

    def _ends_session(self, msg: Message) -> bool:
        """Only tool results follow `msg` in the request: a result appended after it is in place."""
        messages = [e.message for e in self.scan.entries]
        index = next(i for i, m in enumerate(messages) if m is msg)
        return all(m.role == "tool" for m in messages[index + 1 :])

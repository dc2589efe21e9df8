"""The Claude Code `Editor`: a rule's fix intent -> `Fix` with the line edits that realise it.

Every `Fix` this editor makes is remembered with its intents, so a heal plans all the chosen fixes
together (`plan.Planner`): two removals next to each other re-link their children once, to the
nearest survivor, instead of producing edits that overlap.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property

from ...model import Applicability, Fix, Message, ToolCall
from .plan import Intent, LineSource, Planner
from .reader import Transcript


class ClaudeEditor:
    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.intents: dict[tuple[object, ...], tuple[Intent, ...]] = {}

    @cached_property
    def planner(self) -> Planner:
        """Built on the first fix: indexes every record by uuid, parent and line."""
        return Planner(self.transcript, LineSource(self.transcript.path))

    def close(self) -> None:
        """Close the file the planner reads lines from (when a fix was planned)."""
        planner = self.__dict__.get("planner")
        if planner is not None:
            planner.source.close()

    def fix(self, applicability: Applicability, summary: str, intents: Iterable[Intent]) -> Fix | None:
        intents = tuple(intents)
        if not intents:
            return None
        plan = self.planner.plan(intents)
        if plan.refused or not plan.lines:
            return None
        fix = Fix(applicability, summary, plan.edits())
        self.intents[_key(fix)] = intents
        return fix

    def intents_of(self, fix: Fix | None) -> tuple[Intent, ...]:
        """The intents of a fix this editor made (the engine may re-stamp its applicability)."""
        return self.intents.get(_key(fix), ()) if fix is not None else ()

    # ----------------------------------------------------------------------- Editor protocol

    def remove_message(self, msg: Message) -> Fix | None:
        if msg.role == "tool":
            slots = msg.extra.get("slots") or []
            return self.fix("safe", f"drop the tool result for {msg.tool_call_id!r}",
                            (Intent("drop-block", record=r, block=b) for r, b in slots))  # fmt: skip
        records = msg.extra.get("records") or []
        lines = sorted({self.transcript.records[r].line for r in records})
        return self.fix("safe", f"remove the {len(records)} record(s) of the message (line(s) {_lines(lines)}) "
                        "and re-link their children", (Intent("remove", record=r) for r in records))  # fmt: skip

    def drop_part(self, msg: Message, index: int) -> Fix | None:
        slots = msg.extra.get("slots") or []
        if not 0 <= index < len(slots):
            return None
        record, block = slots[index]
        line = self.transcript.records[record].line
        return self.fix("safe", f"drop the blank text block of line {line}",
                        [Intent("drop-block", record=record, block=block)])  # fmt: skip

    def answer_call(self, msg: Message, call: ToolCall) -> Fix | None:
        calls = msg.extra.get("call_slots") or []
        for (record, _), candidate in zip(calls, msg.tool_calls):
            if candidate.id == call.id:
                line = self.transcript.records[record].line
                return self.fix("unsafe", f"add an is_error 'interrupted' tool result for {call.id!r} after line {line}",
                                [Intent("answer", record=record, call_id=call.id)])  # fmt: skip
        return None

    # ----------------------------------------------------------------------- store-native fixes

    def split_line(self, line: int, records: int, twins: int) -> Fix | None:
        kept = records - twins
        note = f" ({twins} written again elsewhere, kept once)" if twins else ""
        return self.fix("safe", f"write the {records} records of line {line} on {kept} line(s){note}",
                        [Intent("split", line=line)])  # fmt: skip

    def relink(self, record: int, parent: str, parent_line: int) -> Fix | None:
        line = self.transcript.records[record].line
        return self.fix("safe", f"re-link line {line} to the record of line {parent_line}",
                        [Intent("relink", record=record, parent=parent)])  # fmt: skip

    def remove_records(self, records: list[int], why: str, applicability: Applicability = "safe") -> Fix | None:
        return self.fix(applicability, why, (Intent("remove", record=r) for r in records))


def _key(fix: Fix) -> tuple[object, ...]:
    return (fix.summary, fix.edits)


def _lines(lines: list[int]) -> str:
    if len(lines) > 1 and lines[-1] - lines[0] == len(lines) - 1:
        return f"{lines[0]}-{lines[-1]}"
    return ", ".join(map(str, lines))

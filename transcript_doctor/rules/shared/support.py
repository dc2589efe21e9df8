"""What a shared rule's check is handed and what it returns.

A check reads one `Conversation` through a `ConversationView` (the messages plus analyses that
several rules share, computed once per conversation on first use) and yields `Hit`s: the message
a finding is about, its text and evidence, and, for rules with a fix, the edit intent as a call
on the store's `Editor`. The rule engine turns hits into findings (`rules/engine.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cached_property
from typing import Any

from ...conversation import Conversation, Editor
from ...model import Fix, Message

EditIntent = Callable[[Editor], "Fix | None"]


class Hit:
    """One problem a shared rule found: on `msg` (on its part `part` when set)."""

    __slots__ = ("msg", "message", "evidence", "part", "edit")

    def __init__(self, msg: Message, message: str, evidence: dict[str, Any] | None = None, part: int | None = None,
                 edit: EditIntent | None = None) -> None:  # fmt: skip
        self.msg = msg
        self.message = message
        self.evidence: dict[str, Any] = {} if evidence is None else evidence
        self.part = part
        self.edit = edit  # how the store's editor would fix it; None: no fix


class ConversationView:
    """A conversation as the shared checks read it; shared analyses are computed once."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.messages = conversation.messages

    @cached_property
    def tool_exchange(self) -> Any:
        from .tool_exchange import analyse

        return analyse(self.messages)


ConversationCheck = Callable[[ConversationView], Iterator[Hit]]


def intent(operation: str, *args: Any) -> EditIntent:
    """The edit intent "call the editor's `operation` with `args`".

    `remove_message`, `drop_part` and `answer_call` are in every `Editor`; the optional ones
    (`drop_call`, `remove_leading`, `scrub_text`) may be missing, and then the hit has no fix.
    """

    def edit(editor: Editor) -> Fix | None:
        operate = getattr(editor, operation, None)
        return operate(*args) if operate is not None else None

    return edit


def describe(msg: Message) -> str:
    """`assistant message at request position 3` (or `assistant message (not sent)`)."""
    if msg.position is None:
        return f"{msg.role} message (not sent)"
    return f"{msg.role} message at request position {msg.position}"

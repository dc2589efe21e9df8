"""The shared conversation model: what every store kind hands to the store-independent rules.

A store reads its own format and rebuilds, per session, the request its runtime would send. It
hands that over as a `Conversation`: the request messages in order (each a `model.Message` whose
`loc` says where it was read and whose `position` is its index in the request), the repairs the
runtime makes itself before sending (`Repair`), and an `Editor` that turns a rule's fix intent
("remove this message", "drop this part", "answer this call") into the store's own edits.

The shared rules (W101-W109, F507, F508 and later ones) run once, over this model, in the rule
engine. A store adds only the findings only it can see (compaction, sentinels, terminality,
integrity) through `Store.native_findings`. See `docs/architecture.md`.

This module is plain data and protocols: no I/O, no store imports.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from .model import Fix, Loc, Message, Part, ToolCall
from .value_types import FrozenValue

__all__ = ["Conversation", "Editor", "Locator", "Message", "Part", "Repair", "RepairWhen", "Source", "ToolCall"]

# Where a message or record lives in its store: file line range, or table and row.
Source = Loc

# A runtime repair made on every request hides the problem from the provider (one severity lower);
# one made only on the strict resend after a 400 means every request first fails (rule severity).
RepairWhen = Literal["every-request", "strict-resend"]


class Repair(FrozenValue):
    """A problem of rule `code` that the runtime repairs itself before it sends the request.

    `source` points at the record(s) the problem is in; `position` is the request index of the
    affected message when it is sent. `subject` names the thing repaired (a call id, a message
    id) so the same problem seen twice (two engines, two passes) is reported once. `fix`: how the
    store would write the repair into the record itself (Codex: the "aborted" output it only adds to
    the request), for older readers that do not repair it. `engine`: the replay engine that makes
    the repair, for stores with several.
    """

    __slots__ = ("code", "message", "when", "source", "position", "subject", "evidence", "engine", "fix")
    code: str
    message: str
    when: RepairWhen
    source: Source
    position: int | None
    subject: str | None
    evidence: dict[str, Any]
    engine: str | None
    fix: Fix | None

    def __init__(self, code: str, message: str, when: RepairWhen, source: Source | None = None,
                 position: int | None = None, subject: str | None = None, evidence: dict[str, Any] | None = None,
                 engine: str | None = None, fix: Fix | None = None) -> None:  # fmt: skip
        self.assign(code, message, when, Source() if source is None else source, position, subject,
                    {} if evidence is None else evidence, engine, fix)  # fmt: skip


class Editor(Protocol):
    """How a store realises a shared rule's fix. Each method returns None when it cannot.

    The rule decides *what* to do; the editor decides *how* it is written in this store (a line
    deletion, a SQL update, a byte-preserving rewrite). The returned `Fix` carries the edits
    that the heal pipeline applies, so `Fix.edits` is the source of truth. The engine stamps the
    returned fix with the applicability the rule declares.

    Optional operations, looked up by name (an editor without one cannot realise that fix):
    `drop_call(msg, index)` (W105: the later call of a reused id), `remove_leading(msg)` (W108:
    the messages before the first user message, `msg` the first of them) and `scrub_text(msg)`
    (F507: replace NUL and lone surrogates with U+FFFD). `NoEdits` shows their signatures.
    """

    def remove_message(self, msg: Message) -> Fix | None:
        """Remove a message that carries nothing (W101) or must not be sent (W104, W106)."""

    def drop_part(self, msg: Message, index: int) -> Fix | None:
        """Drop content part `index` of `msg` (W102: a blank text part beside other content)."""

    def answer_call(self, msg: Message, call: ToolCall) -> Fix | None:
        """Add an error tool result ("interrupted") for `call` of assistant `msg` (W103)."""


class Locator(Protocol):
    """Where a message of a conversation, or one of its parts, lives in the store, asked only when
    a finding names it: `(location, evidence naming it)`. A store that gives its conversation a
    locator need not place every message and part as it builds them (`Conversation.where`)."""

    def __call__(self, msg: Message, part: int | None) -> tuple[Loc, dict[str, Any]]: ...


class NoEdits:
    """An `Editor` for stores that cannot be healed: every fix is unavailable."""

    def remove_message(self, msg: Message) -> Fix | None:
        return None

    def drop_part(self, msg: Message, index: int) -> Fix | None:
        return None

    def answer_call(self, msg: Message, call: ToolCall) -> Fix | None:
        return None

    def drop_call(self, msg: Message, index: int) -> Fix | None:
        return None

    def remove_leading(self, msg: Message) -> Fix | None:
        return None

    def scrub_text(self, msg: Message) -> Fix | None:
        return None


class Conversation:
    """One session's request as its runtime would send it, located in its store.

    `messages`: the request, in order, *before* the runtime's own repairs (those are `repairs`);
    each message's `position` is its request index. `unsent`: messages the store read that the
    request does not carry (before a compaction boundary, off the parent chain, rolled back);
    rules never report them as errors. `codes`: the shared rule codes that apply to this runtime
    (None: all of them; a runtime that merges consecutive assistants leaves out W109). `live`:
    the writer may still be appending, so a problem at the very end may be work in progress.
    `target`: the provider API the request goes to, when the store knows it. `locator`: where a
    message or part lives, for a store that leaves `Message.loc`, `Part.source` and their
    `evidence` unset and places them only when a finding names them (`where`).
    """

    __slots__ = ("path", "format", "session", "messages", "repairs", "unsent", "editor", "codes",
                 "empty_parts_vacuous", "live", "target", "locator")  # fmt: skip

    def __init__(self, path: str, format: str, session: str | None, messages: list[Message],
                 repairs: list[Repair] | None = None, unsent: list[Message] | None = None,
                 editor: Editor | None = None, codes: frozenset[str] | None = None, empty_parts_vacuous: bool = True,
                 live: bool = False, target: str | None = None, locator: Locator | None = None) -> None:  # fmt: skip
        self.path = path
        self.format = format
        self.session = session
        self.messages = messages
        self.repairs: list[Repair] = [] if repairs is None else repairs
        self.unsent: list[Message] = [] if unsent is None else unsent
        self.editor: Editor = NoEdits() if editor is None else editor
        self.codes = codes
        self.empty_parts_vacuous = empty_parts_vacuous
        self.live = live
        self.target = target
        self.locator = locator

    def where(self, msg: Message, part: int | None = None) -> tuple[Loc, dict[str, Any]]:
        """Where `msg` (its part `part`, when that is one of its parts) lives, and the evidence that
        names it: the message's `loc` and `evidence`, the part's `source` (when set) and its
        `evidence` over them; or what the conversation's locator says."""
        if self.locator is not None:
            return self.locator(msg, part)
        loc, evidence = msg.loc, msg.evidence
        if part is not None and part < len(msg.parts):
            found = msg.parts[part]
            loc = found.source or loc
            evidence = {**evidence, **found.evidence}
        return loc, evidence

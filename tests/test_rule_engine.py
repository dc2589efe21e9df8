"""The rule engine's own contract: pruning by selection, repairs' severity, fixes from editors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from transcript_doctor.conversation import Conversation, NoEdits, Repair
from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.model import Edit, Finding, Fix, Loc, Message, Part
from transcript_doctor.rules import RULES
from transcript_doctor.rules.engine import ONE_LOWER, check_conversation, check_store, shared_codes
from transcript_doctor.rules.registry import CONVERSATION_CHECKS
from transcript_doctor.stores.base import Options, Store


def convo(*messages: Message, repairs: list[Repair] | None = None, editor=None) -> Conversation:
    for i, m in enumerate(messages):
        m.position = i
        m.loc = Loc(line=i + 1)
    return Conversation("mem", "test", "s1", list(messages), repairs=repairs or [], editor=editor or NoEdits())


def empty_answer() -> Conversation:
    return convo(Message("user", [Part("text", "hi")]), Message("assistant", [Part("text", " ")]))


class FakeStore(Store):
    format = "fake"

    def __init__(self, conversation: Conversation) -> None:
        super().__init__(None, "mem")  # type: ignore[arg-type]
        self.conversation = conversation
        self.walked = 0
        self.native_codes: frozenset[str] | None = None

    session_count = 1
    record_count = 2

    def replay(self, options: Options) -> object:
        return []

    def conversations(self, options: Options) -> Iterator[Conversation]:
        self.walked += 1
        yield self.conversation

    def native_findings(self, options: Options, codes: frozenset[str]) -> Iterator[Finding]:
        self.native_codes = codes
        return iter(())


def test_deselected_shared_checks_do_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(view):  # noqa: ANN001, ANN202
        raise AssertionError("a deselected check ran")

    monkeypatch.setitem(CONVERSATION_CHECKS, "W101", boom)
    found = list(check_conversation(empty_answer(), {"W109"}))
    assert found == []


def test_no_shared_rule_selected_means_no_conversation_is_read() -> None:
    store = FakeStore(empty_answer())
    check_store(store, Options(), {"S301"})
    assert store.walked == 0 and store.native_codes == frozenset({"S301"})
    assert [f.code for f in check_store(store, Options(), {"W101"})] == ["W101"]
    assert store.walked == 1


def test_conversation_codes_limit_the_rules_that_apply() -> None:
    conversation = empty_answer()
    conversation.codes = frozenset({"W109"})
    assert list(check_conversation(conversation, shared_codes())) == []


@pytest.mark.parametrize("when", ["every-request", "strict-resend"])
def test_a_repair_is_one_level_lower_when_made_on_every_request(when: str) -> None:
    repair = Repair("W104", "orphan result dropped", when, Loc(line=7), position=3, subject="c1")
    conversation = convo(Message("user", [Part("text", "hi")]), repairs=[repair, repair])
    (found,) = check_conversation(conversation, {"W104"})  # the same subject twice: once
    default = RULES["W104"].severity
    assert found.severity == (ONE_LOWER[default] if when == "every-request" else default)
    assert (found.line, found.position, found.fix) == (7, 3, None)


def test_repairs_of_deselected_rules_are_left_out() -> None:
    conversation = convo(Message("user", [Part("text", "hi")]), repairs=[Repair("W104", "x", "strict-resend")])
    assert list(check_conversation(conversation, {"W101"})) == []


class Deleting(NoEdits):
    def remove_message(self, msg: Message) -> Fix | None:
        return Fix("unsafe", f"delete line {msg.loc.line}", (Edit("delete", line=msg.loc.line),))


def test_the_fix_is_the_editors_with_the_rules_applicability() -> None:
    conversation = empty_answer()
    conversation.editor = Deleting()
    (found,) = check_conversation(conversation, {"W101"})
    assert found.fix == Fix(RULES["W101"].fix, "delete line 2", (Edit("delete", line=2),))


def test_no_editor_no_fix() -> None:
    (found,) = check_conversation(empty_answer(), {"W101"})
    assert found.fix is None


def test_lone_surrogates_in_evidence_are_made_json_safe() -> None:
    conversation = convo(Message("user", [Part("text", "hi")]), Message("tool", [Part("text", "x")], tool_call_id="c\ud83d"))
    (found,) = check_conversation(conversation, {"W104"})
    assert found.evidence["tool_call_id"] == "c\ufffd"


def test_shared_rules_apply_to_every_kind_that_yields_conversations() -> None:
    assert all(RULES[code].systems == ("all",) for code in shared_codes())


SEED = Path(__file__).resolve().parent.parent / "fixtures" / "kimi-code" / "golden" / "c01_legacy_compaction_after_vacuous.jsonl"


def test_kimi_builds_the_c201_fix_only_when_c201_is_selected(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the C201 fix re-reads the journal line it rewrites; --select W101 must not."""
    from transcript_doctor.stores.kimi.replay import step_edits

    reads: list[int] = []
    real = step_edits.read_line
    monkeypatch.setattr(step_edits, "read_line", lambda state, offset: reads.append(offset) or real(state, offset))
    w101 = scan(str(SEED), ScanConfig(jobs=1, select=["W101"])).findings
    assert {f.code for f in w101} == {"W101"} and reads == []
    c201 = scan(str(SEED), ScanConfig(jobs=1, select=["C201"])).findings
    assert {f.code for f in c201} == {"C201"} and reads


def _blank_part_beside_text() -> Conversation:
    """A W102 hit on part 1 of the assistant message, whose parts carry places of their own."""
    answer = Message("assistant", [Part("text", "an answer"), Part("text", " ", source=Loc(row="p2", table="part"),
                                                                    evidence={"part_id": "p2", "shared": "part"})],
                     evidence={"message_id": "m2", "shared": "message"})
    return convo(Message("user", [Part("text", "hi")]), answer)


def test_a_finding_is_placed_at_its_part_with_the_part_s_evidence_over_the_message_s() -> None:
    conversation = _blank_part_beside_text()
    (found,) = check_conversation(conversation, {"W102"})
    assert (found.row, found.table, found.line) == ("p2", "part", None)
    named = {k: found.evidence[k] for k in ("message_id", "part_id", "shared")}
    assert named == {"message_id": "m2", "part_id": "p2", "shared": "part"}
    assert list(found.evidence)[:2] == ["part_index", "text"]  # the hit's own evidence first, as before
    msg = conversation.messages[1]
    assert conversation.where(msg) == (msg.loc, msg.evidence)
    assert conversation.where(msg, 0)[0] is msg.loc  # a part with no place of its own is its message's
    assert conversation.where(msg, 9) == (msg.loc, msg.evidence)  # (an index that is not a part)


def test_a_conversation_s_locator_places_its_findings() -> None:
    conversation = _blank_part_beside_text()
    asked: list[tuple[int | None, int | None]] = []

    def locate(msg: Message, part: int | None) -> tuple[Loc, dict]:
        asked.append((msg.position, part))
        return Loc(row=f"r{msg.position}.{part}", table="t"), {"placed": True}

    conversation.locator = locate
    (found,) = check_conversation(conversation, {"W102"})
    assert asked == [(1, 1)]  # asked once, for the finding only
    assert (found.row, found.table) == ("r1.1", "t")
    assert found.evidence["placed"] is True and "message_id" not in found.evidence

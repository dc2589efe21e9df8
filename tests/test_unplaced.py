"""Messages placed only when a finding names them (`conversation.Locator`).

OpenCode and Hermes hand the shared rules messages whose `loc` is the shared `model.UNPLACED` and
whose `evidence` is the shared `model.NAMED_LATER`; the conversation's locator places a finding.
Two things must hold:

* nothing changes the shared placeholders (a store that wrote a message's evidence in place would
  write it into every message of every later scan);
* a finding is placed exactly where it was when each message carried its own place: the
  findings over a conversation equal those over the same messages placed up front, by the
  locator's own answers, with no locator (the engine then reads `loc`, `source`, `evidence`).
"""

from __future__ import annotations

import pytest

from tests.stores import ROOT, store_files
from transcript_doctor.conversation import Conversation
from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.model import NAMED_LATER, UNPLACED, Loc
from transcript_doctor.rules.engine import check_conversation, shared_codes
from transcript_doctor.stores import open_store
from transcript_doctor.stores.base import Options

LOCATED_LATER = [f for f in store_files() if f.split("/")[1] in ("hermes", "opencode") and not f.endswith(".expected.json")]


def test_there_are_stores_whose_messages_are_placed_later() -> None:
    assert {f.split("/")[1] for f in LOCATED_LATER} == {"hermes", "opencode"}


def test_scanning_every_fixture_leaves_the_shared_placeholders_as_they_were() -> None:
    report = scan([str(ROOT / f) for f in store_files()], ScanConfig(jobs=1))
    assert report.findings  # the fixtures hold problems of every kind: the rules ran
    assert UNPLACED == Loc() and NAMED_LATER == {}


def _placed_up_front(conversation: Conversation) -> Conversation:
    """The same messages (editors know them by identity), each message and part given the place
    the locator gives it, in a conversation without a locator."""
    locate = conversation.locator
    assert locate is not None
    places = [(locate(msg, None), [locate(msg, i) for i in range(len(msg.parts))]) for msg in conversation.messages]
    for msg, ((loc, evidence), parts) in zip(conversation.messages, places):
        msg.loc, msg.evidence = loc, evidence
        for part, (source, named) in zip(msg.parts, parts):
            part.source, part.evidence = source, named  # (the message's evidence is a part of it)
    return Conversation(conversation.path, conversation.format, conversation.session, conversation.messages,
                        editor=conversation.editor, codes=conversation.codes)


@pytest.mark.parametrize("fixture", LOCATED_LATER)
def test_findings_are_placed_where_placed_messages_put_them(fixture: str) -> None:
    store = open_store(ROOT / fixture, fixture, Options())
    try:
        for conversation in store.conversations(Options()):
            codes = shared_codes() if conversation.codes is None else conversation.codes
            found = list(check_conversation(conversation, codes))
            assert found == list(check_conversation(_placed_up_front(conversation), codes))
    finally:
        store.close()
    assert UNPLACED == Loc() and NAMED_LATER == {}


@pytest.mark.parametrize("fixture", LOCATED_LATER)
def test_the_conversation_s_messages_are_handed_over_unplaced(fixture: str) -> None:
    """What makes the scan cheaper: no message or part is given a place of its own as it is built."""
    store = open_store(ROOT / fixture, fixture, Options())
    try:
        messages = [msg for conversation in store.conversations(Options()) for msg in conversation.messages]
    finally:
        store.close()
    assert messages
    assert all(msg.loc is UNPLACED and msg.evidence is NAMED_LATER for msg in messages)
    assert all(part.source is None and not part.evidence for msg in messages for part in msg.parts)


def test_an_opencode_scan_locates_only_the_rows_its_findings_name() -> None:
    """A message or part row's location is built when first asked for; a scan asks only for the
    rows it reports."""
    from transcript_doctor.stores.opencode import checks

    fixture = "fixtures/opencode/opencode.db"
    store = open_store(ROOT / fixture, fixture, Options())
    placed: set[object] = set()
    named: set[object] = set()
    try:
        for view in store.views(Options()):
            conversation = checks.conversation(store, view)
            found = [*check_conversation(conversation, checks.SHARED_CODES),
                     *checks.native_findings(store, view, checks.NATIVE_CODES)]
            named |= {f.row for f in found}
            rows = [row for msg in view.session.messages for row in (msg, *msg.parts)]
            placed |= {row.id for row in rows if row._loc is not None}
    finally:
        store.close()
    assert placed and placed <= named  # some rows were placed (for their findings), no other

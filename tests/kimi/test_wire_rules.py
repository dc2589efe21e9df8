"""Golden cases for the replay rules of docs/kimi-code.md (§Compaction, §Record validity),
each written from the rule with its expectation derived by hand in the comment beside it."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from transcript_doctor.stores.kimi.read.records import is_valid_v2
from transcript_doctor.stores.kimi.replay.driver import KimiReplay, projected, replay_object, replay_stream

from .builders import Journal

IMAGE = {"type": "image_url", "imageUrl": {"url": "data:image/png;base64,AAAA"}}


def _user(text: Any, *extra_parts: dict) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}, *extra_parts], "toolCalls": [],
            "origin": {"kind": "user"}}


def _replay(journal: Journal) -> KimiReplay:
    return replay_stream(Path("wire.jsonl"), io.BytesIO(journal.bytes()), full=True)


def _texts(history: list[dict]) -> list[Any]:
    """Each message as its first part's text (or the part type for media-only messages)."""
    out = []
    for m in history:
        parts = m.get("content") or []
        out.append(parts[0].get("text", parts[0].get("type")) if parts else None)
    return out


# --------------------------------------------------------------------------- §Compaction: head candidates


def test_a_boundary_whose_whole_text_fits_adds_no_empty_head_candidate() -> None:
    """Users (estimates: role 1 + ceil(chars/4) + 2000 per image):
    old 'old' = 2; boundary 'b' + 9 images = 18002; new 'n'*8000 = 2001; total 20005 > 20000.
    Tail budget 18000: new (2001) fits, 15999 left; the boundary (18002) does not: its text 'b'
    fits whole, so the kept end is 'b' and the cut-off beginning is empty: no head candidate.
    Head budget 2000 over [old] -> [old]. Shape: [old, elision(20005 - (2 + 2 + 2001) = 18000),
    'b' (media dropped), new, SUM]. With the empty candidate, an extra empty user would follow old."""
    journal = (Journal().message(_user("old")).message(_user("b", *[IMAGE] * 9)).message(_user("n" * 8000))
               .add({"type": "context.apply_compaction", "summary": "SUM", "contextSummary": "SUM",
                     "compactedCount": 3, "keptUserMessageCount": 2, "keptHeadUserMessageCount": 1}))
    state = _replay(journal)
    for history in (state.v1.history, state.v2.history):
        texts = _texts(history)
        assert texts[0] == "old" and texts[2:] == ["b", "n" * 8000, "SUM"]
        assert "roughly 18000 tokens" in texts[1]
        assert history[2]["content"] == [{"type": "text", "text": "b"}]


# --------------------------------------------------------------------------- §Compaction: object summaries in v1

OBJ = {"role": "user", "content": [{"type": "text", "text": "OBJ"}], "toolCalls": []}


def test_an_object_summary_without_tokens_after_is_one_v1_error_and_changes_nothing() -> None:
    """v1 estimates the tokens of the object and throws before any state changes: history stays
    [u1, u2] and `errors` holds one entry for line 4. v2 (valid: it has `count`) takes the legacy
    tail [OBJ, u2]."""
    journal = Journal().message(_user("u1")).message(_user("u2")).add(
        {"type": "context.apply_compaction", "summary": OBJ, "count": 1})
    state = _replay(journal)
    assert "v1" not in state.crash
    assert _texts(state.v1.history) == ["u1", "u2"]
    assert len(state.v1.errors) == 1 and state.v1.errors[0].startswith("line 4:")
    assert _texts(state.v2.history) == ["OBJ", "u2"]
    assert replay_object(state, "v1")["errors"] == state.v1.errors


def test_an_object_summary_with_tokens_after_makes_only_the_v1_projection_throw() -> None:
    """With `tokensAfter` v1 applies it: no compactedCount, so the kept-users shape (tail-only: no
    keptHeadUserMessageCount) [u1, u2, summary whose text part IS the object]. The history is fine;
    the projection throws on the non-string text. The cold transcript's marker text is the object."""
    journal = Journal().message(_user("u1")).message(_user("u2")).add(
        {"type": "context.apply_compaction", "summary": OBJ, "count": 1, "tokensAfter": 5})
    state = _replay(journal)
    assert _texts(state.v1.history) == ["u1", "u2", OBJ]
    assert state.v1.errors == []
    assert projected(state, "v1") is None and "projection" in state.crash["v1"]
    assert state.t1.entries[-1]["content"][0]["text"] == OBJ


def test_a_later_compaction_that_slices_the_object_summary_away_lets_v1_project() -> None:
    """... then a string legacy compaction with compactedCount 3 = len: not < len, so kept-users
    again over the compactable users [u1, u2] (the object summary is a compaction summary, not
    compactable): [u1, u2, SUM2]. The projection merges the two user prompts: [u1\\n\\nu2, SUM2]."""
    journal = Journal().message(_user("u1")).message(_user("u2")).add(
        {"type": "context.apply_compaction", "summary": OBJ, "count": 1, "tokensAfter": 5}).add(
        {"type": "context.apply_compaction", "summary": "SUM2", "compactedCount": 3, "tokensAfter": 5})
    state = _replay(journal)
    assert _texts(state.v1.history) == ["u1", "u2", "SUM2"]
    sent = projected(state, "v1")
    assert sent is not None and _texts(sent.messages) == ["u1\n\nu2", "SUM2"]


def test_a_non_string_text_part_throws_in_the_v1_projection_not_in_the_scan() -> None:
    """v1 applies content parts unchecked; `{type:'text', text: 5}` reaches its projection, which
    trims it and throws. The shared vacuous predicate (used by the scans) does not raise."""
    journal = Journal().message(_user("u1"))
    journal.step("s", [{"type": "text", "text": 5}])
    state = _replay(journal)
    assert projected(state, "v1") is None
    assert state.v1.history[-1]["content"] == [{"type": "text", "text": 5}]


# --------------------------------------------------------------------------- §Record validity (upstream v2 schema)

VALIDITY = [
    # (label, record, valid for v2)
    ("message unchecked: a bogus message", {"type": "context.append_message", "message": {"role": "x", "content": 1}},
     True),
    ("message unchecked: none at all", {"type": "context.append_message"}, True),
    ("event unchecked: a step.begin with a numeric uuid",
     {"type": "context.append_loop_event", "event": {"type": "step.begin", "uuid": 5}}, True),
    ("compaction: contextSummary alone", {"type": "context.apply_compaction", "contextSummary": "CS",
                                          "compactedCount": 1}, True),
    ("compaction: string summary without compactedCount", {"type": "context.apply_compaction", "summary": "S"},
     False),
    ("compaction: object summary needs count", {"type": "context.apply_compaction", "summary": OBJ,
                                                "compactedCount": 1}, False),
    ("compaction: object summary with count", {"type": "context.apply_compaction", "summary": OBJ, "count": 1},
     True),
    ("compaction: null keptUserMessageCount", {"type": "context.apply_compaction", "summary": "S",
                                               "compactedCount": 1, "keptUserMessageCount": None}, False),
    ("compaction: null keptHeadUserMessageCount", {"type": "context.apply_compaction", "summary": "S",
                                                   "compactedCount": 1, "keptUserMessageCount": 1,
                                                   "keptHeadUserMessageCount": None}, False),
    ("compaction: a fractional, negative count", {"type": "context.apply_compaction", "summary": "S",
                                                  "compactedCount": -1.5, "keptUserMessageCount": 2.5}, True),
    ("compaction: tokensAfter must be a number", {"type": "context.apply_compaction", "summary": "S",
                                                  "compactedCount": 1, "tokensAfter": "5"}, False),
    ("compaction: droppedCount a number", {"type": "context.apply_compaction", "summary": "S", "compactedCount": 1,
                                           "droppedCount": 2, "summaryOutputTokens": 9.5}, True),
]


@pytest.mark.parametrize(("record", "valid"), [(r, v) for _, r, v in VALIDITY], ids=[label for label, _, _ in VALIDITY])
def test_record_validity_is_what_upstream_v2_checks(record: dict, valid: bool) -> None:
    assert is_valid_v2(record["type"], record) is valid


def test_a_context_summary_only_compaction_is_applied_by_v2() -> None:
    """[u1, u2] + legacy {contextSummary 'CS', compactedCount 1}: v2 [CS, u2]; v1 (1 < 2) the same."""
    journal = Journal().message(_user("u1")).message(_user("u2")).add(
        {"type": "context.apply_compaction", "contextSummary": "CS", "compactedCount": 1})
    state = _replay(journal)
    assert _texts(state.v2.history) == ["CS", "u2"] == _texts(state.v1.history)


def test_a_negative_legacy_count_slices_from_the_end_as_javascript_does() -> None:
    """[u1, u2, u3] + legacy compactedCount -1: JS slice(-1) keeps the last message: [SUM, u3]
    in both engines (v1: -1 < 3, the legacy tail)."""
    journal = Journal().message(_user("u1")).message(_user("u2")).message(_user("u3")).add(
        {"type": "context.apply_compaction", "summary": "SUM", "compactedCount": -1})
    state = _replay(journal)
    assert _texts(state.v1.history) == ["SUM", "u3"] == _texts(state.v2.history)


def test_v2_skips_a_compaction_with_a_null_count_that_v1_applies() -> None:
    """keptUserMessageCount null: v2's schema rejects the record (history stays [u1, u2]); v1
    tests `=== undefined`, so a null takes the kept-users shape [u1, u2, SUM], and its transcript's
    foldedLength is null + 1 = 1 (keptHeadUserMessageCount absent)."""
    journal = Journal().message(_user("u1")).message(_user("u2")).add(
        {"type": "context.apply_compaction", "summary": "SUM", "compactedCount": 1, "keptUserMessageCount": None})
    state = _replay(journal)
    assert _texts(state.v2.history) == ["u1", "u2"]
    assert _texts(state.v1.history) == ["u1", "u2", "SUM"]
    assert state.t1.folded == 1


def test_v1_reads_a_null_head_count_as_present() -> None:
    """keptUserMessageCount 2, keptHeadUserMessageCount null: v1's foldedLength is 2 + 2 = 4
    (`!== undefined`), where an absent head count gives 2 + 1 = 3."""
    base = {"type": "context.apply_compaction", "summary": "SUM", "compactedCount": 2, "keptUserMessageCount": 2}
    with_null = _replay(Journal().message(_user("u1")).message(_user("u2")).add({**base,
                                                                                  "keptHeadUserMessageCount": None}))
    absent = _replay(Journal().message(_user("u1")).message(_user("u2")).add(dict(base)))
    assert (with_null.t1.folded, absent.t1.folded) == (4, 3)


def test_v1_selects_head_and_tail_when_the_head_count_is_null() -> None:
    """Over the 20000-token budget, v1 keeps only the newest users when keptHeadUserMessageCount
    is absent (tail-only), but elides the middle when it is present, even as null."""
    users = [_user("x" * 40000), _user("y" * 40000)]  # 10001 tokens each
    base = {"type": "context.apply_compaction", "summary": "SUM", "compactedCount": 2, "keptUserMessageCount": 1}
    with_null = _replay(Journal().message(users[0]).message(users[1]).add({**base, "keptHeadUserMessageCount": None}))
    absent = _replay(Journal().message(users[0]).message(users[1]).add(dict(base)))
    assert any("omitted here during compaction" in str(t) for t in _texts(with_null.v1.history))
    assert not any("omitted here during compaction" in str(t) for t in _texts(absent.v1.history))

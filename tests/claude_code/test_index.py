"""The slim index the reader builds: shared strings, line lookup, the collector left as found."""

from __future__ import annotations

import gc
from pathlib import Path

import orjson
from hypothesis import given
from hypothesis import strategies as st

from transcript_doctor.stores import Options, open_store
from transcript_doctor.stores.claude_code import reader
from transcript_doctor.stores.claude_code.reader import read_transcript
from transcript_doctor.stores.claude_code.records import parse_record
from transcript_doctor.text import JS_WHITESPACE, is_blank, js_trim

from .builders import Session

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "claude-code" / "real"


def _session(tmp_path: Path) -> Path:
    s = Session()
    s.user("question")
    s.text("msg_01", "answer")
    s.user("again")
    s.text("msg_02", "done")
    path = tmp_path / "s.jsonl"
    path.write_text(s.jsonl(), encoding="utf-8")
    return path


def test_repeated_envelope_values_are_one_object(tmp_path):
    t = read_transcript(_session(tmp_path), "s")
    chained = [r for r in t.records if r.uuid is not None]
    assert len({id(r.session) for r in chained}) == 1
    assert len({id(r.type) for r in chained if r.type == "user"}) == 1
    pairs = [(prev, rec) for prev, rec in zip(chained, chained[1:]) if rec.parent == prev.uuid]
    assert pairs
    for prev, rec in pairs:
        assert rec.parent is prev.uuid  # the parent names the previous record: its string, shared


def test_parent_naming_an_earlier_record_keeps_its_value(tmp_path):
    s = Session()
    first = s.user("one")
    s.text("msg_01", "two")
    s.parent = first["uuid"]  # a branch off the first record
    s.user("three")
    path = tmp_path / "s.jsonl"
    path.write_text(s.jsonl(), encoding="utf-8")
    t = read_transcript(path, "s")
    assert t.records[-1].parent == first["uuid"]
    assert parse_record(orjson.loads(path.read_bytes().splitlines()[-1]), 0, 1).parent == first["uuid"]


def test_by_line_finds_every_record_of_a_concatenated_line(tmp_path):
    s = Session()
    s.user("one")
    s.text("msg_01", "two")
    s.user("three")
    lines = s.jsonl().splitlines()
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join([lines[0], lines[1] + lines[2]]) + "\n", encoding="utf-8")
    t = read_transcript(path, "s")
    assert [r.piece for r in t.by_line(2)] == [0, 1]
    assert [r.line for r in t.by_line(1)] == [1]
    assert t.by_line(3) == [] and t.by_line(0) == []


def test_a_store_thaws_the_index_when_closed_or_dropped(tmp_path):
    path = _session(tmp_path)
    before = reader.frozen_stores()
    store = open_store(path, "s", Options())
    assert reader.frozen_stores() == before + 1 and gc.get_freeze_count() > 0
    store.close()
    store.close()  # twice is harmless
    assert reader.frozen_stores() == before
    dropped = open_store(path, "s", Options())
    assert reader.frozen_stores() == before + 1
    del dropped  # never closed: its finaliser thaws
    assert reader.frozen_stores() == before


def test_the_last_store_closed_unfreezes_the_collector(tmp_path):
    path = _session(tmp_path)
    while reader.frozen_stores():  # stores other tests left open
        reader.thaw_index()
    first, second = open_store(path, "a", Options()), open_store(path, "b", Options())
    first.close()
    assert gc.get_freeze_count() > 0  # the second store is still open
    second.close()
    assert gc.get_freeze_count() == 0


@given(st.text(alphabet=st.sampled_from(JS_WHITESPACE + "ab\u200b"), max_size=12))
def test_is_blank_matches_a_full_trim(text):
    assert is_blank(text) == (js_trim(text) == "")

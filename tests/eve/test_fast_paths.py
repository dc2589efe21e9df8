"""The eve scan's shortcuts (issue 20) are pinned to the general code they skip.

* `markers.classify` answers None at once for a reply with no `<` and no `&lt;`; on any text it
  must give what `classify_text` (the full policy) gives.
* `V27Decoder.apply_record` reads a fact's turn and run ids inline; the ids it hands the handlers
  must be the documented ones: the scope's id when it is a usable string (a run id may be a
  number), else the data's (`opt_str`/`key_of`).
* `V26Decoder.apply` reads an event's `turnId` and `stepIndex` once and hands them to the handler:
  they must be `opt_str(data.turnId)` and `key_of(data.stepIndex)`.
* `filler.words` returns the regex tokens as they are for text with no ASCII apostrophe; on any
  text it must give what `words_split` (the elision split) gives.
* `checks._filler` judges a reply against `LazyEvidence`, which works the turn's evidence out only
  as far as the judgement asks: every verdict must be the one `TurnEvidence.collect` gives, on
  the labelled filler sets and on drawn replies and results (words shared or not, CJK values).
* A stream read is freed when its last reference goes, without a collection: the decoders' handler
  tables (bound methods, a cycle) do not keep the builder and every turn alive.
"""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.stores.eve.builder import Builder
from transcript_doctor.stores.eve.events import key_of, opt_str
from transcript_doctor.stores.eve.filler import LazyEvidence, TurnEvidence, filler_kind, words, words_split
from transcript_doctor.stores.eve.markers import MARKER, classify, classify_text
from transcript_doctor.stores.eve.reader import read_stream
from transcript_doctor.stores.eve.v26 import V26Decoder
from transcript_doctor.stores.eve.v27 import V27Decoder

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "eve"

# Pieces that build markers, their escaped twins, near misses and plain prose.
PIECES = ["<", ">", "/", "&lt;", "&gt;", "&", "lt;", "eve", "-", "_", "empty", "delivery", "EVE", " ", "\n",
          "`", "```", "xml\n", ".", "!", "ok", "report", "\u00a0", MARKER]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_classify_shortcut_agrees_with_the_full_policy(text: str) -> None:
    assert classify(text) == classify_text(text)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("<eve-empty-delivery/>", "exact"),
        ("&lt;eve-empty-delivery/&gt;", "exact"),
        ("&lt;eve_empty_delivery/&gt;.", "mangled"),  # escaped, mangled: no `<` in the raw text
        ("done <eve-empty-delivery/>", "in-prose"),
        ("eve-empty-delivery", None),  # near miss: no bracket of either kind, so the shortcut
        ("lt;eve-empty-delivery/gt;", None),
    ],
)
def test_classify_labelled(text: str, kind: str | None) -> None:
    assert classify(text) == kind == classify_text(text)


ID_VALUES = st.one_of(st.none(), st.just(""), st.sampled_from(["t1", "run_a"]), st.integers(-2, 3),
                      st.booleans(), st.just([1]), st.just({"x": 1}))  # fmt: skip


def _ids(draw: st.DrawFn, keys: tuple[str, ...] = ("turnId", "runId")) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in keys:
        if draw(st.booleans()):
            out[key] = draw(ID_VALUES)
    return out


@st.composite
def facts(draw: st.DrawFn) -> dict[str, Any]:
    fact: dict[str, Any] = {"type": draw(st.sampled_from(["usage.recorded", "call.started", "turn.resumed"]))}
    if draw(st.booleans()):
        fact["data"] = _ids(draw)
    if draw(st.booleans()):
        fact["scope"] = _ids(draw)
    return fact


@settings(max_examples=300, deadline=None)
@given(st.lists(facts(), min_size=1, max_size=5))
def test_v27_fact_ids_are_the_documented_ones(batch: list[dict[str, Any]]) -> None:
    seen: list[tuple[Any, Any]] = []
    decoder = V27Decoder(Builder("27"))
    for kind in ("usage.recorded", "call.started", "turn.resumed"):
        decoder._handlers[kind] = lambda data, turn, run: seen.append((turn, run))
    assert decoder.apply_record({"facts": batch}) is None
    expected = []
    for fact in batch:
        data, scope = fact.get("data") or {}, fact.get("scope") or {}
        turn = opt_str(scope.get("turnId")) or opt_str(data.get("turnId"))
        run = key_of(scope.get("runId")) or key_of(data.get("runId"))
        expected.append((turn, run))
    assert seen == expected


@st.composite
def v26_events(draw: st.DrawFn) -> dict[str, Any]:
    event: dict[str, Any] = {"type": draw(st.sampled_from(["step.completed", "turn.completed", "task.started"]))}
    if draw(st.booleans()):
        event["data"] = _ids(draw, ("turnId", "stepIndex"))
    return event


@settings(max_examples=300, deadline=None)
@given(st.lists(v26_events(), min_size=1, max_size=5))
def test_v26_event_ids_are_the_documented_ones(batch: list[dict[str, Any]]) -> None:
    seen: list[tuple[Any, Any]] = []
    decoder = V26Decoder(Builder("<=26"))
    for kind in ("step.completed", "turn.completed", "task.started"):
        decoder._handlers[kind] = lambda data, turn, key: seen.append((turn, key))
    for event in batch:
        assert decoder.apply(event) is None
    expected = [(opt_str(e.get("data", {}).get("turnId")), key_of(e.get("data", {}).get("stepIndex"))) for e in batch]
    assert seen == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab'\u2019 lLjJqu\u00e9_-1", max_size=30))
def test_words_shortcut_agrees_with_the_split(text: str) -> None:
    lowered = text.lower()
    assert words(lowered) == words_split(lowered)


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.ndjson")))
def test_a_read_stream_is_freed_without_a_collection(name: str) -> None:
    enabled = gc.isenabled()
    gc.disable()
    try:
        stream = read_stream(FIXTURES / name)
        turn = weakref.ref(stream.turns[0])
        del stream
        assert turn() is None
    finally:
        if enabled:
            gc.enable()


FILLER_SETS = Path(__file__).resolve().parents[1] / "data" / "eve-filler"


def _filler_entries() -> list[dict[str, Any]]:
    out = []
    for path in sorted(FILLER_SETS.glob("*.jsonl")):
        out.extend(orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip())
    return out


def _verdicts(reply: str, results: list[Any], task: str) -> tuple[Any, Any]:
    return filler_kind(reply, TurnEvidence.collect(results, task)), filler_kind(reply, LazyEvidence(results, task))


def test_lazy_evidence_agrees_on_the_labelled_sets() -> None:
    entries = _filler_entries()
    assert len(entries) > 300
    judged = 0
    for entry in entries:
        results = [r["output"] for r in entry["tool_results"]]
        full, lazy = _verdicts(entry["reply"], results, entry["task"])
        assert full == lazy, entry["id"]
        judged += full is not None
    assert judged > 100  # the set holds replies judged filler, not only real answers


REPLY_WORDS = ["i", "have", "the", "data", "need", "done", "gamma", "is", "down", "ok", "report", "no", "errors",
               "l'analyse", "analyse", "数据", "没有", "整理", "gamma-2", "3", "."]  # fmt: skip
RESULT_VALUES = st.one_of(
    st.sampled_from(["gamma", "Gamma is DOWN", "analyse", "数据正常", "没有", "3", "down-time", "x" * 50]),
    st.integers(0, 5),
    st.none(),
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(REPLY_WORDS), min_size=1, max_size=8).map(" ".join),
    st.lists(st.one_of(RESULT_VALUES, st.dictionaries(st.sampled_from(["name", "gamma"]), RESULT_VALUES)), max_size=4),
    st.sampled_from(["", "report the data", "gamma status", "整理数据"]),
)
def test_lazy_evidence_agrees_on_drawn_replies(reply: str, results: list[Any], task: str) -> None:
    full, lazy = _verdicts(reply, results, task)
    assert full == lazy

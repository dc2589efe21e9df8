"""The v27 decoder's fused loop and handlers (`v27_fused.py`) are pinned to the reference
(`V27Decoder.apply_record` and its handlers, which the reader's general path `feed` uses).

Streams are made of commits and progress records whose facts are of the kinds with a fused
handler (and a few without), their fields drawn from values that fit (the common case) and from
near misses: absent, empty, of another JSON type, a number where a string goes, a bool where an
int goes. Turn and run ids come from small sets, so facts meet steps that exist, that were
settled, that belong to another turn, or that were never started. Reading such a stream with
`read_stream` (inline path) and line by line through `feed` (general path) must give equal
`Stream`s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_doctor.stores.eve.builder import Builder
from transcript_doctor.stores.eve.reader import read_stream
from transcript_doctor.stores.eve.v27 import V27Decoder
from transcript_doctor.stores.eve.v27_fused import fused

from .support import read_by_feed

FUSED = sorted(fused(V27Decoder(Builder("27"))))
KINDS = FUSED + ["turn.started", "content.delta", "call.started", "session.ended"]

ODD = [None, "", 0, 1, True, [], {}, 2.5]  # near misses for any field
TEXT = st.one_of(st.sampled_from(["stop", "tool-calls", "reply", "narration", "hello", "<eve-empty-delivery/>"]),
                 st.sampled_from(ODD))  # fmt: skip
FIELDS: dict[str, Any] = {
    "outcome": st.one_of(st.sampled_from(["completed", "failed", "cancelled", "abandoned", ""]), st.sampled_from(ODD)),
    "finishReason": TEXT,
    "retryReason": st.one_of(st.just("empty-response"), st.sampled_from(ODD)),
    "error": st.one_of(st.just({"code": "E", "message": "boom"}), st.sampled_from(ODD)),
    "outputTokens": st.one_of(st.integers(0, 9), st.sampled_from(ODD)),
    "kind": st.one_of(st.sampled_from(["text", "reasoning", "other"]), st.sampled_from(ODD)),
    "value": TEXT,
    "phase": TEXT,
    "partId": st.one_of(st.sampled_from(["p1", "p2"]), st.sampled_from(ODD)),
    "delta": TEXT,
    "callId": st.one_of(st.sampled_from(["c1", "c2"]), st.sampled_from(ODD)),
    "capability": st.one_of(st.just({"name": "search"}), st.just({"name": 3}), st.just({"name": ""}),
                            st.sampled_from(ODD)),  # fmt: skip
    "input": st.one_of(st.just({"q": "x"}), st.sampled_from(ODD)),
    "output": st.one_of(st.just({"rows": 1}), st.sampled_from(ODD)),
    "reply": st.one_of(st.just(["p1"]), st.just(["p1", 2]), st.sampled_from(ODD)),
    "trigger": st.one_of(st.just({"kind": "schedule"}), st.sampled_from(ODD)),
}
IDS = st.one_of(st.sampled_from(["t1", "t2"]), st.sampled_from(["r1", "r2"]), st.integers(0, 2), st.sampled_from(ODD))


@st.composite
def fact(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 30)) == 0:
        return draw(st.sampled_from([1, "x", None, {"data": {}}, {"type": 3}]))  # not a usable fact
    out: dict[str, Any] = {"type": draw(st.sampled_from(KINDS))}
    data = {k: draw(v) for k, v in FIELDS.items() if draw(st.integers(0, 2)) == 0}
    for key in ("turnId", "runId"):
        if draw(st.booleans()):
            data[key] = draw(IDS)
    if draw(st.integers(0, 15)) > 0:
        out["data"] = data
    elif draw(st.booleans()):
        out["data"] = draw(st.sampled_from([None, [], "x"]))
    if draw(st.integers(0, 4)) > 0:
        scope = {key: draw(IDS) for key in ("turnId", "runId") if draw(st.integers(0, 3)) > 0}
        out["scope"] = scope if draw(st.integers(0, 15)) > 0 else draw(st.sampled_from([None, [], "x"]))
    return out


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    records = []
    for _ in range(draw(st.integers(1, 30))):
        if draw(st.integers(0, 5)) == 0:
            records.append({"progress": draw(fact())})
        else:
            records.append({"at": "x", "facts": draw(st.lists(fact(), max_size=4))})
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


# A commit that starts a run, so that the facts after it meet an open step of a known turn.
HEAD = (b'{"at":"x","facts":[{"type":"turn.started","scope":{"turnId":"t1"}},'
        b'{"type":"model.requested","scope":{"turnId":"t1","runId":"r1"}}]}\n')  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines())
def test_fused_facts_read_as_the_reference_reads_them(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "stream.ndjson"
    path.write_bytes(HEAD + body)
    assert read_stream(path) == read_by_feed(path)


FACTS = {  # one usable fact of each fused kind, and a near miss of it
    "model.requested": ({"retryReason": "empty-response"}, {"retryReason": 3}),
    "model.started": ({"retryReason": "empty-response"}, {"retryReason": ""}),
    "model.settled": ({"outcome": "failed", "error": {"message": "x"}}, {"outcome": "", "finishReason": 1}),
    "usage.recorded": ({"outputTokens": 5}, {"outputTokens": True}),
    "content.completed": ({"kind": "text", "value": "hi", "partId": "p1"}, {"kind": "text", "value": 3}),
    "call.requested": ({"callId": "c1", "capability": {"name": "s"}}, {"callId": 1}),
    "call.settled": ({"callId": "c1", "outcome": "failed"}, {"callId": "c9", "outcome": ""}),
    "turn.settled": ({"outcome": "completed", "reply": ["p1"]}, {"outcome": 0, "error": {"code": "x"}}),
}


def test_every_fused_kind_has_labelled_cases() -> None:
    assert sorted(FACTS) == FUSED


@pytest.mark.parametrize("kind", FUSED)
@pytest.mark.parametrize("case", [0, 1], ids=["fits", "near-miss"])
def test_each_fused_handler_reads_as_the_reference(tmp_path: Path, kind: str, case: int) -> None:
    calls = [{"type": "call.requested", "data": {"callId": "c1"}, "scope": {"turnId": "t1", "runId": "r1"}}]
    fact = {"type": kind, "data": FACTS[kind][case], "scope": {"turnId": "t1", "runId": "r1"}}
    body = HEAD + orjson.dumps({"facts": calls}) + b"\n" + orjson.dumps({"facts": [fact, fact]}) + b"\n"
    path = tmp_path / "stream.ndjson"
    path.write_bytes(body)
    assert read_stream(path) == read_by_feed(path)

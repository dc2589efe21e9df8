"""Record validity: the fast path never accepts what the shipped JSON Schema rejects."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.stores.kimi.read import records
from transcript_doctor.stores.kimi.read.records import is_valid_v2, problems

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, width=32),
                    st.text(max_size=3))
ANY = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                    st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                   max_leaves=6)


def maybe(value: Any) -> st.SearchStrategy[Any]:
    """The value, or something of another type, or nothing at all."""
    return st.one_of(st.just(value), ANY, st.just(KeyError))


def shaped(fields: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({k: maybe(v) for k, v in fields.items()}).map(
        lambda d: {k: v for k, v in d.items() if v is not KeyError})


PART = st.one_of(
    shaped({"type": "text", "text": "hi"}),
    shaped({"type": "think", "think": "", "encrypted": "sig"}),
    shaped({"type": "image_url", "imageUrl": {"url": "data:x", "id": "i"}}),
    ANY,
)
EVENTS = st.one_of(
    st.builds(lambda kind, d: {"type": kind, **d}, st.sampled_from(["step.begin", "step.end"]),
              shaped({"uuid": "s", "turnId": "1", "step": 1, "finishReason": "end_turn"})),
    st.builds(lambda d, p: {**d, "part": p}, shaped({"type": "content.part", "stepUuid": "s"}), PART),
    shaped({"type": "tool.call", "stepUuid": "s", "toolCallId": "c", "name": "Bash", "args": {"a": 1}}),
    st.builds(lambda d, out: {**d, "result": {"output": out, "isError": False}},
              shaped({"type": "tool.result", "toolCallId": "c"}), st.one_of(st.text(max_size=3), st.lists(PART, max_size=2), ANY)),
)
MESSAGES = st.builds(
    lambda d, parts: {**d, "content": parts},
    shaped({"role": "assistant", "toolCalls": [{"type": "function", "id": "c", "name": "n", "arguments": "{}"}],
            "toolCallId": "c", "isError": False, "partial": True, "origin": {"kind": "user"}}),
    st.one_of(st.lists(PART, max_size=3), ANY),
)
RECORDS = st.one_of(
    st.builds(lambda e, env: {"type": "context.append_loop_event", "event": e, **env}, EVENTS,
              shaped({"agentId": "main", "time": 5})),
    st.builds(lambda m, env: {"type": "context.append_message", "message": m, **env}, MESSAGES,
              shaped({"agentId": "main", "time": 5})),
    st.builds(lambda env: {"type": "context.clear", **env}, shaped({"agentId": "main", "time": 5})),
    st.builds(lambda env: {"type": "swarm_mode.exit", **env}, shaped({"agentId": "main"})),
    st.builds(lambda d, env: {"type": "context.apply_compaction", **d, **env},
              shaped({"summary": "s", "contextSummary": "c", "compactedCount": 3, "count": 3,
                      "keptUserMessageCount": 2, "keptHeadUserMessageCount": None, "legacyTail": False}),
              shaped({"agentId": "main", "time": 5})),
    st.builds(lambda d, env: {"type": "context.undo", **d, **env},
              st.fixed_dictionaries({"count": st.one_of(st.integers(-2, 2**53 + 2), ANY)}),
              shaped({"agentId": "main"})),
)


@settings(max_examples=1500, deadline=None)
@given(RECORDS)
def test_fast_path_implies_schema_validity(record: dict[str, Any]) -> None:
    rtype = record["type"]
    fast = records._FAST[rtype]
    if records._envelope_ok(record) and fast(record):
        assert records._validator(rtype).is_valid(record), (record, problems(rtype, record))


def test_common_records_take_the_fast_path_and_bad_ones_are_explained() -> None:
    ok = {"type": "context.append_loop_event", "event": {"type": "content.part", "stepUuid": "s",
                                                          "part": {"type": "think", "think": "", "encrypted": None}}}
    assert records._FAST[ok["type"]](ok) and is_valid_v2(ok["type"], ok)
    kept = {"type": "context.apply_compaction", "summary": "s", "compactedCount": 4, "keptUserMessageCount": 2}
    assert records._FAST[kept["type"]](kept) and is_valid_v2(kept["type"], kept)
    bad = {"type": "context.undo", "count": 0}
    assert not is_valid_v2("context.undo", bad)
    assert problems("context.undo", bad) == ["count: 0 is less than the minimum of 1"]


HISTORY_TYPES = st.sampled_from(list(records.HISTORY_TYPES) + ["swarm_mode.enter", "metadata"])
WILD = st.builds(lambda t, d: {**d, "type": t}, HISTORY_TYPES,
                 st.dictionaries(st.sampled_from(["event", "message", "count", "summary", "compactedCount",
                                                  "keptUserMessageCount", "agentId", "trigger"]), ANY, max_size=4))


@settings(max_examples=600, deadline=None)
@given(st.lists(st.one_of(RECORDS, WILD), max_size=12))
def test_hostile_records_never_raise(batch: list[dict[str, Any]]) -> None:
    """Whatever the records hold, replay and every kimi check finish without an exception."""
    import io
    from pathlib import Path

    import orjson

    from transcript_doctor.core import ScanConfig, check_store
    from transcript_doctor.stores.kimi.replay.driver import replay_object, replay_stream
    from transcript_doctor.stores.kimi.store import KimiStore, Session

    from .snapshots import snapshot

    data = b"".join(orjson.dumps(r) + b"\n" for r in batch)
    for full in (True, False):
        state = replay_stream(Path("wire.jsonl"), io.BytesIO(data), full=full)
        if full:
            for engine in ("v1", "v2"):
                replay_object(state, engine)
    store = KimiStore(Path("wire.jsonl"), "wire.jsonl", [Session(None, None, state)], readonly=True)
    check_store(store, ScanConfig())
    reference = replay_stream(Path("wire.jsonl"), io.BytesIO(data), full=False, hot_path=False)
    check_store(KimiStore(Path("wire.jsonl"), "wire.jsonl", [Session(None, None, reference)], readonly=True),
                ScanConfig())  # the checks project both histories (a projection can fail the engine)
    assert snapshot(state) == snapshot(reference)  # the hot path is the general path, hostile input too

"""The replay's hot path (replay/hot_path.py) leaves exactly the state the general path leaves.

Journals come from the operation grammar, then get shuffled about: records duplicated, moved,
and hostile records mixed in that name the same steps and calls (events for steps that are not
open, unknown kinds, another agent's records, bad envelopes, invalid events).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_doctor.stores.kimi.engines.messages import public
from transcript_doctor.stores.kimi.read.js_stringify import _stringify, js_stringify
from transcript_doctor.stores.kimi.replay.driver import replay_stream

from .snapshots import snapshot
from .strategies import journals

PATH = Path("agents/main/wire.jsonl")
STEPS = st.sampled_from(["s0", "s1", "s2", "s3", "nope"])
CALLS = st.sampled_from(["c0-0", "c1-0", "c2-1", "c3-0", "zz"])
PART = st.sampled_from([{"type": "text", "text": "x"}, {"type": "think", "think": ""}, {"type": "text", "text": " "},
                        {"type": "think", "think": "", "encrypted": None}, {"type": "bogus"}, "not a part"])
EVENT = st.one_of(
    st.builds(lambda kind, uuid, finish: {"type": kind, "uuid": uuid, "turnId": "9", "finishReason": finish},
              st.sampled_from(["step.begin", "step.end"]), STEPS, st.sampled_from(["end_turn", "error", "interrupted"])),
    st.builds(lambda uuid, part: {"type": "content.part", "stepUuid": uuid, "part": part}, STEPS, PART),
    st.builds(lambda uuid, call: {"type": "tool.call", "stepUuid": uuid, "toolCallId": call, "name": "Bash",
                                  "args": {"a": 1}}, STEPS, CALLS),
    st.builds(lambda call, out: {"type": "tool.result", "toolCallId": call, "result": {"output": out}},
              CALLS, st.sampled_from(["ok", "", 5, [{"type": "text", "text": "t"}]])),
    st.fixed_dictionaries({"type": st.sampled_from(["step.retry", 7, None])}),
)
ENVELOPE = st.sampled_from([{}, {"agentId": "main"}, {"agentId": "other"}, {"agentId": None}, {"time": None},
                            {"time": 1.5}, {"time": "soon"}])
MESSAGE = st.sampled_from([
    {"role": "user", "content": [{"type": "text", "text": "typed"}], "toolCalls": []},
    {"role": "user", "content": [{"type": "text", "text": "<reminder>"}], "origin": {"kind": "injection"}},
    {"role": "assistant", "content": [], "toolCalls": [{"type": "function", "id": "c1-0", "name": "n",
                                                         "arguments": "{}"}]},
    {"role": "tool", "content": "not a list", "toolCallId": "c1-0"},
    {"role": "robot", "content": []},
    "not a message",
])
HOSTILE = st.one_of(
    st.builds(lambda event, env: orjson.dumps({"type": "context.append_loop_event", "event": event, **env}),
              st.one_of(EVENT, st.just("not an event")), ENVELOPE),
    st.builds(lambda message, env: orjson.dumps({"type": "context.append_message", "message": message, **env}),
              MESSAGE, ENVELOPE),
    st.builds(lambda kind, env: orjson.dumps({"type": kind, **env}),
              st.sampled_from(["turn.prompt", "usage.record", "swarm_mode.enter", "context.clear", 5]), ENVELOPE),
)
EDITS = st.lists(st.one_of(
    st.tuples(st.just("insert"), st.integers(1, 60), HOSTILE),
    st.tuples(st.just("duplicate"), st.integers(1, 60), st.integers(1, 60)),
    st.tuples(st.just("move"), st.integers(1, 60), st.integers(1, 60)),
), max_size=8)


def mutate(data: bytes, edits: list[tuple[str, int, Any]]) -> bytes:
    lines = data.splitlines()
    for op, at, arg in edits:
        at = at % len(lines) or 1  # the header stays first
        if op == "insert":
            lines.insert(at, arg)
        elif op == "duplicate":
            lines.insert(at, lines[arg % len(lines) or 1])
        else:
            lines.insert(at, lines.pop(arg % len(lines) or 1))
    return b"\n".join(lines) + b"\n"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(journals(), EDITS)
def test_hot_path_leaves_the_state_of_the_general_path(data: bytes, edits: list) -> None:
    journal = mutate(data, edits)
    fast = replay_stream(PATH, io.BytesIO(journal), full=False)
    reference = replay_stream(PATH, io.BytesIO(journal), full=False, hot_path=False)
    assert snapshot(fast) == snapshot(reference)


def test_the_hot_path_takes_the_common_records() -> None:
    """Guard against a hot path that silently never runs (the equivalence test would still pass)."""
    from transcript_doctor.stores.kimi.replay import hot_path

    taken: list[tuple[str, bool]] = []
    handlers = ("_step_begin", "_step_end", "_content_part", "_tool_call", "_tool_result", "message")
    originals = {name: getattr(hot_path.HotPath, name) for name in handlers}

    def counting(name: str) -> Any:
        def handler(self: hot_path.HotPath, *args: Any) -> bool:
            done = originals[name](self, *args)
            taken.append((name, done))
            return bool(done)
        return handler

    for name in originals:
        setattr(hot_path.HotPath, name, counting(name))
    try:
        state = replay_stream(PATH, io.BytesIO(_plain_journal()), full=False)
    finally:
        for name, original in originals.items():
            setattr(hot_path.HotPath, name, original)
    assert {name for name, _ in taken} == set(handlers) and all(done for _, done in taken)
    assert len(taken) == state.stats.records - 1  # every record but the header


def _plain_journal() -> bytes:
    from .builders import Journal, text

    journal = Journal().user("hi")
    journal.step("s1", [text("hello")], calls=[("c1", "done")], finish="end_turn", turn="1")
    return journal.bytes()


JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**60), 2**60), st.floats(allow_nan=False), st.text()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=500, deadline=None)
@given(JSON)
def test_js_stringify_fast_path_matches_the_reference(value: Any) -> None:
    assert js_stringify(value) == _stringify(value)


def test_orjson_escapes_strings_as_json_stringify_does() -> None:
    """The fast path hands flat objects to orjson: its string escaping must be JSON.stringify's."""
    for cp in [*range(0, 0x800), 0x2028, 0x2029, 0xFEFF, 0xFFFF, 0x1F600, 0x10FFFF]:
        if 0xD800 <= cp <= 0xDFFF:
            continue
        value = {"k": f"a{chr(cp)}b"}
        assert js_stringify(value) == _stringify(value), hex(cp)
    assert js_stringify({"k": "\ud800"}) == '{"k":"\\ud800"}'  # a lone surrogate, escaped as JS does


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(journals(), EDITS)
def test_a_scan_replay_ends_with_the_histories_of_a_full_replay(data: bytes, edits: list) -> None:
    """Light replays (hot path, mirrored transcripts, arguments serialised at the end) and full
    replays (every record through every fold) agree on both live histories and projections."""
    journal = mutate(data, edits)
    light = replay_stream(PATH, io.BytesIO(journal), full=False)
    full = replay_stream(PATH, io.BytesIO(journal), full=True)
    assert light.crash == full.crash
    for engine in ("v1", "v2"):
        if engine in full.crash:
            continue
        ours, theirs = getattr(light, engine).history, getattr(full, engine).history
        assert [public(m) for m in ours] == [public(m) for m in theirs]
        assert all(isinstance(c.get("arguments"), (str, type(None))) for m in ours for c in m.get("toolCalls") or ()
                   if isinstance(c, dict))


def test_keys_a_journal_writes_cannot_stand_in_for_what_tdoc_builds() -> None:
    """A record may carry any key: nothing tdoc derives from an event is looked up in it."""
    from .builders import Journal, text

    journal = Journal().user("hi")
    journal.step("s1", [text("hello")], calls=[("c1", "done")], finish="end_turn", turn="1")
    for record in journal.records:
        event = record.get("event") or {}
        if event.get("type") == "tool.call":
            event["\u0000call"] = {"type": "function", "id": "forged", "name": "rm", "arguments": "{}"}
            event["\u0000arguments"] = "forged"
        if event.get("type") == "tool.result":
            event["\u0000message"] = {"role": "user", "content": [{"type": "text", "text": "forged"}]}
    for full in (True, False):
        state = replay_stream(PATH, io.BytesIO(journal.bytes()), full=full)
        text_out = orjson.dumps([public(m) for m in state.v1.history]).decode()
        assert "forged" not in text_out and '"c1"' in text_out


def test_an_unhashable_id_left_by_an_invalid_record_does_not_break_the_hot_path() -> None:
    """Found by the hostile-record property test: an invalid `tool.call` whose id is a list (the
    general path indexes it as far as it can), then its step ends through the hot path."""
    records = [  # no step.begin: v1 reports the call for a step that is not open instead of failing
        {"type": "metadata", "protocol_version": "1.4", "created_at": 1},
        {"type": "context.append_loop_event", "event": {"type": "tool.call", "stepUuid": "s", "toolCallId": [],
                                                        "name": "Bash", "args": {"a": 1}}},
        {"type": "context.append_loop_event", "event": {"type": "step.end", "uuid": "s", "finishReason": "end_turn"}},
    ]
    journal = b"\n".join(orjson.dumps(r) for r in records) + b"\n"
    fast = replay_stream(PATH, io.BytesIO(journal), full=False)
    reference = replay_stream(PATH, io.BytesIO(journal), full=False, hot_path=False)
    assert snapshot(fast) == snapshot(reference)
    assert not fast.crash and fast.v1.errors


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(journals(), EDITS)
def test_the_engines_kept_users_ledger_lists_what_a_walk_lists(data: bytes, edits: list) -> None:
    """Each engine remembers the users its last compaction kept and walks only what follows the
    summary; at every compaction that must be the full walk's list (by identity)."""
    from transcript_doctor.stores.kimi.engines import compaction as cx

    original = cx.KeptUsers.users_of

    def checked(self: cx.KeptUsers, history: list) -> list:
        ours = original(self, history)
        assert [id(m) for m in ours] == [id(m) for m in cx.compactable_users(history)]
        return ours

    cx.KeptUsers.users_of = checked  # type: ignore[method-assign]
    try:
        for full in (False, True):
            replay_stream(PATH, io.BytesIO(mutate(data, edits)), full=full)
    finally:
        cx.KeptUsers.users_of = original  # type: ignore[method-assign]


def _loop(event: dict[str, Any]) -> dict[str, Any]:
    return {"type": "context.append_loop_event", "event": event, "time": 1}


TEXT = {"type": "text", "text": "said"}
SHARED_CASES = {
    # v2 settles s1 at s2's begin while v1 keeps s1 open: the late part is v1's alone
    "settled-by-begin": [("step.begin", "s1"), ("content.part", "s1"), ("step.begin", "s2"), ("content.part", "s1"),
                         ("step.end", "s1"), ("step.end", "s2")],
    # a failed end closes the step in v1 only: the part after it is v2's alone
    "failed-end": [("step.begin", "s1"), ("content.part", "s1"), ("step.end-error", "s1"), ("content.part", "s1")],
    # a step.end for another step: v2 settles s1, v1 keeps it open
    "end-of-another": [("step.begin", "s1"), ("step.end", "s9"), ("content.part", "s1"), ("tool.call", "s1")],
    # a record of the general path between two parts, then the journal ends with the step open
    "general-between": [("step.begin", "s1"), ("content.part", "s1"), ("other-agent-part", "s1"),
                        ("content.part", "s1")],
}


def _shared_case(ops: list[tuple[str, str]]) -> bytes:
    records: list[dict[str, Any]] = [{"type": "metadata", "protocol_version": "1.4", "created_at": 1}]
    for n, (kind, uuid) in enumerate(ops):
        if kind in ("step.begin", "step.end"):
            records.append(_loop({"type": kind, "uuid": uuid, "turnId": "1", "finishReason": "end_turn"}))
        elif kind == "step.end-error":
            records.append(_loop({"type": "step.end", "uuid": uuid, "finishReason": "error"}))
        elif kind == "content.part":
            records.append(_loop({"type": kind, "stepUuid": uuid, "part": {**TEXT, "text": f"said {n}"}}))
        elif kind == "tool.call":
            records.append(_loop({"type": kind, "stepUuid": uuid, "toolCallId": f"c{n}", "name": "Bash", "args": {}}))
        else:
            records.append({**_loop({"type": "content.part", "stepUuid": uuid, "part": TEXT}), "agentId": "other"})
    return b"\n".join(orjson.dumps(r) for r in records) + b"\n"


def test_a_step_message_both_engines_share_splits_where_they_part() -> None:
    for name, ops in SHARED_CASES.items():
        journal = _shared_case(ops)
        fast = replay_stream(PATH, io.BytesIO(journal), full=False)
        reference = replay_stream(PATH, io.BytesIO(journal), full=False, hot_path=False)
        assert snapshot(fast) == snapshot(reference), name
        assert fast.v1.history != fast.v2.history, name  # each case makes the engines part


def test_the_reader_offers_a_loop_event_only_to_the_handler_of_its_kind() -> None:
    """`read_records(loop=...)`: an event object of a kind with a handler goes to that handler alone;
    any other loop-event record (no object, an unknown or non-string kind, a handler that declines)
    is yielded for the general path, and other types still go through `hot`."""
    from transcript_doctor.stores.kimi.read.reader import LOOP, ReadStats, read_records

    offered: list[tuple[str, int]] = []

    def taker(kind: str, takes: bool) -> Any:
        def take(line: int, offset: int, data: dict[str, Any], event: dict[str, Any]) -> bool:
            assert data["event"] is event
            offered.append((kind, line))
            return takes
        return take

    def message(line: int, offset: int, data: dict[str, Any]) -> bool:
        offered.append(("message", line))
        return True

    lines = [{"type": "metadata", "protocol_version": "1.4", "created_at": 1},
             {"type": LOOP, "event": {"type": "step.begin", "uuid": "s"}},
             {"type": LOOP, "event": {"type": "step.end", "uuid": "s"}},
             {"type": LOOP, "event": {"type": "unknown.kind"}},
             {"type": LOOP, "event": {"type": ["step.begin"]}},
             {"type": LOOP, "event": "step.begin"},
             {"type": "context.append_message", "message": {"role": "user"}},
             {"type": "turn.prompt"}]
    journal = io.BytesIO(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    loop = {"step.begin": taker("step.begin", True), "step.end": taker("step.end", False)}
    yielded = [r.line for r in read_records(journal, ReadStats(), {"context.append_message": message},
                                            {LOOP}, loop=loop)]
    assert offered == [("step.begin", 2), ("step.end", 3), ("message", 7)]
    assert yielded == [1, 3, 4, 5, 6]  # the header, the declined end and the three no handler takes

"""The shared rules through the rule engine: each rule with a positive case and a near miss."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transcript_doctor.conversation import Conversation
from transcript_doctor.model import Loc, Message, Part, ToolCall
from transcript_doctor.rules.engine import check_conversation, shared_codes
from transcript_doctor.rules.shared.predicates import encoding_problem, is_vacuous, part_is_vacuous
from transcript_doctor.text import is_blank


def user(text="hi"):
    return Message("user", [Part("text", text)])


def asst(*parts, calls=()):
    return Message("assistant", list(parts), tool_calls=[ToolCall(c, "t", "{}") for c in calls])


def text(t):
    return Part("text", t)


def think(t="", signed=False):
    return Part("reasoning", t, signed=signed)


def tool(call_id, body="ok", is_error=False):
    return Message("tool", [Part("text", body)], tool_call_id=call_id, is_error=is_error)


def run(messages, codes=None, **kw):
    for i, m in enumerate(messages):
        m.position = i
        m.loc = Loc(row=100 + i, table="messages")
    conversation = Conversation("mem", "test", None, messages, **kw)
    return list(check_conversation(conversation, shared_codes() if codes is None else codes))


def codes_of(findings):
    return sorted(f.code for f in findings)


def at(findings, code):
    return [(f.position, f.row) for f in findings if f.code == code]


# --------------------------------------------------------------------------- W101


@pytest.mark.parametrize(
    "msg",
    [
        asst(),
        asst(text("")),
        asst(text(" \n\t")),
        asst(text("\u3000\ufeff\u2028")),  # JS trim() whitespace, not all of it str.isspace()
        asst(think("")),
        asst(think("   "), text("")),
    ],
)
def test_w101_vacuous(msg):
    found = run([user(), msg])
    assert at(found, "W101") == [(1, 101)]
    assert found[0].severity == "error"


@pytest.mark.parametrize(
    "msg",
    [
        asst(text("ok")),
        asst(calls=["c1"]),
        asst(think("", signed=True)),
        asst(think("pondering")),
        asst(Part("media", "")),
        asst(text("\u200b")),  # zero-width space is not JS whitespace
    ],
)
def test_w101_near_misses(msg):
    msgs = [user(), msg] + ([tool("c1")] if msg.tool_calls else [])
    assert "W101" not in codes_of(run(msgs))


def test_w101_store_can_veto_and_empty_parts_switch():
    vetoed = asst()
    vetoed.extra["not_vacuous"] = True
    assert not is_vacuous(vetoed)
    assert "W101" not in codes_of(run([user(), asst()], empty_parts_vacuous=False))
    assert not is_vacuous(user(""))  # only assistants


# --------------------------------------------------------------------------- W102


def test_w102_blank_part_beside_content():
    found = run([user(), asst(text("answer"), text("  "))])
    assert at(found, "W102") == [(1, 101)]
    assert found[0].evidence["part_index"] == 1
    assert "W101" not in codes_of(found)


def test_w102_blank_text_beside_tool_call_and_in_user():
    found = run([Message("user", [text(""), Part("media")]), asst(text(""), calls=["c1"]), tool("c1")])
    assert at(found, "W102") == [(0, 100), (1, 101)]


def test_w102_near_misses():
    # the only part is blank: that is W101, not W102; signed empty thinking is not a text part
    assert codes_of(run([user(), asst(text(""))])) == ["W101"]
    assert run([user(), asst(think("", signed=True), text("real"))]) == []


_PART_TEXTS = st.text(alphabet=st.sampled_from([" ", "\t", "\u00a0", "\ufeff", "\u200b", "x", "\n"]), max_size=3)
_PARTS = st.lists(st.tuples(st.sampled_from(["text", "reasoning", "media"]), _PART_TEXTS, st.booleans()), max_size=4)


@given(st.lists(st.tuples(st.sampled_from(["user", "assistant"]), _PARTS, st.booleans()), max_size=5))
def test_w102_flags_exactly_the_blank_text_parts_beside_content(spec):
    """The rule asks `is_blank` only of a text that is empty or starts with whitespace; it must
    flag what asking it of every text part flags (JS whitespace, U+200B is not whitespace)."""
    msgs = [Message(role, [Part(kind, t, signed=signed) for kind, t, signed in parts],
                    tool_calls=[ToolCall("c", "t", "{}")] if call and role == "assistant" else [])
            for role, parts, call in spec]
    found = [(f.position, f.evidence["part_index"]) for f in run(msgs, codes=["W102"])]
    expected = []
    for i, msg in enumerate(msgs):
        blank = [k for k, p in enumerate(msg.parts) if p.kind == "text" and is_blank(p.text)]
        content = msg.tool_calls or any(not part_is_vacuous(p) for p in msg.parts)
        if blank and not is_vacuous(msg) and content:
            expected += [(i, k) for k in blank]
    assert found == expected


# --------------------------------------------------------------------------- W103


_EXCHANGE = st.lists(st.one_of(
    st.tuples(st.just("assistant"), st.lists(st.sampled_from(["a", "b", "c"]), max_size=2)),
    st.tuples(st.just("tool"), st.sampled_from(["a", "b", "c", ""])),
    st.tuples(st.just("user"), st.sampled_from([None, "a"])),  # "a": a user message naming a call (odd, but possible)
), max_size=8)


@given(_EXCHANGE)
def test_w103_flags_each_call_no_directly_following_tool_message_answers(spec):
    """Every call without a result among the tool messages right after its message, once per
    call id (the one-call short cut in `tool_exchange._unanswered` included)."""
    msgs = [asst(text("x"), calls=arg) if role == "assistant" else tool(arg) if role == "tool"
            else Message("user", [text("q")], tool_call_id=arg) for role, arg in spec]
    found = [(f.position, f.evidence["tool_call_id"]) for f in run(msgs, codes=["W103"])]
    expected, reported = [], set()
    for i, msg in enumerate(msgs):
        if msg.role != "assistant":
            continue
        j, following = i + 1, set()
        while j < len(msgs) and msgs[j].role == "tool":
            following.add(msgs[j].tool_call_id)
            j += 1
        for call in msg.tool_calls:
            if call.id not in following and call.id not in reported:
                reported.add(call.id)
                expected.append((i, call.id))
    assert found == expected


def test_w103_mid_history_and_trailing():
    found = run([user(), asst(calls=["a"]), user("next"), asst(text("x"), calls=["b"])])
    w103 = [f for f in found if f.code == "W103"]
    assert [(f.position, f.evidence["where"], f.evidence["next_role"]) for f in w103] == [
        (1, "mid-history", "user"),
        (3, "trailing", None),
    ]


def test_w103_one_of_two_calls_unanswered():
    found = run([user(), asst(calls=["a", "b"]), tool("a"), asst(text("done"))])
    assert [f.evidence["tool_call_id"] for f in found if f.code == "W103"] == ["b"]


def test_w103_near_miss_all_answered_in_any_order():
    assert run([user(), asst(calls=["a", "b"]), tool("b"), tool("a"), asst(text("done"))]) == []


# --------------------------------------------------------------------------- W104 / W105 / W106 / W107


def test_w104_orphan_result():
    found = run([user(), asst(calls=["a"]), tool("a"), tool("zzz"), asst(text("ok"))])
    assert at(found, "W104") == [(3, 103)]


def test_w104_near_miss_result_after_its_call():
    assert "W104" not in codes_of(run([user(), asst(calls=["a"]), tool("a")]))


def test_w105_duplicate_call_id():
    found = run([user(), asst(calls=["a"]), tool("a"), asst(calls=["a"]), tool("a")])
    assert at(found, "W105") == [(3, 103)]


def test_w105_within_one_message_and_near_miss():
    assert at(run([user(), asst(calls=["a", "a"]), tool("a")]), "W105") == [(1, 101)]
    assert "W105" not in codes_of(run([user(), asst(calls=["a", "b"]), tool("a"), tool("b")]))


def test_w106_later_duplicate_dropped():
    found = run([user(), asst(calls=["a"]), tool("a", "one"), tool("a", "two"), asst(text("ok"))])
    assert at(found, "W106") == [(3, 103)]
    assert found[0].evidence["dropped_placeholder"] is False


def test_w106_real_result_replaces_placeholder():
    placeholder = tool("a", "Tool call interrupted, outcome unknown", is_error=True)
    found = run([user(), asst(calls=["a"]), placeholder, tool("a", "real output"), asst(text("ok"))])
    assert at(found, "W106") == [(2, 102)]
    # the reverse order keeps the real result and drops the placeholder that came later
    placeholder = tool("a", "Tool call interrupted, outcome unknown", is_error=True)
    found = run([user(), asst(calls=["a"]), tool("a", "real"), placeholder, asst(text("ok"))])
    assert at(found, "W106") == [(3, 103)]


def test_w106_near_miss_distinct_calls():
    assert run([user(), asst(calls=["a", "b"]), tool("a"), tool("b"), asst(text("ok"))]) == []


def test_w107_displaced_result():
    found = run([user(), asst(calls=["a"]), user("more"), tool("a"), asst(text("ok"))])
    assert at(found, "W107") == [(3, 103)]
    assert at(found, "W103") == [(1, 101)]
    assert found[[f.code for f in found].index("W107")].evidence["separating_roles"] == ["user"]


def test_w107_near_miss_parallel_results():
    assert "W107" not in codes_of(run([user(), asst(calls=["a", "b"]), tool("a"), tool("b")]))


# --------------------------------------------------------------------------- W108 / W109


def test_w108_leading_assistant_after_system():
    found = run([Message("system", [text("sys")]), asst(text("hello")), user()])
    assert at(found, "W108") == [(1, 101)]
    assert found[0].evidence["messages_before_first_user"] == 1


def test_w108_near_miss():
    assert run([Message("system", [text("sys")]), user(), asst(text("hello"))]) == []
    assert run([]) == []


def test_w109_consecutive_assistants():
    found = run([user(), asst(text("a")), asst(text("b"))])
    assert at(found, "W109") == [(2, 102)]
    assert found[0].severity == "info"


def test_w109_near_miss_tool_between():
    assert run([user(), asst(text("a"), calls=["c"]), tool("c"), asst(text("b"))]) == []


# --------------------------------------------------------------------------- F507 / F508


@pytest.mark.parametrize("bad,kind", [("a\x00b", "nul"), ("x\ud83d y", "lone-surrogate"), ("\udc00", "lone-surrogate")])
def test_f507_bad_text(bad, kind):
    found = run([user(bad), asst(text("ok"))])
    assert at(found, "F507") == [(0, 100)]
    assert found[0].evidence["problem"] == kind


def test_f507_in_arguments_and_near_miss():
    msg = Message("assistant", [], tool_calls=[ToolCall("c", "t", '{"a": "\x00"}')])
    assert at(run([user(), msg, tool("c")]), "F507") == [(1, 101)]
    assert run([user("emoji \U0001F600 and \u00e9 are fine"), asst(text("ok"))]) == []


def test_f508_bad_arguments():
    msg = Message("assistant", [], tool_calls=[ToolCall("c", "t", '{"a": 1')])
    found = run([user(), msg, tool("c")])
    assert at(found, "F508") == [(1, 101)]
    assert found[0].evidence["arguments"] == '{"a": 1'


@pytest.mark.parametrize("args", ['{"a": 1}', "{}", "", None, "[1, 2]"])
def test_f508_near_misses(args):
    msg = Message("assistant", [], tool_calls=[ToolCall("c", "t", args)])
    assert "F508" not in codes_of(run([user(), msg, tool("c")]))


# --------------------------------------------------------------------------- selection and invariants


def test_codes_filter():
    msgs = [user(), asst(text("a")), asst()]
    assert codes_of(run(msgs)) == ["W101", "W109"]
    assert codes_of(run(msgs, codes=["W109"])) == ["W109"]
    assert run(msgs, codes=[]) == []


@given(st.text())
def test_encoding_problem_agrees_with_utf8(s):
    problem = encoding_problem(s)
    try:
        s.encode("utf-8")
        encodable = True
    except UnicodeEncodeError:
        encodable = False
    assert (problem is None) == (encodable and "\x00" not in s)


_roles = st.sampled_from(["user", "assistant", "tool"])


@given(st.lists(st.tuples(_roles, st.sampled_from(["", "x"]), st.sampled_from(["a", "b", None])), max_size=12))
def test_findings_always_point_at_a_message(spec):
    msgs = []
    for role, body, call in spec:
        if role == "tool":
            msgs.append(tool(call or "a", body))
        elif role == "assistant":
            msgs.append(asst(text(body), calls=[call] if call else []))
        else:
            msgs.append(user(body))
    found = run(msgs)
    positions = {m.position for m in msgs}
    assert all(f.position in positions for f in found)
    # a balanced exchange never yields pairing findings
    clean = run([user(), asst(calls=["a"]), tool("a"), asst(text("ok"))])
    assert clean == []

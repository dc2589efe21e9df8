"""Hypothesis strategies that write kimi-code journals from a small grammar of operations."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from .builders import Journal, text, think

PARTS = {
    "text": text("an answer"),
    "blank": text("  \n"),
    "empty-think": think(""),
    "signed-empty": think("", encrypted="sig"),
    "think": think("some reasoning"),
}
VACUOUS = {"blank", "empty-think"}


@st.composite
def step_op(draw: Any, allow_vacuous: bool, allow_failed: bool) -> tuple:
    names = sorted(PARTS) if allow_vacuous else sorted(set(PARTS) - VACUOUS)
    parts = draw(st.lists(st.sampled_from(names), min_size=0 if allow_vacuous else 1, max_size=3))
    if not allow_vacuous and all(p in VACUOUS for p in parts):
        parts = ["text"]
    calls = draw(st.lists(st.booleans(), max_size=2))  # True: the result is recorded
    finishes = ["end_turn", "error", None] if allow_failed else ["end_turn"]
    return ("step", tuple(parts), tuple(calls), draw(st.sampled_from(finishes)))


def op_sequences(*, vacuous: bool = True, failed: bool = True, undo: bool = True,
                 compaction: bool = True) -> st.SearchStrategy[list[tuple]]:
    ops = [st.just(("user",)), step_op(vacuous, failed)]
    if undo:
        ops.append(st.builds(lambda n: ("undo", n), st.integers(1, 2)))
    if compaction:
        ops.append(st.builds(lambda back: ("legacy", back), st.integers(0, 4)))
        ops.append(st.builds(lambda kept: ("kept", kept), st.integers(0, 2)))
        ops.append(st.just(("clear",)))
        ops.append(st.just(("swarm",)))
    return st.lists(st.one_of(ops), min_size=1, max_size=14)


def journals(**kinds: bool) -> st.SearchStrategy[bytes]:
    return op_sequences(**kinds).map(lambda seq: build(seq).bytes())


def is_vacuous_step(op: tuple) -> bool:
    """A step v2 drops when it settles: no calls, only vacuous parts, ended normally."""
    return op[0] == "step" and not op[2] and op[3] == "end_turn" and all(p in VACUOUS for p in op[1])


def build(sequence: list[tuple]) -> Journal:
    journal = Journal().user("first prompt")
    writer_len = 1  # the v1 writer's history length, for realistic legacy counts
    for n, op in enumerate(sequence):
        if op[0] == "user":
            journal.user(f"prompt {n}")
            writer_len += 1
        elif op[0] == "step":
            _, parts, calls, finish = op
            call_list = [(f"c{n}-{i}", "done" if recorded else None) for i, recorded in enumerate(calls)]
            journal.step(f"s{n}", [PARTS[p] for p in parts], calls=call_list, finish=finish, turn=str(n + 1))
            writer_len += 1 + len(call_list)
        elif op[0] == "undo":
            journal.add({"type": "context.undo", "count": op[1]})
        elif op[0] == "legacy":
            journal.legacy_compaction(max(0, writer_len - op[1]))
            writer_len = 1 + op[1]
        elif op[0] == "kept":
            journal.kept_compaction(op[1])
            writer_len = op[1] + 1
        elif op[0] == "clear":
            journal.add({"type": "context.clear"})
            writer_len = 0
        elif op[0] == "swarm":  # enter swarm mode, get its reminder injected, leave it again
            journal.add({"type": "swarm_mode.enter", "trigger": "user"})
            journal.user("<system-reminder>swarm</system-reminder>", kind="injection")
            journal.records[-1]["message"]["origin"]["variant"] = "swarm_mode"
            journal.add({"type": "swarm_mode.exit"})
    return journal

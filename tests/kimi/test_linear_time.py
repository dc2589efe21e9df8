"""kimi walks that stay linear on the shapes that once made them quadratic.

A journal with an orphan tool call in every turn gives one W103 repair per call, and each repair
used to search both engines' whole histories for the line of its call: 3,200 turns took 57 s to
scan. `repairs.CallLines` indexes a history once. Nothing here is timed: one test pins the index
to the search it replaces, the other forbids the search on the common ids.
"""

from __future__ import annotations

import gc
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.healing import heal_paths
from transcript_doctor.stores import HealOptions
from transcript_doctor.stores.kimi.checks import repairs
from transcript_doctor.stores.kimi.checks.repairs import CallLines, _known_lines, _matches

from .builders import Journal, text, think

# Call ids as a journal can hold them: the common strings, and what v1 applies unchecked.
ids = st.one_of(st.sampled_from(["a", "b", "c"]), st.integers(0, 2), st.booleans(), st.sampled_from([1.0, 2.5]),
                st.none(), st.lists(st.just("a"), max_size=1), st.dictionaries(st.just("k"), st.just("a"), max_size=1))
call = st.one_of(st.fixed_dictionaries({"id": ids}), st.just({}), st.just("not a call"))
source = st.one_of(st.tuples(st.just("rec"), st.integers(1, 50)), st.tuples(st.just("step"), st.just("u"), st.integers(1, 50)),
                   st.just(("synth", "x")), st.none())  # fmt: skip
message = st.fixed_dictionaries(
    {"role": st.sampled_from(["assistant", "tool", "user"]), "_src": source},
    optional={"toolCalls": st.one_of(st.lists(call, max_size=3), st.just("calls")), "toolCallId": ids},
)


def _searched(history: list[dict[str, Any]], call_id: Any, want_tool: bool) -> list[int]:
    return _known_lines(m for m in history if _matches(m, call_id, want_tool))


@given(st.lists(message, max_size=12), st.one_of(st.sampled_from(["a", "b", "z"]), st.integers(0, 3)), st.booleans())
def test_the_index_gives_the_lines_the_search_gave(history: list[dict[str, Any]], call_id: Any, want_tool: bool) -> None:
    assert CallLines(history).lines(call_id, want_tool) == _searched(history, call_id, want_tool)


def test_many_orphan_calls_are_placed_without_searching_the_history(monkeypatch, tmp_path) -> None:
    journal = Journal()
    for k in range(60):
        journal.user(f"question {k}")
        journal.step(f"s{k}", [text("running")], calls=[(f"c{k}", None)], finish="tool_use", turn=str(k + 1))
    searched: list[Any] = []
    monkeypatch.setattr(repairs, "_matches", lambda *args: searched.append(args) or _matches(*args))
    report = scan([str(journal.write(tmp_path / "wire.jsonl"))], ScanConfig(jobs=1))
    orphans = [f for f in report.findings if f.code == "W103"]
    assert len(orphans) == 60
    assert [f.line for f in orphans] == sorted(f.line for f in orphans)
    assert all(f.line is not None for f in orphans)
    assert searched == []


def test_the_collector_is_paused_while_the_rules_project_the_histories(monkeypatch, tmp_path, collector_on) -> None:
    # Every full collection walked every projection the rules had built so far: on 12,800 turns,
    # 14 of them took 5.4 s of a 12 s scan. The rules project with the collector paused.
    from transcript_doctor.stores.kimi.checks import history
    from transcript_doctor.stores.kimi.replay import driver

    journal = Journal()
    for k in range(5):
        journal.user(f"question {k}")
        journal.step(f"s{k}", [text("running")], calls=[(f"c{k}", None)], finish="tool_use", turn=str(k + 1))
    seen: list[bool] = []
    real = driver.projected

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    for module in (repairs, history, driver):
        monkeypatch.setattr(module, "projected", watched)
    path = journal.write(tmp_path / "wire.jsonl")
    report = scan([str(path)], ScanConfig(jobs=1))
    assert report.findings and seen and not any(seen)
    assert gc.isenabled()  # and resumed after
    # A heal's plan and verification project too (four projections of each history, kept).
    vacuous = Journal()
    for k in range(5):
        vacuous.user(f"question {k}")
        vacuous.step(f"v{k}", [think()], finish="filtered", turn=str(k + 1))
        vacuous.step(f"s{k}", [text("answer")], turn=str(k + 1))
    seen.clear()
    results, _ = heal_paths([str(vacuous.write(tmp_path / "vacuous.jsonl"))], ScanConfig(jobs=1), HealOptions())
    assert results[0].applied and seen and not any(seen)
    assert gc.isenabled()


def test_a_legacy_comparison_works_out_each_message_identity_once(monkeypatch, tmp_path) -> None:
    # A C201 comparison asks v1's kept slice, v2's history and v2's kept slice (which share their
    # messages) several times; it used to work out each identity on every ask, about ten per
    # message. On legacy counts that each cut a short prefix of a growing history that was most of
    # the scan. It now works each out once per comparison (`legacy._memo`).
    from transcript_doctor.stores.kimi.replay import legacy

    journal = Journal()
    for k in range(12):
        journal.user(f"question {k}")
        journal.step(f"v{k}", [{"type": "think", "think": ""}], finish="filtered", turn=str(k + 1))
        journal.step(f"s{k}", [text("answer")], calls=[(f"c{k}", "ok")], finish="tool_use", turn=str(k + 1))
        journal.legacy_compaction(2)  # cuts a short prefix: the history keeps growing
    asked: list[list[int]] = []
    real_identity, real_compare = legacy._identity, legacy._compare_slices

    def counted(m: dict[str, Any]) -> tuple[Any, ...]:
        asked[-1].append(id(m))
        return real_identity(m)

    def comparison(*args: Any) -> None:
        asked.append([])
        real_compare(*args)

    monkeypatch.setattr(legacy, "_identity", counted)
    monkeypatch.setattr(legacy, "_compare_slices", comparison)
    report = scan([str(journal.write(tmp_path / "wire.jsonl"))], ScanConfig(jobs=1))
    assert any(f.code == "C201" for f in report.findings)
    assert len(asked) >= 10 and max(map(len, asked)) > 20  # the comparisons grew with the history
    assert all(len(ids) == len(set(ids)) for ids in asked)

"""Steps whose uuid begins more than once, and heals of hostile journals.

A duplicated record or a reused step uuid (a writer that retried a line, a journal pieced
together) gives one uuid several `step.begin`s. Found 2026-12-02 by the property below:

* a vacuous step that began twice: the heal deleted the records of the last begin only, the
  first one stayed, and the pipeline refused its own plan ("W101 would survive this heal", exit 2);
* a uuid whose first incarnation was vacuous (v2 dropped it) and whose second held a thinking
  part and a tool call: W101 offered to remove every record of the uuid, content included, and a
  heal of a healed journal did so.

Now every `step.begin` of a uuid is one of its records, and a step is removable only when all of
its records are vacuous (docs/kimi-code.md §Heal).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.core import ScanConfig
from transcript_doctor.healing import heal_paths
from transcript_doctor.stores import HealOptions

from .builders import Journal, think
from .strategies import build
from .test_heal_properties import seeded
from .test_route import EDITS, mutate

runner = CliRunner()
TEXT = {"type": "text", "text": "x"}


def _begin(j: Journal, uuid: str) -> Journal:
    return j.event({"type": "step.begin", "uuid": uuid, "turnId": "1", "step": 1})


def twice_begun_vacuous() -> bytes:
    j = _begin(Journal().user("hi").step("a", [TEXT]).user("go"), "v")  # a begin written twice
    return j.step("v", [think("")]).user("more").step("b", [TEXT]).bytes()


def reused_uuid(second: list[dict], calls: bool = True) -> bytes:
    """`s` records empty thinking and ends (v2 drops it); then `s` begins again, records
    `second` (and a tool call, with `calls`) and never ends (so the index keeps it)."""
    j = Journal().user("hi").step("a", [TEXT]).user("go").step("s", [think("")]).user("again")
    return j.step("s", second, [("c1", "done")] if calls else [], finish=None).user("more").bytes()


def _heal(tmp_path: Path, data: bytes) -> tuple[int, dict, bytes]:
    path, out = tmp_path / "wire.jsonl", tmp_path / "healed.jsonl"
    path.write_bytes(data)
    result = runner.invoke(app, ["heal", str(path), "--output", str(out), "--format", "json"])
    return result.exit_code, json.loads(result.stdout)["results"][0], out.read_bytes() if out.exists() else b""


def test_every_begin_of_a_vacuous_step_goes_with_it(tmp_path: Path) -> None:
    code, doc, healed = _heal(tmp_path, twice_begun_vacuous())
    assert code == 0 and doc["details"]["removed_steps"] == ["v"]
    assert b'"uuid":"v"' not in healed
    again = runner.invoke(app, ["heal", str(tmp_path / "healed.jsonl")])
    assert again.exit_code == 0, again.output  # nothing left to heal


def test_a_reused_uuid_with_content_is_reported_not_removed(tmp_path: Path) -> None:
    data = reused_uuid([think("some reasoning")])
    path = tmp_path / "wire.jsonl"
    path.write_bytes(data)
    found = json.loads(runner.invoke(app, ["scan", str(path), "--format", "json"]).stdout)["findings"]
    w101 = [f for f in found if f["code"] == "W101"]
    assert len(w101) == 1 and "also hold content" in w101[0]["message"] and w101[0].get("fix") is None
    code, doc, healed = _heal(tmp_path, data)
    assert code == 0 and not doc["changed"] and healed == data, doc  # nothing to heal: copied as it is
    assert path.read_bytes() == data


@pytest.mark.parametrize("second", [[think("")], []], ids=["vacuous-again", "nothing-again"])
def test_near_miss_a_reused_uuid_that_stays_vacuous_is_removed(tmp_path: Path, second: list[dict]) -> None:
    code, doc, healed = _heal(tmp_path, reused_uuid(second, calls=False))
    assert code == 0, doc
    assert doc["details"]["removed_steps"] == ["s"] and b'"uuid":"s"' not in healed


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seeded(), EDITS, st.sampled_from(["", "agents/main"]))
def test_a_heal_of_a_hostile_journal_never_deletes_content_and_is_final(sequence: list[tuple], edits: list,
                                                                         layout: str) -> None:
    """Generated journals with the heal's traps, lines duplicated and moved, hostile records
    mixed in: the heal never refuses its own plan, never deletes or rewrites a record with
    content, and when it kept no step, what it wrote has nothing left to heal. (A kept step can
    become removable once the others are gone: the heal said so, exit 1, and a second heal may
    take it.) `layout`: an agent's journal, whose v2 reads only its own agent's records (the
    hostile records include other agents')."""
    data = mutate(build(sequence).bytes(), edits)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / layout
        folder.mkdir(parents=True, exist_ok=True)
        path, out = folder / "wire.jsonl", folder / "healed.jsonl"
        path.write_bytes(data)
        results, _ = heal_paths([str(path)], ScanConfig(), HealOptions(mode="output", output=out))
        first = results[0]
        assert "error" not in first.extra, first.extra["error"]
        _only_vacuous_records_touched(data, first.edits)
        if not first.written:
            return
        again, _ = heal_paths([str(out)], ScanConfig(), HealOptions())
        assert "error" not in again[0].extra
        _only_vacuous_records_touched(out.read_bytes(), again[0].edits)
        if not first.skipped:
            assert not again[0].edits, again[0].edits


def _only_vacuous_records_touched(data: bytes, edits: list[dict]) -> None:
    """Every line a (safe) heal deletes or replaces is a step boundary, a vacuous part, a
    compaction whose count it rewrote, or a line that is not a JSON object."""
    from transcript_doctor.stores.kimi.engines.vacuous import is_vacuous_part

    lines = data.split(b"\n")
    for edit in edits:
        try:
            record = json.loads(lines[edit["line"] - 1])
        except ValueError:
            continue  # a torn or corrupt line
        if not isinstance(record, dict):
            continue
        event = record.get("event") if isinstance(record.get("event"), dict) else {}
        kind = event.get("type")
        if record.get("type") == "context.apply_compaction":
            assert edit["op"] == "replace", edit
        elif kind == "content.part":
            assert is_vacuous_part(event.get("part")), (edit, record)
        else:
            assert kind in ("step.begin", "step.end"), (edit, record)


def test_a_misaligned_count_over_a_step_that_cannot_go_offers_no_fix(tmp_path: Path) -> None:
    """C201 below whose cut the only v2-dropped step is a reused uuid with content: lowering the
    count would need that step gone, so there is no fix (it offered a count edit to the same
    value, which the heal then refused: 'C201 would survive this heal', exit 2)."""
    j = Journal().user("hi").step("s", [think("")]).user("go")
    data = j.step("s", [think("real")], finish=None).user("more").legacy_compaction(3).user("after").bytes()
    path = tmp_path / "wire.jsonl"
    path.write_bytes(data)
    found = json.loads(runner.invoke(app, ["scan", str(path), "--format", "json"]).stdout)["findings"]
    c201 = [f for f in found if f["code"] == "C201"]
    assert len(c201) == 1 and c201[0].get("fix") is None
    code, doc, healed = _heal(tmp_path, data)
    assert code == 0 and not doc["changed"] and healed == data, doc  # nothing to heal, nothing refused
    assert path.read_bytes() == data


@pytest.mark.parametrize(("aligns", "dropped", "named"), [(False, ["s1"], True), (True, ["s1"], False),
                                                          (False, ["other"], False)],
                         ids=["no-edit-aligns", "near-miss-the-fix-aligns", "near-miss-another-step"])
def test_a_demoted_step_below_a_count_no_edit_aligns_names_that_compaction(aligns: bool, dropped: list,
                                                                          named: bool) -> None:
    """The kept reason of a step the verification had to keep: when the step lies below a legacy cut
    whose count no edit re-aligns for v2 (its C201 says why), the reason names that compaction (on
    the 100 MB bench journal: step-5174-1 below line 107506)."""
    from types import SimpleNamespace

    from transcript_doctor.stores.kimi.heal.plan import DEMOTED_REASON, demoted_reason, is_demoted_reason

    state = SimpleNamespace(legacy=[SimpleNamespace(line=13, dropped_below=dropped, fix_aligns=aligns)])
    reason = demoted_reason(state, "s1")  # type: ignore[arg-type]
    assert is_demoted_reason(reason)
    assert ("legacy compaction at line 13" in reason) == named
    assert (reason == DEMOTED_REASON) == (not named)

"""A short seeded fuzz run over every store kind, and the mutants that once crashed tdoc.

The long run is `python bench/fuzz.py --n 20000`; both use `bench/mutate.py`, so a failure is
reproduced with `python bench/fuzz.py --repro FIXTURE:SEED`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from bench.fuzz import campaign, find_fixture, run_one
from bench.mutate import fixtures, mutant

# Mutants that crashed a stage before the reader-boundary rule (FIXTURE:SEED, what broke).
REGRESSIONS = [
    ("kimi-code/heal/heal-068.jsonl", 51, "replay JSON: nesting orjson cannot write"),
    ("kimi-code/heal/heal-068.jsonl", 1156, "replay JSON: a lone surrogate"),
    ("kimi-code/golden/c09_new_compaction.jsonl", 1624, "json/ndjson/sarif: an integer beyond 64 bits"),
    ("opencode/opencode.db", 1916, "sniff: an sqlite_master that is not UTF-8"),
    ("hermes/hermes-state-v21.db", 1977, "replay JSON: deep tool_calls"),
    ("hermes/hermes-state-v21.db", 2124, "replay: recursion over a deep reasoning_details"),
    ("kimi-code/heal/heal-034.jsonl", 2171, "every reporter: a lone surrogate in a finding"),
    ("eve/nightly-report.v27.ndjson", 2197, "every reporter: a lone surrogate eve now reads as JSON.parse does"),
    ("opencode/export-ses_02488099fffeZjgcBOIdRab2kX.json", 2867, "json reporter: a lone surrogate"),
    ("opencode/export-ses_02488099fffeZjgcBOIdRab2kX.json", 52028, "projection: tool input with a lone surrogate"),
    ("hermes/hermes-state-v21.db", 52321, "dry-run heal: messages.id renamed"),
    ("hermes/hermes-state-v21-b.db", 53637, "replay: a damaged b-tree page"),
    ("hermes/hermes-state-v21-b.db", 55569, "scan: a tool call id that is a list"),
    ("hermes/hermes-state-v30.db", 9678, "scan: an SQLite REAL infinity as the active flag"),
    ("hermes/hermes-state-v21.db", 15488, "scan: an SQLite REAL infinity as the active flag"),
    ("kimi-code/golden/c10_pending_then_message.jsonl", 300082, "detection: an object as `type` (the Claude Code sniff)"),
    ("claude-code/real/entirecli-7b11e1056673-0.jsonl", 300602, "Claude Code replay: a list as tool_use_id"),
    ("kimi-code/heal/heal-011.jsonl", 13029, "kimi heal: a lone surrogate in a legacy compaction line"),
    ("kimi-code/heal/heal-142.jsonl", 19098, "kimi heal: a count beyond 64 bits"),
    ("codex/synthetic/rollback.jsonl", 709, "Codex reader: an object as an event_msg `type`"),
    ("codex/peer/daaain-codex-malformed-rollout-66666666-6666-4666-8666-666666666666.jsonl", 1497,
     "Codex reader: a list as an event_msg `type`"),
    ("codex/synthetic/compaction-rebuilt.jsonl", 1779, "Codex reader: an object as an event_msg `type`"),
    ("codex/synthetic/interrupt.jsonl", 999, "Codex reader: a number as a reasoning `summary`/`content` list"),
    ("eve/nightly-report.v27.ndjson", 2130, "eve sniff: an object as a fact `type`"),
    ("codex/synthetic/orphan-call-end.jsonl", 19409, "Codex reader: a float as a reasoning list field"),
    ("codex/synthetic/rollback.jsonl", 10949, "Codex reader: a bool as a reasoning list field"),
    ("codex/synthetic/poisoned.jsonl", 6379, "Codex heal: a line nested deeper than orjson writes"),
    ("claude-code/real/entirecli-7021395bfde9-0.jsonl", 2778, "Claude Code heal: uuid5 of a call id with a lone surrogate"),
    ("claude-code/peer/ramtinj95-basic-session.jsonl", 11627, "Claude Code scan: an api_error nested deeper than orjson writes"),
    ("opencode/opencode.db", 243, "written heal: a page only the heal's statements reach is malformed"),
    ("claude-code/peer/ramtinj95-drift-and-warnings.jsonl", 5997, "written heal: a copy of the removed record came back"),
    ("claude-code/peer/ramtinj95-drift-and-warnings.jsonl", 22727, "written heal: removing the leaf resumed another branch"),
]


@pytest.mark.parametrize(("name", "seed", "what"), REGRESSIONS, ids=[f"{n}:{s}" for n, s, _ in REGRESSIONS])
def test_mutant_that_once_crashed(tmp_path: Path, name: str, seed: int, what: str) -> None:
    assert run_one(find_fixture(name), seed, tmp_path, timeout=120) == []


def test_a_short_seeded_run_over_every_store_kind() -> None:
    failures, per_group = campaign(300, seed=0, timeout=120)
    assert failures == [], "\n".join(map(str, failures[:20]))
    systems = {group.split("/")[0] for group in per_group}
    assert systems == {"claude-code", "codex", "eve", "hermes", "kimi-code", "opencode"}
    assert min(per_group.values()) >= 300 // len(per_group)


def test_a_failure_names_its_fixture_by_its_path_under_fixtures() -> None:
    every = fixtures()
    assert len({fx.name for fx in every}) < len(every)  # file names alone repeat across systems: labels are paths
    for fx in every:
        assert find_fixture(fx.label) == fx
    assert find_fixture("real/entirecli-7b11e1056673-0.jsonl").label == "claude-code/real/entirecli-7b11e1056673-0.jsonl"
    with pytest.raises(SystemExit, match="names 2 fixtures"):  # one in claude-code/peer, one in codex/peer
        find_fixture("peer/ramtinj95-repeated-failure-session.jsonl")
    with pytest.raises(SystemExit, match="no fixture"):
        find_fixture("kimi-code/golden/nothing.jsonl")


def test_mutants_are_deterministic_and_do_change_the_input() -> None:
    changed = Counter()
    for fx in fixtures()[:: max(1, len(fixtures()) // 12)]:
        for seed in range(5):
            first = mutant(fx, seed)
            assert mutant(fx, seed) == first
            changed[first != fx.path.read_bytes()] += 1
    assert changed[True] >= 0.8 * sum(changed.values())

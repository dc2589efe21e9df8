"""tdoc's replay equals the reference implementation's, for both engines, on every golden log."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from transcript_doctor.stores.kimi.replay.driver import replay_file, replay_object

from . import compare

GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "kimi-code" / "golden"
CASES = sorted(p.stem for p in GOLDEN.glob("*.jsonl"))


def test_the_golden_set_is_there():
    assert len(CASES) >= 80


@pytest.fixture(scope="module")
def replays():
    return {}


@pytest.mark.parametrize("engine", ["v1", "v2"])
@pytest.mark.parametrize("case", CASES)
def test_replay_matches_reference(case: str, engine: str, replays: dict) -> None:
    if case not in replays:
        replays[case] = replay_file(GOLDEN / f"{case}.jsonl")
    expected = orjson.loads((GOLDEN / f"{case}.{engine}.json").read_bytes())
    got = replay_object(replays[case], engine)
    if "crash" in expected:
        assert "crash" in got, "the reference engine fails on this log; tdoc must report an engine failure"
        return
    assert "crash" not in got, got.get("crash")
    for key in ("history", "projection", "strictProjection"):
        assert compare.messages(got[key]) == compare.messages(expected[key]), key
    assert compare.messages(got["transcript"]["entries"]) == compare.messages(expected["transcript"]["entries"])
    assert got["transcript"]["foldedLength"] == expected["transcript"]["foldedLength"]
    assert compare.anomalies(got["anomalies"]) == compare.anomalies(expected["anomalies"])
    assert compare.anomalies(got["strictAnomalies"]) == compare.anomalies(expected["strictAnomalies"])
    if engine == "v1":
        assert bool(got["errors"]) == bool(expected.get("errors")), got["errors"]

"""kimi-code request projection (stores/kimi/projection.py) against the reference replays."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from transcript_doctor.stores.kimi.projection import project

KIMI = Path(__file__).resolve().parent.parent / "fixtures" / "kimi-code"
MEDIA = {"image_url": "imageUrl", "audio_url": "audioUrl", "video_url": "videoUrl"}


# --------------------------------------------------------------------------- normalisation


def _present(value) -> bool:
    """Absent, null, false and [] are the same thing in the golden comparison."""
    return value not in (None, False, [])


def norm_part(part: dict) -> dict:
    kind = part.get("type")
    out = {"type": kind}
    if kind == "text":
        out["text"] = part.get("text")
    elif kind == "think":
        out["think"] = part.get("think")
        out["signed"] = "encrypted" in part
    elif kind in MEDIA:
        out["url"] = (part.get(MEDIA[kind]) or {}).get("url")
    return out


def norm_message(msg: dict) -> dict:
    out = {}
    for key in ("role", "toolCallId", "isError", "partial"):
        if _present(msg.get(key)):
            out[key] = msg[key]
    if _present(msg.get("content")):
        out["content"] = [norm_part(p) for p in msg["content"]]
    if _present(msg.get("toolCalls")):
        out["toolCalls"] = [(c.get("id"), c.get("name"), c.get("arguments")) for c in msg["toolCalls"]]
    origin = msg.get("origin")
    if _present(origin):
        out["origin"] = (origin.get("kind"), origin.get("variant"))
    return out


def norm_anomaly(item: dict) -> dict:
    return {k: item[k] for k in ("kind", "toolCallId", "role", "trailing") if k in item and item[k] is not None}


def normalise(messages: list[dict], anomalies: list[dict]) -> tuple[list, list]:
    return [norm_message(m) for m in messages], [norm_anomaly(a) for a in anomalies]


# --------------------------------------------------------------------------- golden cases


def _golden_outputs() -> list[tuple[str, str, dict]]:
    files = sorted((KIMI / "golden").glob("*.v[12].json")) + sorted((KIMI / "heal").glob("*.healed.v[12].json"))
    cases = []
    for path in files:
        data = orjson.loads(path.read_bytes())
        if "crash" not in data:
            engine = path.name.rsplit(".", 2)[-2]
            cases.append((path.name, engine, data))
    return cases


GOLDEN = _golden_outputs()
MODES = [(False, "projection", "anomalies"), (True, "strictProjection", "strictAnomalies")]


def test_golden_set_is_complete():
    names = {name for name, _, _ in GOLDEN}
    assert len(GOLDEN) >= 190
    assert "c04_dup_toolcall_strict.v1.json" in names and "heal-009.healed.v2.json" in names


@pytest.mark.parametrize("strict,msg_key,anom_key", MODES, ids=["normal", "strict"])
@pytest.mark.parametrize("name,engine,data", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden_projection(name, engine, data, strict, msg_key, anom_key):
    got = project(data["history"], engine, strict=strict)
    assert normalise(got.messages, got.anomalies) == normalise(data[msg_key], data[anom_key])
    assert len(got.sources) == len(got.messages)

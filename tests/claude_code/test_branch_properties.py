"""Property: a heal never moves the resume to another branch. Sessions with empty and
whitespace-only responses (inside the branch and at its end) and stray roots written later in the
file (another branch, as a copied or pieced-together file has them): the healed file resumes the
same conversation, every prompt of it in order, and loses no record that was not vacuous."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transcript_doctor.core import ScanConfig
from transcript_doctor.healing import heal_paths
from transcript_doctor.stores import HealOptions
from transcript_doctor.stores.claude_code.reader import read_transcript
from transcript_doctor.stores.claude_code.resume import Resume

from .builders import Session

OPS = st.lists(st.sampled_from(["turn", "turn", "empty", "blank", "stray", "late"]), min_size=1, max_size=10)


def build(ops: list[str]) -> Session:
    s = Session()
    for n, op in enumerate(ops):
        if op == "turn":
            s.user(f"prompt {n}")
            s.text(f"msg_{n}", f"answer {n}")
        elif op in ("empty", "blank", "late"):
            s.user(f"prompt {n}")
            if op == "late":  # the response is written after another branch's root
                _stray(s, n)
            rec = s.text(f"msg_{n}", " ")
            if op != "blank":
                rec["message"]["content"] = None  # an assistant record with no content at all
        else:
            _stray(s, n)
    return s


def _stray(s: Session, n: int) -> None:
    """Another branch's root, written later in the file than this branch's records so far."""
    here = s.parent
    s.user(f"stray {n}", parent=None)
    s.parent = here


def prompts(path: Path) -> list[str]:
    resume = Resume(read_transcript(path, str(path)))
    return [s.block.text for m in resume.cli.request.messages if m.role == "user" for s in m.slots
            if s.block.kind == "text"]


def _records(path: Path) -> dict[str, dict[str, Any]]:
    return {r["uuid"]: r for r in map(orjson.loads, path.read_bytes().splitlines()) if r.get("uuid")}


def _vacuous(rec: dict[str, Any]) -> bool:
    content = (rec.get("message") or {}).get("content")
    if rec.get("type") != "assistant":
        return False
    return content is None or (isinstance(content, list) and all(
        b.get("type") == "text" and not b.get("text", "").strip() for b in content))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_heal_resumes_the_same_branch(ops: list[str]) -> None:
    s = build(ops)
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "s.jsonl", Path(tmp) / "h.jsonl"
        src.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in s.records))
        results, code = heal_paths([str(src)], ScanConfig(), HealOptions(mode="output", output=out))
        assert code in (0, 1), results[0].warnings
        assert prompts(out) == prompts(src), "the healed file resumes another conversation"
        before, after = _records(src), _records(out)
        assert all(_vacuous(rec) for uuid, rec in before.items() if uuid not in after)
        if code == 1:  # what is left is what the heal said it kept
            assert results[0].skipped and all("another branch" in k["reason"] for k in results[0].skipped)

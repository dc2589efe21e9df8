"""Resume rules that the generated sessions do not cover: preserved segments, synthetic records."""

from __future__ import annotations

from pathlib import Path

from transcript_doctor.stores.claude_code.reader import read_transcript
from transcript_doctor.stores.claude_code.resume import Resume

from .builders import Session


def _texts(path: Path) -> list[tuple[str, list[str]]]:
    resume = Resume(read_transcript(path, str(path)))
    return [(m.role, [s.block.text for s in m.slots]) for m in resume.cli.request.messages]


def test_preserved_segment_is_reattached_after_the_summary(tmp_path):
    s = Session()
    s.user("old question")
    s.text("msg_01", "old answer")
    kept_user = s.user("recent question")
    kept_answer = s.text("msg_02", "recent answer")
    summary = s.compact()
    boundary = s.records[-2]
    boundary["compactMetadata"]["preservedSegment"] = {"headUuid": kept_user["uuid"], "anchorUuid": summary["uuid"],
                                                       "tailUuid": kept_answer["uuid"]}
    s.parent = kept_answer["uuid"]
    s.user("new question")
    s.text("msg_03", "new answer")
    path = tmp_path / "s.jsonl"
    path.write_text(s.jsonl(), encoding="utf-8")
    got = _texts(path)
    assert got[0][0] == "user" and got[0][1][0].startswith("This session is being continued")
    assert got[0][1][1:] == ["recent question"]
    assert got[1:] == [("assistant", ["recent answer"]), ("user", ["new question"]), ("assistant", ["new answer"])]


def test_synthetic_records_are_not_sent(tmp_path):
    s = Session()
    s.user("hi")
    s.text("msg_e", 'API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal"}}',
           model="<synthetic>", isApiErrorMessage=True)
    s.text("msg_01", "Hello.")
    path = tmp_path / "s.jsonl"
    path.write_text(s.jsonl(), encoding="utf-8")
    assert _texts(path) == [("user", ["hi"]), ("assistant", ["Hello."])]

"""Golden cases for the kimi-code rules: inputs that must fire, near misses that must not."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from transcript_doctor import ScanConfig, scan
from transcript_doctor.model import Finding
from transcript_doctor.schema import errors as schema_errors
from transcript_doctor.stores import Options
from transcript_doctor.stores.options import KimiOptions

from .builders import Journal, seed_case, text, think


def findings(tmp_path: Path, journal: Journal | bytes, name: str = "wire.jsonl") -> list[Finding]:
    path = tmp_path / name
    path.write_bytes(journal if isinstance(journal, bytes) else journal.bytes())
    report = scan([str(path)], ScanConfig())
    assert report.files[0].error is None, report.files[0].error
    for f in report.findings:
        assert schema_errors("finding", f.as_dict()) == []
    return report.findings


def codes(found: list[Finding]) -> list[str]:
    return sorted(f.code for f in found)


def only(found: list[Finding], code: str) -> Finding:
    matches = [f for f in found if f.code == code]
    assert len(matches) == 1, [f.code for f in found]
    return matches[0]


# --------------------------------------------------------------------------- the seed case


def test_seed_case_reports_w101_and_c201_naming_u2(tmp_path: Path) -> None:
    found = findings(tmp_path, seed_case())
    w101 = only(found, "W101")
    c201 = only(found, "C201")
    assert (w101.line, w101.end_line) == (3, 5) and w101.engine == "v1"
    assert c201.line == 7 and c201.engine == "v2" and c201.severity == "error"
    assert c201.evidence["D"] == 1 and c201.evidence["step_lines"] == [[3, 5]]
    assert [(m["role"], m["line"], m["text"]) for m in c201.evidence["lost"]] == [("user", 6, "u2")]
    assert c201.evidence["new_count"] == 1
    edits = [e.as_dict() for e in c201.fix.edits]
    assert edits[0]["op"] == "replace" and edits[0]["line"] == 7
    assert orjson.loads(edits[0]["text"])["compactedCount"] == 1
    assert {e["line"] for e in edits[1:]} == {3, 4, 5}
    assert "C202" in codes(found)  # v2's transcript believes 3 messages, the live history has 1


def test_seed_case_without_compaction_is_a_live_wedge_at_position_1(tmp_path: Path) -> None:
    found = findings(tmp_path, Journal().user("u1").step("s1", [think()], finish="filtered").user("u2"))
    w101 = only(found, "W101")
    assert w101.severity == "error" and w101.position == 1
    assert "must not be empty" in w101.message
    assert [e.as_dict() for e in w101.fix.edits] == [{"op": "delete", "line": n} for n in (3, 4, 5)]
    assert w101.fix.applicability == "safe"


@pytest.mark.parametrize(
    "parts, calls",
    [
        ([think("", encrypted="")], ()),  # a signed empty think is not vacuous
        ([think("", encrypted=None)], ()),  # null counts as signed too
        ([think(""), text("the answer")], ()),  # empty think beside real text
        ([], [("c1", "ok")]),  # a tool-calling assistant with no text
        ([think("real reasoning")], ()),
    ],
    ids=["signed-empty", "signed-null", "think-beside-text", "tool-call-only", "real-think"],
)
def test_w101_near_misses(tmp_path: Path, parts: list, calls: list) -> None:
    journal = Journal().user("u1").step("s1", parts, calls=calls).user("u2")
    assert "W101" not in codes(findings(tmp_path, journal))


def test_blank_text_step_is_a_warning_without_position(tmp_path: Path) -> None:
    found = findings(tmp_path, Journal().user("u1").step("s1", [text("   ")]).user("u2"))
    w101 = only(found, "W101")
    assert w101.severity == "warning" and w101.position is None


def test_c201_not_reported_for_kept_users_compaction(tmp_path: Path) -> None:
    journal = Journal().user("u1").step("s1", [think()], finish="filtered").user("u2").kept_compaction(2)
    assert "C201" not in codes(findings(tmp_path, journal))


def test_c201_not_reported_when_no_vacuous_step_is_below_the_cut(tmp_path: Path) -> None:
    journal = Journal().user("u1").step("s1", [text("hi")]).user("u2").legacy_compaction(2)
    assert "C201" not in codes(findings(tmp_path, journal))


def test_c201_counts_several_steps(tmp_path: Path) -> None:
    journal = (Journal().user("u1").step("a", [think()]).user("u2").step("b", [text(" ")]).user("u3")
               .step("x", [text("real")]).legacy_compaction(5))
    c201 = only(findings(tmp_path, journal), "C201")
    assert c201.evidence["D"] == 2 and c201.evidence["new_count"] == 3


# --------------------------------------------------------------------------- steps and events


def test_failed_vacuous_step_is_c203_with_a_safe_fix(tmp_path: Path) -> None:
    journal = Journal().user("u1").step("a", [think()], finish="error").step("b", [text("ok")])
    c203 = only(findings(tmp_path, journal), "C203")
    assert c203.fix is not None and c203.fix.applicability == "safe"
    assert c203.evidence["vacuous"] is True


def test_failed_step_with_partial_text_is_c203_without_fix(tmp_path: Path) -> None:
    journal = Journal().user("u1").step("a", [text("half")], finish="error").user("u2")
    c203 = only(findings(tmp_path, journal), "C203")
    assert c203.fix is None


def test_step_without_end_is_c203(tmp_path: Path) -> None:
    journal = Journal().user("u1").step("a", [text("partial")], finish=None)
    assert "C203" in codes(findings(tmp_path, journal))


def test_event_for_a_step_that_is_not_open_is_c205(tmp_path: Path) -> None:
    journal = Journal().user("u1").step("a", [text("done")]).event(
        {"type": "content.part", "uuid": "late", "turnId": "1", "step": 1, "stepUuid": "a", "part": text("late")})
    c205 = only(findings(tmp_path, journal), "C205")
    assert c205.line == 6 and c205.fix.applicability == "unsafe"


def test_orphan_result_and_missing_result(tmp_path: Path) -> None:
    journal = (Journal().user("u1")
               .message({"role": "tool", "content": [text("stray")], "toolCalls": [], "toolCallId": "zz"})
               .step("a", [text("calling")], calls=[("c1", None), ("c2", "second")]).user("u2"))
    found = findings(tmp_path, journal)
    w104 = only(found, "W104")
    assert w104.line == 3 and w104.severity == "warning"  # kimi drops it itself on every request
    assert "W103" in codes(found)


def test_duplicate_tool_call_ids_are_w105_at_default_severity(tmp_path: Path) -> None:
    journal = (Journal().user("u1").step("a", [text("one")], calls=[("c1", "r1")])
               .step("b", [think()], calls=[("c1", "r2")]).user("u2"))
    found = findings(tmp_path, journal)
    assert only(found, "W105").severity == "error"  # only the strict resend repairs it
    assert only(found, "W106").severity == "error"


# --------------------------------------------------------------------------- file integrity


def test_torn_final_line(tmp_path: Path) -> None:
    data = Journal().user("u1").bytes() + b'{"type": "context.append_message", "mess'
    f501 = only(findings(tmp_path, data), "F501")
    assert f501.line == 3 and f501.fix.applicability == "safe"


def test_corrupt_middle_line_has_line_and_byte_offset(tmp_path: Path) -> None:
    good = Journal().user("u1").bytes()
    data = good + b"{not json\n" + Journal(version=None).user("u2").bytes()
    f502 = only(findings(tmp_path, data), "F502")
    assert f502.line == 3 and f502.evidence["byte_offset"] == len(good)


def test_missing_header_and_new_version(tmp_path: Path) -> None:
    assert "F503" in codes(findings(tmp_path, Journal(version=None).user("u1")))
    assert "F505" in codes(findings(tmp_path, Journal(version="9.1").user("u1"), "new.jsonl"))
    assert not {"F503", "F505"} & set(codes(findings(tmp_path, Journal().user("u1"), "ok.jsonl")))


def test_invalid_record_is_f504(tmp_path: Path) -> None:
    journal = Journal().user("u1").add({"type": "context.undo", "count": 0})
    f504 = only(findings(tmp_path, journal), "F504")
    assert f504.line == 3


def test_bad_text_and_bad_arguments(tmp_path: Path) -> None:
    journal = (Journal().user("nul \x00 here")
               .message({"role": "assistant", "content": [text("x")], "origin": {"kind": "user"},
                         "toolCalls": [{"type": "function", "id": "t1", "name": "Bash", "arguments": "{bad"}]}))
    found = findings(tmp_path, journal)
    assert only(found, "F507").line == 2
    assert only(found, "F508").evidence["toolCallId"] == "t1"


def test_engine_divergence_example_f(tmp_path: Path) -> None:
    journal = (Journal("1.1").user("before compaction", kind="user")
               .message({"role": "assistant", "content": [text("assistant reply")], "toolCalls": []})
               .legacy_compaction(2, "compacted summary").user("after compaction"))
    c204 = only(findings(tmp_path, journal), "C204")
    assert c204.severity == "info" and c204.evidence["index"] == 0


def test_clean_journal_has_no_findings(tmp_path: Path) -> None:
    journal = Journal().user("u1").step("a", [think("plan", encrypted="sig"), text("answer")]).user("u2")
    assert findings(tmp_path, journal) == []


def test_engine_option_filters_findings(tmp_path: Path) -> None:
    path = seed_case().write(tmp_path / "seed.jsonl")
    v1 = scan([str(path)], ScanConfig(options=Options(settings=(KimiOptions("v1"),))))
    assert "C201" not in codes(v1.findings) and "W101" in codes(v1.findings)

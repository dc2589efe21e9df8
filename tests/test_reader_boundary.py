"""The reader-boundary rule (docs/errors.md): what a reader accepts, every later stage can use;
what it refuses is a record finding (F504) or a clear file error, never a crash downstream."""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor import encode, values
from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.healing import heal_paths
from transcript_doctor.replay_view import replay_path
from transcript_doctor.reporters import REPORTERS
from transcript_doctor.schema import errors as schema_errors
from transcript_doctor.stores import HealOptions, Options
from transcript_doctor.stores.options import KimiOptions

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
HEADER = '{"type":"metadata","protocol_version":"1.4","created_at":1}'
USER = ('{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"hi"}],'
        '"toolCalls":[],"origin":{"kind":"user"}},"time":2}')

# ----------------------------------------------------------------------------- values.loads

# (label, JSON text, what loads gives: a Python value, or the error class it raises)
LOADS_CASES: list[tuple[str, bytes, Any]] = [
    ("plain object", b'{"a": [1, 2.5, "x", null, true]}', {"a": [1, 2.5, "x", None, True]}),
    ("largest double", b"1.7976931348623157e308", 1.7976931348623157e308),
    ("u64 max stays an integer", b"18446744073709551615", 18446744073709551615),
    ("i64 min stays an integer", b"-9223372036854775808", -9223372036854775808),
    ("past 64 bits reads as a double", b"18446744073709551616", 18446744073709551616.0),
    ("lone surrogate is kept", b'"a\\ud800b"', "a\ud800b"),
    ("lone surrogate beside a big integer", b'["\\ud800", 123456789012345678901234567890]',
     ["\ud800", 1.2345678901234568e29]),
    ("nesting at the limit", b"[" * values.MAX_DEPTH + b"]" * values.MAX_DEPTH, "deep-ok"),
    ("1e400 is Infinity", b'{"turnId": 1e400}', values.ValueProblem),
    ("-1e400 is -Infinity", b"[-1e400]", values.ValueProblem),
    ("1e400 beside a surrogate", b'["\\ud800", 1e400]', values.ValueProblem),
    ("NaN is not JSON", b"[NaN]", values.ValueProblem),
    ("Infinity is not JSON", b'{"a": Infinity}', values.ValueProblem),
    ("one level past the limit", b"[" * (values.MAX_DEPTH + 1) + b"]" * (values.MAX_DEPTH + 1), values.ValueProblem),
    ("past orjson's own limit", b"[" * 2000 + b"]" * 2000, values.ValueProblem),
    ("deep beside a surrogate", b'["\\ud800",' + b"[" * 900 + b"]" * 900 + b"]", values.ValueProblem),
    ("not JSON", b"{broken", json.JSONDecodeError),
    ("not UTF-8", b'"\xff"', UnicodeDecodeError),
]


@pytest.mark.parametrize(("label", "raw", "want"), LOADS_CASES, ids=[c[0] for c in LOADS_CASES])
def test_loads(label: str, raw: bytes, want: Any) -> None:
    if isinstance(want, type) and issubclass(want, Exception):
        with pytest.raises(want):
            values.loads(raw)
        return
    got = values.loads(raw)
    if want == "deep-ok":
        assert values.problem(got) is None
        encode.dumps({"finding": {"evidence": got}})  # room left for what tdoc builds around it
    else:
        assert got == want and type(got) is type(want)


# (label, value, the problem reported or None)
PROBLEM_CASES: list[tuple[str, Any, str | None]] = [
    ("text and numbers", {"a": ["x", 1, 2.5, None, False]}, None),
    ("u64 max", 2**64 - 1, None),
    ("an SQLite REAL infinity", {"timestamp": float("inf")}, "not finite"),
    ("NaN", [float("nan")], "not finite"),
    ("beyond 64 bits", {"n": 2**64}, "beyond 64 bits"),
    ("below i64", [-(2**63) - 1], "beyond 64 bits"),
    ("a non-string key", {1: "x"}, "key that is not a string"),
    ("too deep", json.loads("[" * 300 + "]" * 300), "nested deeper"),
]


@pytest.mark.parametrize(("label", "value", "want"), PROBLEM_CASES, ids=[c[0] for c in PROBLEM_CASES])
def test_problem(label: str, value: Any, want: str | None) -> None:
    got = values.problem(value)
    assert (got is None) if want is None else (got is not None and want in got)


@pytest.mark.parametrize(("value", "ok"), [("id", True), (7, True), (2**64 - 1, True), (2**64, False), (True, False),
                                           (1.0, False), (None, False), ({"a": 1}, False), (["x"], False)])
def test_is_id(value: Any, ok: bool) -> None:
    assert values.is_id(value) is ok


# ----------------------------------------------------------------------------- encode.dumps

json_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True), st.text(alphabet=st.characters(blacklist_categories=())),
)
json_values = st.recursive(json_leaves, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_dumps_never_fails_and_round_trips(value: Any) -> None:
    for indent in (False, True):
        text = encode.dumps(value, indent=indent)
        text.encode("utf-8")  # what a UTF-8 stdout does
        assert json.loads(text) == _expected(value)


def _expected(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list):
        return [_expected(v) for v in value]
    if isinstance(value, dict):
        return {k: _expected(v) for k, v in value.items()}
    return value


def test_dumps_cuts_what_is_nested_too_deeply() -> None:
    value: Any = "core"
    for _ in range(400):
        value = [value, "\ud800"]
    text = encode.dumps(value)
    assert encode.CUT_MARKER in text and json.loads(text)


def test_printable_escapes_lone_surrogates_only() -> None:
    assert encode.printable("a\udcffb\u00e9") == "a\\udcffb\u00e9"
    assert encode.printable("plain") == "plain"


# ----------------------------------------------------------------------------- through the stores


def run_everything(path: Path) -> None:
    """Scan, every reporter, replay (both engines) and a dry-run heal: no exception but TdocError."""
    report = scan([str(path)], ScanConfig(jobs=1))
    assert not any(fr.error and "internal error" in fr.error for fr in report.files), report.files
    for render in REPORTERS.values():
        buf = io.StringIO()
        render(report, buf)
        buf.getvalue().encode("utf-8")
    for engine in ("v1", "v2"):
        try:
            encode.dumps(replay_path(str(path), Options(settings=(KimiOptions(engine),))), indent=True).encode("utf-8")
        except Exception as exc:  # noqa: BLE001
            from transcript_doctor.model import TdocError

            assert isinstance(exc, TdocError), exc
    heal_paths([str(path)], ScanConfig(), HealOptions(mode="dry-run", diff=True))


def _kimi(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "wire.jsonl"
    path.write_text("\n".join((HEADER, *lines)) + "\n", encoding="utf-8", errors="surrogatepass")
    return path


STEP = ('{"type":"context.append_loop_event","event":{"type":"step.begin","uuid":%s,"turnId":%s}}')

# (label, the journal's lines after the header, a code the scan must report)
KIMI_CASES = [
    ("1e400 as turnId", [USER, STEP % ('"s1"', "1e400")], "F502"),
    ("1e400 as step uuid", [USER, STEP % ("1e400", '"t1"')], "F502"),
    ("-1e400 in a message", [USER.replace('"time":2', '"time":-1e400')], "F502"),
    ("integer beyond 64 bits in a count", [USER, ('{"type":"context.apply_compaction","summary":"S","compactedCount":'
                                           '123456789012345678901234567890}')], None),
    ("integer beyond 64 bits as turnId", [USER, STEP % ('"s1"', "123456789012345678901234567890")], None),
    ("nesting past the limit", [USER, '{"type":"context.append_message","message":' + "[" * 300 + "]" * 300 + "}"],
     "F502"),
    ("lone surrogate in user text", [USER.replace('"hi"', '"h\\ud800i"')], "F507"),
]


@pytest.mark.parametrize(("label", "lines", "code"), KIMI_CASES, ids=[c[0] for c in KIMI_CASES])
def test_kimi_hostile_values(tmp_path: Path, label: str, lines: list[str], code: str | None) -> None:
    path = _kimi(tmp_path, *lines)
    run_everything(path)
    report = scan([str(path)], ScanConfig(jobs=1))
    assert report.files[0].error is None
    if code:
        assert code in {f.code for f in report.findings}


def _hermes_export(tmp_path: Path, **message_fields: Any) -> Path:
    src = (FIXTURES / "hermes" / "hermes-export-v21.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(src[0])
    first["messages"][0].update(message_fields)
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join([json.dumps(first), *src[1:]]) + "\n", encoding="utf-8")
    return path


HERMES_EXPORT_CASES = [
    ("id as an object", {"id": {"a": 1}}),
    ("id as a list", {"id": ["x"]}),
    ("finish_reason as an object", {"finish_reason": {"x": 1}}),
    ("tool_call_id as a list", {"tool_call_id": ["c1"]}),
    ("timestamp as text", {"timestamp": "yesterday"}),
    ("deep tool call arguments", {"tool_calls": [{"id": "c", "function": {"name": "f", "arguments": json.loads(
        "[" * 180 + "]" * 180)}}]}),
]


@pytest.mark.parametrize(("label", "fields"), HERMES_EXPORT_CASES, ids=[c[0] for c in HERMES_EXPORT_CASES])
def test_hermes_export_fields_of_the_wrong_type(tmp_path: Path, label: str, fields: dict[str, Any]) -> None:
    run_everything(_hermes_export(tmp_path, **fields))


def test_hermes_export_session_id_and_parent_of_the_wrong_type(tmp_path: Path) -> None:
    src = (FIXTURES / "hermes" / "hermes-export-v21.jsonl").read_text(encoding="utf-8").splitlines()
    objs = [json.loads(line) for line in src]
    objs[0]["parent_session_id"] = {"not": "an id"}
    objs[-1]["id"] = ["a", "list"]
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join(json.dumps(o) for o in objs) + "\n", encoding="utf-8")
    run_everything(path)
    report = scan([str(path)], ScanConfig(jobs=1))
    assert any(f.code == "F504" and f.line == len(objs) for f in report.findings)


def test_hermes_export_deep_tool_calls_are_a_record_finding(tmp_path: Path) -> None:
    src = (FIXTURES / "hermes" / "hermes-export-v21.jsonl").read_text(encoding="utf-8").splitlines()
    deep = "[" * 900 + "]" * 900
    line = src[0].replace('"messages": [', '"deep": ' + deep + ', "messages": [', 1)
    if line == src[0]:
        line = src[0][:-1] + ', "deep": ' + deep + "}"
    path = tmp_path / "export.jsonl"
    path.write_text("\n".join([line, *src[1:]]) + "\n", encoding="utf-8")
    run_everything(path)
    report = scan([str(path)], ScanConfig(jobs=1))
    assert any(f.code == "F504" and f.line == 1 for f in report.findings)


def test_opencode_export_deep_tool_input_is_a_record_problem(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "opencode" / "export-ses_02488099fffeZjgcBOIdRab2kX.json").read_text("utf-8"))
    part = next(p for m in doc["messages"] for p in m["parts"] if p.get("type") == "tool")
    marker = "__deep__"
    part["state"]["input"] = marker
    path = tmp_path / "export-ses_x.json"
    path.write_text(json.dumps(doc, indent=2).replace(f'"{marker}"', "[" * 300 + "]" * 300), encoding="utf-8")
    run_everything(path)
    report = scan([str(path)], ScanConfig(jobs=1))
    assert report.files[0].error is None and "F504" in {f.code for f in report.findings}


@pytest.mark.parametrize("token", ["1e400", "NaN", "-Infinity"])
def test_opencode_export_numbers_json_cannot_carry_are_a_file_error(tmp_path: Path, token: str) -> None:
    text = (FIXTURES / "opencode" / "export-ses_02488099fffeZjgcBOIdRab2kX.json").read_text("utf-8")
    path = tmp_path / "export-ses_x.json"
    path.write_text(text.replace('"created":', f'"created": {token}, "was":', 1), encoding="utf-8")
    report = scan([str(path)], ScanConfig(jobs=1))
    assert report.files[0].error and "internal" not in report.files[0].error
    run_everything(path)


def _db_copy(tmp_path: Path, src: Path) -> Path:
    db = tmp_path / src.name
    shutil.copyfile(src, db)
    return db


# (label, SQL run on a copy of the Hermes database)
HERMES_DB_CASES = [
    ("REAL infinity as timestamp", "UPDATE messages SET timestamp = 1e999"),
    ("an integer in a text column", "UPDATE messages SET finish_reason = 7, tool_name = 3"),
    ("a BLOB in a text column", "UPDATE messages SET tool_call_id = X'FFFE80'"),
    ("deep tool_calls", "UPDATE messages SET tool_calls = '" + "[" * 400 + "]" * 400 + "'"),
    ("tool_calls with 1e400", "UPDATE messages SET tool_calls = '[{\"id\": 1e400}]'"),
    ("json content with Infinity", "UPDATE messages SET content = char(0) || 'json:[1e400]'"),
]


@pytest.mark.parametrize(("label", "sql"), HERMES_DB_CASES, ids=[c[0] for c in HERMES_DB_CASES])
def test_hermes_database_values(tmp_path: Path, label: str, sql: str) -> None:
    db = _db_copy(tmp_path, FIXTURES / "hermes" / "hermes-state-v21.db")
    with sqlite3.connect(db) as conn:
        conn.execute(sql)
    run_everything(db)


def test_non_utf8_column_type_and_schema_text(tmp_path: Path) -> None:
    db = _db_copy(tmp_path, FIXTURES / "hermes" / "hermes-state-v21.db")
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA writable_schema=ON")
    conn.execute("UPDATE sqlite_master SET sql = replace(sql, 'content TEXT', CAST('content TEXT' || X'FF' AS TEXT))"
                 " WHERE name = 'messages'")
    conn.close()
    report = scan([str(db)], ScanConfig(jobs=1))
    assert not any(fr.error and "internal error" in fr.error for fr in report.files)
    run_everything(db)


def test_renamed_messages_id_column_does_not_crash_a_dry_run_heal(tmp_path: Path) -> None:
    db = _db_copy(tmp_path, FIXTURES / "hermes" / "hermes-state-v21.db")
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE messages RENAME COLUMN id TO message_id")
    run_everything(db)
    results, code = heal_paths([str(db)], ScanConfig(), HealOptions(mode="dry-run"))
    assert code == 2 and "no id column" in results[0].extra["error"]


# ----------------------------------------------------------------------------- names that are not UTF-8


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file systems refuse names that are not UTF-8")
@pytest.mark.parametrize("fmt", ["json", "ndjson", "sarif", "github", "human"])
def test_non_utf8_file_names_in_every_format(tmp_path: Path, fmt: str) -> None:
    name = os.fsdecode(b"wire-\xff\xfe.jsonl")
    shutil.copyfile(FIXTURES / "kimi-code" / "golden" / "c01_legacy_compaction_after_vacuous.jsonl", tmp_path / name)
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.run([sys.executable, "-m", "transcript_doctor", "scan", "--format", fmt, "."],
                          capture_output=True, env=env, timeout=120, cwd=tmp_path, check=False)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout.decode("utf-8")  # strict: the output is UTF-8
    assert "internal error" not in proc.stderr.decode("utf-8", "replace")
    if fmt == "json":
        report = json.loads(out)
        assert schema_errors("report", report) == []
        assert report["files"][0]["path"] == name  # round-trips to the same name
    elif fmt == "ndjson":
        first = json.loads(out.splitlines()[0])
        assert schema_errors("finding", first) == []
        assert first["path"] == name
    elif fmt == "sarif":
        uri = json.loads(out)["runs"][0]["artifacts"][0]["location"]["uri"]
        assert uri == "wire-%FF%FE.jsonl"
    else:
        assert "wire-\\udcff\\udcfe.jsonl" in out


# ----------------------------------------------------------------------------- damaged pages

PAGE = 4096
HERMES_DBS = {"v21": FIXTURES / "hermes" / "hermes-state-v21.db", "v21-b": FIXTURES / "hermes" / "hermes-state-v21-b.db"}
DAMAGE = {
    "zeroed": lambda page: bytes(PAGE),
    # the 8-byte page header kept, the cell area overwritten: b-tree cells that point nowhere
    "garbage cells": lambda page: page[:8] + (bytes(range(256)) * 17)[7 : 7 + PAGE - 8],
}
# Every page of both databases with garbage cells; every fourth of one zeroed (the fuzz run covers more).
PAGE_CASES = [(db, "garbage cells", page) for db in HERMES_DBS for page in range(1, HERMES_DBS[db].stat().st_size // PAGE)]
PAGE_CASES += [("v21-b", "zeroed", page) for page in range(1, HERMES_DBS["v21-b"].stat().st_size // PAGE, 4)]


def _damaged(tmp_path: Path, db: str, damage: str, page: int) -> Path:
    data = bytearray(HERMES_DBS[db].read_bytes())
    assert int.from_bytes(data[16:18], "big") == PAGE
    start = page * PAGE
    data[start : start + PAGE] = DAMAGE[damage](bytes(data[start : start + PAGE]))
    path = tmp_path / "state.db"
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize(("db", "damage", "page"), PAGE_CASES, ids=[f"{d}-{k}-{p}" for d, k, p in PAGE_CASES])
def test_a_damaged_page_never_crashes_scan_replay_or_heal(tmp_path: Path, db: str, damage: str, page: int) -> None:
    """Whatever page is lost (a b-tree interior or leaf, an index, an overflow page), scan
    reports it (F506 or a file error) and replay and a dry-run heal fail cleanly or work."""
    run_everything(_damaged(tmp_path, db, damage, page))


def test_a_damaged_page_scan_reports_as_f506_replays_with_a_clear_error(tmp_path: Path) -> None:
    path = _damaged(tmp_path, "v21", "garbage cells", 22)  # once a DatabaseError in replay
    assert "F506" in {f.code for f in scan([str(path)], ScanConfig(jobs=1)).findings}
    from transcript_doctor.model import TdocError

    with pytest.raises(TdocError, match="damaged SQLite database"):
        replay_path(str(path), Options())


WHY_UNPARSABLE = [  # (a line that does not parse, what tdoc says is wrong with it)
    (b'\xef\xbb\xbf{"type":"user"}', "starts with a UTF-8 byte-order mark"),
    (b'{"text":"caf\xc3', "ends inside a multi-byte UTF-8 character (byte 12 of the line)"),
    (b'{"text":"caf\xff"}', "not UTF-8 at byte 12 of the line"),
    # the standard library's words, which CPython 3.13 changed for a trailing comma (it points at the comma)
    (b'{"a":1,}', ("invalid JSON at character 7 of the line: Expecting property name",
                   "invalid JSON at character 6 of the line: Illegal trailing comma")),
    (b'{"a":1} {"b":2}', "invalid JSON at character 8 of the line: Extra data"),  # near miss: two records
    (b'[1, 2', "invalid JSON at character 5 of the line"),
]


@pytest.mark.parametrize(("raw", "said"), WHY_UNPARSABLE, ids=[repr(c[0])[:40] for c in WHY_UNPARSABLE])
def test_why_unparsable_names_the_break_in_the_line_s_terms(raw: bytes, said: str | tuple[str, ...]) -> None:
    from transcript_doctor.values import why_unparsable

    assert why_unparsable(raw).startswith(said)


def test_a_claude_code_line_with_a_byte_order_mark_says_so(tmp_path) -> None:
    from transcript_doctor.core import scan

    line = b'{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","message":{"role":"user","content":"hi"}}\n'
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + line + line.replace(b'"u1","parentUuid":null', b'"u2","parentUuid":"u1"'))
    found = [f for f in scan(str(path)).findings if f.code == "F502"]
    assert found and "byte-order mark" in found[0].message

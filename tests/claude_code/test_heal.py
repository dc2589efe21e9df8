"""`tdoc heal` on Claude Code transcripts: lossless splits, re-linked chains, idempotence, refusals."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.core import ScanConfig
from transcript_doctor.core import check_store as scan_store
from transcript_doctor.heal.pipeline import heal_findings
from transcript_doctor.healing import heal_paths
from transcript_doctor.model import RefusedError
from transcript_doctor.replay_view import replay_path
from transcript_doctor.rules import RULES
from transcript_doctor.rules.engine import check_store
from transcript_doctor.stores import HealOptions, Options, open_store
from transcript_doctor.stores.claude_code.plan import Intent
from transcript_doctor.stores.claude_code.reader import read_transcript, split_values

from .builders import Session

CASES = Path(__file__).resolve().parents[1] / "cases" / "claude-code"
runner = CliRunner()


def _copy(tmp_path: Path, name: str) -> Path:
    dest = tmp_path / name
    shutil.copyfile(CASES / name, dest)
    return dest


def _records(path: Path) -> Counter[str]:
    """Every record of the file, by its exact text (a concatenated line counts each record)."""
    out: Counter[str] = Counter()
    for line in path.read_text(encoding="utf-8").splitlines():
        pieces = split_values(line) or [(line, None)]
        out.update(text for text, _ in pieces if text.strip())
    return out


def _heal(path: Path, out: Path, unsafe: bool = False) -> int:
    _, code = heal_paths([str(path)], ScanConfig(), HealOptions(mode="output", output=out, unsafe_fixes=unsafe))
    return code


def _history(path: Path) -> list:
    return replay_path(str(path), Options())["history"]


@pytest.mark.parametrize("name", ["concatenated-line.jsonl", "concatenated-line-with-twin.jsonl"])
def test_split_keeps_every_record_once_and_resumes_the_whole_session(tmp_path, name):
    src = _copy(tmp_path, name)
    out = tmp_path / "healed.jsonl"
    assert _heal(src, out) == 0
    before, after = _records(src), _records(out)
    assert set(after) == set(before) and all(n == 1 for n in after.values())
    # the resume now reads what the racing writers meant to write: the session without the race
    clean = tmp_path / "clean.jsonl"
    clean.write_text("\n".join(sorted(set(before), key=list(before).index)) + "\n", encoding="utf-8")
    assert _history(out) == _history(clean)
    again = tmp_path / "again.jsonl"
    result = runner.invoke(app, ["heal", str(out), "--output", str(again)])
    assert result.exit_code == 0 and "nothing to heal" in result.stdout
    assert again.read_bytes() == out.read_bytes()  # --output always leaves the store there, here as it was


def test_untouched_lines_stay_byte_identical(tmp_path):
    src = _copy(tmp_path, "whitespace-before-thinking.jsonl")
    out = tmp_path / "healed.jsonl"
    assert _heal(src, out) == 0
    old, new = src.read_bytes().split(b"\n"), out.read_bytes().split(b"\n")
    assert len(new) == len(old) - 1
    assert old[0] == new[0] and old[3:] == new[2:]  # only the blank block's line and its child changed
    child, removed = orjson.loads(new[1]), orjson.loads(old[1])
    assert child["parentUuid"] == removed["parentUuid"]  # the thinking line hangs where the blank one did
    assert {**child, "parentUuid": removed["uuid"]} == orjson.loads(old[2])


def test_relink_spans_several_removed_records(tmp_path):
    s = Session()
    s.user("hi")
    s.text("msg_01", "\n\n")
    s.user([{"type": "text", "text": "[Request interrupted by user]"}])
    s.text("msg_02", " ")
    s.user("hello")
    s.text("msg_03", "Hi.")
    src = tmp_path / "s.jsonl"
    src.write_text(s.jsonl(), encoding="utf-8")
    out = tmp_path / "h.jsonl"
    assert _heal(src, out) == 0
    recs = [orjson.loads(line) for line in out.read_text().splitlines()]
    assert [r["uuid"] for r in recs] == [s.records[i]["uuid"] for i in (0, 2, 4, 5)]
    assert recs[1]["parentUuid"] == recs[0]["uuid"] and recs[2]["parentUuid"] == recs[1]["uuid"]
    assert [m["role"] for m in _history(out)] == ["user", "assistant"]


def test_in_place_backs_up_and_is_idempotent(tmp_path):
    src = _copy(tmp_path, "vacuous-response.jsonl")
    original = src.read_bytes()
    result = runner.invoke(app, ["heal", str(src), "--in-place", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.stdout)["results"][0]
    assert Path(doc["backup"]).read_bytes() == original
    healed = src.read_bytes()
    assert healed != original
    again = runner.invoke(app, ["heal", str(src), "--in-place"])
    assert again.exit_code == 0 and src.read_bytes() == healed


def test_orphan_call_answered_only_with_unsafe_fixes(tmp_path):
    src = _copy(tmp_path, "orphan-call-mid-history.jsonl")
    out = tmp_path / "h.jsonl"
    # nothing safe to do: the unsafe W103 fix needs --unsafe-fixes (exit 1); the copy is the input as it is
    assert _heal(src, out) == 1 and out.read_bytes() == src.read_bytes()
    assert _heal(src, out, unsafe=True) == 0
    added = [orjson.loads(line) for line in out.read_text().splitlines()][2]
    block = added["message"]["content"][0]
    assert block["tool_use_id"] == "toolu_A" and block["is_error"] is True
    roles = [(m["role"], [b["type"] for b in m["content"]]) for m in _history(out)]
    assert roles[1:3] == [("assistant", ["tool_use"]), ("user", ["tool_result", "text"])]


def test_protected_records_are_never_removed():
    s = Session()
    s.user("hi")
    s.text("msg_01", "ok")
    boundary = s.compact()
    path = CASES / "call-before-compaction.jsonl"
    t = read_transcript(path, "x")
    from transcript_doctor.stores.claude_code.editor import ClaudeEditor

    editor = ClaudeEditor(t)
    index = next(r.index for r in t.records if r.subtype == "compact_boundary")
    plan = editor.planner.plan([Intent("remove", record=index)])
    assert plan.refused and not plan.lines and boundary


def test_heal_in_place_refused_while_claude_has_the_file_open(tmp_path):
    src = _copy(tmp_path, "vacuous-response.jsonl")
    original = src.read_bytes()
    holder = subprocess.Popen(
        ["claude", "-c", "import sys,time; f=open(sys.argv[1]); print('open', flush=True); time.sleep(60)", str(src)],
        executable=sys.executable, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        result = subprocess.run([sys.executable, "-m", "transcript_doctor", "heal", str(src), "--in-place"],
                                capture_output=True, text=True, cwd=Path(__file__).resolve().parents[2], check=False)
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 3, result.stderr
    assert "claude process" in result.stderr
    assert src.read_bytes() == original
    assert not list(tmp_path.glob("*.tdoc-backup-*"))


def test_heal_in_place_refused_when_the_file_changed_while_healing(tmp_path):
    src = _copy(tmp_path, "vacuous-response.jsonl")
    store = open_store(src, str(src), Options(fingerprint=True))
    try:
        findings = [f for f in check_store(store, Options(), set(RULES)) if f.fix and f.fix.applicability == "safe"]
        assert findings
        with open(src, "a", encoding="utf-8") as fh:  # Claude Code appends a record meanwhile
            fh.write('{"type":"last-prompt","lastPrompt":"hi","sessionId":"s"}\n')
        changed = src.read_bytes()
        with pytest.raises(RefusedError) as exc:
            heal_findings(store, findings, ScanConfig(), HealOptions(mode="in-place"))
    finally:
        store.close()  # the caller's to close, as `heal_file` does
    assert exc.value.exit_code == 3 and src.read_bytes() == changed
    assert not list(tmp_path.glob("*.tdoc-backup-*"))


def _fake_process(proc: Path, pid: int, argv: list[str], comm: str, target: Path, flags: str) -> None:
    (proc / str(pid) / "fd").mkdir(parents=True)
    (proc / str(pid) / "fdinfo").mkdir()
    (proc / str(pid) / "fd" / "3").symlink_to(target)
    (proc / str(pid) / "fdinfo" / "3").write_text(f"pos:\t0\nflags:\t{flags}\n")
    (proc / str(pid) / "cmdline").write_bytes("\0".join(argv).encode() + b"\0")
    (proc / str(pid) / "comm").write_text(comm + "\n")


def test_only_claude_processes_count_as_the_session_being_live(tmp_path):
    from transcript_doctor.stores.claude_code.live import claude_holders

    src = _copy(tmp_path, "vacuous-response.jsonl")
    proc = tmp_path / "proc"
    _fake_process(proc, 101, ["node", "/usr/local/bin/claude", "--resume"], "node", src, "0102001")  # the npm launcher
    _fake_process(proc, 102, ["claude", "--resume"], "claude", src, "0100000")  # read-only: still the live session
    _fake_process(proc, 103, ["node", "/srv/app.js"], "node", src, "0102001")  # another writer: the pipeline's concern
    _fake_process(proc, 104, ["less", str(src)], "less", src, "0100000")  # a reader
    assert claude_holders(src, proc) == [101, 102]
    assert claude_holders(tmp_path / "missing.jsonl", proc) == []


# Found by bench/fuzz.py: the reader keeps a lone surrogate (as JSON.parse does), so neither the
# uuid of an added answer nor the text of a recorded error may need it encoded as UTF-8.
SURROGATE_CASES = [
    ("an unanswered call whose id holds a lone surrogate", "call"),
    ("an api_error record whose error object holds a lone surrogate", "error"),
]


@pytest.mark.parametrize(("what", "case"), SURROGATE_CASES, ids=[c for _, c in SURROGATE_CASES])
def test_a_lone_surrogate_is_healed_without_a_crash(tmp_path: Path, what: str, case: str) -> None:
    import json

    s = Session()
    s.user("hi")
    if case == "call":
        s.call("msg_1", "toolu_\udfff")
        s.user("next")
    else:
        s.system("api_error", error={"type": "overloaded_error", "message": "busy \udfff"}, level="error")
        s.text("msg_1", "done")
    path = tmp_path / f"{s.session}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in s.records), encoding="utf-8")
    results, code = heal_paths([str(path)], ScanConfig(), HealOptions(mode="dry-run", unsafe_fixes=True))
    assert code in (0, 1), (what, [r.warnings for r in results])


def _subagent(tmp_path: Path, session: str) -> Path:
    import json

    s = Session(session=session)
    s.user("task", isSidechain=True)
    s.text("msg_1", "done", isSidechain=True)
    for rec in s.records:
        rec["isSidechain"] = True
    s.records[0]["sessionId"] = "0b8c2f5e-1111-4a2b-9c3d-5e6f7a8b9c0d"  # a line the sniff can parse
    path = tmp_path / "agent-a1b2.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in s.records), encoding="utf-8")
    return path


def _scan_and_replay(path: Path) -> dict[str, Any]:
    store = open_store(path, str(path), Options())
    try:
        scan_store(store, ScanConfig())
        return store.replay(Options())
    finally:
        store.close()


def test_a_parent_line_whose_message_is_not_an_object_is_no_task_call(tmp_path: Path) -> None:
    # found by reading the subagent link for bench/fuzz.py's class: `message` may be any JSON value
    path = _subagent(tmp_path, "0b8c2f5e-1111-4a2b-9c3d-5e6f7a8b9c0d")
    parent = tmp_path / "0b8c2f5e-1111-4a2b-9c3d-5e6f7a8b9c0d.jsonl"
    parent.write_bytes(orjson.dumps({"type": "user", "message": [1], "toolUseResult": {"agentId": "a1b2"}}) + b"\n")
    assert _scan_and_replay(path)["parent"]["task_call"] is None


# The reader-boundary rule (docs/errors.md): a line holding a value later stages cannot write back
# (nesting orjson reads but cannot write, a number JSON.parse reads as Infinity) is a corrupt line.
UNWRITABLE_LINES = [
    ("nested 300 levels", '{"type":"user","x":' + "[" * 300 + "]" * 300 + "}"),
    ("1e400 on a line orjson refuses (a lone surrogate)", '{"type":"user","n":1e400,"t":"\\udfff"}'),
    ("NaN", '{"type":"user","n":NaN}'),
    ("1e400 in concatenated records", '{"type":"user","n":1}{"type":"user","n":1e400}'),
    ("deep in concatenated records", '{"type":"user"}{"type":"user","x":' + "[" * 300 + "]" * 300 + "}"),
]


@pytest.mark.parametrize(("what", "line"), UNWRITABLE_LINES, ids=[w for w, _ in UNWRITABLE_LINES])
def test_a_line_later_stages_cannot_write_is_corrupt(tmp_path: Path, what: str, line: str) -> None:
    s = Session()
    s.user("hi")
    s.text("msg_1", "hello")
    path = tmp_path / f"{s.session}.jsonl"
    path.write_text(s.jsonl() + line + "\n", encoding="utf-8")
    store = open_store(path, str(path), Options(full_replay=True))
    try:
        findings = scan_store(store, ScanConfig())
        store.replay(Options(full_replay=True))
    finally:
        store.close()
    assert [f.code for f in findings if f.line == 3] == ["F502"], (what, findings)
    heal_paths([str(path)], ScanConfig(), HealOptions(mode="dry-run", unsafe_fixes=True))

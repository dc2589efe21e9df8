"""Heal keeps every line's byte offset by default, is idempotent, and changes only what it fixes."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.core import ScanConfig
from transcript_doctor.fixes.fingerprint import file_sha256 as sha256
from transcript_doctor.healing import heal_paths
from transcript_doctor.schema import errors as schema_errors
from transcript_doctor.stores import HealOptions

from .helpers import SYNTHETIC, envelope, line_offsets, replay, scan, write_rollout

runner = CliRunner()
STORE_CODES = {"W121", "W122", "W123"}


def _copy(tmp_path: Path, name: str) -> Path:
    dest = tmp_path / name
    shutil.copyfile(SYNTHETIC / name, dest)
    return dest


def _items(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(e["position"], e["line"], e["source"], e["item"]) for e in doc["request"]]


def test_default_heal_keeps_every_line_offset(tmp_path: Path) -> None:
    path = _copy(tmp_path, "poisoned.jsonl")
    before = path.read_bytes()
    result = runner.invoke(app, ["heal", "--in-place", str(path), "--format", "json"])
    assert result.exit_code == 0, result.stdout
    after = path.read_bytes()
    assert after != before and len(after) == len(before)
    assert line_offsets(after) == line_offsets(before)
    assert schema_errors("heal", json.loads(result.stdout)) == []
    doc = json.loads(result.stdout)["results"][0]
    assert doc["details"]["byte_offsets"] == "preserved" and doc["warnings"] == []
    assert {f["code"] for f in doc["fixed"]} == STORE_CODES


def test_heal_twice_is_heal_once(tmp_path: Path) -> None:
    path = _copy(tmp_path, "poisoned.jsonl")
    assert runner.invoke(app, ["heal", "--in-place", str(path)]).exit_code == 0
    once = path.read_bytes()
    again = runner.invoke(app, ["heal", "--in-place", str(path)])
    assert again.exit_code == 0 and "nothing to heal" in again.stdout
    assert path.read_bytes() == once
    assert not any(f.code in STORE_CODES for f in scan(path))
    assert [f.severity for f in scan(path, select=["E601"])] == ["info"]  # the recorded 400's cause is gone


def test_reconstruction_after_heal_differs_only_by_the_fixes(tmp_path: Path) -> None:
    path = _copy(tmp_path, "poisoned.jsonl")
    before = _items(replay(path))
    assert runner.invoke(app, ["heal", "--in-place", str(path)]).exit_code == 0
    after = _items(replay(path))
    assert [b[:3] for b in before] == [a[:3] for a in after]
    changed = {b[1]: (b[3], a[3]) for b, a in zip(before, after) if b[3] != a[3]}
    assert sorted(changed) == [8, 9, 10, 12]
    assert changed[8][1]["action"] == {"type": "search", "query": ""}
    assert "encrypted_content" not in changed[9][1] and changed[9][1]["summary"] == changed[9][0]["summary"]
    assert "content" not in changed[10][1] and "id" not in changed[12][1]
    for old, new in changed.values():  # nothing else in the item moved
        assert {k: v for k, v in old.items() if k in new and k != "action"} == {
            k: v for k, v in new.items() if k != "action"}


def test_orphan_call_fix_is_unsafe_adds_a_line_and_says_how_to_rebuild_the_cache(tmp_path: Path) -> None:
    path = _copy(tmp_path, "orphan-call-end.jsonl")
    before = path.read_bytes()
    safe_only = runner.invoke(app, ["heal", "--in-place", str(path)])
    assert safe_only.exit_code == 1 and path.read_bytes() == before  # the fix needs --unsafe-fixes: said, exit 1
    result = runner.invoke(app, ["heal", "--in-place", "--unsafe-fixes", str(path)])
    assert result.exit_code == 0, result.stdout
    assert "thread_history" in result.stdout and "offset" in result.stdout
    lines = path.read_bytes().splitlines()
    assert len(lines) == len(before.splitlines()) + 1
    added = json.loads(lines[9])
    assert added["payload"] == {"type": "function_call_output", "call_id": "call_build", "output": "aborted"}
    assert scan(path) == []
    doc = replay(path)
    assert [e["source"] for e in doc["request"]][-1] == "line" and doc["repairs"] == []


def test_heal_in_place_refuses_while_codex_has_the_rollout_open(tmp_path: Path) -> None:
    path = _copy(tmp_path, "poisoned.jsonl")
    before = path.read_bytes()
    codex = tmp_path / "bin" / "codex"
    codex.parent.mkdir()
    os.symlink(sys.executable, codex)
    holder = subprocess.Popen(
        [str(codex), "-c", "import sys; f = open(sys.argv[1], 'ab'); print('open', flush=True); sys.stdin.read()",
         str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        result = runner.invoke(app, ["heal", "--in-place", str(path)])
        assert result.exit_code == 3
        assert path.read_bytes() == before and not list(tmp_path.glob("*.tdoc-backup-*"))
        assert runner.invoke(app, ["heal", str(path)]).exit_code == 1  # a dry run still reports
    finally:
        holder.communicate("")
    assert runner.invoke(app, ["heal", "--in-place", str(path)]).exit_code == 0


def _db(path: Path, text: str) -> None:
    con = sqlite3.connect(path)
    con.execute("create table t (v text)")
    con.execute("insert into t values (?)", (text,))
    con.commit()
    con.close()


def test_heal_backs_up_the_codex_databases_with_a_manifest(tmp_path: Path) -> None:
    home = tmp_path / ".codex"
    day = home / "sessions" / "2026" / "05" / "01"
    day.mkdir(parents=True)
    path = day / "rollout-2026-05-01T10-00-00-019c0000-0000-7000-8000-000000000006.jsonl"
    shutil.copyfile(SYNTHETIC / "poisoned.jsonl", path)
    original = path.read_bytes()
    _db(home / "state_5.sqlite", "019c0000-0000-7000-8000-000000000006")
    _db(home / "thread_history_1.sqlite", "other thread")
    (home / "thread_history_1.sqlite-wal").write_bytes(b"wal " + path.name.encode())
    (home / "thread_history_1.sqlite-shm").write_bytes(b"\0" * 64)
    _db(home / "thread_history_2.sqlite", "unrelated")
    result = runner.invoke(app, ["heal", "--in-place", str(path), "--format", "json"])
    assert result.exit_code == 0, result.stdout
    healed = json.loads(result.stdout)["results"][0]
    manifest = json.loads(Path(healed["details"]["manifest"]).read_text())
    assert manifest["rollout"]["source"] == str(path)
    assert manifest["rollout"]["sha256"] == sha256(Path(healed["backup"]))  # the pipeline's rollout backup
    assert Path(healed["backup"]).read_bytes() == original
    names = sorted(Path(d["source"]).name for d in manifest["databases"])
    assert names == ["state_5.sqlite", "thread_history_1.sqlite", "thread_history_1.sqlite-shm",
                     "thread_history_1.sqlite-wal"]
    for entry in manifest["databases"]:
        assert sha256(Path(entry["backup"])) == entry["sha256"] == sha256(Path(entry["source"]))


# --------------------------------------------------------------------------- property

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30)
_clean = st.one_of(
    _text.map(lambda t: {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": t}]}),
    _text.map(lambda t: {"type": "reasoning", "summary": [{"type": "summary_text", "text": t}]}),
    _text.map(lambda t: {"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": t}}),
)
_poison = st.one_of(
    _text.map(lambda t: {"type": "web_search_call", "status": "completed", "action": {"type": "other"}, "note": t}),
    _text.map(lambda t: {"type": "reasoning", "summary": [], "encrypted_content": "x" + t}),
    _text.map(lambda t: {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": t}]}),
    _text.map(lambda t: {"type": "message", "id": "chat-" + t, "role": "assistant", "content": []}),
)


def _heal(path: Path) -> None:
    results, code = heal_paths([str(path)], ScanConfig(), HealOptions(mode="in-place", backup=False))
    assert code == 0, [r.warnings for r in results]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_clean, _poison), min_size=1, max_size=12))
def test_safe_heal_keeps_offsets_and_is_idempotent(items: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        lines = [envelope("session_meta", {"id": "s"}),
                 envelope("response_item", {"type": "message", "role": "user", "content": []})]
        path = write_rollout(Path(tmp) / "r.jsonl", lines + [envelope("response_item", i) for i in items])
        before = path.read_bytes()
        request = _items(replay(path))
        _heal(path)
        once = path.read_bytes()
        assert line_offsets(once) == line_offsets(before) and len(once) == len(before)
        assert not any(f.code in STORE_CODES for f in scan(path))
        assert [r[:3] for r in _items(replay(path))] == [r[:3] for r in request]
        _heal(path)
        assert path.read_bytes() == once


def test_a_torn_tail_is_blanked_in_place_and_the_next_append_is_a_valid_line(tmp_path: Path) -> None:
    path = _copy(tmp_path, "clean-tools.jsonl")
    torn = b'{"timestamp":"2026-05-01T11:00:00.000Z","type":"response_it'
    path.write_bytes(path.read_bytes() + torn)
    before = path.read_bytes()
    assert runner.invoke(app, ["heal", "--in-place", str(path)]).exit_code == 0
    after = path.read_bytes()
    assert len(after) == len(before) and line_offsets(after) == line_offsets(before)
    assert after.endswith(b" " * len(torn))
    with open(path, "ab") as fh:  # what Codex does next: append a record
        fh.write(json.dumps(envelope("event_msg", {"type": "token_count"})).encode() + b"\n")
    assert scan(path) == []


def test_whitespace_only_lines_are_not_corrupt(tmp_path: Path) -> None:
    path = _copy(tmp_path, "clean-tools.jsonl")
    path.write_bytes(path.read_bytes() + b"      \n\n" + b" " * 40 + b"\n")
    assert scan(path) == []


def test_no_backup_leaves_no_bundle(tmp_path: Path) -> None:
    home = tmp_path / ".codex"
    day = home / "sessions" / "2026" / "05" / "01"
    day.mkdir(parents=True)
    path = day / "rollout-2026-05-01T10-00-00-x.jsonl"
    shutil.copyfile(SYNTHETIC / "poisoned.jsonl", path)
    _db(home / "state_5.sqlite", "019c0000-0000-7000-8000-000000000006")
    assert runner.invoke(app, ["heal", "--in-place", "--no-backup", str(path)]).exit_code == 0
    assert sorted(p.name for p in day.iterdir()) == [path.name]


def test_a_rewrite_that_cannot_keep_the_length_is_unsafe_and_reported(tmp_path: Path) -> None:
    tight = {"type": "web_search_call", "action": {"type": "other"}}  # no status to give up
    lines = [envelope("session_meta", {"id": "s"}), envelope("response_item", tight)]
    path = write_rollout(tmp_path / "r.jsonl", lines)
    (f,) = scan(path)
    assert f.code == "W121" and f.fix is not None and f.fix.applicability == "unsafe"
    result = runner.invoke(app, ["heal", "--in-place", "--unsafe-fixes", str(path), "--format", "json"])
    doc = json.loads(result.stdout)["results"][0]
    assert result.exit_code == 0 and doc["details"]["byte_offsets"] == "changed" and doc["warnings"]
    assert scan(path) == []

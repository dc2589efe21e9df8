"""`tdoc heal` on kimi journals: the reference heal cases, write safety, refusals, fault injection."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.core import ScanConfig, check_store
from transcript_doctor.heal import backup as heal_backup
from transcript_doctor.heal import pipeline as heal_pipeline
from transcript_doctor.heal import writing as heal_writing
from transcript_doctor.heal.plan import LineWrite
from transcript_doctor.healing import allowed
from transcript_doctor.schema import errors as schema_errors
from transcript_doctor.stores import HealOptions, Options, open_store
from transcript_doctor.stores.kimi.heal.driver import healed_bytes, plan_heal
from transcript_doctor.stores.kimi.replay.driver import projected, replay_object, replay_stream

from . import compare
from .builders import Journal, seed_case, text, think

HEAL = Path(__file__).resolve().parents[2] / "fixtures" / "kimi-code" / "heal"
CASES = sorted(p.stem for p in HEAL.glob("heal-*.jsonl"))
runner = CliRunner()


def writable_copy(src: Path, dst: Path) -> Path:
    shutil.copyfile(src, dst)
    os.chmod(dst, 0o644)
    return dst


@pytest.mark.parametrize("case", CASES)
def test_reference_heal_case(case: str, tmp_path: Path) -> None:
    path = writable_copy(HEAL / f"{case}.jsonl", tmp_path / "wire.jsonl")
    meta = orjson.loads((HEAL / f"{case}.meta.json").read_bytes())
    store = open_store(path, str(path), Options())
    state = store.sessions[0].replay
    plan = plan_heal(state, [f for f in check_store(store, ScanConfig()) if allowed(f, HealOptions())])
    assert plan.skipped == []
    assert sorted(map(str, plan.removed)) == sorted(meta["removed_steps"])
    assert plan.compaction_changes(state) == meta["compaction_changes"]
    healed = replay_stream(path, io.BytesIO(healed_bytes(state, plan)))
    for engine in ("v1", "v2"):
        expected = orjson.loads((HEAL / f"{case}.healed.{engine}.json").read_bytes())
        got = replay_object(healed, engine)
        assert compare.messages(got["history"]) == compare.messages(expected["history"]), engine
        assert compare.messages(got["projection"]) == compare.messages(expected["projection"]), engine
        assert got["transcript"]["foldedLength"] == expected["transcript"]["foldedLength"], engine
    # and through the command: in place, then again (idempotent)
    assert runner.invoke(app, ["heal", "--in-place", str(path)]).exit_code == 0
    before = path.read_bytes()
    result = runner.invoke(app, ["heal", "--in-place", str(path)])
    assert result.exit_code == 0 and path.read_bytes() == before


def test_dry_run_diff_and_exit_codes(tmp_path: Path) -> None:
    path = seed_case().write(tmp_path / "wire.jsonl")
    original = path.read_bytes()
    result = runner.invoke(app, ["heal", str(path), "--diff"])
    assert result.exit_code == 1 and path.read_bytes() == original
    assert '-{"type":"context.apply_compaction"' in result.stdout and '"compactedCount":1' in result.stdout
    clean = Journal().user("u1").step("a", [text("fine")]).write(tmp_path / "clean.jsonl")
    assert runner.invoke(app, ["heal", str(clean)]).exit_code == 0


def test_in_place_backup_mode_and_untouched_lines(tmp_path: Path) -> None:
    journal = seed_case()
    path = journal.write(tmp_path / "wire.jsonl")
    os.chmod(path, 0o640)
    original_lines = path.read_bytes().splitlines(keepends=True)
    result = runner.invoke(app, ["heal", "--in-place", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert schema_errors("heal", doc) == []
    backup = Path(doc["results"][0]["backup"])
    assert backup.read_bytes() == b"".join(original_lines)
    assert (path.stat().st_mode & 0o777) == 0o640 == (backup.stat().st_mode & 0o777)
    healed = path.read_bytes().splitlines(keepends=True)
    assert healed == [original_lines[i] for i in (0, 1, 5)] + [healed[3]]
    assert orjson.loads(healed[3])["compactedCount"] == 1
    assert runner.invoke(app, ["scan", str(path)]).exit_code == 0


def test_backup_dir_output_and_no_backup(tmp_path: Path) -> None:
    path = seed_case().write(tmp_path / "wire.jsonl")
    original = path.read_bytes()
    out = tmp_path / "healed.jsonl"
    assert runner.invoke(app, ["heal", str(path), "--output", str(out)]).exit_code == 0
    assert path.read_bytes() == original and out.read_bytes() != original
    backups = tmp_path / "backups"
    backups.mkdir()
    assert runner.invoke(app, ["heal", "--in-place", str(path), "--backup-dir", str(backups)]).exit_code == 0
    assert [p.read_bytes() for p in backups.rglob("*.tdoc-backup-*")] == [original]  # at the file's own path
    other = seed_case().write(tmp_path / "other.jsonl")
    assert runner.invoke(app, ["heal", "--in-place", "--no-backup", str(other)]).exit_code == 0
    assert not list(tmp_path.glob("other.jsonl.tdoc-backup-*")) and not list(tmp_path.glob(".other.jsonl.*"))


@pytest.mark.parametrize("problem", ["read-only", "symlink", "missing-backup-dir"])
def test_refusals_leave_the_file_untouched(tmp_path: Path, problem: str) -> None:
    path = seed_case().write(tmp_path / "wire.jsonl")
    original = path.read_bytes()
    target = path
    extra: list[str] = []
    if problem == "read-only":
        os.chmod(path, 0o444)
    elif problem == "symlink":
        target = tmp_path / "link.jsonl"
        target.symlink_to(path)
    else:
        extra = ["--backup-dir", str(tmp_path / "nope")]
    result = runner.invoke(app, ["heal", "--in-place", str(target), *extra])
    assert result.exit_code == 2
    assert path.read_bytes() == original
    assert not list(tmp_path.glob("*.tdoc-backup-*"))
    message = result.output.lower()
    assert {"read-only": "read-only", "symlink": "symbolic link", "missing-backup-dir": "does not exist"}[problem] in message


def test_file_modified_during_heal_is_refused_with_exit_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = seed_case().write(tmp_path / "wire.jsonl")
    real_backup = heal_backup.copy_file

    def backup_then_append(src: Path, dest: Path, like: os.stat_result, hashed: bool = True) -> heal_backup.Backup:
        made = real_backup(src, dest, like, hashed)
        with open(src, "ab") as fh:  # another writer appends while tdoc works
            fh.write(Journal(version=None).user("late").bytes())
        return made

    monkeypatch.setattr(heal_backup, "copy_file", backup_then_append)
    modified = None
    result = runner.invoke(app, ["heal", "--in-place", str(path)])
    modified = path.read_bytes()
    assert result.exit_code == 3
    assert modified.endswith(Journal(version=None).user("late").bytes())  # the other writer's bytes survive
    assert "changed while tdoc was working" in result.output
    assert not list(tmp_path.glob("*.tdoc-backup-*"))


def test_written_bytes_must_match_the_verified_heal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = seed_case().write(tmp_path / "wire.jsonl")
    original = path.read_bytes()

    def broken_writer(src, plan):  # a writer bug: writes the input back unchanged
        return iter(lambda: src.read(1 << 16), b"")

    monkeypatch.setattr(heal_writing, "iter_applied_blocks", broken_writer)
    monkeypatch.setattr(heal_pipeline, "_spool_for", lambda store, options: None)  # the two-pass write
    result = runner.invoke(app, ["heal", "--in-place", str(path)])
    assert result.exit_code == 2 and "differ from the verified heal" in result.output
    assert path.read_bytes() == original
    assert not list(tmp_path.glob("*.tdoc-backup-*"))


def test_generic_reverification_restores_the_backup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """For stores that do not verify their own bytes, a surviving finding restores the backup."""
    path = seed_case().write(tmp_path / "wire.jsonl")
    original = path.read_bytes()
    from transcript_doctor.stores.kimi.heal import driver as heal_module

    real = heal_module.heal_store

    def unverified_noop_heal(store, findings, options):
        plan = real(store, findings, options)
        plan.write = LineWrite(())  # pretend the written file lost the fix, and nothing verified it
        plan.verified, plan.healed = False, None
        return plan

    monkeypatch.setattr(heal_module, "heal_store", unverified_noop_heal)
    result = runner.invoke(app, ["heal", "--in-place", str(path)])
    assert result.exit_code == 2 and "restored" in result.output
    assert path.read_bytes() == original


# --------------------------------------------------------------------------- fault injection


def _big_journal(path: Path) -> None:
    journal = Journal()
    for turn in range(3000):
        journal.user(f"prompt {turn} " + "x" * 300)
        if turn % 7 == 0:
            journal.step(f"v{turn}", [think()], finish="filtered", turn=str(turn + 1))
        journal.step(f"s{turn}", [think("plan " * 40, encrypted="sig"), text("answer " * 60)], turn=str(turn + 1))
        if turn % 500 == 499:
            journal.legacy_compaction(len(journal.records) // 3)
    journal.write(path)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_sigkill_during_in_place_heal_never_leaves_a_partial_file(tmp_path: Path) -> None:
    master = tmp_path / "master.jsonl"
    _big_journal(master)
    reference = tmp_path / "reference.jsonl"
    shutil.copyfile(master, reference)
    done = subprocess.run([sys.executable, "-m", "transcript_doctor", "heal", "--in-place", str(reference)],
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    healed_digest = _digest(reference.read_bytes())
    original = master.read_bytes()
    assert healed_digest != _digest(original)
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "transcript_doctor", "heal", "--in-place",
                    str(writable_copy(master, tmp_path / "timing.jsonl"))], capture_output=True, timeout=300)
    duration = time.monotonic() - start
    outcomes = set()
    for i in range(12):
        work = tmp_path / f"run{i}"
        work.mkdir()
        target = writable_copy(master, work / "wire.jsonl")
        proc = subprocess.Popen([sys.executable, "-m", "transcript_doctor", "heal", "--in-place", str(target)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(duration * (0.2 + 0.75 * i / 11))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        now = _digest(target.read_bytes())
        assert now in (_digest(original), healed_digest), f"partial file after kill {i}"
        # A kill during the backup copy leaves its `.partial` temporary: that is not a backup.
        backups = [b for b in work.glob("wire.jsonl.tdoc-backup-*") if not b.name.endswith(".partial")]
        if now == healed_digest:
            assert len(backups) == 1 and backups[0].read_bytes() == original
            outcomes.add("healed")
        else:
            for b in backups:  # a backup that exists is complete
                assert b.read_bytes() == original
            outcomes.add("original")
    assert outcomes, "no run observed"


def test_a_vacuous_step_that_is_a_whole_legacy_tail_becomes_a_tombstone(tmp_path: Path) -> None:
    """c14: an open vacuous step is the whole tail of a legacy compaction. Removing it would
    flip v1 to its kept-users shape (a branch flip, docs/kimi-code.md §Heal); the heal leaves an empty assistant instead."""
    golden = HEAL.parent / "golden" / "c14_legacy_open_vacuous.jsonl"
    path = writable_copy(golden, tmp_path / "wire.jsonl")
    before = replay_stream(path, io.BytesIO(path.read_bytes()))
    result = runner.invoke(app, ["heal", "--in-place", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)["results"][0]
    assert doc["skipped"] == [] and doc["details"]["tombstoned_steps"] == ["v"]
    after = replay_stream(path, io.BytesIO(path.read_bytes()))
    for engine in ("v1", "v2"):
        for strict in (False, True):
            assert projected(after, engine, strict=strict).messages == projected(before, engine, strict=strict).messages
    assert {"role": "assistant", "content": []} in compare.messages(after.v1.history)
    again = runner.invoke(app, ["heal", str(path)])
    assert again.exit_code == 0 and "nothing to heal" in again.stdout


def test_a_step_whose_begin_settles_a_failed_step_is_kept_and_the_heal_exits_1(tmp_path: Path) -> None:
    """A failed-step settle (docs/kimi-code.md §Heal): the vacuous step's v2 `step.begin` is what seals the failed step `a`; without
    it `a` stays partial and v2 stops sending it. The step is kept, said why, and exit 1."""
    journal = Journal().user("u1").step("a", [text("half")], finish="error").step("v", [think()]).user("u2")
    path = journal.write(tmp_path / "wire.jsonl")
    original = path.read_bytes()
    result = runner.invoke(app, ["heal", "--in-place", str(path)])
    assert result.exit_code == 1, result.output
    assert "kept v (line 6)" in result.stdout and "settles the failed step 'a'" in result.stdout
    assert path.read_bytes() == original  # the only candidate was kept: nothing written
    as_json = runner.invoke(app, ["heal", str(path), "--format", "json"])
    assert as_json.exit_code == 1
    assert [s["step"] for s in json.loads(as_json.stdout)["results"][0]["skipped"]] == ["v"]


def test_a_step_begin_that_closed_pending_calls_is_replaced_by_its_results(tmp_path: Path) -> None:
    """A step.begin that does other work in v1: v1's `step.begin` of the vacuous step closes call c1; a compaction follows, so
    plain removal would lose that close (and u2). The heal writes the explicit interrupted result."""
    journal = (Journal().user("u1").step("a", [text("calling")], calls=[("c1", None)]).step("v", [think()])
               .user("u2").kept_compaction(2).user("u3"))
    path = journal.write(tmp_path / "wire.jsonl")
    before = replay_stream(path, io.BytesIO(path.read_bytes()))
    result = runner.invoke(app, ["heal", "--in-place", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    details = json.loads(result.stdout)["results"][0]["details"]
    assert details["removed_steps"] == ["v"]
    lines = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    closes = [r for r in lines if r.get("event", {}).get("type") == "tool.result"]
    assert [(c["event"]["toolCallId"], c["event"]["result"]["isError"]) for c in closes] == [("c1", True)]
    after = replay_stream(path, io.BytesIO(path.read_bytes()))
    gone = lambda m: (m.get("_src") or ("",))[0] == "step" and m["_src"][1] == "v"  # noqa: E731
    assert compare.messages(after.v1.history) == compare.messages([m for m in before.v1.history if not gone(m)])
    assert compare.messages(after.v1.history) == compare.messages(after.v2.history)


def test_removing_the_step_with_the_highest_turn_warns_about_the_turn_clock(tmp_path: Path) -> None:
    path = seed_case().write(tmp_path / "wire.jsonl")
    doc = json.loads(runner.invoke(app, ["heal", str(path), "--format", "json"]).stdout)
    assert any("turnId" in w and "turn counter" in w for w in doc["results"][0]["warnings"])
    later = (Journal().user("u1").step("s1", [think()], turn="1").user("u2")
             .step("s2", [text("answer")], turn="2").legacy_compaction(4)).write(tmp_path / "later.jsonl")
    doc = json.loads(runner.invoke(app, ["heal", str(later), "--format", "json"]).stdout)
    assert doc["results"][0]["changed"] and doc["results"][0]["warnings"] == []


def test_case_342_heals_without_changing_what_either_engine_sends(tmp_path: Path) -> None:
    """A vacuous step whose v2 begin settles a failed step with tool calls: removing it would make
    that assistant partial in v2 (20 -> 16 request messages). It is kept; the rest is healed."""
    source = HEAL.parent / "golden" / "case-342.jsonl"
    path = writable_copy(source, tmp_path / "wire.jsonl")
    out = tmp_path / "healed.jsonl"
    result = runner.invoke(app, ["heal", str(path), "--output", str(out), "--format", "json"])
    assert result.exit_code == 1, result.output  # a step was kept: something fixable is left
    doc = json.loads(result.stdout)["results"][0]
    assert doc["written"] and [s["step"] for s in doc["skipped"]] == ["73316bc7-6d16-487d-a4da-9e81b74df488"]
    before = replay_stream(path, io.BytesIO(path.read_bytes()))
    after = replay_stream(out, io.BytesIO(out.read_bytes()))
    assert len(projected(before, "v2").messages) == 20
    for engine in ("v1", "v2"):
        for strict in (False, True):
            assert projected(after, engine, strict=strict).messages == projected(before, engine, strict=strict).messages


LATE_RECORDS = [  # one that changes what the engines send (the plan fails), one no replay reads (it passes)
    (b'{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"late"}],'
     b'"toolCalls":[]},"time":9}\n'),
    b'{"type":"usage.record","time":9}\n',
]


@pytest.mark.parametrize("settled", [False, True], ids=["racy", "settled"])
@pytest.mark.parametrize("late", LATE_RECORDS, ids=["sent", "unread"])
@pytest.mark.parametrize("mode", [["--in-place"], ["--output", "OUT"], []], ids=["in-place", "output", "dry-run"])
def test_a_journal_appended_to_before_verification_is_refused_with_exit_3(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: list[str], late: bytes, settled: bool) -> None:
    """The agent writes a record after tdoc read the journal: the heal must not call that
    'nothing to heal' or write a plan made for other bytes. The append is injected exactly at
    the verification replay (no timing). `settled`: the journal was last written long before
    the read (the read's clock is moved on), so it is never hashed and its status alone must
    tell (docs/heal.md §Changed files)."""
    from transcript_doctor.fixes import fingerprint as fingerprint_module
    from transcript_doctor.stores.kimi.heal import verify as heal_verify
    from transcript_doctor.stores.kimi.replay import driver as replay_driver

    path = seed_case().write(tmp_path / "wire.jsonl")
    if settled:
        later = types.SimpleNamespace(time_ns=lambda: time.time_ns() + 10 * fingerprint_module.RACY_NS)
        monkeypatch.setattr(replay_driver, "time", later)

        def no_hash(_path: Path) -> str:
            raise AssertionError("a settled journal is checked by its status, never hashed")

        monkeypatch.setattr(fingerprint_module, "file_sha256", no_hash)
        monkeypatch.setattr(replay_driver, "_sha256", lambda: no_hash(path))  # nor while it is read
    real = heal_verify.replay_stream

    def appending(*args, **kwargs):  # type: ignore[no-untyped-def]
        with open(path, "ab") as fh:
            fh.write(late)
        monkeypatch.setattr(heal_verify, "replay_stream", real)
        return real(*args, **kwargs)

    monkeypatch.setattr(heal_verify, "replay_stream", appending)
    expected = path.read_bytes() + late
    args = [str(tmp_path / "out.jsonl") if a == "OUT" else a for a in mode]
    result = runner.invoke(app, ["heal", str(path), *args])
    assert result.exit_code == 3, result.output
    assert "changed while tdoc was working" in result.output + (result.stderr or "")
    assert path.read_bytes() == expected  # untouched by tdoc: only the agent's append is there
    assert not (tmp_path / "out.jsonl").exists()
    assert not [p for p in tmp_path.iterdir() if p.name != "wire.jsonl"]  # no backup, no temporary left


@pytest.mark.parametrize("mode", ["--output", "--in-place"])
def test_a_writing_heal_reads_the_journal_once_after_the_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              mode: str) -> None:
    """The verification replay writes the healed bytes (docs/heal.md §One pass): the pipeline's
    second write pass is never run, and the file written is the verified plan applied."""
    path = seed_case().write(tmp_path / "wire.jsonl")
    state = replay_stream(path, io.BytesIO(path.read_bytes()), full=False)
    store = open_store(path, str(path), Options())
    found = [f for f in check_store(store, ScanConfig(options=Options())) if allowed(f, HealOptions())]
    want = healed_bytes(state, plan_heal(state, found))

    def second_pass(*_args: object) -> None:
        raise AssertionError("the healed bytes were written a second time")

    monkeypatch.setattr(heal_writing, "_producer", second_pass)
    out = tmp_path / "healed.jsonl"
    args = ["heal", "--output", str(out), str(path)] if mode == "--output" else ["heal", "--in-place", str(path)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (out if mode == "--output" else path).read_bytes() == want != b""
    assert not list(tmp_path.glob(".*.tdoc-tmp"))

"""`tdoc restore`: the original back after `heal --in-place`, bytes (journals) and rows (databases)."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.heal.backup import MANIFEST

from .heal_support import HERMES_DB, database, final_backups, journal, rows, tdoc

runner = CliRunner()


def test_restore_after_heal_gives_back_the_original_bytes(tmp_path: Path) -> None:
    path = journal(tmp_path / "wire.jsonl")
    os.chmod(path, 0o600)
    original = path.read_bytes()
    assert runner.invoke(app, ["heal", "--in-place", str(path)]).exit_code == 0
    assert path.read_bytes() != original
    result = runner.invoke(app, ["restore", str(path)])
    assert result.exit_code == 0, result.output
    assert path.read_bytes() == original and path.stat().st_mode & 0o777 == 0o600
    assert "restored from" in result.output


def test_restore_picks_the_newest_backup_or_the_one_named(tmp_path: Path) -> None:
    path = journal(tmp_path / "wire.jsonl", steps=2)
    first = path.read_bytes()
    assert runner.invoke(app, ["heal", "--in-place", str(path)]).exit_code == 0
    healed = path.read_bytes()
    with open(path, "ab") as fh:  # the agent goes on, and a new vacuous step makes another heal
        fh.write(journal(tmp_path / "more.jsonl", steps=1).read_bytes().split(b"\n", 1)[1])
    second = path.read_bytes()
    assert runner.invoke(app, ["heal", "--in-place", str(path)]).exit_code in (0, 1)
    made = final_backups(tmp_path)
    assert len(made) == 2
    older, newer = sorted(made, key=lambda b: b.name)
    assert older.read_bytes() == first and newer.read_bytes() == second
    assert runner.invoke(app, ["restore", str(path)]).exit_code == 0
    assert path.read_bytes() == second
    assert runner.invoke(app, ["restore", str(path), "--backup", str(older)]).exit_code == 0
    assert path.read_bytes() == first and healed != first


def test_backups_in_one_backup_dir_stay_apart_and_are_listed(tmp_path: Path) -> None:
    backups = tmp_path / "backups"
    backups.mkdir()
    paths = []
    for n in range(3):
        (tmp_path / f"session-{n}").mkdir()
        paths.append(journal(tmp_path / f"session-{n}" / "wire.jsonl", steps=n + 1))
    originals = [p.read_bytes() for p in paths]
    result = runner.invoke(app, ["heal", "--in-place", "--backup-dir", str(backups), *map(str, paths)])
    assert result.exit_code == 0, result.output
    made = final_backups(backups)
    assert len(made) == 3 and len({b.parent for b in made}) == 3  # each under its own file's path
    entries = [json.loads(line) for line in (backups / MANIFEST).read_text().splitlines()]
    assert sorted(e["original"] for e in entries) == sorted(os.path.realpath(p) for p in paths)
    for e in entries:
        assert hashlib.sha256(Path(e["backup"]).read_bytes()).hexdigest() == e["sha256"]
        assert e["tdoc_version"] and e["time"].endswith("Z") and e["format"] == "kimi-wire"
    for p, original in zip(paths, originals):
        assert runner.invoke(app, ["restore", str(p), "--backup-dir", str(backups)]).exit_code == 0
        assert p.read_bytes() == original


def test_a_backup_that_no_longer_matches_its_manifest_is_not_restored(tmp_path: Path) -> None:
    backups = tmp_path / "backups"
    backups.mkdir()
    path = journal(tmp_path / "wire.jsonl")
    assert runner.invoke(app, ["heal", "--in-place", "--backup-dir", str(backups), str(path)]).exit_code == 0
    healed = path.read_bytes()
    (made,) = final_backups(backups)
    made.write_bytes(made.read_bytes() + b"\n")
    result = runner.invoke(app, ["restore", str(path), "--backup-dir", str(backups)])
    assert result.exit_code == 2 and "does not match the SHA-256" in result.output
    assert path.read_bytes() == healed


def test_no_backup_is_a_clear_error(tmp_path: Path) -> None:
    path = journal(tmp_path / "wire.jsonl")
    result = runner.invoke(app, ["restore", str(path)])
    assert result.exit_code == 2 and "no backup found" in result.output


@pytest.mark.parametrize("source", ["opencode", "hermes-wal"])
def test_restore_after_a_database_heal_gives_back_the_rows(tmp_path: Path, source: str) -> None:
    db = database(tmp_path / "state.db", HERMES_DB) if source == "hermes-wal" else database(tmp_path / "opencode.db")
    if source == "hermes-wal":
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    before = rows(db)
    journal_mode = _journal_mode(db)
    inode = db.stat().st_ino
    healed = runner.invoke(app, ["heal", "--in-place", "--unsafe-fixes", str(db)])
    assert healed.exit_code in (0, 1), healed.output
    assert rows(db) != before
    result = runner.invoke(app, ["restore", str(db)])
    assert result.exit_code == 0, result.output
    assert rows(db) == before and db.stat().st_ino == inode  # pages written back, the file never swapped
    wal = Path(f"{db}-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # checkpointed: no pages of the old state left
    assert _journal_mode(db) == journal_mode == "wal"  # the database keeps its own journal mode
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    made, replaced = sorted(final_backups(tmp_path), key=lambda b: b.name)  # the heal's, then the restore's
    for copy in (made, replaced):
        assert copy.read_bytes()[18:20] == b"\x01\x01"  # a backup never needs a -wal beside it
    assert rows(replaced) != before and str(replaced) in result.output  # the healed state, kept


def _journal_mode(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("PRAGMA journal_mode").fetchone()[0])
    finally:
        conn.close()


def _hold(path: Path, how: str) -> subprocess.Popen[str]:
    code = {"append": f"f = open({str(path)!r}, 'ab')",
            "sqlite": f"import sqlite3\nc = sqlite3.connect({str(path)!r})\nc.execute('SELECT 1 FROM sqlite_master')"}
    proc = subprocess.Popen([sys.executable, "-c", f"import sys\n{code[how]}\nprint('ready', flush=True)\nsys.stdin.read()"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


@pytest.mark.skipif(not Path("/proc/self/fdinfo").is_dir(), reason="needs Linux /proc")
@pytest.mark.parametrize("kind", ["journal", "database"])
def test_restore_refuses_a_store_in_use(tmp_path: Path, kind: str) -> None:
    if kind == "journal":
        path = journal(tmp_path / "wire.jsonl")
        flags: list[str] = []
    else:
        path = database(tmp_path / "opencode.db")
        flags = ["--unsafe-fixes"]
    assert tdoc("heal", "--in-place", *flags, str(path)).returncode == 0
    healed = path.read_bytes()
    holder = _hold(path, "append" if kind == "journal" else "sqlite")
    try:
        refused = tdoc("restore", str(path))
        assert refused.returncode == 3 and "in use" in refused.stderr and str(holder.pid) in refused.stderr
        assert path.read_bytes() == healed
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert tdoc("restore", str(path)).returncode == 0


ROOT = Path(__file__).resolve().parent.parent
KINDS = [  # (the store, the file --backup names, restored?)
    ("fixtures/kimi-code/golden/c01_legacy_compaction_after_vacuous.jsonl", None, False),  # random bytes
    ("fixtures/opencode/opencode.db", "fixtures/kimi-code/golden/c01_legacy_compaction_after_vacuous.jsonl", False),
    ("fixtures/hermes/hermes-state-v21.db", "fixtures/opencode/opencode.db", False),  # another kind of database
    ("fixtures/hermes/hermes-state-v21.db", "fixtures/hermes/hermes-state-v30.db", True),  # near miss: same kind
    # a legacy Codex rollout is known by its name too: its backup, named otherwise, still restores
    ("fixtures/codex/synthetic/rollout-2025-05-01T10-00-00-legacy.jsonl",
     "fixtures/codex/synthetic/rollout-2025-05-01T10-00-00-legacy.jsonl", True),
]


@pytest.mark.parametrize(("store", "other", "restored"), KINDS, ids=["random", "jsonl-over-db", "db-over-db", "same-kind",
                                                                     "legacy-rollout"])
def test_restore_takes_a_backup_only_of_the_same_kind_of_store(tmp_path: Path, store: str, other: str | None,
                                                               restored: bool) -> None:  # fmt: skip
    target = tmp_path / Path(store).name
    target.write_bytes((ROOT / store).read_bytes())
    backup = tmp_path / "named.tdoc-backup-x"
    backup.write_bytes(os.urandom(600) if other is None else (ROOT / other).read_bytes())
    before = target.read_bytes()
    result = runner.invoke(app, ["restore", str(target), "--backup", str(backup)])
    if restored:
        assert result.exit_code == 0, result.output
        return
    assert result.exit_code == 2 and "not restored" in result.output
    assert target.read_bytes() == before
    forced = runner.invoke(app, ["restore", str(target), "--backup", str(backup), "--force"])
    assert forced.exit_code == 0 or "no such" in forced.output, forced.output


def test_restore_keeps_what_it_replaces_so_the_sessions_later_turns_are_not_lost(tmp_path: Path) -> None:
    path = journal(tmp_path / "wire.jsonl", steps=2)
    original = path.read_bytes()
    assert runner.invoke(app, ["heal", "--in-place", str(path)]).exit_code == 0
    with open(path, "ab") as fh:  # the agent went on after the heal
        fh.write(journal(tmp_path / "more.jsonl", steps=1).read_bytes().split(b"\n", 1)[1])
    current = path.read_bytes()
    result = runner.invoke(app, ["restore", str(path)])
    assert result.exit_code == 0, result.output
    assert path.read_bytes() == original
    (kept,) = [b for b in final_backups(tmp_path) if b.read_bytes() != original]
    assert kept.read_bytes() == current and "kept at" in result.output
    again = runner.invoke(app, ["restore", str(path)])  # the newest backup now: the restore undone
    assert again.exit_code == 0 and path.read_bytes() == current


def test_restore_no_backup_keeps_nothing(tmp_path: Path) -> None:  # near miss: the same restore, opted out
    path = journal(tmp_path / "wire.jsonl")
    assert runner.invoke(app, ["heal", "--in-place", str(path)]).exit_code == 0
    assert len(final_backups(tmp_path)) == 1
    result = runner.invoke(app, ["restore", str(path), "--no-backup"])
    assert result.exit_code == 0 and "kept at" not in result.output
    assert len(final_backups(tmp_path)) == 1


def test_restore_under_a_backup_dir_lists_the_replaced_state_in_the_manifest(tmp_path: Path) -> None:
    backups = tmp_path / "backups"
    backups.mkdir()
    path = journal(tmp_path / "wire.jsonl")
    assert runner.invoke(app, ["heal", "--in-place", str(path), "--backup-dir", str(backups)]).exit_code == 0
    healed = path.read_bytes()
    assert runner.invoke(app, ["restore", str(path), "--backup-dir", str(backups)]).exit_code == 0
    entries = [json.loads(line) for line in (backups / MANIFEST).read_text().splitlines()]
    assert len(entries) == 2 and entries[1]["sha256"] == hashlib.sha256(healed).hexdigest()
    assert Path(entries[1]["backup"]).read_bytes() == healed and entries[1]["format"] == "kimi-wire"

"""Shared helpers for the heal pipeline and restore tests: stores to heal, a real `tdoc` process."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from .kimi.builders import Journal, think

ROOT = Path(__file__).resolve().parents[1]
OPENCODE_DB = ROOT / "fixtures" / "opencode" / "opencode.db"
HERMES_DB = ROOT / "fixtures" / "hermes" / "hermes-state-v21-b.db"


def journal(path: Path, steps: int = 3, pad: int = 0) -> Path:
    """A kimi journal with `steps` vacuous steps to remove and a legacy count to lower; `pad`
    characters of user text first (so that copies take more than one chunk)."""
    j = Journal().user("u0" + "x" * pad)
    for n in range(steps):
        j.step(f"v{n}", [think()], finish="filtered").user(f"u{n + 1}")
    j.legacy_compaction(2)
    j.write(path)
    os.chmod(path, 0o644)
    return path


def database(path: Path, source: Path = OPENCODE_DB, pad_mib: int = 0) -> Path:
    """A copy of a database; `pad_mib` MiB in a table no store reads (so that a backup takes
    several steps of the backup API)."""
    shutil.copyfile(source, path)
    os.chmod(path, 0o644)
    if pad_mib:
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE padding (b BLOB)")
            conn.executemany("INSERT INTO padding VALUES (zeroblob(?))", [(1 << 20,)] * pad_mib)
        sqlite3.connect(path).close()
    return path


def rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table, in a stable order (what a restore must give back)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND name NOT LIKE '%fts%' AND name != 'padding' ORDER BY name")]
        return {n: sorted(map(repr, conn.execute(f'SELECT * FROM "{n}"'))) for n in names}  # type: ignore[misc]
    finally:
        conn.close()


def tdoc(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
         timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real command line in a new process."""
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "transcript_doctor", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=timeout)


def leftovers(directory: Path) -> list[Path]:
    """Temporaries of tdoc's own naming (a killed run's, if any)."""
    return sorted(p for p in directory.rglob("*") if p.name.endswith((".partial", ".tdoc-tmp", ".partial-journal"))
                  or (p.name.startswith(".") and ".tdoc-tmp" in p.name))


def final_backups(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.tdoc-backup-*") if ".partial" not in p.name)

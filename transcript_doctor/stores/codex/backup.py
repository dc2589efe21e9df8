"""Backups beside a healed rollout: the SQLite files of its Codex home, and a SHA-256 manifest.

tdoc never writes Codex's databases, but a heal that changes byte offsets invalidates
`thread_history_*.sqlite`, and restoring a rollout without the databases of the same moment can
leave them disagreeing. So a heal in place copies every `state_*.sqlite` / `thread_history_*.sqlite`
that mentions the session (with its `-wal` and `-shm`) next to the rollout's backup and writes a
manifest of what was copied with SHA-256 sums. docs/codex.md §6.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

CHUNK = 1 << 20
DB_PREFIXES = ("state", "thread_history")


def codex_home(rollout: Path) -> Path | None:
    """The directory holding `sessions/` (or `archived_sessions/`) above the rollout."""
    for parent in rollout.resolve().parents:
        if parent.name in ("sessions", "archived_sessions"):
            return parent.parent
    return None


def _mentions(path: Path, needles: list[bytes]) -> bool:
    keep = max(len(n) for n in needles) - 1
    tail = b""
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(CHUNK), b""):
            window = tail + chunk
            if any(n in window for n in needles):
                return True
            tail = window[-keep:] if keep > 0 else b""
    return False


def related_databases(rollout: Path, session: str | None) -> list[Path]:
    """The Codex SQLite files (and their -wal/-shm) that mention this rollout or session."""
    home = codex_home(rollout)
    if home is None:
        return []
    needles = [rollout.name.encode()] + ([session.encode()] if session else [])
    found: list[Path] = []
    for db in sorted(home.glob("*.sqlite")):
        if not db.name.startswith(DB_PREFIXES):
            continue
        group = [db] + [p for p in (Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists()]
        if any(_mentions(p, needles) for p in group if not p.name.endswith("-shm")):
            found.extend(group)
    return found


def write_manifest(stem: Path, rollout: dict[str, Any], databases: list[dict[str, Any]]) -> Path:
    """`<stem>.manifest.json`: the database copies with their SHA-256 sums, and the rollout's
    SHA-256 as read (its backup, made by the heal pipeline beside it, holds exactly those bytes)."""
    manifest = stem.with_name(f"{stem.name}.manifest.json")
    doc = {
        "tool": "tdoc",
        "rollout": rollout,
        "databases": databases,
        "restore": "copy each backup over its source while Codex is not running",
    }
    tmp = manifest.with_name(manifest.name + ".partial")
    tmp.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    tmp.replace(manifest)
    return manifest

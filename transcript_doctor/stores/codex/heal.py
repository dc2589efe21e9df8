"""Heal a rollout: the findings' line edits, written through the line-edit heal, with Codex's caches in mind.

Before a rewrite in place: refuse (exit 3) while a `codex` process has the rollout open, and back
up the Codex databases that mention the session beside the rollout's own backup, with a SHA-256
manifest. The result says whether every line kept its byte length; when a fix added or removed
lines it says how to make Codex rebuild its offset cache. docs/codex.md §6.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...fixes.jsonl_heal import heal_lines
from ...model import Finding, RefusedError
from ..base import HealOptions, HealResult
from . import backup as backups
from .edits import OFFSETS_NOTE, read_line
from .inuse import codex_holders


def keeps_offsets(store: Any, f: Finding) -> bool:
    """Whether the fix only rewrites lines in place at their old byte length (line ending excluded)."""
    edits = f.fix.edits if f.fix else ()
    return all(e.op == "replace" and e.line is not None and "\n" not in (e.text or "")
               and len((e.text or "").encode("utf-8")) == len(read_line(store.path, store.rollout, e.line))
               for e in edits)


def heal_rollout(store: Any, findings: list[Finding], options: HealOptions) -> HealResult:
    path: Path = store.path
    if options.mode == "in-place":
        holders = codex_holders(path)
        if holders:
            pid, name = holders[0]
            raise RefusedError(f"{store.display}: {name} (pid {pid}) has the rollout open; "
                               "quit Codex (or let the session finish) and heal again")
    result = heal_lines(store, findings, options)
    keeps = all(keeps_offsets(store, f) for f in result.applied)
    result.extra["byte_offsets"] = "preserved" if keeps else "changed"
    if not keeps and result.applied:
        result.warnings.append(f"some fixes add or remove lines: this {OFFSETS_NOTE}")
    if result.written and result.backup and options.mode == "in-place" and options.backup:
        _bundle(store, Path(result.backup), result)
    return result


def _bundle(store: Any, rollout_backup: Path, result: HealResult) -> None:
    files = backups.related_databases(store.path, store.rollout.session)
    copies = backups.copy_databases(files, rollout_backup)
    manifest = backups.write_manifest(rollout_backup, store.path, rollout_backup, copies)
    result.extra["manifest"] = str(manifest)
    result.extra["database_backups"] = [c["backup"] for c in copies]

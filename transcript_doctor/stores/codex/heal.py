"""Heal a rollout: the findings' line edits, planned for the heal pipeline with Codex's caches in mind.

Before a rewrite in place: refuse (exit 3) while a `codex` process has the rollout open, and back
up the Codex databases that mention the session (each through a temporary name, like every tdoc
backup), with a SHA-256 manifest beside them; the pipeline backs up the rollout itself. The plan
says whether every line keeps its byte length; when a fix adds or removes lines it says how to make
Codex rebuild its offset cache. docs/codex.md §6.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...fixes.jsonl_heal import line_heal_plan
from ...heal.backup import backup_path, copy_file
from ...heal.plan import HealPlan
from ...model import Finding, RefusedError
from ..base import HealOptions
from . import backup as backups
from .edits import OFFSETS_NOTE, read_line
from .inuse import codex_holders


def keeps_offsets(store: Any, f: Finding) -> bool:
    """Whether the fix only rewrites lines in place at their old byte length (line ending excluded)."""
    edits = f.fix.edits if f.fix else ()
    return all(e.op == "replace" and e.line is not None and "\n" not in (e.text or "")
               and len((e.text or "").encode("utf-8")) == len(read_line(store.path, store.rollout, e.line))
               for e in edits)


def plan_rollout_heal(store: Any, findings: list[Finding], options: HealOptions) -> HealPlan:
    path: Path = store.path
    if options.mode == "in-place":
        holders = codex_holders(path)
        if holders:
            pid, name = holders[0]
            raise RefusedError(f"{store.display}: {name} (pid {pid}) has the rollout open; "
                               "quit Codex (or let the session finish) and heal again")
    plan = line_heal_plan(path, findings)
    keeps = all(keeps_offsets(store, f) for f in plan.applied)
    plan.extra["byte_offsets"] = "preserved" if keeps else "changed"
    if not keeps and plan.applied:
        plan.warnings.append(f"some fixes add or remove lines: this {OFFSETS_NOTE}")
    if plan.write is not None and options.mode == "in-place" and options.backup:
        _bundle(store, options, plan)
    return plan


def _bundle(store: Any, options: HealOptions, plan: HealPlan) -> None:
    """Back up the Codex databases of this session as they are before the rollout changes."""
    copies: list[dict[str, Any]] = []
    for src in backups.related_databases(store.path, store.rollout.session):
        saved = copy_file(src, backup_path(src, options.backup_dir), src.stat())
        copies.append({"source": str(src), "backup": str(saved.path), "size": saved.path.stat().st_size,
                       "sha256": saved.sha256})
    if not copies:
        return
    rollout = {"source": str(store.path), "sha256": plan.read_as.sha256 if plan.read_as else None}
    manifest = backups.write_manifest(Path(copies[0]["backup"]), rollout, copies)
    plan.extra["manifest"] = str(manifest)
    plan.extra["database_backups"] = [c["backup"] for c in copies]

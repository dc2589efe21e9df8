"""Writing a healed journal: dry run (diff/summary), `--output`, or `--in-place` with a backup."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...fixes.atomic import backup_path_for, check_writable, make_backup, write_atomic
from ...fixes.jsonl import LinePlan, apply_lines, unified_diff
from ...model import TdocError
from ..base import HealOptions, HealResult


def write_healed(store: Any, state: Any, plan: LinePlan, options: HealOptions, result: HealResult) -> None:
    path: Path = store.path
    if options.diff:
        with open(path, "rb") as src:
            result.diff = unified_diff(src, plan, store.display, store.display + " (healed)")
    if options.mode == "dry-run":
        return

    def produce(out: Any) -> None:
        with open(path, "rb") as src:
            apply_lines(src, out, plan)

    if options.mode == "output":
        target = Path(options.output)  # type: ignore[arg-type]
        if target.resolve() == path.resolve():
            raise TdocError("--output names the input file; use --in-place to rewrite it")
        write_atomic(target, produce, mode=path.stat().st_mode & 0o777)
        result.output = str(target)
        result.written = True
        return
    st = check_writable(path)
    if state.fingerprint is None:
        raise TdocError(f"{store.display}: internal: the journal was read without a fingerprint")
    mode = st.st_mode & 0o7777
    backup = make_backup(path, backup_path_for(path, options.backup_dir), mode)
    result.backup = str(backup)
    try:
        write_atomic(path, produce, mode=mode, expected=state.fingerprint)
    except BaseException:
        backup.unlink(missing_ok=True)  # the original is untouched: the backup is not needed
        raise
    result.written = True
    result.output = str(path)

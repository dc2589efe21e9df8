"""Writing a healed journal: dry run (diff/summary), `--output`, or `--in-place` with a backup."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ....fixes.atomic import Fingerprint, backup_path_for, check_writable, make_backup, write_atomic
from ....fixes.jsonl import LinePlan, apply_lines, unified_diff
from ....model import RefusedError, TdocError
from ...base import HealOptions, HealResult
from ..read.reader import READ_BUFFER


def write_healed(store: Any, state: Any, plan: LinePlan, options: HealOptions, result: HealResult,
                 expected_sha256: str | None = None) -> None:
    """Write the plan (dry run: only the diff). With `expected_sha256`, the bytes written must hash
    to the verified journal's hash, or the write is undone."""
    path: Path = store.path
    if options.diff:
        with open(path, "rb") as src:
            result.diff = unified_diff(src, plan, store.display, store.display + " (healed)")
    if options.mode == "dry-run":
        return

    written = hashlib.sha256()

    def produce(out: Any) -> None:
        with open(path, "rb", buffering=READ_BUFFER) as src:
            apply_lines(src, _Hashing(out, written), plan)
        if expected_sha256 is not None and written.hexdigest() != expected_sha256:
            if state.fingerprint is not None and Fingerprint.of(path) != state.fingerprint:
                raise RefusedError(f"{store.display}: changed while tdoc was working; left untouched")
            raise TdocError(f"{store.display}: the bytes to write differ from the verified heal; nothing written")

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


class _Hashing:
    def __init__(self, out: Any, digest: Any) -> None:
        self.out, self.digest = out, digest

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        return self.out.write(data)

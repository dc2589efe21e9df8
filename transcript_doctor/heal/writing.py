"""The file side of the pipeline: previews, healed copies, in-place replaces and restores."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..fixes.blocks import iter_applied_blocks
from ..fixes.fingerprint import Fingerprint
from ..fixes.jsonl import LinePlan, unified_diff
from ..model import RefusedError, TdocError
from ..stores import HealOptions, Store
from . import backup as backups
from . import database
from .files import TempSpool, check_target, copy_into, replace_file
from .plan import BytesWrite, HealPlan, LineWrite, SqlWrite, patch_name


def preview(store: Store, plan: HealPlan, options: HealOptions) -> str | None:
    """What a dry run shows: a patch `git apply` takes (files), the SQL plan (databases)."""
    write = plan.write
    if isinstance(write, SqlWrite):
        return write.sql
    if isinstance(write, BytesWrite):
        return write.diff
    if isinstance(write, LineWrite) and options.diff:
        name = patch_name(store.display)
        with open(store.path, "rb") as src:
            return unified_diff(src, LinePlan.from_edits(write.edits), f"a/{name}", f"b/{name}")
    return None


@dataclass
class Target:
    """A store file about to be rewritten in place, and how to copy it first."""

    path: Path
    stat: os.stat_result
    options: HealOptions

    @classmethod
    def of(cls, path: Path, options: HealOptions, plan: HealPlan) -> Target:
        if isinstance(plan.write, SqlWrite):
            try:
                return cls(path, path.stat(), options)
            except OSError as exc:
                raise TdocError(f"{path}: cannot read the file's status ({exc.strerror})") from None
        return cls(path, check_target(path, options.force), options)

    def _dest(self) -> Path:
        if self.options.backup:
            return backups.backup_path(self.path, self.options.backup_dir)
        return backups.private_path(self.path)

    def file_backup(self) -> backups.Backup:
        # only a backup directory's manifest records the backup's hash
        made = backups.copy_file(self.path, self._dest(), self.stat, hashed=self.options.backup_dir is not None)
        return made if self.options.backup else backups.hold(made)

    def database_backup(self, reader: sqlite3.Connection) -> backups.Backup:
        made = backups.copy_database(reader, self._dest(), self.stat)
        return made if self.options.backup else backups.hold(made)


def _fingerprint(store: Store, plan: HealPlan) -> Fingerprint:
    return plan.read_as if plan.read_as is not None else Fingerprint.of(Path(store.path))


def _producer(store: Store, plan: HealPlan, check: Fingerprint | None) -> Callable[[IO[bytes]], None]:
    """The function that writes the healed content into the temporary file."""
    write = plan.write
    path = Path(store.path)
    if isinstance(write, BytesWrite):
        data = write.data

        def produce_bytes(out: IO[bytes]) -> None:
            out.write(data)

        return produce_bytes
    assert isinstance(write, LineWrite)
    lines = LinePlan.from_edits(write.edits)

    def produce(out: IO[bytes]) -> None:
        digest = hashlib.sha256()
        with open(path, "rb", buffering=0) as src:  # read in blocks: no per-line step
            for block in iter_applied_blocks(src, lines):
                digest.update(block)
                out.write(block)
        if write.expected_sha256 is not None and digest.hexdigest() != write.expected_sha256:
            if check is not None and not check.matches(path):
                raise RefusedError(f"{store.display}: changed while tdoc was working; left untouched")
            raise TdocError(f"{store.display}: the bytes to write differ from the verified heal; nothing written")

    return produce


def _spooled(plan: HealPlan, spool: TempSpool | None) -> TempSpool | None:
    """The spool the store filled with the verified healed bytes, if it did."""
    write = plan.write
    if isinstance(write, LineWrite) and write.spooled:
        if spool is None or spool.path is None:
            raise TdocError("internal: the store reported a spooled heal but no spool was written")
        return spool
    return None


def replace_lines(store: Store, plan: HealPlan, target: Target, spool: TempSpool | None = None) -> None:
    """`--in-place` for files: the healed content replaces the original atomically."""
    check = _fingerprint(store, plan)
    filled = _spooled(plan, spool)
    if filled is not None:
        filled.commit(like=target.stat, expected=check)
    else:
        replace_file(target.path, _producer(store, plan, check), like=target.stat, expected=check)


def output_file(store: Store, plan: HealPlan, output: Path, spool: TempSpool | None = None) -> None:
    """`--output`: a healed copy; the input is never touched."""
    path = _output_source(store, output)
    if isinstance(plan.write, SqlWrite):
        _output_database(path, plan.write, output)
        return
    check = _fingerprint(store, plan) if store.display != "-" else None
    mode = path.stat().st_mode & 0o777 if store.display != "-" else 0o644
    filled = _spooled(plan, spool)
    if filled is not None:
        filled.commit(like=None, mode=mode, expected=check, original=path)
    else:
        replace_file(output, _producer(store, plan, check), like=None, mode=mode, expected=check, original=path)


def output_unchanged(store: Store, output: Path) -> bool:
    """`--output` with nothing to heal: the input copied as it is (a database with the backup API,
    a file byte for byte and atomically), so a script that heals into a path finds the store
    there whatever the heal found. True when it was a database."""
    path = _output_source(store, output)
    if database.is_database(path):
        _copy_database(path, output)
        return True
    mode = path.stat().st_mode & 0o777 if store.display != "-" else 0o644
    replace_file(output, copy_into(path), like=None, mode=mode)
    return False


def _output_source(store: Store, output: Path) -> Path:
    path = Path(store.path)
    if output.exists() and output.resolve() == path.resolve():
        raise TdocError("--output names the input file; use --in-place to rewrite it")
    return path


def _copy_database(path: Path, output: Path) -> None:
    """A new copy of the database at `output` (committed state, WAL included), writable by its owner."""
    if output.exists():
        raise TdocError(f"{output}: already exists; choose a new path for the healed copy")
    copy_database_file(path, output, None)
    os.chmod(output, (path.stat().st_mode & 0o777) | 0o200)


def copy_database_file(path: Path, dest: Path, like: os.stat_result | None) -> backups.Backup:
    """`backups.copy_database` of the database at `path` (its committed state, WAL included),
    through a read-only connection of its own."""
    try:
        source = sqlite3.connect(database.uri(path, mode="ro"), uri=True)
    except sqlite3.Error as exc:
        raise TdocError(f"{path}: cannot open the database ({exc})") from None
    try:
        return backups.copy_database(source, dest, like)
    finally:
        source.close()


def _output_database(path: Path, write: SqlWrite, output: Path) -> None:
    _copy_database(path, output)
    try:
        database.run(output, write, None)
    except BaseException:
        output.unlink(missing_ok=True)  # never leave a half-healed copy behind
        raise


def restore_file(path: Path, backup: Path) -> None:
    """Put a backup's bytes back, atomically, keeping the current owner and mode."""
    replace_file(path, copy_into(backup), like=path.stat())

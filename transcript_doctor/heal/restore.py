"""`tdoc restore PATH`: put a backup made by `tdoc heal --in-place` back (docs/heal.md §Restore).

The newest complete backup of PATH (beside it, and under `--backup-dir` at PATH's mirrored
location) or the one named with `--backup`. A backup listed in the backup directory's manifest
must still have the SHA-256 recorded there. Files are replaced atomically (temporary file, fsync,
`os.replace`), keeping the current owner and mode; databases get the backup's pages written back
through the SQLite backup API in one transaction, then the WAL is checkpointed, so `-wal`/`-shm`
never hold pages of the state that was replaced. A file another process has open (for a journal:
open for writing) is refused with exit 3 unless `--force`. Before it is replaced, the current state
is itself backed up the way a heal backs up (a file under the same backup name, and a manifest
line under `--backup-dir`), unless `keep=False`: what the agent wrote since the heal is never
lost by a restore.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..fixes.fingerprint import file_sha256
from ..model import RefusedError, TdocError
from . import backup as backups
from . import database
from .files import check_target
from .inuse import holders
from .writing import copy_database_file, restore_file


@dataclass(frozen=True)
class Restored:
    backup: Path  # the backup put back
    replaced: Path | None  # where the state it replaced was kept (None: nothing there, or keep=False)


def restore(path: Path, *, backup: Path | None = None, backup_dir: Path | None = None, force: bool = False,
            keep: bool = True) -> Restored:
    """Restore `path` from `backup` (default: its newest backup), first backing up what it
    replaces unless `keep=False`."""
    chosen = backup if backup is not None else newest(path, backup_dir)
    if not chosen.is_file():
        raise TdocError(f"{chosen}: no such backup")
    _check_manifest(path, chosen, backup_dir)
    if not force:
        _check_same_kind(path, chosen)
    if database.is_database(chosen):
        _refuse_if_open(path, [path, Path(f"{path}-wal")], force, any_use=True)
        if not path.exists():
            raise TdocError(f"{path}: no such database; copy the backup to it by hand ({chosen})")
        replaced = _keep_database(path, backup_dir) if keep else None
        database.restore(path, chosen)
    else:
        replaced = None
        if path.exists():
            check_target(path, force)
        _refuse_if_open(path, [path], force, any_use=False)
        if path.exists() and keep:
            replaced = _record(path, backups.copy_file(path, backups.backup_path(path, backup_dir), path.stat(),
                                                       hashed=backup_dir is not None), backup_dir)
        restore_file(path, chosen)
    return Restored(chosen, replaced)


def _keep_database(path: Path, backup_dir: Path | None) -> Path:
    """A backup of the database's committed state (WAL included) before it is replaced."""
    return _record(path, copy_database_file(path, backups.backup_path(path, backup_dir), path.stat()), backup_dir)


def _record(path: Path, made: backups.Backup, backup_dir: Path | None) -> Path:
    if backup_dir is not None:
        from ..stores import detect

        try:
            fmt = detect(path).format
        except TdocError:
            fmt = "unknown"
        backups.record(backup_dir, path, made, fmt)
    return made.path


def newest(path: Path, backup_dir: Path | None) -> Path:
    found = backups.backups_of(path, backup_dir)
    if not found:
        where = f" or under {backup_dir}" if backup_dir is not None else ""
        raise TdocError(f"{path}: no backup found beside it{where} (name: {path.name}{backups.MARK}<time>)")
    return found[-1]


def _refuse_if_open(path: Path, files: list[Path], force: bool, *, any_use: bool) -> None:
    if force:
        return
    pids = sorted({h.pid for f in files for h in holders(f) if any_use or h.writing})
    if pids:
        how = "open" if any_use else "open for writing"
        raise RefusedError(f"{path}: in use (process {', '.join(map(str, pids))} has it {how}); stop it first, "
                           "or pass --force")


def _check_same_kind(path: Path, chosen: Path) -> None:
    """A store is put back only from a copy of the same kind of store: `--backup` naming another
    file (another session's database, a report) would replace it with something no runtime reads
    there. A current file no kind recognises (damaged) takes any backup."""
    from ..stores import detect, read_head
    from ..text import indefinite

    if not path.exists():
        return
    try:
        kind = detect(path)
    except TdocError:
        return
    head = read_head(chosen)
    # (the backup's name is not the store's: a file kind that also looks at names is asked with
    # both; a database kind reads the tables of the file it is given, so only of the backup)
    if not (kind.sniff(chosen, head) or (kind.jsonl and kind.sniff(path, head))):
        raise TdocError(f"{chosen}: not {indefinite(kind.format)} store like {path}; not restored "
                        "(--force restores it anyway)")


def _check_manifest(path: Path, chosen: Path, backup_dir: Path | None) -> None:
    """A backup the manifest lists must still be the bytes it recorded."""
    if backup_dir is None:
        return
    real = os.path.realpath(chosen)
    for entry in backups.manifest_entries(backup_dir):
        if os.path.realpath(str(entry.get("backup"))) != real:
            continue
        if file_sha256(chosen) != entry.get("sha256"):
            raise TdocError(f"{chosen}: does not match the SHA-256 recorded in {backup_dir / backups.MANIFEST}; "
                            "not restored")

"""Backups that are always whole, where to put them, and the temporaries a killed run leaves.

Naming (docs/heal.md §Backups): beside the file, `<name>.tdoc-backup-<UTC stamp>`; with
`--backup-dir DIR`, under DIR at the file's absolute path (`DIR/home/u/s/wire.jsonl.tdoc-backup-…`,
so many `wire.jsonl` files stay apart), and a line is appended to `DIR/tdoc-backups.jsonl` (the
manifest: original path, backup path, SHA-256, size, time, tdoc version).

A backup is written under `<final name>.partial`, fsynced and then renamed: a file under a final
backup name is always a complete copy. SQLite databases are copied with the backup API the same
way. Under `--no-backup` the copy is private (`.<name>.<random>.tdoc-tmp`), held open, and
removed once the heal is verified. A later run removes the temporaries of its own naming that no
process holds open (`remove_stale`).
"""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import orjson

from .. import __version__
from ..fixes.fingerprint import file_sha256
from ..model import TdocError
from .faults import os_failure, reached
from .files import CHUNK, TEMP_SUFFIX, fsync_dir
from .inuse import PROC, holders

MARK = ".tdoc-backup-"
PARTIAL = ".partial"
MANIFEST = "tdoc-backups.jsonl"
STALE_WITHOUT_PROC = 24 * 3600  # seconds; where open files cannot be seen, only old leftovers go


@dataclass
class Backup:
    path: Path
    sha256: str
    private: bool = False  # a --no-backup safety copy, removed after the heal
    fd: int | None = None  # held open so no other run takes it for a stale temporary

    def discard(self) -> None:
        """Forget a private copy (a public backup stays)."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.private:
            self.path.unlink(missing_ok=True)


def backup_path(path: Path, backup_dir: Path | None) -> Path:
    """Where the backup of `path` goes (see the module docstring)."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    name = f"{path.name}{MARK}{stamp}"
    if backup_dir is None:
        return path.parent / name
    if not backup_dir.is_dir():
        raise TdocError(f"{backup_dir}: backup directory does not exist")
    real = Path(os.path.realpath(path))
    return backup_dir / real.parent.relative_to(real.anchor) / name


def _prepare(dest: Path) -> None:
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise os_failure(dest.parent, exc, "create the backup directory") from None
    if dest.exists():
        raise TdocError(f"{dest}: backup target already exists")


def _through_partial(dest: Path, flags: int, fill: Callable[[int, Path], None], like: os.stat_result | None,
                     what: str) -> None:
    """Write `dest` as `dest.partial` (created and held open by us, so it is never taken for a
    stale leftover), filled by `fill(fd, tmp)`, owned like the original, fsynced and renamed."""
    _prepare(dest)
    tmp = dest.with_name(dest.name + PARTIAL)
    try:
        fd = os.open(tmp, flags | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise os_failure(tmp, exc, "create the backup") from None
    try:
        fill(fd, tmp)
        if like is not None:
            _own_like(fd, like)
        os.fsync(fd)
        reached("backup-synced")
        os.rename(tmp, dest)
    except BaseException as exc:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        Path(f"{tmp}-journal").unlink(missing_ok=True)
        if isinstance(exc, (OSError, sqlite3.Error)):
            raise os_failure(dest, exc if isinstance(exc, OSError) else OSError(0, str(exc)), what) from None
        raise
    os.close(fd)
    fsync_dir(dest.parent)
    reached("backup-done")


def copy_file(source: Path, dest: Path, like: os.stat_result, hashed: bool = True) -> Backup:
    """Copy `source` to `dest` through `dest.partial` (fsync, then rename). `hashed`: also the
    SHA-256 of the bytes copied (a manifest records it); without, the kernel copies the file
    (`copy_file_range`) and `Backup.sha256` is empty."""
    digest = hashlib.sha256() if hashed else None

    def fill(fd: int, tmp: Path) -> None:
        with open(source, "rb") as src:
            if digest is None and _kernel_copy(src.fileno(), fd):
                return
            for n, chunk in enumerate(iter(lambda: src.read(CHUNK), b"")):
                if digest is not None:
                    digest.update(chunk)
                _write_all(fd, chunk)
                if n == 0:
                    reached("backup-partial")

    _through_partial(dest, os.O_WRONLY, fill, like, f"write the backup of {source}")
    return Backup(dest, digest.hexdigest() if digest is not None else "")


_copy_range = getattr(os, "copy_file_range", None)  # Linux, Python 3.8+ (the disk-full tests replace it)


def _kernel_copy(src: int, dst: int) -> bool:
    """Copy all of `src` to `dst` inside the kernel; False (nothing copied) where the platform or
    the file systems do not allow it, so the caller copies through user space."""
    copy = _copy_range
    if copy is None:
        return False
    first = True
    while True:
        try:
            n = copy(src, dst, CHUNK)  # a mebibyte a call: the kill point comes mid-copy
        except OSError as exc:
            if first and exc.errno in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM):
                return False
            raise
        if n == 0:
            return True
        if first:
            first = False
            reached("backup-partial")


def copy_database(source: sqlite3.Connection, dest: Path, like: os.stat_result | None) -> Backup:
    """Copy a live database (committed state, WAL included) with the backup API via `dest.partial`."""

    def fill(fd: int, tmp: Path) -> None:
        target = sqlite3.connect(str(tmp), isolation_level=None)
        try:
            source.backup(target, pages=256, progress=lambda *_: reached("backup-partial"))
            target.execute("PRAGMA journal_mode=DELETE")  # a copy of a WAL database gets no -wal of its own
        finally:
            target.close()
        Path(f"{tmp}-journal").unlink(missing_ok=True)

    _through_partial(dest, os.O_RDWR, fill, like, "write the database backup")
    return Backup(dest, file_sha256(dest))


def private_path(path: Path) -> Path:
    """A hidden, unique name beside `path` for a --no-backup safety copy."""
    return path.parent / f".{path.name}.{os.getpid()}-{time.monotonic_ns()}{TEMP_SUFFIX}"


def hold(backup: Backup) -> Backup:
    """Keep a private copy open so that a concurrent run does not remove it as stale."""
    backup.private = True
    backup.fd = os.open(backup.path, os.O_RDONLY)
    return backup


def record(backup_dir: Path, original: Path, backup: Backup, fmt: str) -> None:
    """Append the backup's manifest line to `backup_dir/tdoc-backups.jsonl` (one write, fsynced)."""
    entry = {
        "original": os.path.realpath(original),
        "backup": str(backup.path),
        "sha256": backup.sha256,
        "size": backup.path.stat().st_size,
        "time": datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "tdoc_version": __version__,
        "format": fmt,
    }
    manifest = backup_dir / MANIFEST
    try:
        fd = os.open(manifest, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            _write_all(fd, orjson.dumps(entry) + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise os_failure(manifest, exc, "record the backup in the manifest",
                         f"the backup itself is complete: {backup.path}") from None


def manifest_entries(backup_dir: Path) -> list[dict[str, object]]:
    """The manifest's entries (lines that do not parse are ignored: a torn last line)."""
    try:
        raw = (backup_dir / MANIFEST).read_bytes()
    except OSError:
        return []
    out = []
    for line in raw.splitlines():
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(entry, dict):
            out.append(entry)
    return out


def backups_of(path: Path, backup_dir: Path | None) -> list[Path]:
    """The complete backups of `path` (beside it, and under `backup_dir`), oldest first."""
    where = [path.parent]
    if backup_dir is not None:
        real = Path(os.path.realpath(path))
        where.append(backup_dir / real.parent.relative_to(real.anchor))
    found = {p for d in where if d.is_dir() for p in d.glob(f"{_glob_escape(path.name)}{MARK}*")
             if not p.name.endswith(PARTIAL) and PARTIAL + "-" not in p.name and p.is_file()}
    return sorted(found, key=lambda p: (p.name.rsplit(MARK, 1)[1], p.stat().st_mtime_ns))


def remove_stale(path: Path, backup_dir: Path | None = None, proc: Path = PROC) -> list[Path]:
    """Remove temporaries of an interrupted heal of `path` that no process holds open."""
    name = _glob_escape(path.name)
    patterns = [(path.parent, f".{name}.*{TEMP_SUFFIX}"), (path.parent, f".{name}.*{TEMP_SUFFIX}{PARTIAL}"),
                (path.parent, f"{name}{MARK}*{PARTIAL}"),
                (path.parent, f"{name}{MARK}*{PARTIAL}-journal")]
    if backup_dir is not None:
        real = Path(os.path.realpath(path))
        mirror = backup_dir / real.parent.relative_to(real.anchor)
        patterns += [(mirror, f"{name}{MARK}*{PARTIAL}"), (mirror, f"{name}{MARK}*{PARTIAL}-journal")]
    can_see = proc.is_dir()
    removed = []
    for directory, pattern in patterns:
        if not directory.is_dir():
            continue
        for leftover in directory.glob(pattern):
            if _in_use(leftover, can_see, proc):
                continue
            try:
                leftover.unlink()
            except OSError:
                continue
            removed.append(leftover)
    return removed


def _in_use(leftover: Path, can_see: bool, proc: Path) -> bool:
    if can_see:
        return bool(holders(leftover, proc))
    try:
        return time.time() - leftover.stat().st_mtime < STALE_WITHOUT_PROC
    except OSError:
        return True


def _glob_escape(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _own_like(fd: int, like: os.stat_result) -> None:
    """Backups keep the original's mode, and its owner where we may give it (root)."""
    try:
        os.fchown(fd, like.st_uid, like.st_gid)
    except PermissionError:
        pass
    os.fchmod(fd, like.st_mode & 0o7777)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


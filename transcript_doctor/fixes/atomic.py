"""Atomic, backed-up rewrites of a file another program may also be writing.

Order of operations for `--in-place` (every step before `os.replace` leaves the original alone):
fingerprint the file as read -> back it up (copy, fsync, same mode) -> write the new content to a
temporary file in the same directory (fsync, original mode) -> check the fingerprint again (exit 3
if the file changed) -> `os.replace` -> fsync the directory.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from ..model import RefusedError, TdocError

CHUNK = 1 << 20


@dataclass(frozen=True)
class Fingerprint:
    size: int
    mtime_ns: int
    sha256: str

    @classmethod
    def of(cls, path: Path) -> Fingerprint:
        st = path.stat()
        import hashlib  # loads OpenSSL: only when a fingerprint is taken

        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(CHUNK), b""):
                digest.update(chunk)
        return cls(st.st_size, st.st_mtime_ns, digest.hexdigest())


def check_writable(path: Path) -> os.stat_result:
    """Refuse what tdoc must never rewrite: symlinks, non-regular or read-only files."""
    if path.is_symlink():
        raise TdocError(f"{path}: is a symbolic link; heal the file it points to ({os.path.realpath(path)})")
    if not path.exists():
        raise TdocError(f"{path}: no such file")
    st = path.stat()
    if not stat.S_ISREG(st.st_mode):
        raise TdocError(f"{path}: not a regular file")
    if not st.st_mode & stat.S_IWUSR or not os.access(path, os.W_OK):
        raise TdocError(f"{path}: is read-only; nothing changed")
    if not os.access(path.parent, os.W_OK):
        raise TdocError(f"{path.parent}: directory is not writable; nothing changed")
    return st


def backup_path_for(path: Path, backup_dir: Path | None) -> Path:
    if backup_dir is not None and not backup_dir.is_dir():
        raise TdocError(f"{backup_dir}: backup directory does not exist")
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    return (backup_dir or path.parent) / f"{path.name}.tdoc-backup-{stamp}"


def make_backup(path: Path, dest: Path, mode: int) -> Path:
    if dest.exists():
        raise TdocError(f"{dest}: backup target already exists")
    tmp = dest.with_name(dest.name + ".partial")
    shutil.copyfile(path, tmp)
    os.chmod(tmp, mode)
    _fsync_file(tmp)
    os.replace(tmp, dest)  # a backup that exists is a complete one
    fsync_dir(dest.parent)
    return dest


def write_atomic(
    target: Path,
    produce: Callable[[IO[bytes]], None],
    *,
    mode: int,
    expected: Fingerprint | None = None,
    original: Path | None = None,
) -> None:
    """Write `produce`'s output to a temporary file beside `target`, then replace `target`.

    With `expected`, `original` (default: `target`) must still match that fingerprint right
    before the replace; otherwise nothing is replaced and RefusedError is raised.
    """
    if not target.parent.is_dir():
        raise TdocError(f"{target.parent}: directory does not exist")
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tdoc-tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            produce(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if expected is not None and Fingerprint.of(original or target) != expected:
            raise RefusedError(f"{original or target}: changed while tdoc was working; left untouched")
        os.replace(tmp, target)
        fsync_dir(target.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def restore(backup: Path, target: Path, mode: int) -> None:
    """Put a backup's bytes back in place, atomically."""

    def copy(out: IO[bytes]) -> None:
        with open(backup, "rb") as src:
            shutil.copyfileobj(src, out, CHUNK)

    write_atomic(target, copy, mode=mode)


def _fsync_file(path: Path) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

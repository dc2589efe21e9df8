"""Replacing a file atomically, keeping its owner, group and mode (docs/heal.md §Writing).

`replace_file` writes the new content to a hidden temporary file in the same directory
(`.<name>.<random>.tdoc-tmp`), fsyncs it, gives it the original's owner, group and mode
(`fchown` before `fchmod`: a chown clears set-id bits), checks the original still matches what
was read, `os.replace`s it and fsyncs the directory. Any failure before the replace removes the
temporary file and leaves the original as it was; an OS error becomes one message naming the file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ..fixes.fingerprint import Fingerprint
from ..model import RefusedError, TdocError
from .faults import os_failure, reached

TEMP_SUFFIX = ".tdoc-tmp"
CHUNK = 1 << 20


def check_target(path: Path, force: bool = False) -> os.stat_result:
    """Refuse what `--in-place` must not rewrite: symlinks, non-regular, read-only or multiply
    linked files (a replace would leave the other names with the old content)."""
    if path.is_symlink():
        raise TdocError(f"{path}: is a symbolic link; heal the file it points to ({os.path.realpath(path)})")
    try:
        st = path.stat()
    except FileNotFoundError:
        raise TdocError(f"{path}: no such file") from None
    except OSError as exc:
        raise os_failure(path, exc, "read the file's status") from None
    if not stat.S_ISREG(st.st_mode):
        raise TdocError(f"{path}: not a regular file")
    if st.st_nlink > 1 and not force:
        raise TdocError(f"{path}: has {st.st_nlink} hard links; rewriting it would leave the other names with the "
                        "old content; pass --force to heal this name only")
    if not st.st_mode & stat.S_IWUSR or not os.access(path, os.W_OK):
        raise TdocError(f"{path}: is read-only; nothing changed")
    if not os.access(path.parent, os.W_OK):
        raise TdocError(f"{path.parent}: directory is not writable; nothing changed")
    return st


def take_attributes(fd: int, like: os.stat_result, path: Path) -> None:
    """Give the open file `fd` the owner, group and permission bits of `like`."""
    st = os.fstat(fd)
    if (st.st_uid, st.st_gid) != (like.st_uid, like.st_gid):
        try:
            os.fchown(fd, like.st_uid, like.st_gid)
        except PermissionError:
            raise TdocError(f"{path}: cannot keep its owner {like.st_uid}:{like.st_gid} (not permitted); "
                            "nothing changed") from None
    os.fchmod(fd, stat.S_IMODE(like.st_mode))


class _Counting:
    """A write-only stream that hits the `temp-partial` kill point after its first bytes."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out, self.started = out, False

    def write(self, data: bytes) -> int:
        written = self.out.write(data)
        if not self.started and data:
            self.started = True
            self.out.flush()
            reached("temp-partial")
        return written


def replace_file(
    target: Path,
    produce: Callable[[IO[bytes]], None],
    *,
    like: os.stat_result | None,
    mode: int = 0o644,
    expected: Fingerprint | None = None,
    original: Path | None = None,
) -> None:
    """Write `produce`'s output beside `target` and replace `target` with it.

    `like`: the stat of the file being replaced (owner, group and mode are copied); None for a
    new file (`--output`), which gets `mode`. With `expected`, `original` (default `target`) must
    still match it right before the replace, or RefusedError (exit 3) and nothing replaced.
    """
    if not target.parent.is_dir():
        raise TdocError(f"{target.parent}: directory does not exist")
    try:
        fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TEMP_SUFFIX)
    except OSError as exc:
        raise os_failure(target.parent, exc, f"create a temporary file for {target.name}") from None
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as fh:
            produce(_Counting(fh))  # type: ignore[arg-type]
            fh.flush()
            os.fsync(fh.fileno())
            if like is not None:
                take_attributes(fh.fileno(), like, target)
            else:
                os.fchmod(fh.fileno(), mode)
        reached("temp-synced")
        source = original or target
        if expected is not None and Fingerprint.of(source) != expected:
            raise RefusedError(f"{source}: changed while tdoc was working; left untouched")
        os.replace(tmp, target)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise os_failure(target, exc, "write the healed file") from None
        raise
    reached("replaced")
    fsync_dir(target.parent)


def copy_into(source: Path) -> Callable[[IO[bytes]], None]:
    """A `produce` function that copies `source`'s bytes."""

    def produce(out: IO[bytes]) -> None:
        with open(source, "rb") as src:
            for chunk in iter(lambda: src.read(CHUNK), b""):
                out.write(chunk)

    return produce


def fsync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable (best effort: not every platform allows it)."""
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

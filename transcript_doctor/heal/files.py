"""Replacing a file atomically, keeping its owner, group and mode (docs/heal.md §Stages, step 5; §One pass).

`replace_file` writes the new content to a hidden temporary file in the same directory
(`.<name>.<random>.tdoc-tmp`), fsyncs it, gives it the original's owner, group and mode
(`fchown` before `fchmod`: a chown clears set-id bits), checks the original still matches what
was read, `os.replace`s it and fsyncs the directory. Any failure before the replace removes the
temporary file and leaves the original as it was; an OS error becomes one message naming the file.
"""

from __future__ import annotations

import io
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ..fixes.fingerprint import Fingerprint
from ..model import RefusedError, TdocError
from .faults import os_failure, reached

TEMP_SUFFIX = ".tdoc-tmp"
SPOOL_BUFFER = 1 << 20  # bytes gathered before each write to the temporary file
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


class TempFile(io.FileIO):
    """The temporary file at the OS level: each write reaching the file passes here (behind a
    large buffer), so the `temp-partial` kill point and the disk-full tests hook in once per
    block, not once per line."""

    started = False
    target: Path | None = None  # the file it will replace (named in a write error)

    def write(self, data: Any) -> int:
        try:
            written = self.write_through(data)
        except OSError as exc:  # the disk fills while a store streams into it: one clear message
            raise os_failure(self.target or self.name, exc, "write the healed file") from None
        if not self.started and written:
            self.started = True
            reached("temp-partial")
        return written

    def write_through(self, data: Any) -> int:
        """One write to the OS (the disk-full tests make it fail)."""
        return super().write(data) or 0


class TempSpool:
    """The temporary file a heal writes beside `target` before it replaces it (docs/heal.md
    §One pass). A store that streams its verification writes the healed bytes into it as it
    replays them (`heal.plan.Spool`); the pipeline then only has to sync and rename it.

    Nothing exists on disk until `open()`; `discard()` removes whatever is left (safe to call
    any number of times, and after `commit`)."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.path: Path | None = None
        self.fh: IO[bytes] | None = None

    def open(self) -> IO[bytes]:
        """A new, empty temporary file (any earlier one of this spool is removed)."""
        self.discard()
        if not self.target.parent.is_dir():
            raise TdocError(f"{self.target.parent}: directory does not exist")
        try:
            fd, name = tempfile.mkstemp(dir=self.target.parent, prefix=f".{self.target.name}.", suffix=TEMP_SUFFIX)
        except OSError as exc:
            raise os_failure(self.target.parent, exc, f"create a temporary file for {self.target.name}") from None
        self.path = Path(name)
        raw = TempFile(fd, "wb")
        raw.target = self.target
        self.fh = io.BufferedWriter(raw, buffer_size=SPOOL_BUFFER)
        return self.fh

    def commit(self, *, like: os.stat_result | None, mode: int = 0o644, expected: Fingerprint | None = None,
               original: Path | None = None) -> None:
        """Sync the written file, give it its owner and mode, and rename it over the target (see
        `replace_file`). On any failure the temporary file is removed."""
        fh, target = self.fh, self.target
        if fh is None or self.path is None:
            raise TdocError(f"{target}: internal: nothing was written to replace it with")
        try:
            fh.flush()
            os.fsync(fh.fileno())
            if like is not None:
                take_attributes(fh.fileno(), like, target)
            else:
                os.fchmod(fh.fileno(), mode)
            fh.close()
            reached("temp-synced")
            source = original or target
            if expected is not None and not expected.matches(source):
                raise RefusedError(f"{source}: changed while tdoc was working; left untouched")
            os.replace(self.path, target)
        except BaseException as exc:
            self.discard()
            if isinstance(exc, OSError):
                raise os_failure(target, exc, "write the healed file") from None
            raise
        self.path = self.fh = None
        reached("replaced")
        fsync_dir(target.parent)

    def discard(self) -> None:
        if self.fh is not None:
            try:
                self.fh.close()
            except (OSError, TdocError):  # the buffered rest cannot be written: the file goes anyway
                pass
        if self.path is not None:
            self.path.unlink(missing_ok=True)
        self.path = self.fh = None


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
    spool = TempSpool(target)
    out = spool.open()
    try:
        produce(out)
    except BaseException as exc:
        spool.discard()
        if isinstance(exc, OSError):
            raise os_failure(target, exc, "write the healed file") from None
        raise
    spool.commit(like=like, mode=mode, expected=expected, original=original)


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

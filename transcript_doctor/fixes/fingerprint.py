"""What a file looked like when tdoc read it, to detect later changes (docs/heal.md §Changed files).

`==` compares size, mtime and SHA-256. `matches(path)` is the check made right before a replace:
the status fields first (size, mtime, ctime, inode: any write moves mtime and ctime, and user
space cannot set ctime back), and the content hash only when the file was modified so close to
the moment it was read that a later write could share its timestamp (the "racy timestamp" rule
git uses for its index). A journal that has sat still since its session stalled is then checked
without being read again, and a reader that knows the file is settled when it starts (`settled`)
need not hash it at all: such a fingerprint carries an empty `sha256`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

CHUNK = 1 << 20
RACY_NS = 2_000_000_000  # a modification this close to the read is confirmed by the content hash


@dataclass(frozen=True)
class Fingerprint:
    """A file's status as it was read, and its SHA-256 when the status alone cannot tell a change."""

    size: int
    mtime_ns: int
    sha256: str
    ctime_ns: int = field(default=0, compare=False)  # 0: not recorded (always hash)
    inode: int = field(default=0, compare=False)
    taken_ns: int = field(default=0, compare=False)  # wall clock when the status was read

    @classmethod
    def from_stat(cls, st: os.stat_result, sha256: str, taken_ns: int | None = None) -> Fingerprint:
        """The fingerprint of bytes hashed to `sha256` from a file whose status (read at
        `taken_ns`, default now) was `st`."""
        return cls(st.st_size, st.st_mtime_ns, sha256, st.st_ctime_ns, st.st_ino,
                   time.time_ns() if taken_ns is None else taken_ns)

    @classmethod
    def of(cls, path: Path) -> Fingerprint:
        taken = time.time_ns()
        st = path.stat()
        return cls.from_stat(st, file_sha256(path), taken)

    def matches(self, path: Path) -> bool:
        """Whether the file at `path` is still the one this fingerprint was taken of."""
        st = path.stat()
        if (st.st_size, st.st_mtime_ns) != (self.size, self.mtime_ns):
            return False
        if self.ctime_ns and (st.st_ctime_ns, st.st_ino) != (self.ctime_ns, self.inode):
            return False
        if self.ctime_ns and self.taken_ns and settled(st, self.taken_ns):
            return True  # last modified well before it was read: the status fields decide
        return bool(self.sha256) and file_sha256(path) == self.sha256


def settled(st: os.stat_result, taken_ns: int) -> bool:
    """Whether a file with status `st`, read at `taken_ns`, was last modified long enough before
    that a later write cannot share its timestamps (its status then tells any change)."""
    return max(st.st_mtime_ns, st.st_ctime_ns) < taken_ns - RACY_NS


def file_sha256(path: Path) -> str:
    import hashlib  # OpenSSL loads only when a file is hashed (a heal), not for a scan (issue 20)

    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as fh:
        for chunk in iter(lambda: fh.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()

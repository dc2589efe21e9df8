"""Who else has a file open: Linux `/proc/<pid>/fd` links and their `fdinfo` flags.

A writer that keeps its descriptor open across tdoc's `os.replace` goes on writing into the old,
now unlinked inode: every byte it appends after the replace is lost to the file on disk
(docs/heal.md §What a running writer loses). So `--in-place` refuses a file another process has
open for writing, where the platform lets us see it. Elsewhere (no `/proc`) the check finds
nothing and the fingerprint check before the replace remains the only guard.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
_ACCMODE = os.O_ACCMODE if hasattr(os, "O_ACCMODE") else 3


@dataclass(frozen=True)
class Holder:
    pid: int
    writing: bool


def holders(path: Path, proc: Path = PROC) -> list[Holder]:
    """Other processes with `path` open (each pid once; writing if any of its fds writes)."""
    try:
        target = os.path.realpath(path)
        st = os.stat(target)
    except OSError:
        return []
    found: dict[int, bool] = {}
    me = os.getpid()
    try:
        pids = [int(p) for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return []
    for pid in pids:
        if pid == me:
            continue
        for fd, link in _links(proc / str(pid) / "fd"):
            if link != target or not _same_file(proc / str(pid) / "fd" / fd, st):
                continue
            found[pid] = found.get(pid, False) or _writes(proc / str(pid) / "fdinfo" / fd)
    return [Holder(pid, writing) for pid, writing in sorted(found.items())]


def writers(path: Path, proc: Path = PROC) -> list[int]:
    """The pids of other processes holding `path` open for writing."""
    return [h.pid for h in holders(path, proc) if h.writing]


def _links(fd_dir: Path) -> list[tuple[str, str]]:
    try:
        names = os.listdir(fd_dir)
    except OSError:  # gone, or another user's process we may not inspect
        return []
    out = []
    for name in names:
        try:
            out.append((name, os.readlink(fd_dir / name)))
        except OSError:
            continue
    return out


def _same_file(fd_link: Path, st: os.stat_result) -> bool:
    try:
        other = os.stat(fd_link)
    except OSError:
        return False
    return (other.st_dev, other.st_ino) == (st.st_dev, st.st_ino)


def _writes(fdinfo: Path) -> bool:
    try:
        text = fdinfo.read_text()
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags:"):
            return int(line.split()[1], 8) & _ACCMODE in (os.O_WRONLY, os.O_RDWR)
    return False

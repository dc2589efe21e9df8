"""Is a Claude Code process holding this session file open? (Linux `/proc`; elsewhere: unknown.)

Claude Code appends to the transcript while a session runs; rewriting it then loses what it writes
next (the 63 MB session of `docs/claude-code.md` §6). A heal refuses (exit 3) when a process whose
name or command line says `claude` has the file open.
"""

from __future__ import annotations

import os
from pathlib import Path


def _is_claude(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmdline = fh.read(4096)
        with open(f"/proc/{pid}/comm", "rb") as fh:
            comm = fh.read(256)
    except OSError:
        return False
    return b"claude" in comm.lower() or any(
        os.path.basename(arg).lower().startswith(b"claude") for arg in cmdline.split(b"\0")[:3]
    )


def claude_holders(path: Path) -> list[int]:
    """Process ids of `claude` processes with `path` open (empty when /proc cannot tell)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    try:
        target = os.path.realpath(path)
    except OSError:
        return []
    found: list[int] = []
    for entry in os.scandir(proc):
        if not entry.name.isdigit() or entry.name == str(os.getpid()):
            continue
        try:
            fds = os.scandir(f"/proc/{entry.name}/fd")
        except OSError:
            continue
        with fds:
            for fd in fds:
                try:
                    if os.readlink(fd.path) == target:
                        break
                except OSError:
                    continue
            else:
                continue
        if _is_claude(entry.name):
            found.append(int(entry.name))
    return found

"""Is a Claude Code process holding this session file open? (Linux `/proc`; elsewhere: unknown.)

Claude Code appends to the transcript while a session runs; rewriting it then loses what it writes
next (the 63 MB session in docs/claude-code-sessions.md, section "Heal"). The heal pipeline refuses a file another
process holds open for writing; a `claude` process is refused (exit 3) whatever mode it opened the
file in, because it reopens the transcript to append. Which processes hold the file is read by the
pipeline's `/proc` reader (`heal/inuse.py`); this module only says which of them are Claude Code.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...heal.inuse import PROC, holders


def _is_claude(proc: Path, pid: int) -> bool:
    try:
        cmdline = (proc / str(pid) / "cmdline").read_bytes()[:4096]
        comm = (proc / str(pid) / "comm").read_bytes()[:256]
    except OSError:
        return False
    return b"claude" in comm.lower() or any(
        os.path.basename(arg).lower().startswith(b"claude") for arg in cmdline.split(b"\0")[:3]
    )


def claude_holders(path: Path, proc: Path = PROC) -> list[int]:
    """Process ids of `claude` processes with `path` open (empty when /proc cannot tell)."""
    return [h.pid for h in holders(path, proc) if _is_claude(proc, h.pid)]

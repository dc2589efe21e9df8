"""Is a Codex process holding the rollout open? (Linux `/proc`; elsewhere nothing is found.)

Codex keeps the rollout of a running session open for appending. Rewriting it then races the
writer, so `heal --in-place` refuses (exit 3) while a process named `codex` has it open, for
reading or writing. Which processes hold the file comes from the heal pipeline's `heal.inuse`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...heal.inuse import PROC, holders


def _codex_name(pid_dir: Path) -> str | None:
    try:
        comm = (pid_dir / "comm").read_text(errors="replace").strip()
        argv0 = (pid_dir / "cmdline").read_bytes().split(b"\0", 1)[0].decode(errors="replace")
    except OSError:
        return None
    names = {comm, os.path.basename(argv0)}
    return next((n for n in names if n == "codex" or n.startswith("codex-")), None)


def codex_holders(path: Path, proc: Path = PROC) -> list[tuple[int, str]]:
    """(pid, process name) of every codex process with `path` open."""
    found = []
    for holder in holders(path, proc):
        name = _codex_name(proc / str(holder.pid))
        if name is not None:
            found.append((holder.pid, name))
    return found

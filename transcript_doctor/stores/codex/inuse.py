"""Is a Codex process holding the rollout open? (Linux `/proc`; elsewhere nothing is found.)

Codex keeps the rollout of a running session open for appending. Rewriting it then races the
writer, so `heal --in-place` refuses (exit 3) while a process named `codex` has it open.
"""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")


def _is_codex(pid_dir: Path) -> str | None:
    try:
        comm = (pid_dir / "comm").read_text(errors="replace").strip()
        argv0 = (pid_dir / "cmdline").read_bytes().split(b"\0", 1)[0].decode(errors="replace")
    except OSError:
        return None
    names = {comm, os.path.basename(argv0)}
    return next((n for n in names if n == "codex" or n.startswith("codex-")), None)


def codex_holders(path: Path, proc: Path = PROC) -> list[tuple[int, str]]:
    """(pid, process name) of every codex process with `path` open."""
    if not proc.is_dir():
        return []
    target = os.path.realpath(path)
    found = []
    for pid_dir in proc.iterdir():
        if not pid_dir.name.isdigit():
            continue
        name = _is_codex(pid_dir)
        if name is None:
            continue
        try:
            fds = list((pid_dir / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(fd) == target:
                    found.append((int(pid_dir.name), name))
                    break
            except OSError:
                continue
    return found

"""A scan's replay keeps what the live history needs, not what the file holds (issue: memory that
grows with the live history, not with the file size). Counted in retained objects, not bytes."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from transcript_doctor.stores.kimi.replay.driver import KimiReplay, replay_stream

from .builders import Journal, text

PROMPT = "word " * 2000  # ~2,500 tokens: a kept-users compaction keeps only the newest few


def journal(turns: int) -> bytes:
    j = Journal().user(PROMPT)
    for n in range(turns):
        j.user(PROMPT)
        j.step(f"s{n}", [text(f"answer {n}")], calls=[(f"c{n}", "output")], turn=str(n + 1))
        j.step(f"t{n}", [text("done")], turn=str(n + 1))
        if n % 10 == 9:
            j.kept_compaction(3) if n % 20 == 9 else j.legacy_compaction(4 * 10 - 2)
    return j.bytes()


def retained(state: KimiReplay) -> dict[str, int]:
    return {
        "v1": len(state.v1.history), "v2": len(state.v2.history),
        "t1": len(state.t1.entries), "t2": len(state.t2.entries),
        "steps": len(state.steps.steps), "calls": len(state.steps._call_step),
        "legacy": sum(len(lc.vacuous_below) + len(lc.lost) for lc in state.legacy),
    }


def test_a_scan_replay_retains_the_same_whatever_the_length() -> None:
    short = retained(replay_stream(Path("wire.jsonl"), io.BytesIO(journal(40)), full=False))
    long = retained(replay_stream(Path("wire.jsonl"), io.BytesIO(journal(400)), full=False))
    assert long == short
    assert max(long.values()) < 60


def test_a_full_replay_keeps_every_transcript_entry() -> None:
    """The contrast that makes the test above mean something: `tdoc replay` keeps everything."""
    short = replay_stream(Path("wire.jsonl"), io.BytesIO(journal(40)), full=True)
    long = replay_stream(Path("wire.jsonl"), io.BytesIO(journal(400)), full=True)
    assert len(long.t1.entries) > 9 * len(short.t1.entries)


_NO_CYCLES = """
import gc, io, sys
from pathlib import Path
from tests.kimi.test_memory import journal
from transcript_doctor.stores.kimi.replay.driver import replay_stream

gc.collect()
gc.disable()
for full in (False, True):
    state = replay_stream(Path("wire.jsonl"), io.BytesIO(journal(40)), full=full)
    assert not gc.isenabled()  # a replay leaves the collector as it found it (off here)
    del state
    print(gc.collect())
gc.enable()
replay_stream(Path("wire.jsonl"), io.BytesIO(journal(2)), full=False)
print(gc.isenabled())
"""


def test_a_replay_makes_no_reference_cycles_and_restores_the_collector() -> None:
    """The streaming loop runs with the cyclic collector off because it makes no cycles: pinned
    here, so a cycle added later shows up (a dropped replay is freed by reference counts alone).
    In a process of its own: `gc.collect()` counts every thread's garbage, and a test worker's
    own threads (pytest-xdist's channel) make some at any moment."""
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", _NO_CYCLES], capture_output=True, text=True, cwd=root,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(root)})  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["0", "0", "True"]

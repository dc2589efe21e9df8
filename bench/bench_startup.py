"""Start-up cost: `tdoc scan` of a 3-line journal and `tdoc --version`, beside a bare import.

    python bench/bench_startup.py                 # 15 interleaved rounds
    python bench/bench_startup.py --rounds 30
    python bench/bench_startup.py --root ../other-checkout   # time another source tree

The baseline is `python -c "import orjson, typer, rich"`: the libraries tdoc cannot start without.
Every round starts one fresh process of each command, in turn, so machine drift touches all three
alike; the figures are the medians of the per-round ratios and their spread (lowest and highest
round). Targets (issue 20): scan <= 1.6x the baseline, --version <= 1.3x. Figures are printed,
never asserted: they depend on the machine.

Bytecode: the libraries of the baseline are installed with their compiled bytecode, and so is an
installed tdoc (pip compiles on install). So every command here runs with one bytecode cache of
its own (`PYTHONPYCACHEPREFIX`, a temporary directory, filled by the warm-up round) even when the
calling environment sets PYTHONDONTWRITEBYTECODE; `--cold` times every process compiling tdoc's
sources afresh instead (what a source checkout run with PYTHONDONTWRITEBYTECODE=1 pays).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

JOURNAL = (
    b'{"type": "metadata", "protocol_version": "1.4", "created_at": 1}\n'
    b'{"type": "context.append_message", "message": {"role": "user", "content": [{"type": "text", '
    b'"text": "hello"}], "toolCalls": [], "origin": {"kind": "user"}}, "time": 101}\n'
    b'{"type": "context.append_loop_event", "event": {"type": "step.begin", "uuid": "s1", "turnId": "1", '
    b'"step": 1}, "time": 102}\n'
)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh process (CPU time is steadier on a busy machine)."""
    start, cpu = time.perf_counter(), _cpu()
    subprocess.run(argv, env=env, cwd=tempfile.gettempdir(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)  # fmt: skip
    return time.perf_counter() - start, _cpu() - cpu


def _environment(root: Path, pycache: Path, cold: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["PYTHONPATH"] = str(root)
    if cold:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--root", type=Path, default=ROOT, help="the tdoc source tree to time (default: this one)")
    parser.add_argument("--cold", action="store_true", help="no bytecode cache: tdoc's sources compile in every run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = _environment(args.root, Path(tmp, "pycache"), args.cold)
        journal = Path(tmp, "wire.jsonl")
        journal.write_bytes(JOURNAL)
        commands = {
            "baseline": [sys.executable, "-c", "import orjson, typer, rich"],
            "scan": [sys.executable, "-m", "transcript_doctor", "scan", str(journal)],
            "version": [sys.executable, "-m", "transcript_doctor", "--version"],
        }
        for argv in commands.values():  # warm the page cache and the bytecode caches
            _run(argv, env)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.rounds):
            for name, argv in commands.items():
                times[name].append(_run(argv, env))
    cache = "no bytecode cache (--cold)" if args.cold else "bytecode cached"
    print(f"bench_startup.py: {args.rounds} interleaved rounds, fresh processes, {cache}; medians of per-round ratios")
    for label, which in (("wall", 0), ("cpu", 1)):
        base = [t[which] for t in times["baseline"]]
        print(f"{label:<4} {'command':<9} {'median s':>9} {'x baseline':>11} {'spread':>12}  target")
        print(f"{'':<4} {'baseline':<9} {statistics.median(base):9.3f} {1.0:11.2f}")
        for name, target in (("scan", 1.6), ("version", 1.3)):
            ratios = [t[which] / b for t, b in zip(times[name], base)]
            mark = "holds" if statistics.median(ratios) <= target else "misses"
            print(f"{'':<4} {name:<9} {statistics.median(t[which] for t in times[name]):9.3f} "
                  f"{statistics.median(ratios):11.2f} {min(ratios):5.2f}-{max(ratios):<5.2f}  <= {target} {mark}")


if __name__ == "__main__":
    main()

"""Instruction counts of a scan and of its floor, under valgrind's callgrind: the steady figure.

    python bench/bench_instructions.py opencode [--messages 5000] [--db PATH] [--reps 3]
    python bench/bench_instructions.py hermes [--messages 10000] [--db PATH] [--reps 3]
    python bench/bench_instructions.py eve --stream PATH [--reps 3]
    python bench/bench_instructions.py kimi [--journal PATH] [--mb 10] [--profile dense] [--reps 3]
    ... [--no-quick-check]   (SQLite stores: leave out F506's `PRAGMA quick_check`)

Wall-clock ratios on a shared machine move by a third between identical runs, and by more between
machines of one kind (docs in the README's Performance section); the number of instructions a
process executes does not. Each measurement is a fresh process under `valgrind --tool=callgrind`
that imports tdoc, runs the scan and the floor once each to warm up (imports, first-use patterns,
SQLite's page cache), then runs one of them `--reps` times; a third process does the warm-up only.
Per run: (that process's total - the warm-up process's total) / reps. The floors are the wall-time
benches' own: `bench_opencode.own_queries`, `bench_hermes.own_query` (tdoc's queries and an
orjson parse of what they return), `bench_eve._orjson_only` and `bench_kimi.parse_floor` (an
orjson parse of every line). A kimi journal is built by `bench_kimi.build` unless `--journal`
names one that exists (10 MB by default: the kimi target speaks of 100 MB, but a scan's work per
megabyte is flat, and under valgrind 10 MB takes about a minute a process).

Callgrind runs a process's threads one at a time and counts them all, so `quick_check` (on a
thread of its own in a scan, where a second core pays for it) is counted in full; with
`--no-quick-check` it is left out. Valgrind slows a process by 20-50x: the defaults keep each
process under a minute. Every measured process runs with PYTHONHASHSEED=0, so the same tree
gives the same counts. Needs `valgrind` on PATH; prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

MODES = ("warm-up", "scan", "floor")


def _workloads(kind: str, path: Path) -> tuple[Callable[[], object], Callable[[], object]]:
    """(scan, floor) for one store kind."""
    from transcript_doctor.core import ScanConfig, scan

    def run_scan() -> object:
        report = scan([str(path)], ScanConfig())
        if report.files[0].error:
            raise SystemExit(f"scan failed: {report.files[0].error}")
        return report

    if kind == "opencode":
        import bench_opencode

        return run_scan, lambda: bench_opencode.own_queries(path)
    if kind == "hermes":
        import bench_hermes

        return run_scan, lambda: bench_hermes.own_query(path)
    if kind == "kimi":
        import bench_kimi

        from transcript_doctor.stores import kinds

        bench_kimi.load_kimi_kind(kinds())  # (what the wall-time bench's in-process mode does)
        return run_scan, lambda: bench_kimi.parse_floor(path)
    import bench_eve

    return run_scan, lambda: bench_eve._orjson_only(path)


def _leave_out_quick_check() -> None:
    from transcript_doctor.fixes import sqlite

    sqlite.IntegrityCheck.start = lambda self, *args, **kwargs: None  # type: ignore[method-assign]
    sqlite.IntegrityCheck.problems = lambda self, *args, **kwargs: []  # type: ignore[method-assign]


def child(kind: str, mode: str, path: Path, reps: int, quick_check: bool) -> None:
    """One measured process: warm up, then `reps` runs of `mode`."""
    if not quick_check:
        _leave_out_quick_check()
    run_scan, floor = _workloads(kind, path)
    run_scan()
    floor()
    work = {"scan": run_scan, "floor": floor}.get(mode)
    for _ in range(reps if work is not None else 0):
        work()  # type: ignore[misc]


def instructions(args: list[str], out: Path) -> int:
    """Instructions executed by `python bench_instructions.py --child ...args` (callgrind's total)."""
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__, "--child", *args]
    # One string-hash seed for every measured process: with a random one, dict and set layouts, and
    # so the count, move by about 1% between processes of the same tree.
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    if done.returncode != 0:
        raise SystemExit(f"valgrind run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    total = callgrind_total(out.read_text())
    if total is None:
        raise SystemExit(f"no totals line in {out}")
    return total


def callgrind_total(text: str) -> int | None:
    """The `totals:` line of a callgrind output file (its only event is Ir, the instructions)."""
    for line in text.splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    return None


def _database(kind: str, db: Path | None, messages: int, tmp: Path) -> Path:
    path = db or tmp / f"{kind}.db"
    if path.exists():
        return path
    if kind == "opencode":
        import bench_opencode

        bench_opencode.build(path, messages, 100)
    else:
        import bench_hermes

        bench_hermes.build(path, max(1, messages // 100), 100)
    return path


def _journal(journal: Path | None, megabytes: int, profile: str, tmp: Path) -> Path:
    path = journal or tmp / f"wire.{profile}.jsonl"
    if not path.exists():
        import bench_kimi

        bench_kimi.build(path, megabytes, profile=profile)
    return path


def measure(kind: str, path: Path, reps: int, quick_check: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="tdoc-callgrind-") as tmp:
        flags = [] if quick_check else ["--no-quick-check"]
        totals = {mode: instructions([kind, mode, str(path), str(reps), *flags], Path(tmp) / f"{mode}.out")
                  for mode in MODES}
    scan_ir = (totals["scan"] - totals["warm-up"]) / reps
    floor_ir = (totals["floor"] - totals["warm-up"]) / reps
    return {
        "store": kind,
        "path": str(path),
        "reps": reps,
        "quick_check": quick_check if kind in ("opencode", "hermes") else None,
        "scan_instructions": round(scan_ir),
        "floor_instructions": round(floor_ir),
        "scan_vs_floor": round(scan_ir / floor_ir, 3),
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        kind, mode, path, reps = argv[1:5]
        child(kind, mode, Path(path), int(reps), quick_check="--no-quick-check" not in argv)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", choices=("opencode", "hermes", "eve", "kimi"))
    ap.add_argument("--db", type=Path, help="SQLite stores: use (or build, if missing) this database")
    ap.add_argument("--messages", type=int, help="messages of a built database (opencode 5,000, hermes 10,000)")
    ap.add_argument("--stream", type=Path, help="eve: the stream to scan (bench_eve.py --dir makes some)")
    ap.add_argument("--journal", type=Path, help="kimi: use (or build, if missing) this journal")
    ap.add_argument("--mb", type=int, default=10, help="kimi: size of a built journal")
    ap.add_argument("--profile", choices=("regular", "dense"), default="dense", help="kimi: shape of a built journal")
    ap.add_argument("--reps", type=int, default=3, help="measured runs per process")
    ap.add_argument("--no-quick-check", action="store_true", help="leave out F506's quick_check (SQLite stores)")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: nothing to measure", file=sys.stderr)
        return 2
    if args.reps < 1:
        ap.error("--reps must be at least 1")
    with tempfile.TemporaryDirectory(prefix="tdoc-bench-") as tmp:
        if args.store == "eve":
            if args.stream is None:
                ap.error("eve needs --stream PATH")
            path = args.stream
        elif args.store == "kimi":
            path = _journal(args.journal, args.mb, args.profile, Path(tmp))
        else:
            default = 5_000 if args.store == "opencode" else 10_000
            path = _database(args.store, args.db, args.messages or default, Path(tmp))
        print(json.dumps(measure(args.store, path, args.reps, not args.no_quick_check), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

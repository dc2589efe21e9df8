"""Scan throughput with and without worker processes.

Builds a corpus of small session stores (copies of the small fixtures, spread over directories),
or takes the database stores named by `--database` (one large `opencode.db` or `state.db`, which a
scan with workers splits by its sessions), scans it with `-j 1` and `-j N` through the library
(the same path `tdoc scan` takes), checks the reports are identical, and prints files/s, MB/s and
the speed-up. The settings take turns within each of `--repeat` rounds (the machine's load moves
between rounds); each setting's best round is printed, and the speed-up is the median of the
rounds' own ratios.

    python bench/bench_parallel.py                  # 2,000 files, -j 1 vs -j 2, 3 rounds
    python bench/bench_parallel.py --files 500 --jobs 1 2 4 --repeat 1
    python bench/bench_parallel.py --database opencode.db --repeat 7
    python bench/bench_parallel.py --check          # exit 1 unless the last -j beats -j 1
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transcript_doctor.core import ScanConfig, scan  # noqa: E402
from transcript_doctor.parallel import cpu_count  # noqa: E402

SMALL = 64 * 1024  # fixtures at most this big make up the corpus
PER_DIR = 100


def sources() -> list[Path]:
    """Small line-based store fixtures (JSONL/NDJSON): what a CI job gating sessions sees."""
    found = [
        p
        for p in sorted((ROOT / "fixtures").rglob("*"))
        if p.suffix in (".jsonl", ".ndjson") and p.stat().st_size <= SMALL
    ]
    if not found:
        raise SystemExit("no small fixtures found under fixtures/")
    return found


def build_corpus(target: Path, count: int) -> list[Path]:
    srcs = sources()
    files = []
    for i in range(count):
        src = srcs[i % len(srcs)]
        path = target / f"d{i // PER_DIR:03d}" / f"s{i:05d}{src.suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, path)
        files.append(path)
    return files


def timed_scan(targets: list[str], jobs: int) -> tuple[float, dict]:
    start = time.perf_counter()
    report = scan(targets, ScanConfig(jobs=jobs))
    return time.perf_counter() - start, report.as_dict()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--database", type=Path, action="append", default=[],
                    help="scan this database store instead of a corpus of small files (repeatable)")
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=3, help="rounds; each setting scans once per round")
    ap.add_argument("--check", action="store_true", help="exit 1 unless the last -j is faster than the first")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="tdoc-bench-") as tmp:
        files = args.database or build_corpus(Path(tmp), args.files)
        targets = [str(f) for f in args.database] if args.database else [tmp]
        total_mb = sum(f.stat().st_size for f in files) / 1e6
        origin = "named databases" if args.database else f"{len(sources())} fixtures"
        print(f"corpus: {len(files)} files, {total_mb:.1f} MB, from {origin}; {cpu_count()} CPUs")
        rounds: list[dict[int, float]] = []
        reference = None
        for _ in range(args.repeat):
            timings: dict[int, float] = {}
            for jobs in args.jobs:
                seconds, report = timed_scan(targets, jobs)
                if reference is None:
                    reference = report
                elif report != reference:
                    print(f"-j {jobs}: report differs from -j {args.jobs[0]}", file=sys.stderr)
                    return 2
                timings[jobs] = seconds
            rounds.append(timings)
        assert reference is not None
        findings = reference["summary"]["findings"]
        for jobs in args.jobs:
            seconds = min(r[jobs] for r in rounds)
            print(
                f"-j {jobs}: {seconds:6.2f} s  {len(files) / seconds:8.1f} files/s  "
                f"{total_mb / seconds:6.2f} MB/s  ({findings} findings)"
            )
        first, last = args.jobs[0], args.jobs[-1]
        ratios = sorted(r[first] / r[last] for r in rounds)
        speedup = statistics.median(ratios)
        print(f"speed-up -j {last} over -j {first}: {speedup:.2f}x (rounds {ratios[0]:.2f}-{ratios[-1]:.2f})")
        if args.check and speedup <= 1.0:
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Scan throughput with and without worker processes.

Builds a corpus of small session stores (copies of the small fixtures, spread over directories),
scans it with `-j 1` and `-j N` through the library (the same path `tdoc scan` takes), checks the
two reports are identical, and prints files/s, MB/s and the speed-up.

    python bench/bench_parallel.py                  # 2,000 files, -j 1 vs -j 2, best of 3
    python bench/bench_parallel.py --files 500 --jobs 1 2 4 --repeat 1
    python bench/bench_parallel.py --check          # exit 1 unless the last -j beats -j 1
"""

from __future__ import annotations

import argparse
import shutil
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


def timed_scan(corpus: Path, jobs: int, repeat: int) -> tuple[float, dict]:
    best = float("inf")
    report = None
    for _ in range(repeat):
        start = time.perf_counter()
        report = scan([str(corpus)], ScanConfig(jobs=jobs))
        best = min(best, time.perf_counter() - start)
    assert report is not None
    return best, report.as_dict()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs per setting")
    ap.add_argument("--check", action="store_true", help="exit 1 unless the last -j is faster than the first")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="tdoc-bench-") as tmp:
        corpus = Path(tmp)
        files = build_corpus(corpus, args.files)
        total_mb = sum(f.stat().st_size for f in files) / 1e6
        print(f"corpus: {len(files)} files, {total_mb:.1f} MB, from {len(sources())} fixtures; {cpu_count()} CPUs")
        timings: dict[int, float] = {}
        reference = None
        for jobs in args.jobs:
            seconds, report = timed_scan(corpus, jobs, args.repeat)
            if reference is None:
                reference = report
            elif report != reference:
                print(f"-j {jobs}: report differs from -j {args.jobs[0]}", file=sys.stderr)
                return 2
            timings[jobs] = seconds
            findings = report["summary"]["findings"]
            print(
                f"-j {jobs}: {seconds:6.2f} s  {len(files) / seconds:8.0f} files/s  "
                f"{total_mb / seconds:6.2f} MB/s  ({findings} findings)"
            )
        first, last = args.jobs[0], args.jobs[-1]
        speedup = timings[first] / timings[last]
        print(f"speed-up -j {last} over -j {first}: {speedup:.2f}x")
        if args.check and speedup <= 1.0:
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

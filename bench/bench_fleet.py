"""Fleet scan cost: a LocalCluster of N workers against `-j N` on the same stores, in one run.

Builds a corpus of small stores (copies of the small fixtures, 100 per directory), scans it with
the process pool (`-j N`, the baseline) and with `--cluster local:N` (Dask: listing, batching,
scheduling, result transfer), checks the two reports are byte-identical, and prints stores/s,
the fleet/pool time ratio, the per-store overhead Dask adds, and a paper estimate for a large
fleet from the measured per-store cost.

    python bench/bench_fleet.py                     # 10,000 stores, 2 workers, 3 interleaved rounds
    python bench/bench_fleet.py --stores 2000 --rounds 1
    python bench/bench_fleet.py --estimate-stores 1000000 --estimate-workers 100
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_parallel import build_corpus

from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.fleet import fleet_scan
from transcript_doctor.reporters import REPORTERS


def _json(report: object) -> str:
    out = io.StringIO()
    REPORTERS["json"](report, out)
    return out.getvalue()


def _timed(fn) -> tuple[float, str]:
    start = time.perf_counter()
    report = fn()
    return time.perf_counter() - start, _json(report)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stores", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved pool/fleet rounds (medians reported)")
    parser.add_argument("--estimate-stores", type=int, default=1_000_000)
    parser.add_argument("--estimate-workers", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tdoc-bench-fleet-") as tmp:
        corpus = Path(tmp) / "stores"
        files = build_corpus(corpus, args.stores)
        size = sum(p.stat().st_size for p in files)
        print(f"corpus: {len(files):,} stores, {size / 1e6:.1f} MB, workers: {args.workers}")
        pool_times, fleet_times = [], []
        for round_no in range(args.rounds):
            pool_t, pool_out = _timed(lambda: scan([str(corpus)], ScanConfig(jobs=args.workers)))
            fleet_t, fleet_out = _timed(lambda: fleet_scan([str(corpus)], ScanConfig(jobs=1),
                                                           cluster=f"local:{args.workers}"))
            if fleet_out != pool_out:
                print("MISMATCH: the fleet report differs from the -j report", file=sys.stderr)
                return 1
            pool_times.append(pool_t)
            fleet_times.append(fleet_t)
            print(f"round {round_no + 1}: -j {args.workers} {pool_t:.2f} s ({len(files) / pool_t:,.0f} stores/s), "
                  f"cluster {fleet_t:.2f} s ({len(files) / fleet_t:,.0f} stores/s), ratio {fleet_t / pool_t:.2f}")
        _summary(len(files), args, pool_times, fleet_times)
    return 0


def _summary(n: int, args: argparse.Namespace, pool_times: list[float], fleet_times: list[float]) -> None:
    ratios = [f / p for f, p in zip(fleet_times, pool_times)]
    pool, fleet = statistics.median(pool_times), statistics.median(fleet_times)
    per_store = fleet * args.workers / n  # worker-seconds a store costs on the cluster, start-up included
    overhead = (fleet - pool) * args.workers / n
    print(f"median: -j {args.workers} {n / pool:,.0f} stores/s, cluster {n / fleet:,.0f} stores/s; "
          f"fleet/pool ratio median {statistics.median(ratios):.2f} (range {min(ratios):.2f}-{max(ratios):.2f})")
    print(f"per store: {per_store * 1e3:.2f} worker-ms on the cluster, {overhead * 1e3:+.2f} worker-ms vs the pool "
          f"(cluster start-up included)")
    hours = args.estimate_stores * per_store / args.estimate_workers / 3600
    print(f"paper estimate: {args.estimate_stores:,} such stores on {args.estimate_workers} workers "
          f"~ {hours * 60:.0f} min of scanning (listing and object-storage transfer not included)")


if __name__ == "__main__":
    raise SystemExit(main())

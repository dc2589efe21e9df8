"""Two trees' scans of the same stores, alternated between two long-lived workers: an A/B for wall time.

    python bench/bench_ab.py --a REV|DIR [--b REV|DIR] [--rounds 12] PATH...

On a shared machine the wall time of one scan moves by a third between runs while its instruction
count does not; an effect on the wall clock alone (what the cache keeps, what memory is reused)
shows only when the two trees meet the same moments of the host. Each tree runs in its own
worker process, imported and warmed up once (a scan of every PATH); then the workers scan in
turn, A then B, B then A, so that drift touches both alike, and each times its own scan
(`core.scan` of every PATH, the default configuration, `quick_check` included). A tree is a
directory holding `transcript_doctor/`, or a git revision of this repository, checked out into a
temporary worktree for the run. `--b` defaults to this tree.

Prints one JSON object: each side's median and fastest scan, the median of the per-pair ratios
B/A, the pairs B won, and each side's finding count (the two must agree unless the change meant
to change findings: the bench says so rather than compare unlike work). Asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def worker(tree: str) -> int:
    """Serve `scan PATH...` lines on stdin: one JSON line per scan, its seconds and finding count."""
    sys.path.insert(0, tree)
    from transcript_doctor.core import ScanConfig, scan

    for line in sys.stdin:
        paths = json.loads(line)
        started = time.perf_counter()
        report = scan(paths, ScanConfig())
        seconds = time.perf_counter() - started
        errors = [f.error for f in report.files if f.error]
        findings = sum(len(f.findings) for f in report.files)
        print(json.dumps({"seconds": seconds, "findings": findings, "errors": errors}), flush=True)
    return 0


@contextlib.contextmanager
def checked_out(tree: str) -> Iterator[Path]:
    """`tree` as a directory: as given, or a git revision in a temporary worktree."""
    given = Path(tree)
    if (given / "transcript_doctor").is_dir():
        yield given.resolve()
        return
    where = Path(tempfile.mkdtemp(prefix="tdoc-ab-"))
    shutil.rmtree(where)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(where), tree], check=True)
    try:
        yield where
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(where)], check=False)


class Worker:
    def __init__(self, tree: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker", str(tree)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=tree)

    def scan(self, paths: list[str]) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(paths) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"a worker stopped (exit {self.proc.wait()})")
        result = json.loads(line)
        if result["errors"]:
            raise SystemExit(f"a worker's scan failed: {result['errors'][0]}")
        return result

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


def alternate(a: Worker, b: Worker, paths: list[str], rounds: int) -> dict:
    """Warm both up, then `rounds` pairs in alternating order; the summary of the pairs."""
    first = {"a": a.scan(paths)["findings"], "b": b.scan(paths)["findings"]}
    times: dict[str, list[float]] = {"a": [], "b": []}
    for i in range(rounds):
        for side in ("a", "b") if i % 2 == 0 else ("b", "a"):
            times[side].append((a if side == "a" else b).scan(paths)["seconds"])
    ratios = [tb / ta for ta, tb in zip(times["a"], times["b"])]
    return {
        "rounds": rounds,
        "a_median_s": round(statistics.median(times["a"]), 4),
        "b_median_s": round(statistics.median(times["b"]), 4),
        "a_fastest_s": round(min(times["a"]), 4),
        "b_fastest_s": round(min(times["b"]), 4),
        "b_over_a_median": round(statistics.median(ratios), 4),
        "b_faster_in": sum(r < 1 for r in ratios),
        "findings": first,
        "same_findings": first["a"] == first["b"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--a", help="the tree to compare against: a directory or a git revision")
    ap.add_argument("--b", default=str(ROOT), help="the tree measured (default: this one)")
    ap.add_argument("--rounds", type=int, default=12, help="pairs of scans after the warm-up")
    ap.add_argument("paths", nargs="*", help="the stores every scan reads")
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.worker)
    if not args.a or not args.paths:
        ap.error("--a and at least one PATH are needed")
    paths = [str(Path(p).resolve()) for p in args.paths]
    with checked_out(args.a) as tree_a, checked_out(args.b) as tree_b:
        a, b = Worker(tree_a), Worker(tree_b)
        try:
            summary = alternate(a, b, paths, args.rounds)
        finally:
            a.close()
            b.close()
    print(json.dumps({"a": args.a, "b": args.b, "paths": args.paths, **summary}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

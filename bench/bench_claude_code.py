"""Benchmark the Claude Code store: scan throughput against a plain orjson parse, and memory.

    python bench/bench_claude_code.py [--mb 100] [--repeat 7] [--memory-mb 25,100]

Builds a transcript of about --mb MB in a temporary directory from the real fixtures' shapes
(fixtures/claude-code/real: every file repeated with fresh uuids, message and tool ids, each copy
chained to the previous one so the resume walks the whole file), then times, in the same run:

* `parse`: a plain `orjson.loads` of every line (the baseline),
* `read`: the reader (records, concatenated-line handling),
* `scan`: a full scan (reader, resume chain, request rebuild, every rule),

in interleaved rounds (parse, read, scan, parse, read, scan, ...) and prints the median time and
throughput (MB/s) of each phase and the median of the per-round ratios to the parse (target for
the scan >= 1/3). Memory: the peak Python heap (tracemalloc) of a fresh process that scans a file
of each --memory-mb size, per file byte and per record, and the growth per added record between the
smallest and the largest size. Text is not kept (excerpts and the per-record index only), so the
peak grows with the number of records, not with their text (docs/claude-code-sessions.md §7).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transcript_doctor.core import ScanConfig, check_store
from transcript_doctor.stores import Options, open_store
from transcript_doctor.stores.claude_code.reader import read_transcript

REAL = ROOT / "fixtures" / "claude-code" / "real"
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_IDS = re.compile(rb"\b(toolu|msg|req)_([0-9A-Za-z]{6,})")


def _copy(lines: list[bytes], k: int, previous: bytes | None) -> tuple[list[bytes], bytes | None]:
    tag = b"%08x" % k

    def fresh(m: re.Match[bytes]) -> bytes:
        return m.group(0)[:24] + tag + m.group(0)[32:]

    out = []
    last = previous
    for raw in lines:
        raw = _UUID.sub(fresh, raw)
        raw = _IDS.sub(lambda m: m.group(1) + b"_" + tag + m.group(2), raw)
        if previous is not None and raw.startswith(b'{"parentUuid":null'):
            raw = b'{"parentUuid":"' + previous + b'"' + raw[len(b'{"parentUuid":null'):]
            previous = None
        rec = orjson.loads(raw)
        if isinstance(rec, dict) and rec.get("uuid") and rec.get("type") in ("user", "assistant", "system", "progress"):
            last = rec["uuid"].encode()
        out.append(raw)
    return out, last


def build(path: Path, megabytes: float) -> int:
    sources = [p.read_bytes().split(b"\n") for p in sorted(REAL.glob("*.jsonl"))]
    sources = [[line for line in lines if line.strip()] for lines in sources]
    target = int(megabytes * 1e6)
    size = k = 0
    last: bytes | None = None
    with open(path, "wb") as out:
        while size < target:
            lines, last = _copy(sources[k % len(sources)], k, last)
            chunk = b"\n".join(lines) + b"\n"
            out.write(chunk)
            size += len(chunk)
            k += 1
    return size


def _seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(phases: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """Each round times every phase once, in turn, so a burst of load on the shared machine hits all
    phases of that round alike; the ratios are taken per round and their median reported."""
    times: dict[str, list[float]] = {name: [] for name in phases}
    for _ in range(rounds):
        for name, fn in phases.items():
            times[name].append(_seconds(fn))
    return times


def parse(path: Path) -> None:
    loads = orjson.loads
    with open(path, "rb", buffering=1 << 20) as fh:
        for line in fh:
            loads(line)


def scan(path: Path) -> int:
    store = open_store(path, str(path), Options())
    try:
        return len(check_store(store, ScanConfig()))
    finally:
        store.close()


_CHILD = """
import sys, tracemalloc
sys.path[:0] = [{root!r}, {bench!r}]
from pathlib import Path
from bench_claude_code import scan
tracemalloc.start()
scan(Path({path!r}))
print(tracemalloc.get_traced_memory()[1])
"""


def peak_bytes(path: Path) -> int:
    """Peak Python heap of a fresh process scanning `path` (tracemalloc, start-up excluded)."""
    code = _CHILD.format(root=str(ROOT), bench=str(ROOT / "bench"), path=str(path))
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--repeat", type=int, default=7, help="interleaved rounds")
    parser.add_argument("--memory-mb", default="25,100")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tdoc-bench-cc-") as tmp:
        path = Path(tmp) / "session.jsonl"
        size = build(path, args.mb)
        records = len(read_transcript(path, str(path)).records)
        print(f"transcript: {size / 1e6:.1f} MB, {records} records (built from {REAL.relative_to(ROOT)})")
        times = interleaved({"parse": lambda: parse(path), "read": lambda: read_transcript(path, str(path)),
                             "scan": lambda: scan(path)}, args.repeat)  # fmt: skip
        print(f"{'phase':<8}{'median s':>10}{'MB/s':>10}{'vs parse':>10}   (per-round ratios)")
        for name, ts in times.items():
            ratios = [p / t for p, t in zip(times["parse"], ts)]
            t = median(ts)
            spread = ", ".join(f"{r:.2f}" for r in ratios)
            print(f"{name:<8}{t:>10.3f}{size / 1e6 / t:>10.1f}{median(ratios):>10.2f}   ({spread})")
        ratio = median(p / t for p, t in zip(times["parse"], times["scan"]))
        print(f"scan/parse throughput ratio (median of {args.repeat} rounds): {ratio:.2f} "
              f"(target >= 0.33: {'met' if ratio >= 1 / 3 else 'NOT met'})")  # fmt: skip
        sizes: list[tuple[int, int]] = []
        for mb in (float(x) for x in args.memory_mb.split(",")):
            p = Path(tmp) / f"m{mb:g}.jsonl"
            n = build(p, mb)
            recs = len(read_transcript(p, str(p)).records)
            peak = peak_bytes(p)
            print(f"memory: {n / 1e6:6.1f} MB file, {recs:7d} records: peak heap {peak / 1e6:6.1f} MB "
                  f"({peak / n:.3f} bytes per file byte, {peak / recs:.0f} bytes per record)")
            sizes.append((recs, peak))
            p.unlink()
        if len(sizes) > 1:
            (r0, p0), (r1, p1) = sizes[0], sizes[-1]
            print(f"memory growth: {(p1 - p0) / (r1 - r0):.0f} bytes per added record "
                  f"(fixed part {(p0 - r0 * (p1 - p0) / (r1 - r0)) / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()

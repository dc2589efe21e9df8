"""Benchmark the eve reader and the empty-delivery marker matcher.

    python bench/bench_eve.py [--stream-mb 20] [--reply-kb 1000] [--repeat 3] [--rounds 5] [--streams-only]
                              [--dir DIR]

Prints two tables:

* matcher throughput on long replies (MB/s of UTF-8 text) for the strict and tolerant policies and
  for `classify` (what the rules call), on ordinary prose and on the adversarial shapes of
  docs/eve.md §3 that made the original JavaScript patterns backtrack;
* stream scan throughput (MB/s of stream file) of a plain `orjson` parse of every line, of the reader
  (parse + rebuild turns), and of a full scan (`core.scan`: open, reader, every rule, the report),
  on synthetic streams made by repeating the fixture streams of both formats with fresh turn, run,
  part and event ids, with the median and spread of the per-round ratios to the orjson parse
  over --rounds interleaved rounds, in wall-clock and in CPU time (wall time also counts waiting
  for a busy machine). Extra rows (`quiet:`) measure streams with few findings: the turns of a
  fixture that raise no finding, repeated, with the whole fixture once every `QUIET_EVERY` copies
  (the v27 fixture has no such turn). --dir keeps the streams there and reuses them.

Matcher times are the best of --repeat runs of wall-clock time.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transcript_doctor.core import ScanConfig, scan  # noqa: E402
from transcript_doctor.stores.eve.markers import classify, has_marker  # noqa: E402
from transcript_doctor.stores.eve.reader import read_stream  # noqa: E402

FIXTURES = ROOT / "fixtures" / "eve"
_IDS = re.compile(rb'"(turn|run|part|call|evt)_')


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _mbps(nbytes: int, seconds: float) -> str:
    return f"{nbytes / 1e6 / seconds:10.1f}" if seconds > 0 else "       inf"


# ----------------------------------------------------------------------------- matcher


def replies(n: int) -> dict[str, str]:
    prose = "Nightly report: 14,203 requests, p95 212 ms, 3 errors (all 504s from billing). "
    return {
        "prose report": (prose * (n // len(prose) + 1))[:n],
        "prose + marker at end": (prose * (n // len(prose) + 1))[:n] + " <eve-empty-delivery/>",
        "open tag + spaces": "<eve-empty-delivery" + " " * n,
        "'< ' + '/ ' runs": "< " + "/ " * (n // 2) + "eve-empty-delivery",
        "hyphen run in name": "<eve" + "-" * n + "empty-delivery",
        "repeated name": "<eve" + "empty-delivery" * (n // 14),
        "two repeated names": "<eve" + "empty-delivery" * (n // 28) + "><eve" + "empty-delivery" * (n // 28),
        "closed tag, hyphen run": "<eve" + "-" * n + "x>",
        "spaces before final char": " " * n + "x",
    }


def bench_matcher(n: int, repeat: int) -> None:
    print(f"\nmarker matcher, replies of ~{n:,} characters (MB/s)")
    print(f"{'input':28} {'strict':>10} {'tolerant':>10} {'classify':>10}")
    for name, text in replies(n).items():
        size = len(text.encode())
        cols = [
            _best(lambda: has_marker(text, "strict"), repeat),
            _best(lambda: has_marker(text, "tolerant"), repeat),
            _best(lambda: classify(text), repeat),
        ]
        print(f"{name:28} " + " ".join(_mbps(size, c) for c in cols))


# ----------------------------------------------------------------------------- streams


QUIET_EVERY = 50  # a quiet stream holds the whole fixture once every this many copies
_TURN_ID = re.compile(rb'"turnId":"([^"]+)"')


def synthetic_stream(copies: Callable[[int], list[bytes]], target_bytes: int, out: Path) -> int:
    """Write `copies(n)` for n = 0, 1, ... with fresh ids until `out` holds at least `target_bytes`;
    its size."""
    written = 0
    copy = 0
    with open(out, "wb") as fh:
        while written < target_bytes:
            prefix = f"c{copy}x".encode()
            for line in copies(copy):
                data = _IDS.sub(lambda m: b'"' + m.group(1) + b"_" + prefix, line) + b"\n"
                fh.write(data)
                written += len(data)
            copy += 1
    return written


def quiet_lines(source: Path) -> list[bytes]:
    """The lines of `source` outside every turn that has a finding (empty when every turn has one)."""
    report = scan([str(source)], ScanConfig())
    noisy = {str(f.evidence.get("turn")).encode() for f in report.findings}
    lines = source.read_bytes().splitlines()
    kept = [line for line in lines if not set(_TURN_ID.findall(line)) & noisy]
    return kept if any(_TURN_ID.search(line) for line in kept) else []


def streams(target_mb: float, tmp: Path) -> list[tuple[str, Path, int]]:
    """(row name, path, size) of every synthetic stream, written under `tmp` unless already there."""
    out = []
    for source in sorted(FIXTURES.glob("*.ndjson")):
        lines = source.read_bytes().splitlines()
        variants: list[tuple[str, Callable[[int], list[bytes]]]] = [(source.name, lambda n, full=lines: full)]
        quiet = quiet_lines(source)
        if quiet:
            variants.append((f"quiet:{source.name}",
                             lambda n, q=quiet, full=lines: full if n % QUIET_EVERY == 0 else q))
        for name, copies in variants:
            path = tmp / f"{name.replace(':', '-')}.{target_mb:g}mb"
            if not path.exists():
                partial = path.with_suffix(".partial")
                synthetic_stream(copies, int(target_mb * 1e6), partial)
                partial.replace(path)
            out.append((name, path, path.stat().st_size))
    return out


def _orjson_only(path: Path) -> int:
    count = 0
    with open(path, "rb") as fh:
        for line in fh:
            if line.strip():
                orjson.loads(line)
                count += 1
    return count


def _full_scan(path: Path) -> int:
    """What `tdoc scan` does with the file (open, read, every rule, the report), as a library call."""
    report = scan([str(path)], ScanConfig())
    if report.files[0].error:
        raise SystemExit(f"scan failed: {report.files[0].error}")
    return len(report.findings)


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall, cpu) seconds of `fn()`."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def _spread(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):5.2f} ({min(ratios):.2f}-{max(ratios):.2f})"


def _ratios(times: list[tuple[float, float]], base: list[tuple[float, float]], clock: int) -> str:
    return _spread([t[clock] / b[clock] for t, b in zip(times, base)])


def bench_streams(target_mb: float, rounds: int, keep: Path | None) -> None:
    print(f"\nstream scan, ~{target_mb:g} MB per stream, {rounds} interleaved rounds: MB/s of the median round,")
    print("and the median (min-max) of the per-round ratios to the orjson parse of the same round, in wall")
    print("and in CPU time; target scan <= 3")
    print(f"{'stream':38} {'lines':>9} {'orjson':>7} {'reader':>7} {'scan':>7} {'reader x wall':>17}"
          f" {'scan x wall':>17} {'scan x cpu':>17}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for name, path, size in streams(target_mb, folder):
            lines = _orjson_only(path)
            _full_scan(path)  # warm: imports, caches
            base, reader, full = [], [], []
            for _ in range(rounds):  # interleaved, so machine drift touches all three alike
                base.append(_timed(lambda: _orjson_only(path)))
                reader.append(_timed(lambda: read_stream(path)))
                full.append(_timed(lambda: _full_scan(path)))
            mbps = [_mbps(size, statistics.median(t[0] for t in ts)) for ts in (base, reader, full)]
            print(f"{name:38} {lines:9,} " + " ".join(m.strip().rjust(7) for m in mbps)
                  + f" {_ratios(reader, base, 0):>17} {_ratios(full, base, 0):>17} {_ratios(full, base, 1):>17}")
            print(f"{'':38} {_full_scan(path):,} findings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stream-mb", type=float, default=20.0, help="size of each synthetic stream")
    parser.add_argument("--reply-kb", type=int, default=1000, help="length of each reply, thousands of chars")
    parser.add_argument("--repeat", type=int, default=3, help="matcher runs per measurement (best is kept)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds of the stream measurements")
    parser.add_argument("--streams-only", action="store_true", help="skip the matcher table")
    parser.add_argument("--dir", type=Path, help="keep the synthetic streams here (and reuse them)")
    args = parser.parse_args()
    if not args.streams_only:
        bench_matcher(args.reply_kb * 1000, args.repeat)
    bench_streams(args.stream_mb, args.rounds, args.dir)


if __name__ == "__main__":
    main()

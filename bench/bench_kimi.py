"""Benchmark tdoc on a large, realistic kimi-code journal.

Builds a wire.jsonl of the requested size (default 200 MB) with realistic record shapes and
sizes: prompts, thinking, text, tool calls with JSON arguments, tool outputs of a few KB, vacuous
steps, failed attempts and a compaction every few dozen turns (kept-users and legacy forms).
Then it measures, each phase in its own process so peak memory is that phase's alone (modules are
imported before the clock starts; the start-up column shows that cost):

* parse  - a plain orjson parse of every line (the baseline);
* parse-1M - the same parse through the 1 MiB read buffer tdoc uses (a stricter baseline);
* replay - tdoc's replay engines (both folds + transcripts, no printing);
* scan   - `tdoc scan` (replay + every kimi rule);
* heal   - `tdoc heal` dry run (scan + plan + verification replay);
* heal-output - `tdoc heal --output` (scan + plan + verification replay + the write);
* heal-inplace - `tdoc heal --in-place` on a copy made before the clock (+ backup and replace).

Two profiles: `regular` (the default: tool outputs of a few KB, a compaction every few dozen
turns) and `dense` (short records, ~1,900 per MB, a compaction about every 60 steps, half of them
legacy with tails of one to four messages, some a single vacuous step, ~3% vacuous steps).
`--growth 2,10,30,60` times scan and heal --output at each size (heal seconds per MB stays flat
when the heal is linear).

Usage: python bench/bench_kimi.py [--mb 200] [--profile dense] [--keep FILE] [--repeat N]
       python bench/bench_kimi.py --growth 2,10,30,60 --profile dense
       python bench/bench_kimi.py --in-process --repeat 5 --profile dense --keep FILE [--stages]

`--in-process` runs the parse baseline and the scan alternately in one process (after a warm-up
round, so imports and first-use costs are out) and prints the median per-round ratio and its
spread: the scan target (>= 0.45 of the parse floor) is stated in those terms.

Timings on a shared machine vary by a third from run to run. `--repeat N` runs N rounds of all
phases; the table shows each phase's fastest run, and the ratios the targets speak of are medians
of per-round ratios (a round runs the phases back to back, so machine drift cancels out).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

WORDS = (
    "the build test config module import regex unicode async input file case edge api list update "
    "public stable second keep check run function hang matches iterators refactor rename explain why"
).split()


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


class Writer:
    def __init__(self, out, rng: random.Random) -> None:
        self.out, self.rng, self.time, self.turn = out, rng, 1_780_000_000_000, 0
        self.history_len = 0  # v1 writer history length (for compactedCount)

    def rec(self, obj: dict) -> None:
        self.time += self.rng.randint(5, 500)
        obj["time"] = self.time
        self.out.write(orjson.dumps(obj) + b"\n")

    def message(self, role: str, text: str, origin: str | None = "user") -> None:
        msg = {"role": role, "content": [{"type": "text", "text": text}], "toolCalls": []}
        if origin:
            msg["origin"] = {"kind": origin}
        self.rec({"type": "context.append_message", "message": msg})
        self.history_len += 1

    def loop(self, event: dict) -> None:
        self.rec({"type": "context.append_loop_event", "event": event})

    def step(self, n: int, parts: list[dict], calls: int, finish: str = "end_turn",
             output_lines: tuple[int, int] = (10, 60)) -> None:
        uid = f"step-{self.turn}-{n}-{self.rng.getrandbits(32):08x}"
        base = {"turnId": str(self.turn), "step": n}
        self.loop({"type": "step.begin", "uuid": uid, **base})
        self.history_len += 1
        for i, part in enumerate(parts):
            self.loop({"type": "content.part", "uuid": f"{uid}-p{i}", **base, "stepUuid": uid, "part": part})
        for c in range(calls):
            cid = f"call-{uid}-{c}"
            args = {"command": words(self.rng, 12), "path": f"src/{self.rng.choice(WORDS)}.py", "limit": 200}
            self.loop({"type": "tool.call", "uuid": f"{cid}-u", **base, "stepUuid": uid, "toolCallId": cid,
                       "name": self.rng.choice(["Bash", "Read", "Grep", "Edit"]), "args": args})
            output = "\n".join(words(self.rng, 14) for _ in range(self.rng.randint(*output_lines)))
            self.loop({"type": "tool.result", "parentUuid": f"{cid}-u", "toolCallId": cid,
                       "result": {"output": output, "isError": False}})
            self.history_len += 1
        usage = {"inputOther": 700, "output": 200, "inputCacheRead": 40000, "inputCacheCreation": 0}
        self.loop({"type": "step.end", "uuid": uid, **base, "finishReason": finish, "usage": usage})

    def turn_(self) -> None:
        self.turn += 1
        rng = self.rng
        self.rec({"type": "turn.prompt", "input": words(rng, 8), "origin": {"kind": "user"}})
        self.message("user", words(rng, rng.randint(20, 300)))
        for n in range(1, rng.randint(2, 6)):
            roll = rng.random()
            if roll < 0.04:
                self.step(n, [{"type": "think", "think": ""}], 0, "filtered")  # vacuous: the wedge
                continue
            think = {"type": "think", "think": words(rng, rng.randint(30, 200)), "encrypted": "sig" * 10}
            text = {"type": "text", "text": words(rng, rng.randint(20, 250))}
            self.step(n, [think, text], rng.randint(0, 2))
        self.rec({"type": "usage.record", "model": "kimi-k2", "usage": {"inputOther": 1, "output": 1}})

    def compaction(self, legacy: bool) -> None:
        summary = words(self.rng, 120)
        rec = {"type": "context.apply_compaction", "summary": summary, "compactedCount": self.history_len,
               "tokensBefore": 90000, "tokensAfter": 3000}
        if not legacy:
            rec["contextSummary"] = "The conversation so far has been compacted.\n" + summary
            rec["keptUserMessageCount"] = 3
        self.rec(rec)
        self.history_len = 1 if legacy else 4


class DenseWriter(Writer):
    """The dense profile: short records (~1,900 per MB), about 3% vacuous steps, a compaction
    about every 60 steps, half of them legacy with a tail of one to four messages (a quarter of
    those tails a single vacuous step: the branch flip a heal must tombstone)."""

    def turn_(self) -> int:
        self.turn += 1
        rng = self.rng
        self.rec({"type": "turn.prompt", "input": words(rng, 4), "origin": {"kind": "user"}})
        self.message("user", words(rng, rng.randint(5, 40)))
        steps = rng.randint(1, 4)
        for n in range(1, steps + 1):
            if rng.random() < 0.03:
                self.step(n, [{"type": "think", "think": ""}], 0, "filtered")
                continue
            think = {"type": "think", "think": words(rng, rng.randint(30, 130)), "encrypted": "sig"}
            text = {"type": "text", "text": words(rng, rng.randint(30, 170))}
            self.step(n, [think, text], rng.choice((0, 0, 1)), output_lines=(3, 12))
        return steps

    # The v1 writer history, one entry per message: a user prompt's token estimate, or None. Legacy
    # counts index it, so it follows v1's compaction shapes (kept users: the newest prompts within
    # 20,000 tokens, tail-only as v1 selects them for records without a head count).

    @property
    def hist(self) -> list:
        if not hasattr(self, "_hist"):
            self._hist: list = []
        return self._hist

    def message(self, role: str, text: str, origin: str | None = "user") -> None:
        super().message(role, text, origin)
        self.hist.append(-(-len(text) // 4) + 1 if role == "user" else None)

    def loop(self, event: dict) -> None:
        super().loop(event)
        if event["type"] in ("step.begin", "tool.result"):
            self.hist.append(None)

    def kept_users(self) -> None:
        summary = words(self.rng, 40)
        users, budget = [], 20000
        for cost in reversed([c for c in self.hist if c is not None]):
            if budget <= 0:
                break
            users.append(min(cost, budget))
            budget -= cost
        self.rec({"type": "context.apply_compaction", "summary": summary, "contextSummary": "Compacted.\n" + summary,
                  "compactedCount": len(self.hist), "keptUserMessageCount": len(users), "tokensBefore": 90000,
                  "tokensAfter": 3000})
        self._hist = [*reversed(users), None]

    def legacy_with_tail(self) -> None:
        """A legacy compaction that keeps the last one to four messages of the writer history."""
        if self.rng.random() < 0.25:
            self.step(1, [{"type": "think", "think": ""}], 0, "filtered")
            tail = 1
        else:
            tail = min(self.rng.randint(1, 4), len(self.hist) - 1)
        summary = words(self.rng, 40)
        self.rec({"type": "context.apply_compaction", "summary": summary,
                  "compactedCount": len(self.hist) - tail, "tokensBefore": 90000, "tokensAfter": 3000})
        self._hist = [None, *self.hist[len(self.hist) - tail:]]


def build(path: Path, megabytes: int, seed: int = 7, profile: str = "regular") -> None:
    rng = random.Random(seed)
    with open(path, "wb") as out:
        w = (DenseWriter if profile == "dense" else Writer)(out, rng)
        out.write(orjson.dumps({"type": "metadata", "protocol_version": "1.4", "created_at": w.time}) + b"\n")
        limit = megabytes * 1_000_000
        while out.tell() < limit:
            if profile == "dense":
                steps, target = 0, rng.randint(50, 70)
                while steps < target:
                    steps += w.turn_()  # type: ignore[operator]
                if rng.random() < 0.5:
                    w.legacy_with_tail()  # type: ignore[attr-defined]
                else:
                    w.kept_users()  # type: ignore[attr-defined]
                continue
            for _ in range(rng.randint(15, 40)):
                w.turn_()
            w.compaction(legacy=rng.random() < 0.3)


# --------------------------------------------------------------------------- phases (child processes)


def phase(name: str, path: Path) -> dict:
    """Run one phase in this (fresh) process. Modules are imported before the clock starts:
    throughput is bytes over processing time; start-up is reported separately."""
    start = time.perf_counter()
    if not name.startswith("parse"):  # the baselines import nothing but orjson (peak memory stays bare)
        import transcript_doctor
        from transcript_doctor.core import ScanConfig
        from transcript_doctor.healing import heal_paths
        from transcript_doctor.parallel import run  # noqa: F401  (scan imports it on first use)
        from transcript_doctor.stores import HealOptions, kinds
        from transcript_doctor.stores.kimi.replay.driver import replay_file

        load_kimi_kind(kinds())  # the store kinds load lazily: load kimi's before timing too
    startup = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    if name in ("parse", "parse-1M"):  # parse-1M: the same, through tdoc's 1 MiB read buffer
        records = 0
        with open(path, "rb", buffering=-1 if name == "parse" else 1 << 20) as fh:
            for line in fh:
                if line.strip():
                    orjson.loads(line)
                    records += 1
        extra = {"records": records}
    elif name == "replay":
        state = replay_file(path, full=False)
        extra = {"records": state.stats.records, "live_history": len(state.v1.history)}
    elif name == "scan":
        report = transcript_doctor.scan([str(path)])
        extra = {"findings": len(report.findings)}
    elif name == "heal":
        results, code = heal_paths([str(path)], ScanConfig(), HealOptions())
        extra = {"edits": sum(len(r.edits) for r in results), "exit": code,
                 "kept": sum(len(r.skipped) for r in results)}
    elif name in ("heal-output", "heal-inplace"):
        work = _work_copy(path) if name == "heal-inplace" else path  # the copy is made before the clock
        target = path.with_name(path.name + ".healed")
        start, cpu = time.perf_counter(), time.process_time()
        if name == "heal-output":
            options = HealOptions(mode="output", output=target)
        else:
            options = HealOptions(mode="in-place", backup=False)
        results, code = heal_paths([str(work)], ScanConfig(), options)
        extra = {"edits": sum(len(r.edits) for r in results), "exit": code,
                 "kept": sum(len(r.skipped) for r in results), "replays": results[0].extra.get("verification_replays")}
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        for leftover in (target, work if work != path else None):
            if leftover is not None:
                leftover.unlink(missing_ok=True)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return {"phase": name, "seconds": elapsed, "cpu": cpu, "startup": startup, "peak_mb": peak_mb, **extra}
    else:
        raise SystemExit(f"unknown phase {name}")
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"phase": name, "seconds": elapsed, "cpu": cpu, "startup": startup, "peak_mb": peak_mb, **extra}


def load_kimi_kind(kinds: dict) -> None:
    """Import the kimi store family (discovery imports only its sniffer; the rest loads on first
    open, which is start-up, not scan time)."""
    getattr(kinds["kimi-wire"], "kind", None)


def parse_floor(path: Path) -> int:
    """The baseline: a plain orjson parse of every non-blank line."""
    records = 0
    with open(path, "rb") as fh:
        for line in fh:
            if line.strip():
                orjson.loads(line)
                records += 1
    return records


def reader_only(path: Path) -> int:
    """tdoc's journal reader alone, as a scan's replay drives it, every record its hot path would
    be offered taken and dropped: what reading costs before any fold (line accounting, the nesting
    pre-test, dispatch). How many records were taken."""
    from transcript_doctor.stores.kimi.read.reader import READ_BUFFER, ReadStats, read_records
    from transcript_doctor.stores.kimi.replay.hot_path import EVENT_KINDS, MESSAGE, READ_TYPES

    taken = 0

    def take(line: int, offset: int, data: dict) -> bool:
        nonlocal taken
        taken += 1
        return True

    def take_event(line: int, offset: int, data: dict, event: dict) -> bool:
        return take(line, offset, data)

    with open(path, "rb", buffering=READ_BUFFER) as fh:
        for _ in read_records(fh, ReadStats(), {MESSAGE: take}, READ_TYPES, loop=dict.fromkeys(EVENT_KINDS, take_event)):
            pass
    return taken


def replay_only(path: Path) -> None:
    """The scan's replay (both engines, step index, light transcripts), no rules."""
    from transcript_doctor.stores.kimi.replay.driver import replay_file

    replay_file(path, full=False)


def in_process(path: Path, rounds: int, stages: bool = False) -> None:
    """parse and scan alternately in this one process (after one warm-up round of each, so
    imports and first-use costs are out): the per-round ratio parse/scan, median and spread.
    `stages`: each round also times the reader alone and the replay alone, each as a fraction of
    the same round's parse (where the scan's time goes, measured the same way)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout, installed or not
    import transcript_doctor
    from transcript_doctor.stores import kinds

    load_kimi_kind(kinds())
    parse_floor(path)
    transcript_doctor.scan([str(path)])
    ratios, cpu_ratios, scans = [], [], []
    staged: dict[str, list[float]] = {"reader": [], "replay": []}
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        parse_floor(path)
        parse_wall, parse_cpu = time.perf_counter() - wall, time.process_time() - cpu
        for name, work in ((("reader", reader_only), ("replay", replay_only)) if stages else ()):
            wall = time.perf_counter()
            work(path)
            staged[name].append(parse_wall / (time.perf_counter() - wall))
        wall, cpu = time.perf_counter(), time.process_time()
        transcript_doctor.scan([str(path)])
        scan_wall, scan_cpu = time.perf_counter() - wall, time.process_time() - cpu
        ratios.append(parse_wall / scan_wall)
        cpu_ratios.append(parse_cpu / scan_cpu)
        scans.append(scan_wall)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size_mb = path.stat().st_size / 1e6
    print(f"journal: {path} ({size_mb:.1f} MB), in-process, {rounds} rounds of parse then scan")
    print(f"  scan {statistics.median(ratios):.3f} of the parse floor (wall; min {min(ratios):.3f}, "
          f"max {max(ratios):.3f}); cpu {statistics.median(cpu_ratios):.3f} (min {min(cpu_ratios):.3f}, "
          f"max {max(cpu_ratios):.3f}); target >= 0.45")
    print(f"  scan median {statistics.median(scans):.2f} s ({size_mb / statistics.median(scans):.1f} MB/s); "
          f"process peak {peak_mb:.0f} MB")
    for name, per_round in staged.items():
        if per_round:
            print(f"  {name} alone {statistics.median(per_round):.3f} of the parse floor "
                  f"(min {min(per_round):.3f}, max {max(per_round):.3f})")


def _work_copy(path: Path) -> Path:
    import shutil

    work = path.with_name(path.name + ".inplace")
    shutil.copyfile(path, work)
    return work


def run_phase(name: str, path: Path) -> dict:
    # the child times this checkout's tdoc, installed or not
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    out = subprocess.run([sys.executable, __file__, "--phase", name, str(path)], capture_output=True, text=True,
                         check=True, env=env)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=int, default=200, help="journal size to build (MB)")
    ap.add_argument("--profile", choices=("regular", "dense"), default="regular", help="journal shape")
    ap.add_argument("--keep", type=Path, help="build (or reuse) the journal at this path")
    ap.add_argument("--repeat", type=int, default=1, help="rounds: run every phase N times")
    ap.add_argument("--phases", default="parse,parse-1M,replay,scan,heal,heal-output,heal-inplace",
                    help="comma-separated phases to run")
    ap.add_argument("--growth", help="comma-separated sizes (MB): time scan and heal --output at each")
    ap.add_argument("--in-process", action="store_true",
                    help="parse and scan alternately in one process: per-round ratios, median and spread")
    ap.add_argument("--stages", action="store_true",
                    help="with --in-process: also time the reader alone and the replay alone each round")
    ap.add_argument("--phase", help=argparse.SUPPRESS)
    ap.add_argument("file", nargs="?", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase:
        print(json.dumps(phase(args.phase, args.file)))
        return
    if args.growth:
        growth([int(x) for x in args.growth.split(",")], args.profile, args.repeat)
        return
    path = args.keep or Path(tempfile.gettempdir()) / f"tdoc-bench-{args.profile}-{args.mb}mb.wire.jsonl"
    if not path.exists():
        print(f"building {path} ({args.mb} MB, {args.profile}) ...", file=sys.stderr)
        build(path, args.mb, profile=args.profile)
    if args.in_process:
        in_process(path, max(1, args.repeat), args.stages)
        if not args.keep:
            os.unlink(path)
        return
    size_mb = path.stat().st_size / 1e6
    names = tuple(args.phases.split(","))
    rounds = [{name: run_phase(name, path) for name in names} for _ in range(max(1, args.repeat))]
    results = {name: min((r[name] for r in rounds), key=lambda r: r["seconds"]) for name in names}
    base = results["parse"]["seconds"] if "parse" in results else None
    records = results["parse"]["records"] if "parse" in results else "?"
    print(f"journal: {path} ({size_mb:.1f} MB, {records} records, profile {args.profile}), "
          f"{len(rounds)} round(s), fastest run of each phase:")
    print(f"{'phase':<13}{'seconds':>9}{'cpu s':>8}{'MB/s':>9}{'vs parse':>10}{'peak MB':>10}{'start-up s':>12}  notes")
    for name, r in results.items():
        vs = f"{base / r['seconds']:>10.2f}" if base else f"{'':>10}"
        notes = " ".join(f"{k}={r[k]}" for k in ("edits", "exit", "kept", "replays") if k in r)
        print(f"{name:<13}{r['seconds']:>9.2f}{r['cpu']:>8.2f}{size_mb / r['seconds']:>9.1f}{vs}"
              f"{r['peak_mb']:>10.0f}{r['startup']:>12.2f}  {notes}")

    def ratio(top: str, bottom: str, key: str = "seconds") -> float:
        """Median over rounds of one round's ratio: each round runs every phase back to back,
        so a machine that speeds up or slows down between rounds moves both sides together."""
        return statistics.median(r[top][key] / r[bottom][key] for r in rounds)

    print("per-round medians (the numbers to compare with the targets):")
    if {"parse", "scan"} <= set(names):
        per_round = [r["parse"]["seconds"] / r["scan"]["seconds"] for r in rounds]
        print(f"  scan {statistics.median(per_round):.3f} of parse throughput (min {min(per_round):.3f}, "
              f"max {max(per_round):.3f}; target >= 0.45)")
    if {"parse", "parse-1M", "replay", "scan"} <= set(names):
        print(f"  replay {ratio('parse', 'replay'):.2f} and scan {ratio('parse', 'scan'):.2f} of parse throughput "
              f"(target >= 0.33); against the 1 MiB-buffer parse {ratio('parse-1M', 'replay'):.2f} and "
              f"{ratio('parse-1M', 'scan'):.2f}")
    for heal in ("heal", "heal-output", "heal-inplace"):
        if heal in names and "scan" in names:
            print(f"  {heal}/scan time {ratio(heal, 'scan'):.2f} wall, {ratio(heal, 'scan', 'cpu'):.2f} cpu "
                  "(target <= 2)")
    if not args.keep:
        os.unlink(path)


def growth(sizes: list[int], profile: str, repeat: int) -> None:
    """scan and heal --output at each size: heal seconds per MB stays flat when the heal is linear."""
    print(f"growth, profile {profile}, fastest of {max(1, repeat)} run(s) per size:")
    print(f"{'MB':>6}{'records':>10}{'scan s':>9}{'heal s':>9}{'heal/scan':>11}{'heal s/MB':>11}"
          f"{'scan cpu':>10}{'heal cpu':>10}{'cpu/MB':>8}  notes")
    for mb in sizes:
        path = Path(tempfile.gettempdir()) / f"tdoc-bench-{profile}-{mb}mb.wire.jsonl"
        if not path.exists():
            build(path, mb, profile=profile)
        rounds = [{n: run_phase(n, path) for n in ("scan", "heal-output")} for _ in range(max(1, repeat))]
        scan = min(r["scan"]["seconds"] for r in rounds)
        best = min((r["heal-output"] for r in rounds), key=lambda r: r["seconds"])
        ratio = statistics.median(r["heal-output"]["seconds"] / r["scan"]["seconds"] for r in rounds)
        scan_cpu = min(r["scan"]["cpu"] for r in rounds)
        heal_cpu = min(r["heal-output"]["cpu"] for r in rounds)
        size = path.stat().st_size / 1e6
        with open(path, "rb") as fh:
            records = sum(1 for _ in fh)
        print(f"{size:>6.1f}{records:>10}{scan:>9.2f}{best['seconds']:>9.2f}{ratio:>11.2f}"
              f"{best['seconds'] / size:>11.3f}{scan_cpu:>10.2f}{heal_cpu:>10.2f}{heal_cpu / size:>8.3f}"
              f"  edits={best['edits']} kept={best['kept']} replays={best['replays']}")


if __name__ == "__main__":
    main()

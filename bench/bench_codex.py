"""Benchmark the Codex rollout scan against a plain orjson parse of the same file, and its memory.

    python bench/bench_codex.py [--mb 100] [--repeat 3]

Writes a synthetic rollout of about --mb MB in a temporary directory (turns of a current Codex
Desktop session: repeated session_meta, turn_context, user prompt, reasoning, calls with outputs
of a few bytes to 64 KB, whose `exec_command_end` events repeat the output as stdout, aggregated and
formatted output the way Desktop builds record them, web searches, assistant text, token counts),
then prints:

* the time of a plain `orjson.loads` of every line (the baseline), of the reader alone, and of a
  full scan (reader + reconstruction + every rule), as MB/s and as the ratio scan speed / baseline
  speed (the target is >= 1/3);
* the peak resident memory of a scan in a fresh process, for a file of a quarter of the size and
  for the full file (tdoc keeps item summaries, not text: memory grows with the number of items,
  not with their bytes).

Both for the shape Desktop builds write (outputs repeated in `exec_command_end` events) and for a
dense file of response items only, where the per-item work weighs most.

Times are the best of --repeat runs; everything is measured in this run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transcript_doctor.core import ScanConfig, check_store
from transcript_doctor.stores import open_store
from transcript_doctor.stores.codex.reader import read_rollout

OUTPUT_SIZES = (12, 300, 2_000, 9_000, 64_000)


def _line(kind: str, payload: dict, n: int) -> bytes:
    stamp = f"2026-05-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
    return json.dumps({"timestamp": stamp, "type": kind, "payload": payload}, separators=(",", ":")).encode() + b"\n"


def _turn(t: int, copies: bool) -> list[bytes]:
    out = [
        _line("session_meta", {"id": "019c0000-0000-7000-8000-000000000abc", "cwd": "/work", "cli_version": "0.139.0",
                               "originator": "Codex Desktop", "model_provider": "openai"}, t),
        _line("turn_context", {"turn_id": f"t{t}", "cwd": "/work", "model": "gpt-5.5", "approval_policy": "on-request"}, t),
        _line("event_msg", {"type": "task_started", "turn_id": f"t{t}"}, t),
        _line("response_item", {"type": "message", "role": "user",
                                "content": [{"type": "input_text", "text": f"Step {t}: run the tests and fix what fails."}]}, t),
        _line("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Planning the next step"}],
                                "encrypted_content": "gAAAAAB" + "x" * 800}, t),
    ]
    for k, size in enumerate(OUTPUT_SIZES[: 1 + t % len(OUTPUT_SIZES)]):
        call = f"call_{t}_{k}"
        out.append(_line("response_item", {"type": "function_call", "name": "exec_command",
                                           "arguments": json.dumps({"cmd": f"pytest -q tests/test_{k}.py"}), "call_id": call}, t))
        text = ("ok line of test output\n" * (size // 23 + 1))[:size]
        out.append(_line("response_item", {"type": "function_call_output", "call_id": call, "output": text}, t))
        copied = {"stdout": text, "stderr": "", "aggregated_output": text, "formatted_output": text} if copies else {}
        out.append(_line("event_msg", {"type": "exec_command_end", "call_id": call, "exit_code": 0, **copied}, t))
    if t % 7 == 0:
        out.append(_line("response_item", {"type": "web_search_call", "status": "completed",
                                           "action": {"type": "search", "query": "pytest fixture scope"}}, t))
    out.append(_line("response_item", {"type": "message", "role": "assistant",
                                       "content": [{"type": "output_text", "text": "Fixed; all tests pass."}]}, t))
    out.append(_line("event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": t * 1000}}}, t))
    out.append(_line("event_msg", {"type": "task_complete", "turn_id": f"t{t}"}, t))
    return out


def write_rollout(path: Path, target: int, copies: bool = True) -> tuple[int, int]:
    size = lines = t = 0
    with open(path, "wb") as fh:
        while size < target:
            for raw in _turn(t, copies):
                fh.write(raw)
                size += len(raw)
                lines += 1
            t += 1
    return size, lines


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def orjson_only(path: Path) -> int:
    count = 0
    loads = orjson.loads
    with open(path, "rb", buffering=1 << 20) as fh:
        for line in fh:
            if line.strip():
                loads(line)
                count += 1
    return count


def full_scan(path: Path) -> int:
    config = ScanConfig()
    store = open_store(path, str(path), config.options)
    return len(check_store(store, config))


_PEAK = """
import sys
sys.path.insert(0, sys.argv[2])
from pathlib import Path
from transcript_doctor.core import ScanConfig, check_store
from transcript_doctor.stores import open_store
config = ScanConfig()
store = open_store(Path(sys.argv[1]), sys.argv[1], config.options)
check_store(store, config)
print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])
"""


def peak_kib(path: Path) -> int:
    proc = subprocess.run([sys.executable, "-c", _PEAK, str(path), str(ROOT)], capture_output=True, text=True, check=True)
    return int(proc.stdout.strip())


def measure(tmp: Path, mb: float, repeat: int, copies: bool) -> float:
    label = "Desktop shape (event copies of outputs)" if copies else "items only (no event copies: the dense case)"
    path = tmp / f"rollout-2026-05-01T00-00-00-{int(copies)}.jsonl"
    size, lines = write_rollout(path, int(mb * 1e6), copies)
    base = _best(lambda: orjson_only(path), repeat)
    reader = _best(lambda: read_rollout(path, str(path), keep=False), repeat)
    scan = _best(lambda: full_scan(path), repeat)
    findings = full_scan(path)
    mb = size / 1e6
    print(f"\n{label}: {mb:.1f} MB, {lines:,} lines, {findings} findings")
    print(f"{'':22} {'seconds':>8} {'MB/s':>8} {'speed / orjson':>15}")
    for name, secs in (("orjson parse (base)", base), ("reader", reader), ("full scan", scan)):
        print(f"{name:22} {secs:8.2f} {mb / secs:8.1f} {base / secs:15.2f}")
    print(f"scan speed / plain parse = {base / scan:.2f} (target >= 0.33)")
    small = tmp / "rollout-2026-05-01T00-00-00-quarter.jsonl"
    write_rollout(small, size // 4, copies)
    quarter, full = peak_kib(small), peak_kib(path)
    print(f"peak RSS of a scan: {quarter / 1024:.0f} MiB at {mb / 4:.0f} MB, {full / 1024:.0f} MiB at {mb:.0f} MB "
          f"(growth {(full - quarter) / 1024:.0f} MiB for {mb * 3 / 4:.0f} MB more)")
    path.unlink()
    small.unlink()
    return base / scan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=100.0, help="size of the synthetic rollout")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best is kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tdoc-bench-codex-") as tmp:
        for copies in (True, False):
            measure(Path(tmp), args.mb, args.repeat, copies)


if __name__ == "__main__":
    main()

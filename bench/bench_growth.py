"""Does a scan's time grow with the file, or faster? Poisoned shapes at growing sizes.

    python bench/bench_growth.py [--units 2000] [--factor 4] [--steps 2] [--repeat 2] [--only NAME ...]

The other benches build healthy-looking stores with a sprinkling of poison. A walk that is linear
there can grow with the square of the file when one poisoned shape repeats: a resume that searches
its records for each one it leaves out, a re-link that walks to the root for every broken parent.
This bench builds each shape below at `--units`, then `--factor` times as many, `--steps` times,
scans each file in this process (the best of `--repeat`), and prints the time per unit at each
size and how much it grew from the smallest to the largest. Time per unit that stays flat is
linear work; a growth near the size factor is quadratic. It prints, asserts nothing: a shared
machine moves single timings by a third (docs/performance.md).

Shapes (a unit is one exchange carrying the poison):
  cc-broken-parents   Claude Code, one record in five names a parent no record has (C206)
  cc-api-errors       Claude Code, every prompt answered by a synthetic API error, so one user
                      message gathers every prompt
  cc-concatenated     Claude Code, every tenth line written onto the line before it (F509)
  cc-orphan-calls     Claude Code, a tool call with no result in every exchange (W103)
  cc-blank-blocks     Claude Code, a whitespace text block before thinking in every reply (W102)
  codex-orphan-calls  Codex, a function call with no output in every turn
  codex-bad-arguments Codex, malformed call arguments in every turn (F508)
  opencode-one-session  OpenCode, every message in one session (the bench's poisoned parts)
  hermes-one-session    Hermes, every message in one session
  opencode-sessions, hermes-sessions  the bench database as sessions (9 and 8 messages each),
                        whose poison, and so a heal's fixes, grows with them
  kimi-vacuous-steps    kimi, a step with only an empty thinking part in every turn (W101)
  kimi-orphan-calls     kimi, a tool call with no result and a whitespace reply in every turn
                        (W103, W102): one repair per call, each placed on its journal line
  kimi-legacy-compactions  kimi, vacuous steps and a legacy compaction of all but the last message
                        every fifth turn (C201, W101)
  kimi-kept-compactions kimi, the same with compactions that keep the newest prompts: the runtime
                        keeps as many as fit in 20,000 tokens, so each compaction's work grows
                        until the kept prompts fill that (200 of this shape's 400-byte prompts)
  eve-<stream>          eve, the fixture stream repeated with fresh ids (its findings in every copy)

`--heal` times a dry-run heal (plan and verification) instead of a scan; `--heal --write` a heal
in place (of a copy, unsafe fixes included, backups in the temporary folder). `--calls` counts the
Python and C function calls of each run instead of timing it: a measure of work that a busy
machine does not move. With three sizes or more the JSON also has `marginal_growth`: the calls
each unit added between the last two sizes over those it added between the first two, which a
fixed start-up cost does not blur (1.00 for linear work; `tests/test_growth_work.py` holds every
shape under 1.06). A walk made of C calls alone (`list.index` in a loop) counts one call per walk:
the timing table still sees it.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from tests.claude_code.builders import Session  # noqa: E402
from tests.codex.helpers import envelope, write_rollout  # noqa: E402
from tests.kimi.builders import Journal, text, think  # noqa: E402
from transcript_doctor.core import ScanConfig, scan  # noqa: E402
from transcript_doctor.heal.inuse import holders  # noqa: E402
from transcript_doctor.healing import heal_paths  # noqa: E402
from transcript_doctor.stores import HealOptions  # noqa: E402

Builder = Callable[[Path, int], Path]
_PROC_WALK = holders.__code__


def _claude(path: Path, units: int, unit: Callable[[Session, int], None], concatenate: int = 0) -> Path:
    session = Session()
    for k in range(units):
        session.user(f"question {k}")
        unit(session, k)
    lines = session.lines()
    if concatenate:
        joined: list[str] = []
        for i, line in enumerate(lines):
            if i % concatenate == concatenate - 1 and joined:
                joined[-1] += line
            else:
                joined.append(line)
        lines = joined
    path.write_text("\n".join(lines) + "\n")
    return path


def _broken_parent(session: Session, k: int) -> None:
    reply = session.text(f"msg_{k:06d}", "answer")
    if k % 5 == 4:  # the reply names a record no line holds
        reply["parentUuid"] = f"gone-{k}"


def _api_error(session: Session, k: int) -> None:
    session.text(f"msg_{k:06d}", "API Error: 400", model="<synthetic>", isApiErrorMessage=True)


def _answer(session: Session, k: int) -> None:
    session.text(f"msg_{k:06d}", "answer")


def _orphan_call(session: Session, k: int) -> None:
    session.text(f"msg_{k:06d}", "running it")
    session.call(f"msg_{k:06d}", f"toolu_{k:06d}")


def _blank_block(session: Session, k: int) -> None:
    session.text(f"msg_{k:06d}", "\n\n")
    session.thinking(f"msg_{k:06d}")
    session.text(f"msg_{k:06d}", "answer")


def _codex(path: Path, units: int, poison: Callable[[int], list[dict]]) -> Path:
    lines = [envelope("session_meta", {"id": "019c0000-0000-7000-8000-000000000abc", "cwd": "/w",
                                       "cli_version": "0.139.0", "originator": "codex_cli_rs",
                                       "model_provider": "openai"})]
    for t in range(units):
        lines.append(envelope("turn_context", {"turn_id": f"t{t}", "cwd": "/w", "model": "gpt-5.5"}, t))
        lines.append(envelope("response_item", {"type": "message", "role": "user",
                                                "content": [{"type": "input_text", "text": f"q{t}"}]}, t))
        lines.extend(envelope("response_item", item, t) for item in poison(t))
        lines.append(envelope("response_item", {"type": "message", "role": "assistant",
                                                "content": [{"type": "output_text", "text": "done"}]}, t))
    return write_rollout(path, lines)


def _call(t: int, arguments: str) -> dict:
    return {"type": "function_call", "name": "exec_command", "arguments": arguments, "call_id": f"c{t}"}


def _database(module: str, per_session: int | None = None) -> Builder:
    """A bench database (`bench_opencode` or `bench_hermes`) of `units` messages in one session,
    or (`per_session`) of `units` sessions of that many messages, whose poison (a leaked "(empty)"
    answer every 50th Hermes session, OpenCode's idle and vacuous replies) and so a heal's fixes
    grow with the sessions."""

    def build(path: Path, units: int) -> Path:
        bench = __import__(module)
        sessions, messages = (1, units) if per_session is None else (units, per_session)
        if module == "bench_opencode":
            bench.build(path, sessions * messages, messages)  # (messages, messages per session)
        else:
            bench.build(path, sessions, messages)  # (sessions, messages per session)
        return path

    return build


_PROMPT = " ".join(["please look at the failing test and explain what the parser does here"] * 6)  # 400 bytes


def _kimi(path: Path, units: int, turn: Callable[[Journal, int], int], compact: str = "") -> Path:
    """A journal of `units` turns; with `compact`, a compaction every fifth turn of all the v1
    history but its last message ("legacy", by count) or of all but the newest prompts ("kept")."""
    journal = Journal()
    history = 0  # v1's history length, which a legacy count indexes
    for k in range(units):
        journal.user(f"question {k}: {_PROMPT}")
        history += 1 + turn(journal, k)
        if compact and k % 5 == 4:
            if compact == "legacy":
                journal.legacy_compaction(history - 1, summary=f"summary {k}")
            else:
                journal.kept_compaction(1, summary=f"summary {k}")
            history = 2
    return journal.write(path)


def _kimi_vacuous(journal: Journal, k: int) -> int:
    """A step with an empty thinking part, then a call with its result and an answer: 4 messages."""
    turn = str(k + 1)
    journal.step(f"s{k}-a", [think()], finish="filtered", turn=turn)
    journal.step(f"s{k}-b", [text("reading")], calls=[(f"c{k}", "ok")], finish="tool_use", turn=turn)
    journal.step(f"s{k}-c", [text("done")], turn=turn)
    return 4


def _kimi_orphan(journal: Journal, k: int) -> int:
    """A call that never gets its result, then a reply of whitespace: 2 messages."""
    turn = str(k + 1)
    journal.step(f"s{k}-b", [text("running")], calls=[(f"c{k}", None)], finish="tool_use", turn=turn)
    journal.step(f"s{k}-c", [text(" ")], turn=turn)
    return 2


def _eve(source: Path) -> Builder:
    """The fixture stream `source` repeated `units` times with fresh ids (`bench_eve.synthetic_stream`)."""

    def build(path: Path, units: int) -> Path:
        import bench_eve

        lines = source.read_bytes().splitlines()
        size = sum(len(line) + 1 for line in lines)
        bench_eve.synthetic_stream(lambda n: lines, size * units - size // 2, path)
        return path

    return build


EVE = ROOT / "fixtures" / "eve"

SHAPES: dict[str, tuple[str, Builder]] = {
    "cc-broken-parents": (".jsonl", lambda p, n: _claude(p, n, _broken_parent)),
    "cc-api-errors": (".jsonl", lambda p, n: _claude(p, n, _api_error)),
    "cc-concatenated": (".jsonl", lambda p, n: _claude(p, n, _answer, concatenate=10)),
    "cc-orphan-calls": (".jsonl", lambda p, n: _claude(p, n, _orphan_call)),
    "cc-blank-blocks": (".jsonl", lambda p, n: _claude(p, n, _blank_block)),
    "codex-orphan-calls": (".jsonl", lambda p, n: _codex(p, n, lambda t: [_call(t, "{}")])),
    "codex-bad-arguments": (".jsonl", lambda p, n: _codex(p, n, lambda t: [
        _call(t, "{not json"), {"type": "function_call_output", "call_id": f"c{t}", "output": "ok"}])),
    "opencode-one-session": (".db", _database("bench_opencode")),
    "hermes-one-session": (".db", _database("bench_hermes")),
    "opencode-sessions": (".db", _database("bench_opencode", 9)),
    "hermes-sessions": (".db", _database("bench_hermes", 8)),
    "kimi-vacuous-steps": (".jsonl", lambda p, n: _kimi(p, n, _kimi_vacuous)),
    "kimi-orphan-calls": (".jsonl", lambda p, n: _kimi(p, n, _kimi_orphan)),
    "kimi-legacy-compactions": (".jsonl", lambda p, n: _kimi(p, n, _kimi_vacuous, compact="legacy")),
    "kimi-kept-compactions": (".jsonl", lambda p, n: _kimi(p, n, _kimi_vacuous, compact="kept")),
    "eve-nightly-v27": (".ndjson", _eve(EVE / "nightly-report.v27.ndjson")),
    "eve-digest-v26": (".ndjson", _eve(EVE / "scheduled-digest.v26.ndjson")),
    "eve-support-v26": (".ndjson", _eve(EVE / "support-chat.v26.ndjson")),
}


def seconds(path: Path, repeat: int, heal: bool = False, write: bool = False) -> tuple[float, int]:
    """The best of `repeat` in-process scans (or heals), and the findings of the last (for a heal:
    the findings it fixes)."""
    best, findings = float("inf"), 0
    for _ in range(repeat):
        started = time.perf_counter()
        findings = _run(path, heal, write)
        best = min(best, time.perf_counter() - started)
    return best, findings


def calls(path: Path, heal: bool = False, write: bool = False) -> int:
    """The function calls (Python and C) one scan (or heal) of `path` makes, after a first run
    that pays for imports and caches. The calls of the `/proc` walk that asks who else holds the
    file (`heal.inuse.holders`) are not counted: they follow the machine's process table, not the
    store (40 more processes multiplied a heal's count by four). The cyclic collector is off
    while counting, so no finalizer it might run is counted. What still moves: 11 calls of
    waiting on a database's integrity-check thread, made only when it has not finished yet."""
    _run(path, heal, write)
    gc.collect()
    collecting = gc.isenabled()
    gc.disable()
    count = 0
    walking: object = None  # the frame of the `/proc` walk under way

    def counted(frame: object, event: str, arg: object) -> None:
        nonlocal count, walking
        if walking is not None:
            if event == "return" and frame is walking:
                walking = None
        elif event == "call" and getattr(frame, "f_code", None) is _PROC_WALK:
            walking = frame
        elif event == "call" or event == "c_call":
            count += 1

    sys.setprofile(counted)
    try:
        _run(path, heal, write)
    finally:
        sys.setprofile(None)
        if collecting:
            gc.enable()
    return count


def _run(path: Path, heal: bool, write: bool) -> int:
    """One scan of `path`, or one heal (`write`: in place), and its findings (fixed ones for a heal)."""
    return _heal(path, write) if heal else _scan(path)


def _scan(path: Path) -> int:
    report = scan([str(path)], ScanConfig(jobs=1))
    if report.files[0].error:
        raise SystemExit(f"{path}: {report.files[0].error}")
    return len(report.findings)


def _heal(path: Path, write: bool = False) -> int:
    """A dry-run heal of `path`, or (`write`) a heal in place of a fresh copy of it."""
    if not write:
        return _healed(path, HealOptions())
    copy = path.with_name(f"healed-{path.name}")
    backups = path.with_name("backups")
    backups.mkdir(exist_ok=True)
    shutil.copyfile(path, copy)
    try:
        return _healed(copy, HealOptions(mode="in-place", backup_dir=backups, unsafe_fixes=True))
    finally:
        copy.unlink()
        shutil.rmtree(backups)


def _healed(path: Path, options: HealOptions) -> int:
    results, _ = heal_paths([str(path)], ScanConfig(jobs=1), options)
    if results[0].extra.get("error"):
        raise SystemExit(f"{path}: {results[0].extra['error']}")
    return len(results[0].applied)


def measure(name: str, sizes: list[int], repeat: int, tmp: Path, heal: bool = False, count: bool = False,
            write: bool = False) -> dict:  # fmt: skip
    """Each size of the shape, timed (or its calls counted), and the growth of the per-unit figure
    (and, with three sizes or more, of the marginal one)."""
    suffix, build = SHAPES[name]
    rows = []
    for units in sizes:
        path = build(tmp / f"{name}-{units}{suffix}", units)
        row: dict = {"units": units, "bytes": path.stat().st_size}
        if count:
            row["calls"] = calls(path, heal, write)
            row["per_unit"] = round(row["calls"] / units, 1)
        else:
            taken, row["findings"] = seconds(path, repeat, heal, write)
            row.update(seconds=round(taken, 4), per_unit=round(taken / units * 1e6, 1))
        rows.append(row)
        path.unlink()
    growth = rows[-1]["per_unit"] / rows[0]["per_unit"] if rows[0]["per_unit"] else float("nan")
    result = {"shape": name, "sizes": rows, "per_unit_growth": round(growth, 2)}
    if len(rows) >= 3:
        figure = "calls" if count else "seconds"
        first = (rows[1][figure] - rows[0][figure]) / (rows[1]["units"] - rows[0]["units"])
        last = (rows[-1][figure] - rows[-2][figure]) / (rows[-1]["units"] - rows[-2]["units"])
        result["marginal_growth"] = round(last / first, 3) if first > 0 else float("nan")
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", type=int, default=2000)
    ap.add_argument("--factor", type=int, default=4)
    ap.add_argument("--steps", type=int, default=2, help="how many times the size is multiplied")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--only", nargs="*", choices=sorted(SHAPES), help="these shapes (default: all)")
    ap.add_argument("--json", action="store_true", help="one JSON object per shape instead of the table")
    ap.add_argument("--heal", action="store_true", help="time a dry-run heal instead of a scan")
    ap.add_argument("--write", action="store_true", help="with --heal: heal a copy in place")
    ap.add_argument("--calls", action="store_true", help="count function calls instead of timing")
    args = ap.parse_args(argv)
    sizes = [args.units * args.factor**k for k in range(args.steps + 1)]
    growths = []
    with tempfile.TemporaryDirectory(prefix="tdoc-growth-") as tmp:
        if not args.json:
            unit = "calls" if args.calls else "us"
            print(f"{'shape':24s} " + " ".join(f"{n:>10,d}" for n in sizes) + f"   {unit} per unit; growth")
        for name in args.only or SHAPES:
            result = measure(name, sizes, args.repeat, Path(tmp), args.heal, args.calls, args.write)
            growths.append(result["per_unit_growth"])
            if args.json:
                print(orjson.dumps(result).decode())
            else:
                cells = " ".join(f"{row['per_unit']:>10.1f}" for row in result["sizes"])
                print(f"{name:24s} {cells}   x{result['per_unit_growth']:.2f}", flush=True)
    if not args.json:
        print(f"size grew x{sizes[-1] // sizes[0]}; median per-unit growth x{statistics.median(growths):.2f} "
              "(1: linear; near the size factor: quadratic)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

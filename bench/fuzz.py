"""Fuzz tdoc with mutants of its own fixtures: scan, every reporter, replay and a dry-run heal.

    python bench/fuzz.py --n 20000 [--seed 0] [--timeout 30] [--show 20]

Each mutant is written under the fixture's own name in a scratch directory and driven in this
process through the library, as the CLI would: `scan` (an input whose error says "internal
error" is a crash), each `--format` reporter into a buffer encoded as UTF-8 the way stdout is,
`replay` plus its JSON encoding, a dry-run `heal --diff` with its human and JSON outputs, and a
heal that writes (`--output`), which must not refuse its own plan and, when it kept nothing, must
leave nothing for a second heal (a "heal" failure). A
`TdocError` is an honest refusal; any other exception is a crash; a mutant that takes longer than
`--timeout` seconds is a hang. The last line printed holds the counts.
"""

from __future__ import annotations

import argparse
import io
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.mutate import Fixture, fixtures, mutant
from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.model import TdocError
from transcript_doctor.reporters import REPORTERS
from transcript_doctor.stores import HealOptions, Options
from transcript_doctor.stores.options import KimiOptions


@dataclass(frozen=True)
class Failure:
    kind: str  # "internal" | "reporter" | "heal" | "hang"
    stage: str
    fixture: str
    seed: int
    detail: str

    def __str__(self) -> str:
        return f"{self.kind} in {self.stage}: {self.fixture} seed {self.seed}: {self.detail}"


class _Hang(Exception):
    pass


def _alarm(_signum: int, _frame: Any) -> None:
    raise _Hang()


def schedule(n: int, seed: int) -> Iterator[tuple[Fixture, int]]:
    """`n` (fixture, seed) pairs, spread evenly over the store systems, then their fixtures."""
    groups: dict[str, list[Fixture]] = {}
    for fx in fixtures():
        groups.setdefault(fx.group, []).append(fx)
    names = sorted(groups)
    for i in range(n):
        group = groups[names[i % len(names)]]
        yield group[(i // len(names)) % len(group)], seed + i


def _stdout_text(render: Any, report: Any) -> None:
    buf = io.StringIO()
    render(report, buf)
    buf.getvalue().encode("utf-8")  # what a UTF-8 stdout does with it


def drive(path: Path) -> list[tuple[str, str, str]]:
    """Every stage over one store: a list of (kind, stage, detail) for what failed."""
    from rich.console import Console

    from transcript_doctor.encode import dumps
    from transcript_doctor.healing import heal_paths, render_heal
    from transcript_doctor.replay_view import replay_path

    failed: list[tuple[str, str, str]] = []

    def guard(kind: str, stage: str, fn: Any) -> Any:
        try:
            return fn()
        except TdocError:
            return None
        except _Hang:
            raise
        except Exception as exc:  # noqa: BLE001 - counting crashes is the point
            tb = traceback.extract_tb(exc.__traceback__)[-1]
            failed.append((kind, stage, f"{type(exc).__name__}: {str(exc)[:160]} at {Path(tb.filename).name}:{tb.lineno}"))
            return None

    report = guard("internal", "scan", lambda: scan([str(path)], ScanConfig(jobs=1)))
    if report is not None:
        for fr in report.files:
            if fr.error and "internal error" in fr.error:
                failed.append(("internal", "scan", fr.error[:200]))
        for name, render in REPORTERS.items():
            guard("reporter", f"report:{name}", lambda r=render: _stdout_text(r, report))
    for engine in ("v1", "v2"):
        value = guard("internal", f"replay:{engine}", lambda e=engine: replay_path(str(path), Options(settings=(KimiOptions(e),))))
        if value is not None:
            guard("reporter", "replay:json", lambda v=value: dumps(v, indent=True).encode("utf-8"))
    healed = guard(
        "internal", "heal",
        lambda: heal_paths([str(path)], ScanConfig(), HealOptions(mode="dry-run", diff=True)),
    )
    if healed is not None:
        results, _code = healed
        console = Console(file=io.StringIO(), highlight=False, markup=False, emoji=False)
        for fmt in ("human", "json"):
            guard("reporter", f"heal:{fmt}", lambda f=fmt: _stdout_text(
                lambda _r, out: render_heal(results, f, out, console), None))
    guard("internal", "heal-write", lambda: _check_written_heal(path, failed))
    return failed


def _check_written_heal(path: Path, failed: list[tuple[str, str, str]]) -> None:
    """A heal that writes (`--output`) must not refuse its own plan, and when it kept nothing,
    a heal of what it wrote has nothing left to do."""
    from transcript_doctor.healing import heal_paths

    out = path.with_name("healed-" + path.name)
    results, _code = heal_paths([str(path)], ScanConfig(), HealOptions(mode="output", output=out))
    first = results[0]
    error = first.extra.get("error") or ""
    if "would survive" in error or "internal" in error:
        failed.append(("heal", "heal-write", error[:200]))
    if not first.written:
        return
    # (read as the input's format: a healed store may hold too little for the sniffers to name it)
    again, _code = heal_paths([str(out)], ScanConfig(input_format=first.format or None), HealOptions())
    second = again[0]
    if second.extra.get("error"):
        failed.append(("heal", "heal-again", str(second.extra["error"])[:200]))
    elif second.edits and not first.skipped and not first.kept:
        failed.append(("heal", "heal-again", f"a heal of the healed store makes {len(second.edits)} more edit(s)"))


def run_one(fixture: Fixture, seed: int, workdir: Path, timeout: float) -> list[Failure]:
    target = workdir / fixture.name
    for stale in workdir.iterdir():
        stale.unlink()
    target.write_bytes(mutant(fixture, seed))
    name = fixture.label
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        found = drive(target)
    except _Hang:
        return [Failure("hang", "any", name, seed, f"over {timeout:g} s")]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return [Failure(kind, stage, name, seed, detail) for kind, stage, detail in found]


def campaign(n: int, seed: int = 0, timeout: float = 30.0) -> tuple[list[Failure], Counter[str]]:
    """Run `n` mutants; the failures and the number of mutants per store group."""
    failures: list[Failure] = []
    per_group: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="tdoc-fuzz-") as tmp:
        workdir = Path(tmp)
        for fixture, s in schedule(n, seed):
            per_group[fixture.group] += 1
            failures.extend(run_one(fixture, s, workdir, timeout))
    return failures, per_group


def find_fixture(name: str) -> Fixture:
    """The fixture a failure line names: its path under `fixtures/` (`codex/real/x.jsonl`), or the
    end of one (`real/x.jsonl`, as older runs printed it) when exactly one fixture's path ends so."""
    every = fixtures()
    exact = [fx for fx in every if fx.label == name]
    found = exact or [fx for fx in every if fx.label.endswith("/" + name)]
    if len(found) == 1:
        return found[0]
    if found:
        raise SystemExit(f"{name!r} names {len(found)} fixtures: {', '.join(fx.label for fx in found)}")
    raise SystemExit(f"no fixture {name!r}")


def _repro(specs: list[str], timeout: float) -> int:
    failed = 0
    with tempfile.TemporaryDirectory(prefix="tdoc-fuzz-") as tmp:
        for spec in specs:
            name, _, seed = spec.rpartition(":")
            found = run_one(find_fixture(name), int(seed), Path(tmp), timeout)
            for failure in found:
                print(failure)
            print(f"{spec}: {'ok' if not found else f'{len(found)} failures'}")
            failed += bool(found)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="number of mutants")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds before a mutant counts as a hang")
    parser.add_argument("--show", type=int, default=20, help="failures to print in full")
    parser.add_argument("--repro", nargs="+", metavar="FIXTURE:SEED",
                        help="run only these mutants (as printed in a failure, e.g. kimi-code/golden/c01_x.jsonl:52028)")
    args = parser.parse_args(argv)
    if args.repro:
        return _repro(args.repro, args.timeout)
    started = time.perf_counter()
    failures, per_group = campaign(args.n, args.seed, args.timeout)
    elapsed = time.perf_counter() - started
    for failure in failures[: args.show]:
        print(failure)
    distinct = Counter(f"{f.kind} {f.stage} {f.detail.split(' at ')[-1]}" for f in failures)
    for what, count in distinct.most_common(20):
        print(f"{count:6d}  {what}")
    print("mutants per store: " + ", ".join(f"{g} {c}" for g, c in sorted(per_group.items())))
    kinds = Counter(f.kind for f in failures)
    print(
        f"fuzz: {args.n} mutants in {elapsed:.0f} s (seeds {args.seed}..{args.seed + args.n - 1}): "
        f"{kinds['internal']} internal errors, {kinds['hang']} hangs, {kinds['reporter']} reporter failures, "
        f"{kinds['heal']} heal failures"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Splitting one large database store over worker processes, and putting its results back together.

A runtime's database (`opencode.db`, Hermes `state.db`) holds every session it ever ran, so one
store can be the whole of a scan. Its sessions are independent: the scan may hand each worker a
shard of them (`stores.shard`), and merge the shards' results into the one `FileResult` a scan in
one process gives: the same findings in the same order, the same counts.

Why the order is the same: a store's findings are sorted by `Finding.sort_key`, which begins with
the session. Two findings that compare equal are of one session, so of one shard, where they
keep the order a scan in one process gives them; a stable sort of the shards' findings, taken
shard by shard, keeps it too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

from .model import FileResult, Finding, TdocError
from .stores.shard import Shard

if TYPE_CHECKING:
    from .core import ScanConfig

# A store at least this large is split when the scan picks its own number of workers (-j 0, the
# CLI's default); with -j N > 1 any splittable store is split when the inputs are fewer than N.
SPLIT_MIN_BYTES = 32 * 1024 * 1024
SHARDS_PER_WORKER = 2  # sessions differ in size: more shards than workers even out the load
SHARD_MIN_BYTES = 8 * 1024 * 1024  # and no more shards than this much of the store each: every one reads its list

Task = tuple[Path, str, Shard | None]


def split(inputs: Sequence[tuple[Path, str]], sizes: Sequence[int], config: ScanConfig,
          workers: int) -> tuple[list[Task], list[int]]:  # fmt: skip
    """The scan's tasks, and for each the index of the input it belongs to. An input is split
    into shards when it is a store whose kind splits its sessions and splitting can pay."""
    tasks: list[Task] = []
    owners: list[int] = []
    for i, ((path, display), size) in enumerate(zip(inputs, sizes)):
        count = shard_count(path, display, size, config, workers, len(inputs))
        for index in range(count):
            tasks.append((path, display, Shard(index, count) if count > 1 else None))
            owners.append(i)
    return tasks, owners


def shard_count(path: Path, display: str, size: int, config: ScanConfig, workers: int, inputs: int) -> int:
    """How many shards to scan the input in (1: whole)."""
    return pieces(path, display, size, config, lambda: workers, asked=bool(config.jobs) and inputs < workers)


def pieces(path: Path, display: str, size: int, config: ScanConfig, workers: Callable[[], int],
           asked: bool = False) -> int:  # fmt: skip
    """How many shards a store of `size` bytes is scanned in over `workers()` workers (1: whole): a
    large store of a kind that splits its sessions, or any such store when `asked` (the user's
    -j N exceeds the inputs). Never standard input, one session, or a shard again. `workers` is
    called only for a store that may split (for a fleet scan it asks the cluster)."""
    if display == "-" or config.options.session is not None or config.options.shard is not None:
        return 1
    if not (size >= SPLIT_MIN_BYTES or asked):
        return 1
    count = workers()
    if count < 2 or not _splits(path, config.input_format):
        return 1
    return max(2, min(count * SHARDS_PER_WORKER, size // SHARD_MIN_BYTES))


def _splits(path: Path, forced: str | None) -> bool:
    from .stores import detect

    try:
        return bool(detect(path, forced).splits_sessions)
    except (TdocError, OSError):  # the scan of the input reports it
        return False


@contextmanager
def kept_open(paths: Iterable[Path]) -> Iterator[None]:
    """Each split database (`paths`: those split, repeats allowed) held open by a read-only
    connection of this process while its shards are scanned. The first reader of a WAL database
    whose readers have all gone rebuilds its shared-memory index, and holds a lock meanwhile that
    makes every other reader opening then fail at once (tdoc does not wait: exit 3, "locked"). A
    connection held here keeps the index built, so the workers opening the database together read
    it as one reader would. Holding an idle read connection blocks no writer."""
    from .fixes.sqlite import open_readonly

    held = []
    for path in dict.fromkeys(paths):
        try:
            held.append(open_readonly(path))
        except TdocError:  # the shards meet it too, and report it
            pass
    try:
        yield
    finally:
        for conn in held:
            conn.close()


def byte_shares(sizes: Sequence[int], owners: Sequence[int]) -> list[int]:
    """Each task's part of its input's bytes (for a progress bar): an input's shards share them
    evenly, and add up to them."""
    counts = Counter(owners)
    seen: Counter[int] = Counter()
    out = []
    for owner in owners:
        k, n, size = seen[owner], counts[owner], sizes[owner]
        out.append(size * (k + 1) // n - size * k // n)
        seen[owner] += 1
    return out


def last_of_input(owners: Sequence[int]) -> list[int]:
    """Per task, 1 when it is the last task of its input, else 0: what a progress bar counts as
    a file done (tasks finish in task order, `parallel`)."""
    return [1 if k + 1 == len(owners) or owners[k + 1] != owner else 0 for k, owner in enumerate(owners)]


def merge(results: Sequence[FileResult], owners: Sequence[int], inputs: int) -> list[FileResult]:
    """One result per input, from its tasks' results (in task order)."""
    grouped: list[list[FileResult]] = [[] for _ in range(inputs)]
    for owner, result in zip(owners, results):
        grouped[owner].append(result)
    return [parts[0] if len(parts) == 1 else merge_shards(parts) for parts in grouped]


def merge_shards(parts: Sequence[FileResult]) -> FileResult:
    """The result of a whole store from its shards' results, shard 0 first. A shard that failed
    fails the store: a refusal (exit 3) first, as the store's first reader would have met it."""
    failed = next((r for r in parts if r.refused), None) or next((r for r in parts if r.error), None)
    if failed is not None:
        return FileResult(path=failed.path, format=failed.format, error=failed.error, refused=failed.refused)
    findings = list(chain.from_iterable(r.findings for r in parts))
    findings.sort(key=Finding.sort_key)
    sessions = sum(r.sessions for r in parts)
    identity = next((r.identity for r in parts if r.sessions == 1), (None, None)) if sessions == 1 else (None, None)
    first = parts[0]
    return FileResult(path=first.path, format=first.format, sessions=sessions, records=sum(r.records for r in parts),
                      findings=findings, identity=identity)  # fmt: skip

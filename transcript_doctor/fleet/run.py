"""A fleet scan: list the stores, hand them out in batches, gather one result per store.

The same report as a local scan, whatever runs the tasks: inputs are expanded with the local rules
(`stores.expand_paths`) or listed from object storage (`uris`), every store gets exactly one
`FileResult` (its scan, or the error that stopped it), and the results are sorted by path before
the report is made, as `core.scan` sorts them.

A large local database (an `opencode.db`, a Hermes `state.db`) is split into shards of its
sessions, as a local scan splits it over its worker processes (`transcript_doctor.shards`): each
shard is a task of its own, and the shards' results are merged into the store's one result.

A batch whose worker died (Dask gives up on a task after its allowed failures, `KilledWorker`) is
split and its stores are sent again one by one; a store whose own task still fails becomes that
store's file error. No store is ever dropped and the scan never waits on a lost task.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..model import FileResult, TdocError
from ..shards import byte_shares, kept_open, merge_shards, pieces
from ..stores import expand_paths
from ..stores.shard import Shard
from ..text import excerpt
from .tasks import Item, scan_batch
from .uris import Listing, RemoteStore, is_url, list_argument, list_prefix

if TYPE_CHECKING:
    from ..core import ScanConfig
    from ..parallel import Progress

BATCH_FILES = 64  # many small stores per task: a task costs the scheduler ~1 ms
BATCH_BYTES = 8 * 1024 * 1024  # a store this large (or larger) is a task of its own
WORKER_DIED = "internal error: the worker scanning this store died ({})"


class TaskFuture(Protocol):
    def result(self) -> Any: ...


class Completion(Protocol):
    """Futures in the order they finish; more can be added while iterating."""

    def __iter__(self) -> Iterator[TaskFuture]: ...

    def add(self, future: TaskFuture) -> None: ...


class Executor(Protocol):
    """What runs fleet tasks: a Dask client, or this process (`InlineExecutor`)."""

    def submit(self, fn: Callable[..., Any], *args: Any) -> TaskFuture: ...

    def as_completed(self, futures: Iterable[TaskFuture]) -> Completion: ...

    def workers(self) -> int:
        """How many tasks can run at once (what a large database is split for)."""
        ...


@dataclass
class _Done:
    value: Any = None
    error: BaseException | None = None

    def result(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value


class InlineExecutor:
    """Runs each task when it is submitted, in this process (remote URLs without a cluster)."""

    def submit(self, fn: Callable[..., Any], *args: Any) -> TaskFuture:
        try:
            return _Done(fn(*args))
        except Exception as exc:  # noqa: BLE001 - handed back through result(), as a Dask future would
            return _Done(error=exc)

    def as_completed(self, futures: Iterable[TaskFuture]) -> Completion:
        return _InlineCompletion(deque(futures))

    def workers(self) -> int:
        return 1  # one task at a time: splitting a store would only add work


@dataclass
class _InlineCompletion:
    queue: deque[TaskFuture]

    def __iter__(self) -> Iterator[TaskFuture]:
        while self.queue:
            yield self.queue.popleft()

    def add(self, future: TaskFuture) -> None:
        self.queue.append(future)


@dataclass
class FleetRun:
    """One fleet scan's inputs and state; `scan` is the entry point."""

    executor: Executor
    config: ScanConfig
    storage_options: dict[str, Any] = field(default_factory=dict)
    progress: Progress | None = None

    def scan(self, args: list[str]) -> list[FileResult]:
        items = self.list_items(args)
        if not items:
            raise TdocError("no input files found")
        if self.progress is not None:
            self.progress.start(len(items), sum(i.size for i in items))
        try:
            results = self.scan_items(items)
        finally:
            if self.progress is not None:
                self.progress.stop()
        results.sort(key=lambda fr: fr.path)
        return results

    # ---------------------------------------------------------------- listing

    def list_items(self, args: list[str]) -> list[Item]:
        """Every store named by `args`, local ones expanded as a local scan expands them."""
        if "-" in args:
            raise TdocError("standard input ('-') cannot be scanned on a cluster")
        local = [a for a in args if not is_url(a)]
        items = [Item(display, _size(path), False, True) for path, display in expand_paths(local)] if local else []
        seen: set[str] = set()
        for store, named in self._remote(a for a in args if is_url(a)):
            if store.uri not in seen:
                seen.add(store.uri)
                items.append(Item(store.uri, store.size, True, named))
        return items

    def _remote(self, urls: Iterable[str]) -> Iterator[tuple[RemoteStore, bool]]:
        listings: list[Listing] = [list_argument(url, self.storage_options) for url in urls]
        for listing in listings:
            yield from ((s, listing.named) for s in listing.stores)
        futures = [self.executor.submit(list_prefix, p, self.storage_options)
                   for listing in listings for p in listing.prefixes]
        for future in self.executor.as_completed(futures):
            yield from ((s, False) for s in future.result())  # a listing error is the scan's error

    # ---------------------------------------------------------------- scanning

    def scan_items(self, items: list[Item]) -> list[FileResult]:
        """One result per item (per store): a split database's shards scanned as tasks of their
        own while this process holds the database open (`shards.kept_open`), then merged."""
        tasks = list(split_items(items, self.config, self.executor.workers))
        with kept_open(Path(t.uri) for t in tasks if t.shard is not None):
            done = self._run(tasks)
        return whole_results(done)

    def _run(self, tasks: list[Item]) -> list[tuple[Item, FileResult]]:
        submitted = [(self._submit(batch), batch) for batch in batches(tasks)]
        batch_of = {id(f): batch for f, batch in submitted}
        shards_left = Counter(t.uri for t in tasks if t.shard is not None)
        completion = self.executor.as_completed(f for f, _ in submitted)
        done: list[tuple[Item, FileResult]] = []
        for future in completion:
            batch = batch_of.pop(id(future))
            retries = self._collect(future, batch, done)
            for retry in retries:
                again = self._submit(retry)
                batch_of[id(again)] = retry
                completion.add(again)
            if self.progress is not None and not retries:  # a batch sent again counts as its parts finish
                self.progress.advance(_files_done(batch, shards_left), sum(i.size for i in batch))
        return done

    def _submit(self, batch: list[Item]) -> TaskFuture:
        return self.executor.submit(scan_batch, batch, self.config, self.storage_options)

    def _collect(self, future: TaskFuture, batch: list[Item], done: list[tuple[Item, FileResult]]) -> list[list[Item]]:
        """Store the batch's results beside their items; the batches to send again (a lost batch, split)."""
        try:
            values = future.result()
        except Exception as exc:  # noqa: BLE001 - the task itself was lost (a dying worker, a pickling error)
            if len(batch) > 1:
                return [[item] for item in batch]
            cause = f"{type(exc).__name__}: {excerpt(str(exc))}"
            values = [FileResult(path=batch[0].uri, format=None, error=WORKER_DIED.format(cause))]
        done.extend((item, r) for item, r in zip(batch, values) if r is not None)
        return []


def split_items(items: list[Item], config: ScanConfig, workers: Callable[[], int]) -> Iterator[Item]:
    """The items to scan: each large local database of a kind that splits its sessions as its
    shards (`shards.pieces`: two per worker, none under 8 MB), every other item as it is. A remote
    store is never split: each shard would fetch all of it. `workers` (a question to the
    scheduler) is asked once, and only when some local store is large enough to split."""
    workers = cache(workers)
    for item in items:
        count = 1 if item.remote else pieces(Path(item.uri), item.uri, item.size, config, workers)
        if count == 1:
            yield item
            continue
        for index, share in enumerate(byte_shares([item.size], [0] * count)):
            yield Item(item.uri, share, False, item.named, Shard(index, count))


def whole_results(done: list[tuple[Item, FileResult]]) -> list[FileResult]:
    """One result per store: a split store's shard results merged (shard 0 first), as a local
    split scan merges them (`shards.merge_shards`: a failed shard fails the store)."""
    results: list[FileResult] = []
    parts: dict[str, list[tuple[int, FileResult]]] = {}
    for item, result in done:
        if item.shard is None:
            results.append(result)
        else:
            parts.setdefault(item.uri, []).append((item.shard.index, result))
    for shard_results in parts.values():
        shard_results.sort(key=lambda pair: pair[0])
        results.append(merge_shards([result for _, result in shard_results]))
    return results


def _files_done(batch: list[Item], shards_left: Counter[str]) -> int:
    """The stores a finished batch completes: a split store with its last shard."""
    files = 0
    for item in batch:
        if item.shard is None:
            files += 1
            continue
        shards_left[item.uri] -= 1
        files += shards_left[item.uri] == 0
    return files


def batches(items: list[Item]) -> Iterator[list[Item]]:
    """Consecutive items grouped up to BATCH_FILES stores or BATCH_BYTES; a large store, or a
    shard of one, alone."""
    batch: list[Item] = []
    nbytes = 0
    for item in items:
        large = item.size >= BATCH_BYTES or item.shard is not None
        if batch and (large or len(batch) >= BATCH_FILES or nbytes + item.size > BATCH_BYTES):
            yield batch
            batch, nbytes = [], 0
        if large:
            yield [item]
            continue
        batch.append(item)
        nbytes += item.size
    if batch:
        yield batch


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0

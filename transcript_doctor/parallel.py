"""Scanning many inputs: in this process, or in worker processes with the same result.

Each input is scanned by `scan_one`, which turns any failure of that input (including a bug in a
check) into a `FileResult` with `error` set, so one bad file never stops the others. Workers get
inputs in chunks and return results per chunk; the caller sorts by path, so the report is the same
whatever the number of workers. A worker process that dies takes only its own chunk down: the
inputs it took down are rescanned one at a time, and the one that kills its process is reported.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias

from .model import FileResult, TdocError
from .text import excerpt

if TYPE_CHECKING:  # the pool machinery loads only when a pool is started (start-up, issue 20)
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

    from .core import ScanConfig
    from .shards import Task as ShardTask
    from .stores.shard import Shard

Input = tuple[Path, str]
Task: TypeAlias = "Input | ShardTask"  # an input, or an input with the shard of it to scan (`shards.split`)
Worker = Callable[[list[Task], "ScanConfig"], list[FileResult]]

# With jobs left to tdoc, worker processes are used only when the work can pay for starting them.
AUTO_MIN_FILES = 8
AUTO_MIN_BYTES = 16 * 1024 * 1024
MAX_CHUNK = 32
MAX_WORKER_DEATHS = 3
WORKER_DIED = "internal error: the worker process scanning this input died"
WAIT_SLICE = 0.25  # seconds: the longest a Ctrl-C waits to be seen while workers scan (`_result`)
PARENT_POLL = 1.0  # seconds: how often a worker checks that tdoc, its parent, is still there


class Progress(Protocol):
    """What `scan` tells an observer (a progress bar) about the work."""

    def start(self, files: int, total_bytes: int) -> None: ...

    def advance(self, files: int, nbytes: int) -> None: ...

    def stop(self) -> None: ...


def scan_one(path: Path, display: str, config: ScanConfig, shard: Shard | None = None) -> FileResult:
    """Scan one input (or one shard of its sessions); whatever goes wrong becomes the input's
    `error`, never an exception."""
    from .core import scan_file

    try:
        return scan_file(path, display, config, config.codes(display), shard)
    except TdocError as exc:
        return FileResult(path=display, format=None, error=str(exc), refused=exc.exit_code == 3)
    except Exception as exc:  # a bug in a reader or check: report it against this input only
        error = f"internal error: {type(exc).__name__}: {excerpt(str(exc))}"
        return FileResult(path=display, format=None, error=error)


def known_store(path: Path, display: str) -> bool:
    """Whether some store kind recognises the file; unreadable files count (the scan reports them)."""
    if display == "-":
        return True
    from .stores import recognised

    return recognised(path)


def cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def workers_for(inputs: Sequence[Task], jobs: int | None, sizes: Sequence[int]) -> int:
    """How many worker processes to use (1: scan in this process)."""
    if jobs is not None and jobs < 0:
        raise TdocError(f"-j/--jobs must be 0 (auto) or more, not {jobs}")
    if len(inputs) < 2 or not _main_importable():
        return 1
    if jobs:
        return min(jobs, len(inputs), cpu_count())  # more workers than CPUs only add start-up cost
    if len(inputs) < AUTO_MIN_FILES and sum(sizes) < AUTO_MIN_BYTES:
        return 1
    return min(cpu_count(), len(inputs))


def _main_importable() -> bool:
    """Worker processes re-import the main script by path; one read from stdin cannot be."""
    main = sys.modules.get("__main__")
    if main is None or getattr(getattr(main, "__spec__", None), "name", None):
        return True
    path = getattr(main, "__file__", None)
    return path is None or os.path.exists(path)


def run(inputs: list[Input], config: ScanConfig, progress: Progress | None = None) -> list[FileResult]:
    """Scan every input, in this process or in workers; results in input order. A large
    database store may be split over the workers by its sessions (`shards`)."""
    from .shards import byte_shares, kept_open, last_of_input, merge, split

    sizes = [_size(path, display) for path, display in inputs]
    tasks, owners = split(inputs, sizes, config, _pool_size(config.jobs))
    task_sizes = byte_shares(sizes, owners)
    workers = workers_for(tasks, config.jobs, task_sizes)
    if progress is not None:
        progress.start(len(inputs), sum(sizes))
    try:
        if workers == 1:  # each input whole, in this process
            return _run_serial(inputs, config, sizes, progress)
        with kept_open(path for path, _, shard in tasks if shard is not None):
            results = _run_pool(tasks, config, task_sizes, workers, progress, files=last_of_input(owners))
        return merge(results, owners, len(inputs))
    finally:
        if progress is not None:
            progress.stop()


def _pool_size(jobs: int | None) -> int:
    """The most workers a scan may use: -j N (at most one per CPU), or one per CPU."""
    return min(jobs, cpu_count()) if jobs else cpu_count()


def _run_serial(
    inputs: Sequence[Input], config: ScanConfig, sizes: Sequence[int], progress: Progress | None
) -> list[FileResult]:
    results = []
    for (path, display), size in zip(inputs, sizes):
        results.append(scan_one(path, display, config))
        if progress is not None:
            progress.advance(1, size)
    return results


def _run_pool(
    inputs: Sequence[Task],
    config: ScanConfig,
    sizes: Sequence[int],
    workers: int,
    progress: Progress | None,
    worker: Worker | None = None,
    files: Sequence[int] | None = None,
) -> list[FileResult]:
    """Results in task order. `files`: per task, the files a progress bar counts done with it
    (a shard of a store counts none but the last); default 1 each."""
    worker = worker or _scan_chunk
    work = _Work(sizes, files, progress)
    results: list[FileResult | None] = [None] * len(inputs)
    remote = []
    for i, task in enumerate(inputs):
        if task[1] == "-":  # stdin can only be read here
            results[i] = _scan_task(task, config)
            work.done([i])
        else:
            remote.append(i)
    lost = _pool_round(inputs, remote, config, workers, results, work, worker)
    if lost:
        _isolate(inputs, lost, config, results, work, worker)
    return [r for r in results if r is not None]


class _Work:
    """What a progress bar is told as tasks finish: their bytes, and the files they complete."""

    def __init__(self, sizes: Sequence[int], files: Sequence[int] | None, progress: Progress | None) -> None:
        self.sizes = sizes
        self.files = files
        self.progress = progress

    def done(self, indexes: list[int]) -> None:
        if self.progress is not None:
            files = len(indexes) if self.files is None else sum(self.files[i] for i in indexes)
            self.progress.advance(files, sum(self.sizes[i] for i in indexes))


def _pool_round(
    inputs: Sequence[Task],
    indexes: list[int],
    config: ScanConfig,
    workers: int,
    results: list[FileResult | None],
    work: _Work,
    worker: Worker,
) -> list[int]:
    """Scan `indexes` in a pool of `workers`; returns the indexes lost to a worker that died."""
    from concurrent.futures.process import BrokenProcessPool

    lost: list[int] = []
    with _executor(workers) as pool:
        futures: list[tuple[list[int], Future[list[FileResult]]]] = []
        try:
            for chunk in _chunks(indexes, workers):
                futures.append((chunk, _submit(pool, worker, [inputs[i] for i in chunk], config)))
            for chunk, future in futures:
                try:
                    for i, result in zip(chunk, _result(future)):
                        results[i] = result
                except BrokenProcessPool:
                    lost.extend(chunk)
                    continue
                except Exception as exc:  # the chunk's results could not come back (pickling)
                    error = f"internal error: {type(exc).__name__}: {excerpt(str(exc))}"
                    for i in chunk:
                        results[i] = FileResult(path=inputs[i][1], format=None, error=error)
                work.done(chunk)
        except BaseException:
            _abandon(pool, [f for _, f in futures])
            raise
    return lost


def _isolate(
    inputs: Sequence[Task],
    pending: list[int],
    config: ScanConfig,
    results: list[FileResult | None],
    work: _Work,
    worker: Worker,
) -> None:
    """Rescan inputs a dead worker took down, in order, in one worker at a time.

    With one worker the inputs run one after another, so the first one whose future breaks is the
    one that killed the process: it is reported, and a new worker goes on after it. After
    MAX_WORKER_DEATHS such deaths the rest are scanned in this process.
    """
    from concurrent.futures.process import BrokenProcessPool

    deaths = 0
    while pending and deaths < MAX_WORKER_DEATHS:
        done = 0
        with _executor(1) as pool:
            futures = [_submit(pool, worker, [inputs[i]], config) for i in pending]
            for i, future in zip(pending, futures):
                done += 1
                try:
                    results[i] = _result(future)[0]
                except BrokenProcessPool:
                    results[i] = FileResult(path=inputs[i][1], format=None, error=WORKER_DIED)
                    deaths += 1
                    break
                finally:
                    work.done([i])
        pending = pending[done:]
    for i in pending:  # workers keep dying whatever they scan: the pool, not an input, is at fault
        results[i] = _scan_task(inputs[i], config)
        work.done([i])


def _result(future: Future[list[FileResult]]) -> list[FileResult]:
    """`future.result()`, waited for in slices of WAIT_SLICE seconds.

    Ctrl-C reaches this process as a signal the kernel hands to any of its threads that does not
    block it; when that is one of the pool's threads, a wait without a timeout in the main thread
    is never interrupted, and the Python handler (KeyboardInterrupt) runs only when the main
    thread next runs Python code. Waking every slice bounds that delay.
    """
    from concurrent.futures import wait

    while not wait((future,), timeout=WAIT_SLICE).done:
        pass
    return future.result()


def _submit(
    pool: ProcessPoolExecutor, worker: Worker, chunk: list[Task], config: ScanConfig
) -> Future[list[FileResult]]:
    """Submit a chunk; a pool that broke already gives a future that fails the same way."""
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    try:
        return pool.submit(worker, chunk, config)
    except BrokenProcessPool as exc:
        failed: Future[list[FileResult]] = Future()
        failed.set_exception(exc)
        return failed


def _chunks(indexes: list[int], workers: int) -> Iterator[list[int]]:
    size = max(1, min(MAX_CHUNK, len(indexes) // (workers * 8)))
    for start in range(0, len(indexes), size):
        yield indexes[start : start + size]


def _scan_chunk(chunk: list[Task], config: ScanConfig) -> list[FileResult]:
    return [_scan_task(task, config) for task in chunk]


def _scan_task(task: Task, config: ScanConfig) -> FileResult:
    return scan_one(task[0], task[1], config, task[2] if len(task) > 2 else None)


def _executor(workers: int) -> ProcessPoolExecutor:
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=workers, mp_context=_context(), initializer=_init_worker)


def _context() -> multiprocessing.context.BaseContext:
    """On Linux, `fork` while this process has a single thread (cheapest: workers inherit everything
    loaded). With other threads alive (a progress bar) forking is unsafe: then a fork server that
    has imported tdoc once, or `spawn` where there is none (and on macOS, where fork is unsafe)."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if sys.platform.startswith("linux") and "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(_preload_modules())
        return context
    return multiprocessing.get_context("spawn")


def _preload_modules() -> list[str]:
    """Modules the fork server imports once, so that every worker starts with them loaded."""
    modules = ["transcript_doctor.parallel", "transcript_doctor.core"]
    try:
        from .stores import kinds

        modules += sorted({getattr(kind, "module", type(kind).__module__) for kind in kinds().values()})
    except Exception:  # noqa: S110 - workers report it per input
        pass
    return modules


def _init_worker() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    parent = os.getppid()
    threading.Thread(target=_exit_with_parent, args=(parent,), name="tdoc-parent-watch", daemon=True).start()
    try:
        from .stores import kinds

        kinds()  # discover the store kinds once per worker
    except Exception:  # noqa: S110 - the same error reaches each input through scan_one
        pass


def _exit_with_parent(parent: int) -> None:
    """End this worker once its parent is gone (killed, say, with SIGKILL). An idle worker waits on
    the pool's queue, whose pipe every worker holds open too, so it would never see the end of it
    and would wait for ever."""
    import time

    while os.getppid() == parent:
        time.sleep(PARENT_POLL)
    os._exit(1)


def _abandon(pool: ProcessPoolExecutor, futures: list[Future[list[FileResult]]]) -> None:
    """Interrupted: stop the workers now rather than after their chunk. The futures are left to the
    pool, which fails them as broken; cancelling them first makes its manager thread raise
    InvalidStateError when it then marks them failed (a traceback on Ctrl-C)."""
    processes: dict[int, multiprocessing.Process] = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        process.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


def _size(path: Path, display: str) -> int:
    if display == "-":
        return 0
    try:
        return path.stat().st_size
    except OSError:
        return 0


"""Connecting to a Dask cluster, and running fleet tasks on it.

`--cluster ADDRESS` is a scheduler address (`tcp://host:8786`, `tls://...`) or `local[:N]`: a
`LocalCluster` of N single-threaded worker processes on this machine (default: one per CPU),
closed when the scan ends. Tasks are submitted impure (two identical batches are two tasks) with
Dask's own retries; a task whose workers keep dying ends as `KilledWorker`, which the fleet run
turns into per-store retries and, at worst, per-store errors.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..model import TdocError

RETRIES = 2
CONNECT_TIMEOUT = "20s"
INSTALL_HINT = "fleet scans need the fleet extra: pip install 'transcript-doctor[fleet]'"


def require_fleet() -> None:
    """A clear error when dask/distributed or fsspec are not installed."""
    missing = [name for name in ("distributed", "fsspec") if not _importable(name)]
    if missing:
        raise TdocError(f"{INSTALL_HINT} (missing: {', '.join(missing)})")


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


@dataclass
class DaskExecutor:
    """The fleet `Executor` on a `distributed.Client`."""

    client: Any

    def submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        return self.client.submit(fn, *args, pure=False, retries=RETRIES)

    def as_completed(self, futures: Iterable[Any]) -> Any:
        from distributed import as_completed

        return as_completed(list(futures))

    def workers(self) -> int:
        """The threads of the cluster's workers now (1 when the scheduler cannot say)."""
        try:
            return max(1, sum(self.client.nthreads().values()))
        except Exception:  # noqa: BLE001 - splitting a store is an optimisation, never an error
            return 1

    @property
    def dashboard(self) -> str | None:
        """The dashboard's address, when the scheduler runs one."""
        try:
            info = self.client.scheduler_info()
        except Exception:  # noqa: BLE001 - a dashboard link is a courtesy, never an error
            return None
        if "dashboard" not in (info.get("services") or {}):
            return None
        return str(self.client.dashboard_link)


@contextmanager
def connect(address: str, workers: int | None = None) -> Iterator[DaskExecutor]:
    """A client for `address` (`local[:N]` starts a LocalCluster); closed on exit."""
    require_fleet()
    from distributed import Client

    address = address.strip()
    if address == "local" or address.startswith("local:"):
        with _local_cluster(address) as cluster, Client(cluster) as client:
            yield DaskExecutor(client)
        return
    if "://" not in address:
        raise TdocError(f"--cluster wants a scheduler address (tcp://host:8786) or local[:N], not {address!r}")
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise TdocError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    with client:
        yield DaskExecutor(client)


@contextmanager
def _local_cluster(address: str) -> Iterator[Any]:
    from distributed import LocalCluster

    from ..parallel import cpu_count

    _, _, count = address.partition(":")
    if count and not count.isdigit():
        raise TdocError(f"--cluster local:N wants a number of workers, not {count!r}")
    n = int(count) if count else cpu_count()
    if n < 1:
        raise TdocError("--cluster local:N needs at least one worker")
    with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster:
        yield cluster

"""Fleet scans: the same report for many stores in object storage, on a Dask cluster.

The unit of work is one store, independent of every other, so a fleet scan is a map of the local
scan over store URIs (`run.FleetRun`) on an existing distributed engine (`cluster.connect`), with
fsspec for the storage (`uris`). Needs the `fleet` extra (dask/distributed, fsspec, s3fs); every
other command works without it. See docs/fleet.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..model import TdocError
from .uris import is_url, parse_storage_options

if TYPE_CHECKING:
    from ..core import Report, ScanConfig
    from ..parallel import Progress

__all__ = ["fleet_scan", "is_url", "parse_storage_options"]


def fleet_scan(
    uris: list[str],
    config: ScanConfig,
    *,
    cluster: str | None = None,
    storage_options: dict[str, Any] | None = None,
    progress: Progress | None = None,
    on_dashboard: Any = None,
) -> Report:
    """Scan `uris` (paths, globs, fsspec URLs) on `cluster`, or in this process when None.

    The report equals a local `scan` of the same stores (paths for local inputs, URIs for remote
    ones). `on_dashboard(url)` is called with the Dask dashboard's address when one runs.
    """
    from ..core import Report
    from .cluster import connect, require_fleet
    from .run import FleetRun, InlineExecutor

    config.codes()  # an unknown selector is a usage error before any work starts
    options = storage_options or {}
    if cluster is None:
        if any(is_url(u) for u in uris):
            require_fleet()
        return Report(FleetRun(InlineExecutor(), config, options, progress).scan(uris))
    with connect(cluster) as executor:
        link = executor.dashboard
        if link and on_dashboard is not None:
            on_dashboard(link)
        return Report(FleetRun(executor, config, options, progress).scan(uris))


def reject_remote(paths: list[str], command: str) -> None:
    """`heal` and `replay` work on local files only: a URL is a usage error, said plainly."""
    remote = [p for p in paths if is_url(p)]
    if remote:
        raise TdocError(f"{command} works on local stores only, not {remote[0]}: copy the store here "
                        f"(the scan report names it), then run `tdoc {command}` on the copy")

"""What a fleet worker runs: scan a batch of stores and return one result per store.

Local stores (paths the workers see on a shared file system) are scanned in place. A remote
store is copied to a worker-local temporary directory first (a SQLite database together with its
`-wal` file, so committed transactions still in the log are seen), scanned there under its URI,
and the copy is deleted. The readers seek by byte offset (heal planning, `locate`), which a local
file serves in constant time; a stream from object storage would pay a request per seek. `scan`
never writes to the storage.

Every failure is the store's own `FileResult.error`, never an exception out of the task: a batch
returns as many results as it got stores, in order (None for a store a directory listing found
that no store kind recognises, which a local directory scan leaves out as well).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model import FileResult, TdocError
from ..parallel import known_store, scan_one
from ..stores.shard import Shard
from .uris import describe_storage_error, filesystem

if TYPE_CHECKING:
    from ..core import ScanConfig

SQLITE_HEADER = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Item:
    """One store to scan, or one shard of a large local database's sessions (`shard`; `size` is
    then the shard's share of the store's bytes). `uri` is also how the report names it."""

    uri: str
    size: int
    remote: bool  # fetched through fsspec, not a path the worker can open
    named: bool  # named on the command line: reported even when it is not a store
    shard: Shard | None = None


def scan_batch(items: list[Item], config: ScanConfig, storage_options: dict[str, Any]) -> list[FileResult | None]:
    """Scan each item in turn; the list lines up with `items`."""
    return [scan_item(item, config, storage_options) for item in items]


def scan_item(item: Item, config: ScanConfig, storage_options: dict[str, Any]) -> FileResult | None:
    if not item.remote:
        return _scan_path(Path(item.uri), item, config)
    workdir = Path(tempfile.mkdtemp(prefix="tdoc-fleet-"))
    try:
        try:
            local = fetch(item.uri, workdir, storage_options)
        except TdocError as exc:
            return FileResult(path=item.uri, format=None, error=str(exc))
        result = _scan_path(local, item, config)
        if result is not None and result.error:
            result.error = result.error.replace(str(local), item.uri)
        return result
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _scan_path(path: Path, item: Item, config: ScanConfig) -> FileResult | None:
    wanted = item.named and not config.skip_unrecognised
    if not wanted and not known_store(path, item.uri):
        return None
    return scan_one(path, item.uri, config, item.shard)


def fetch(uri: str, workdir: Path, storage_options: dict[str, Any]) -> Path:
    """Copy the object at `uri` (and a SQLite `-wal` beside it) into `workdir`; the local path."""
    fs, path = filesystem(uri, storage_options)
    name = path.rstrip("/").rsplit("/", 1)[-1] or "store"
    local = workdir / name
    try:
        fs.get_file(path, str(local))
        if _is_sqlite(local) and fs.exists(path + "-wal"):
            fs.get_file(path + "-wal", str(workdir / (name + "-wal")))
    except Exception as exc:  # noqa: BLE001 - the storage library's own error types vary by backend
        raise TdocError(f"{uri}: cannot read: {describe_storage_error(exc)}") from None
    return local


def _is_sqlite(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(len(SQLITE_HEADER)) == SQLITE_HEADER

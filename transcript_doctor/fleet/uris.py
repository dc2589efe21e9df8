"""Store URIs for fleet scans: local paths, globs and fsspec URLs, and how to list them.

A fleet scan names stores the way `tdoc scan` does (files, directories, globs) and also by fsspec
URL (`s3://bucket/prefix/`, `gs://...`, `file:///...`). Local paths are expanded exactly as a
local scan expands them, so both runs see the same inputs. A URL prefix is listed one level on the
client; each sub-prefix below it is a listing task a worker runs (`list_prefix`), so listing a
bucket of 10^5 stores is spread over the cluster like the scan itself.

Which files under a prefix count: the names a local directory walk looks at (see
`stores.is_candidate_name`); whether a file really is a store is decided by content on the worker.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..model import TdocError
from ..stores import is_candidate_name

# scheme://... ; a single letter before ':' is a Windows drive, not a scheme.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")
_GLOB_CHARS = ("*", "?", "[")


@dataclass(frozen=True)
class RemoteStore:
    """One store found under a URL: where it is and how big it is."""

    uri: str
    size: int


@dataclass(frozen=True)
class Listing:
    """What the client learnt from one URL argument: stores found, and prefixes left to list."""

    stores: tuple[RemoteStore, ...]
    prefixes: tuple[str, ...]
    named: bool  # the argument named one object: report it even when it is not a store


def is_url(arg: str) -> bool:
    return bool(_URL.match(arg))


def parse_storage_options(pairs: list[str] | None) -> dict[str, Any]:
    """`KEY=VALUE` pairs -> fsspec storage options; `a.b=c` nests (`client_kwargs.region_name=x`).

    Values `true`/`false`/`null` and integers are converted; anything else stays a string.
    """
    options: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise TdocError(f"--storage-option wants KEY=VALUE, not {pair!r}")
        target = options
        *parents, leaf = key.strip().split(".")
        for parent in parents:
            target = target.setdefault(parent, {})
            if not isinstance(target, dict):
                raise TdocError(f"--storage-option {key!r} nests under a key that already has a value")
        target[leaf] = _convert(value)
    return options


def _convert(value: str) -> Any:
    lowered = value.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none"):
        return None
    if re.fullmatch(r"-?\d{1,18}", value):
        return int(value)
    return value


def filesystem(url: str, storage_options: dict[str, Any]) -> tuple[Any, str]:
    """The fsspec filesystem and the path inside it for `url`; clear errors for what goes wrong."""
    import fsspec

    try:
        return fsspec.core.url_to_fs(url, **storage_options)
    except ImportError as exc:
        raise TdocError(f"{url}: this storage needs a package that is not installed: {exc}") from None
    except ValueError as exc:  # unknown protocol
        raise TdocError(f"{url}: {exc}") from None


def list_argument(url: str, storage_options: dict[str, Any]) -> Listing:
    """One level of `url` on the client: objects, glob matches, or the sub-prefixes to hand out."""
    fs, path = filesystem(url, storage_options)
    with storage_errors(url):
        if any(ch in path for ch in _GLOB_CHARS):
            return _glob(fs, path)
        info = _info(fs, path)
    if info is None:
        raise TdocError(f"{url}: no such object or prefix")
    if info.get("type") != "directory":
        return Listing((RemoteStore(fs.unstrip_protocol(path), int(info.get("size") or 0)),), (), True)
    with storage_errors(url):
        return _children(fs, path)


def _info(fs: Any, path: str) -> dict[str, Any] | None:
    try:
        return fs.info(path)
    except FileNotFoundError:
        return None


def _glob(fs: Any, pattern: str) -> Listing:
    stores, prefixes = [], []
    for name, info in sorted(fs.glob(pattern, detail=True).items()):
        if info.get("type") == "directory":
            prefixes.append(fs.unstrip_protocol(name))
        else:
            stores.append(RemoteStore(fs.unstrip_protocol(name), int(info.get("size") or 0)))
    return Listing(tuple(stores), tuple(prefixes), True)


def _children(fs: Any, path: str) -> Listing:
    stores, prefixes = [], []
    for info in sorted(fs.ls(path, detail=True), key=lambda i: i["name"]):
        name = info["name"]
        if info.get("type") == "directory":
            if name.rstrip("/").rsplit("/", 1)[-1] not in _SKIP_DIRS:
                prefixes.append(fs.unstrip_protocol(name))
        elif is_candidate_name(name.rsplit("/", 1)[-1]):
            stores.append(RemoteStore(fs.unstrip_protocol(name), int(info.get("size") or 0)))
    return Listing(tuple(stores), tuple(prefixes), False)


_SKIP_DIRS = {".git", "node_modules", "__pycache__", "blobs"}


def list_prefix(prefix: str, storage_options: dict[str, Any]) -> list[RemoteStore]:
    """Every candidate store below `prefix`, recursively (runs on a worker)."""
    fs, path = filesystem(prefix, storage_options)
    found = []
    with storage_errors(prefix):
        for name, info in sorted(fs.find(path, detail=True).items()):
            parts = name.split("/")
            if any(p in _SKIP_DIRS for p in parts[:-1]) or not is_candidate_name(parts[-1]):
                continue
            found.append(RemoteStore(fs.unstrip_protocol(name), int(info.get("size") or 0)))
    return found


@contextmanager
def storage_errors(url: str) -> Iterator[None]:
    """Turns a storage library's failure into a TdocError naming the URL (credentials, access)."""
    try:
        yield
    except TdocError:
        raise
    except Exception as exc:  # noqa: BLE001 - each storage backend has its own error types
        raise TdocError(f"{url}: {describe_storage_error(exc)}") from None


def describe_storage_error(exc: BaseException) -> str:
    """One line for a storage error; missing credentials get advice, not a traceback."""
    name = type(exc).__name__
    text = str(exc).splitlines()[0][:300] if str(exc) else ""
    if name in ("NoCredentialsError", "PartialCredentialsError") or "credentials" in text.lower():
        return ("no usable credentials for this storage (set them in the environment, e.g. "
                "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or pass --storage-option key=... "
                "--storage-option secret=...)")
    if isinstance(exc, PermissionError):
        return f"access denied: {text or name}"
    if isinstance(exc, FileNotFoundError):
        return f"not found: {text or name}"
    return f"storage error: {name}: {text}" if text else f"storage error: {name}"

"""Store kinds, content-based format detection and input path expansion."""

from __future__ import annotations

import glob
import importlib
import os
import pkgutil
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from ..model import TdocError
from .base import HealOptions, HealResult, Options, Store, StoreKind

__all__ = [
    "HealOptions",
    "HealResult",
    "Options",
    "Store",
    "StoreKind",
    "detect",
    "expand_paths",
    "is_candidate_name",
    "kinds",
    "open_store",
    "register",
]

HEAD_BYTES = 65536
# Names tdoc looks at when walking a directory; detection still goes by content.
_CANDIDATE_SUFFIXES = {".jsonl", ".ndjson", ".json", ".db", ".sqlite", ".sqlite3", ".zip"}
_SKIP_DIRS = {".git", "node_modules", "__pycache__", "blobs"}


_REGISTERED: dict[str, StoreKind] = {}


@lru_cache(maxsize=1)
def _packaged() -> dict[str, StoreKind]:
    """The kinds of the store packages shipped with tdoc (each subpackage's `KINDS`)."""
    found: dict[str, StoreKind] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for kind in getattr(module, "KINDS", ()):
            found[kind.format] = kind
    return found


def kinds() -> dict[str, StoreKind]:
    """Every store kind, keyed by format id, in a stable order: shipped ones, then registered."""
    return {**_packaged(), **_REGISTERED}


def register(kind: StoreKind) -> StoreKind:
    """Add a store kind from outside the package (a plug-in, a test); detection tries it last."""
    _REGISTERED[kind.format] = kind
    return kind


def read_head(path: Path) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(HEAD_BYTES)
    except IsADirectoryError:
        raise TdocError(f"{path}: is a directory") from None
    except OSError as exc:
        raise TdocError(f"{path}: cannot read: {exc.strerror or exc}") from None


def detect(path: Path, forced: str | None = None) -> StoreKind:
    """The kind of store at `path`, from its content (or `forced`, a format id)."""
    all_kinds = kinds()
    if forced:
        if forced not in all_kinds:
            raise TdocError(f"unknown input format {forced!r}; known: {', '.join(all_kinds)}")
        return all_kinds[forced]
    head = read_head(path)
    for kind in all_kinds.values():
        if kind.sniff(path, head):
            return kind
    if not head.strip():
        raise TdocError(f"{path}: empty file, no store to read")
    raise TdocError(f"{path}: not a store tdoc recognises (known formats: {', '.join(all_kinds)})")


def open_store(path: Path, display: str, options: Options, forced: str | None = None) -> Store:
    return detect(path, forced).open(path, display, options)


def expand_paths(args: list[str]) -> Iterator[tuple[Path, str]]:
    """Files named, found under directories, or matched by globs; (path, display) pairs.

    A name that matches nothing is passed through, so the caller reports it as unreadable.
    """
    seen: set[str] = set()
    for arg in args:
        for path in _expand_one(arg):
            key = os.path.realpath(path)
            if key in seen:
                continue
            seen.add(key)
            yield path, "-" if arg == "-" else str(path)


def _expand_one(arg: str) -> Iterator[Path]:
    if arg == "-":
        yield _spool_stdin()
        return
    path = Path(arg)
    if path.is_dir():
        yield from _walk(path)
    elif not path.exists() and glob.has_magic(arg):
        matches = sorted(glob.glob(arg, recursive=True))
        for match in matches:
            m = Path(match)
            yield from (_walk(m) if m.is_dir() else [m])
    else:
        yield path


_STDIN: list[Path] = []


def _spool_stdin() -> Path:
    """Standard input copied to a temporary file (removed at exit), so it reads like any store."""
    import atexit
    import shutil
    import sys
    import tempfile

    if not _STDIN:
        fd, name = tempfile.mkstemp(prefix="tdoc-stdin-", suffix=".jsonl")
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out)
        _STDIN.append(Path(name))
        atexit.register(lambda: _STDIN[0].unlink(missing_ok=True))
    return _STDIN[0]


def _walk(root: Path) -> Iterator[Path]:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            p = Path(dirpath, name)
            if is_candidate_name(name) and _recognised(p):
                yield p


def is_candidate_name(name: str) -> bool:
    """Whether a directory walk looks at a file of this name (detection still goes by content)."""
    return Path(name).suffix.lower() in _CANDIDATE_SUFFIXES and ".tdoc-backup" not in name


def _recognised(path: Path) -> bool:
    try:
        head = read_head(path)
    except TdocError:
        return True  # let the scan report it
    return any(kind.sniff(path, head) for kind in kinds().values())

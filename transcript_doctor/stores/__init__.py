"""Store kinds, content-based format detection and input path expansion."""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from ..errors import cause, is_regular, open_regular, os_failure, require_regular
from ..fixes.sqlite import SQLITE_MAGIC, probe
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
    "recognised",
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
    """The first bytes of a regular file; a FIFO, device or directory is refused, never opened."""
    with open_regular(path) as fh:
        try:
            return fh.read(HEAD_BYTES)
        except OSError as exc:
            raise os_failure(path, exc) from None


def detect(path: Path, forced: str | None = None) -> StoreKind:
    """The kind of store at `path`, from its content (or `forced`, a format id)."""
    all_kinds = kinds()
    if forced:
        if forced not in all_kinds:
            raise TdocError(f"unknown input format {forced!r}; known: {', '.join(all_kinds)}")
        return all_kinds[forced]
    head = read_head(path)
    if head.startswith(SQLITE_MAGIC):
        probe(path)  # a locked (exit 3) or damaged database says so, instead of "not a store"
    for kind in all_kinds.values():
        if kind.sniff(path, head):
            return kind
    if head.startswith(SQLITE_MAGIC):  # a sniffer that could not open it (locked since, say) said no
        probe(path)  # so a database that cannot be read now says why, instead of "not a store"
    if not head.strip():
        raise TdocError(f"{path}: empty file, no store to read")
    named = runtime_named(path.name)
    if named is not None:  # what the runtime called its store, but damaged where detection looks
        raise TdocError(f"{path}: named like a {named} store, but its first records are not one (damaged at its "
                        f"start?); `--input-format {named}` reads it as one")
    raise TdocError(f"{path}: not a store tdoc recognises (known formats: {', '.join(all_kinds)})")


def open_store(path: Path, display: str, options: Options, forced: str | None = None) -> Store:
    """The store at `path`, opened. Every failure is a `TdocError` naming `display` and the cause."""
    if isinstance(path, Unreadable):
        raise TdocError(f"{display}: {path.error}")
    require_regular(path, display)
    try:
        return detect(path, forced).open(path, display, options)
    except OSError as exc:  # a reader met the file system (vanished, permissions, I/O)
        raise os_failure(display, exc) from None
    except TdocError as exc:  # named as the user named it: "-", not the file standard input was spooled to
        shown = str(path)
        if shown == display or shown not in str(exc):
            raise
        raise type(exc)(str(exc).replace(shown, display), exc.exit_code) from None


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
    elif not path.exists() and _has_magic(arg):
        import glob

        matches = sorted(glob.glob(arg, recursive=True))
        for match in matches:
            m = Path(match)
            yield from (_walk(m) if m.is_dir() else [m])
    else:
        yield path


def _has_magic(arg: str) -> bool:
    """`glob.has_magic`: a name with a wildcard (`*`, `?`, `[`); glob loads only for such a name."""
    if not any(c in arg for c in "*?["):
        return False
    import glob

    return glob.has_magic(arg)


_STDIN: list[tuple[object, Path]] = []  # (the standard input stream spooled, its file)


def _spool_stdin() -> Path:
    """Standard input copied to a temporary file (removed at exit), so it reads like any store.

    One file per stream: `-` named twice reads the same copy, and a caller that replaced
    `sys.stdin` since (a test runner, an embedding program) gets a copy of the new stream, never
    the content an earlier one spooled (whose file is removed then)."""
    import atexit
    import shutil
    import sys
    import tempfile

    stream = sys.stdin
    if _STDIN and _STDIN[0][0] is stream:
        return _STDIN[0][1]
    fd, name = tempfile.mkstemp(prefix="tdoc-stdin-", suffix=".jsonl")
    with os.fdopen(fd, "wb") as out:
        shutil.copyfileobj(stream.buffer, out)
    if _STDIN:
        _STDIN.pop()[1].unlink(missing_ok=True)
    else:
        atexit.register(_remove_spool)
    _STDIN.append((stream, Path(name)))
    return Path(name)


def _remove_spool() -> None:
    if _STDIN:
        _STDIN[0][1].unlink(missing_ok=True)


class Unreadable(type(Path())):  # type: ignore[misc]
    """A directory the walk could not read: passed on like a file, reported with its `error`."""

    error = ""

    @classmethod
    def at(cls, path: str, error: str) -> Unreadable:
        entry = cls(path)
        entry.error = error
        return entry

    def __reduce__(self) -> tuple[object, tuple[str, str]]:  # the error travels to worker processes
        return (Unreadable.at, (str(self), self.error))


def _walk(root: Path) -> Iterator[Path]:
    """Candidate store files under `root`: regular files a store kind recognises, files that
    cannot be read, databases that cannot be opened; unreadable subdirectories as errors.
    FIFOs, devices and sockets are skipped (opening one could block forever)."""
    failures: list[OSError] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=failures.append):
        while failures:
            exc = failures.pop()
            yield Unreadable.at(exc.filename or dirpath, f"cannot read the directory: {cause(exc)}")
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            p = Path(dirpath, name)
            if is_candidate_name(name) and recognised(p, walking=True):
                yield p
    while failures:
        exc = failures.pop()
        yield Unreadable.at(exc.filename or str(root), f"cannot read the directory: {cause(exc)}")


def is_candidate_name(name: str) -> bool:
    """Whether a directory walk looks at a file of this name (detection still goes by content)."""
    return Path(name).suffix.lower() in _CANDIDATE_SUFFIXES and ".tdoc-backup" not in name


def recognised(path: Path, walking: bool = False) -> bool:
    """Whether the scan should take `path`: a store some kind recognises, or a file it must
    report (unreadable, a database that cannot be opened, or a file with the name a runtime gives
    its store whose content no kind recognises: a journal damaged at its start is reported, not
    skipped). A walk skips non-regular files."""
    if walking and not is_regular(path) and os.path.exists(path):
        return False
    try:
        head = read_head(path)
        if head.startswith(SQLITE_MAGIC):
            probe(path)
    except TdocError:
        return True  # let the scan report it
    return any(kind.sniff(path, head) for kind in kinds().values()) or runtime_named(path.name) is not None


def runtime_named(name: str) -> str | None:
    """The format of the store a runtime keeps under this file name (`wire.jsonl`, `state.db`,
    `opencode.db`, `rollout-*.jsonl`), else None. Names only point: content decides the format."""
    if name == "wire.jsonl":
        return "kimi-wire"
    if name == "state.db":
        return "hermes-db"
    if name == "opencode.db" or (name.startswith("opencode-") and name.endswith(".db")):
        return "opencode-db"
    if name.startswith("rollout-") and name.endswith(".jsonl"):
        return "codex-rollout"
    return None

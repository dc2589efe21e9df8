"""What every store kind provides: detection, loading, replay, checks and healing.

A store kind lives in its own subpackage of `transcript_doctor.stores` and exposes `KIND`, a
`StoreKind`. Kinds are discovered by package scan, so adding one touches no shared file.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..conversation import Conversation
from ..model import Finding

if TYPE_CHECKING:
    from ..heal.plan import HealPlan

T = TypeVar("T")


@dataclass
class Options:
    """Everything `scan`, `replay` and `heal` pass down to a store.

    `settings` holds store-specific option objects (a kimi `KimiOptions`, the SQLite stores'
    `SqliteOptions`, ...), each defined by the store package that reads it; a store asks for its
    own with `options.get(KimiOptions)` and gets the defaults when none was given.
    """

    session: str | None = None
    full_replay: bool = False  # keep everything needed to print a replay (not just to check)
    fingerprint: bool = False  # remember what was read (size, mtime, hash) to detect later changes
    # Read for a heal that writes: the store may skip work whose only use is a finding no heal can
    # act on (the heal reports the findings of the healed content instead).
    for_writing_heal: bool = False
    settings: tuple[Any, ...] = ()

    def get(self, kind: type[T]) -> T:
        """The store-specific options of type `kind` given in `settings`, else its defaults."""
        for setting in self.settings:
            if isinstance(setting, kind):
                return setting
        return kind()


@dataclass
class HealOptions:
    """How a heal runs: dry run, in place or to an output file; backups; which fixes."""

    mode: str = "dry-run"  # dry-run | in-place | output
    output: Path | None = None
    diff: bool = False
    unsafe_fixes: bool = False
    backup_dir: Path | None = None
    backup: bool = True
    force: bool = False  # rewrite a file with other hard links or another writer
    settings: tuple[Any, ...] = ()  # store-specific heal options (stores/options.py), as in `Options`
    spool: Any = None  # set by the heal pipeline when writing: a heal.plan.Spool (see LineWrite.spooled)

    def __post_init__(self) -> None:
        # library callers pass paths as strings; the pipeline works with Path objects
        if isinstance(self.output, str):
            self.output = Path(self.output)
        if isinstance(self.backup_dir, str):
            self.backup_dir = Path(self.backup_dir)

    def get(self, kind: type[T]) -> T:
        """The store-specific heal options of type `kind` in `settings`, else its defaults."""
        for setting in self.settings:
            if isinstance(setting, kind):
                return setting
        return kind()


@dataclass(repr=False, eq=False)
class HealResult:
    """What a heal did (or would do) to one store."""

    path: str
    format: str
    changed: bool = False
    written: bool = False
    applied: list[Finding] = field(default_factory=list)  # findings whose fix was applied
    skipped: list[dict[str, Any]] = field(default_factory=list)  # {code, line/row, reason}
    edits: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    backup: str | None = None
    output: str | None = None
    diff: str | None = None  # unified diff (JSONL) or the SQL plan (databases)
    remaining: list[Finding] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # store-specific details (kimi: removed steps)
    needs_unsafe: int = 0  # fixes left alone because they need --unsafe-fixes
    kept: set[str] = field(default_factory=set)  # subjects whose fix the store checked and refused

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "format": self.format,
            "changed": self.changed,
            "written": self.written,
            "output": self.output,
            "backup": self.backup,
            "fixed": [f.as_dict() for f in self.applied],
            "skipped": self.skipped,
            "edits": self.edits,
            "warnings": self.warnings,
            "remaining": [f.as_dict() for f in self.remaining],
            "details": self.extra,
        }


class Store(ABC):
    """One loaded store (a file or database), ready for the rules."""

    format: str = ""
    system: str = ""

    def __init__(self, path: Path, display: str) -> None:
        self.path = path
        self.display = display  # the path as the user named it, used in findings

    @property
    @abstractmethod
    def session_count(self) -> int: ...

    @property
    @abstractmethod
    def record_count(self) -> int: ...

    @abstractmethod
    def replay(self, options: Options) -> Any:
        """The JSON-able replay object(s) `tdoc replay` prints (`schemas/replay.schema.json`)."""

    def conversations(self, options: Options) -> Iterator[Conversation]:
        """Each session's request as the runtime would send it, for the shared rules.

        A store that feeds the shared conversation model overrides this; the rule engine runs
        W101-W109, F507 and F508 over what it yields (see `transcript_doctor.conversation`).
        """
        return iter(())

    def native_findings(self, options: Options, codes: frozenset[str]) -> Iterator[Finding]:
        """Findings only this store kind can see (compaction, sentinels, integrity, ...).

        `codes` is the selected rule codes: a store skips the work of rules not in it.
        """
        return iter(())

    def locate(self, position: int, session: str | None = None) -> dict[str, Any] | None:
        """Map a provider-request index (a 400's `position N` / `messages.N`) back to its record.

        Returns {"session", "line", "end_line", "row", "table", "role"} for the message at that
        index of the projection the runtime would send, or None when there is no such message.
        """
        return None

    def session_activity(self) -> dict[str, tuple[float | None, int]]:
        """Session id -> (last activity in Unix seconds or None, records) for `tdoc sessions`.

        Stores that hold many sessions (databases) override this; a store of one session returns
        {} and is described by its file's time and size.
        """
        return {}

    def plan_heal(self, findings: list[Finding], options: HealOptions) -> HealPlan:
        """The plan that fixes `findings` (all allowed under `options`): see docs/heal.md.

        A store only plans; the heal pipeline previews, backs up, writes and re-verifies."""
        from ..model import TdocError

        raise TdocError(f"{self.display}: heal is not supported for {self.format} stores")

    def close(self) -> None:  # noqa: B027  (a hook: most stores hold no handle)
        """Release any handle the store holds."""


class StoreKind(ABC):
    format: str = ""
    system: str = ""
    jsonl: bool = False  # line-oriented text format (stdin '-' allowed)

    @abstractmethod
    def sniff(self, path: Path, head: bytes) -> bool:
        """Whether the file at `path` (whose first bytes are `head`) is this kind of store."""

    @abstractmethod
    def open(self, path: Path, display: str, options: Options) -> Store: ...

"""What every store kind provides: detection, loading, replay, checks and healing.

A store kind lives in its own subpackage of `transcript_doctor.stores` and exposes `KIND`, a
`StoreKind`. Kinds are discovered by package scan, so adding one touches no shared file.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..conversation import Conversation
from ..model import Finding, TdocError
from ..value_types import Value
from .shard import Shard

if TYPE_CHECKING:
    from ..heal.plan import HealPlan

T = TypeVar("T")


class Options(Value):
    """Everything `scan`, `replay` and `heal` pass down to a store.

    `settings` holds store-specific option objects (a kimi `KimiOptions`, the SQLite stores'
    `SqliteOptions`, ...), each defined by the store package that reads it; a store asks for its
    own with `options.get(KimiOptions)` and gets the defaults when none was given.

    `shard`: read only that share of the store's sessions (`stores.shard`), set by a scan that
    splits one store over worker processes, and only for a kind whose `splits_sessions` is true.
    """

    __slots__ = ("session", "full_replay", "fingerprint", "for_writing_heal", "settings", "shard")

    def __init__(self, session: str | None = None, full_replay: bool = False, fingerprint: bool = False,
                 for_writing_heal: bool = False, settings: tuple[Any, ...] = (), shard: Shard | None = None) -> None:  # fmt: skip
        self.session = session
        self.full_replay = full_replay  # keep everything needed to print a replay (not just to check)
        self.fingerprint = fingerprint  # remember what was read (size, mtime, hash) to detect later changes
        # Read for a heal that writes: the store may skip work whose only use is a finding no heal
        # can act on (the heal reports the findings of the healed content instead).
        self.for_writing_heal = for_writing_heal
        self.settings = settings
        self.shard = shard

    def get(self, kind: type[T]) -> T:
        """The store-specific options of type `kind` given in `settings`, else its defaults."""
        for setting in self.settings:
            if isinstance(setting, kind):
                return setting
        return kind()


class HealOptions(Value):
    """How a heal runs: dry run, in place or to an output file; backups; which fixes."""

    __slots__ = ("mode", "output", "diff", "unsafe_fixes", "backup_dir", "backup", "force", "settings", "spool")

    def __init__(self, mode: str = "dry-run", output: Path | str | None = None, diff: bool = False,
                 unsafe_fixes: bool = False, backup_dir: Path | str | None = None, backup: bool = True,
                 force: bool = False, settings: tuple[Any, ...] = (), spool: Any = None) -> None:  # fmt: skip
        self.mode = mode  # dry-run | in-place | output
        # library callers pass paths as strings; the pipeline works with Path objects
        self.output = Path(output) if isinstance(output, str) else output
        self.diff = diff
        self.unsafe_fixes = unsafe_fixes
        self.backup_dir = Path(backup_dir) if isinstance(backup_dir, str) else backup_dir
        self.backup = backup
        self.force = force  # rewrite a file with other hard links or another writer
        self.settings = settings  # store-specific heal options (stores/options.py), as in `Options`
        self.spool = spool  # set by the heal pipeline when writing: a heal.plan.Spool (see LineWrite.spooled)

    def get(self, kind: type[T]) -> T:
        """The store-specific heal options of type `kind` in `settings`, else its defaults."""
        for setting in self.settings:
            if isinstance(setting, kind):
                return setting
        return kind()


class HealResult:
    """What a heal did (or would do) to one store."""

    __slots__ = ("path", "format", "changed", "written", "applied", "skipped", "edits", "warnings", "backup",
                 "output", "diff", "remaining", "extra", "needs_unsafe", "kept")  # fmt: skip

    def __init__(self, path: str, format: str, changed: bool = False, written: bool = False,
                 applied: list[Finding] | None = None, skipped: list[dict[str, Any]] | None = None,
                 edits: list[dict[str, Any]] | None = None, warnings: list[str] | None = None,
                 backup: str | None = None, output: str | None = None, diff: str | None = None,
                 remaining: list[Finding] | None = None, extra: dict[str, Any] | None = None,
                 needs_unsafe: int = 0, kept: set[str] | None = None) -> None:  # fmt: skip
        self.path = path
        self.format = format
        self.changed = changed
        self.written = written
        self.applied: list[Finding] = [] if applied is None else applied  # findings whose fix was applied
        self.skipped: list[dict[str, Any]] = [] if skipped is None else skipped  # {code, line/row, reason}
        self.edits: list[dict[str, Any]] = [] if edits is None else edits
        self.warnings: list[str] = [] if warnings is None else warnings
        self.backup = backup
        self.output = output
        self.diff = diff  # unified diff (JSONL) or the SQL plan (databases)
        self.remaining: list[Finding] = [] if remaining is None else remaining
        self.extra: dict[str, Any] = {} if extra is None else extra  # store-specific details (kimi: removed steps)
        self.needs_unsafe = needs_unsafe  # fixes left alone because they need --unsafe-fixes
        self.kept: set[str] = set() if kept is None else kept  # subjects whose fix the store checked and refused

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

    def check_session(self, options: Options, session_id: str | None) -> None:
        """For a store that holds one session (`session_id`, None when it records none): a
        `--session` naming any other is an error (exit 2), never a replay of the wrong session."""
        wanted = options.session
        if wanted is None or wanted == session_id:
            return
        held = f"session {session_id!r}" if session_id else "one session that records no id"
        raise TdocError(f"{self.display}: holds {held}, not {wanted!r}")

    def start(self, options: Options, codes: frozenset[str]) -> None:  # noqa: B027  (a hook)
        """Called by the rule engine before it reads the store for `codes`: a store may begin work
        that runs beside the rules (a database's integrity check, on a thread of its own), to be
        collected by `native_findings` and abandoned by `close`."""

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

    def session_identity(self) -> tuple[str | None, float | None]:
        """For a store of one session: the id scan findings and `replay --session` name it by,
        and when its last record was written (Unix seconds); each None where the store records
        none (`tdoc sessions` then falls back to the file's name and modification time)."""
        return None, None

    def session_activity(self) -> dict[str, tuple[float | None, int]]:
        """Session id -> (last activity in Unix seconds or None, records) for `tdoc sessions`.

        Stores that hold many sessions (databases) override this; a store of one session returns
        {} and is described by its file's time and size.
        """
        return {}

    def plan_heal(self, findings: list[Finding], options: HealOptions) -> HealPlan:
        """The plan that fixes `findings` (all allowed under `options`): see docs/heal.md.

        A store only plans; the heal pipeline previews, backs up, writes and re-verifies."""
        raise TdocError(f"{self.display}: heal is not supported for {self.format} stores")

    def close(self) -> None:  # noqa: B027  (a hook: most stores hold no handle)
        """Release any handle the store holds."""


class StoreKind(ABC):
    format: str = ""
    system: str = ""
    jsonl: bool = False  # line-oriented text format (stdin '-' allowed)
    # Its stores read `Options.shard`: a scan may split one of them over worker processes
    # (`stores.shard`), each reading the sessions of its shard and shard 0 the store-wide findings.
    splits_sessions: bool = False

    @abstractmethod
    def sniff(self, path: Path, head: bytes) -> bool:
        """Whether the file at `path` (whose first bytes are `head`) is this kind of store."""

    @abstractmethod
    def open(self, path: Path, display: str, options: Options) -> Store: ...

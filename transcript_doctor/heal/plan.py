"""What a store hands the heal pipeline: its edits, how to verify them and how to write them.

Three ways of writing, one per kind of store (docs/heal.md §The store's plan):

* `LineWrite`: line edits on a line-oriented file (JSONL). The pipeline streams the original
  through the edits into a temporary file and replaces the original with it. With
  `expected_sha256` the store has already replayed the healed bytes; the bytes written must hash
  to that value or nothing is replaced. With `spooled`, the store wrote the healed bytes into
  the pipeline's `Spool` while it verified them (one pass over the file): the pipeline syncs and
  renames that file instead of writing another.
* `BytesWrite`: the whole new content of a small file that cannot be edited line by line (an
  OpenCode export, re-serialised exactly as OpenCode writes it).
* `SqlWrite`: a function run inside one `BEGIN IMMEDIATE` transaction on the database (the file is
  never swapped), and the SQL text shown by a dry run.

`HealPlan.edits` is the source of truth for what changes: the pipeline reports it, and for line
writes it is exactly what is applied.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from ..fixes.fingerprint import Fingerprint
from ..model import Edit, Finding


@dataclass(frozen=True)
class LineWrite:
    """Apply `edits` (delete/replace by 1-based line) while streaming the file."""

    edits: tuple[Edit, ...]
    expected_sha256: str | None = None  # the verified healed bytes; None: the pipeline re-scans
    spooled: bool = False  # the heal's spool holds exactly the healed bytes (the ones verified)


class Spool(Protocol):
    """The temporary file a heal will rename over its destination (`HealOptions.spool`, set by
    the pipeline for `--output` and `--in-place`). A store that replays the healed content to
    verify it may write the bytes into it as they stream past, and answer `LineWrite(spooled=True)`.
    """

    def open(self) -> IO[bytes]:
        """A new, empty temporary file (what an earlier `open` wrote is removed)."""
        ...


@dataclass(frozen=True)
class BytesWrite:
    """Replace the file's content with `data` (a diff is shown from `diff`)."""

    data: bytes
    diff: str


@dataclass(frozen=True)
class SqlWrite:
    """Run `apply(conn)` inside one immediate transaction; `sql` is what a dry run prints.

    `apply` must re-check that the rows it changes are still those the plan was made from and
    raise `RefusedError` otherwise (the store changed since it was read).
    """

    apply: Callable[[sqlite3.Connection], None]
    sql: str
    foreign_keys: bool = False


Write = LineWrite | BytesWrite | SqlWrite


@dataclass
class HealPlan:
    """A store's answer to "heal these findings".

    applied: the findings the plan fixes. skipped: `{code, line|row|step, reason}` for findings it
    will not fix. `write` is None when nothing changes. When the store verified the healed result
    itself (`verified`), `healed` is a store view of the healed content that the pipeline scans to
    fill `remaining`; otherwise the pipeline scans the written result.
    """

    applied: list[Finding] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    write: Write | None = None
    warnings: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    kept: frozenset[str] = frozenset()  # subjects whose fix the store checked and refused
    verified: bool = False
    healed: Any = None  # a Store over the verified healed content (verified plans only)
    remaining: list[Finding] | None = None  # for a dry run: what the plan leaves (store's own view)
    read_as: Fingerprint | None = None  # the file as the plan read it (files: checked before the replace)

    @property
    def changes(self) -> bool:
        return self.write is not None


def patch_name(display: str) -> str:
    """A file's name in a patch (`a/<name>`, `b/<name>`): relative to the current directory
    where it can be, so that `git apply` run there finds it."""
    path = Path(display)
    if not path.is_absolute():
        return display
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path.relative_to(path.anchor))

"""The resume walk: newest leaf, parentUuid chain, compaction boundary and preserved segments.

docs/claude-code-sessions.md, section "How the request is rebuilt on resume": Claude Code resumes from the newest leaf (the last record in the file
that no other record names as its parent), walks `parentUuid` back to a root, and replays that
chain. A `compact_boundary` is a root (`parentUuid: null`); a preserved segment is re-attached by
pointing its head at the segment's anchor. A parent that names no record ends the walk: the
records above it are not reached (C206), unless it is the first record of the file (where a copy
of the session starts).

Two views: `cli` (what Claude Code reads: records of concatenated lines are lost) and `repaired`
(what a resume reads once concatenated lines are split and breaks re-linked, as `tdoc heal` does).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .records import CHAIN_TYPES, Record


@dataclass
class Chain:
    records: list[Record]  # every record the view can read, in file order
    path: list[Record] = field(default_factory=list)  # root -> leaf
    leaf: Record | None = None
    by_uuid: dict[str, Record] = field(default_factory=dict)
    parents: dict[str, str | None] = field(default_factory=dict)  # effective parent by uuid
    children: dict[str, list[Record]] = field(default_factory=dict)  # by effective parent uuid
    boundary: Record | None = None  # the compact boundary the chain starts at, if any
    cut: Record | None = None  # the chain record whose parent names nothing (the walk stopped there)
    dangling: list[Record] = field(default_factory=list)  # every record whose parent names nothing
    relinked: dict[str, str] = field(default_factory=dict)  # uuid -> new parent (repaired view)

    def parent_of(self, rec: Record) -> str | None:
        return self.parents.get(rec.uuid) if rec.uuid is not None else None


def effective_parents(records: Iterable[Record]) -> dict[str, str | None]:
    """Parent by uuid after the loader's own relinks: boundaries are roots; preserved heads move."""
    parents: dict[str, str | None] = {}
    moves: dict[str, str] = {}
    for rec in records:
        if rec.uuid is None:
            continue
        parents[rec.uuid] = None if rec.subtype == "compact_boundary" else rec.parent
        if rec.subtype == "compact_boundary" and rec.meta and rec.meta.get("preserved"):
            seg = rec.meta["preserved"]
            if seg.get("headUuid") and seg.get("anchorUuid"):
                moves[seg["headUuid"]] = seg["anchorUuid"]
    for head, anchor in moves.items():
        if head in parents and head != anchor:
            parents[head] = anchor
    return parents


def build_chain(all_records: list[Record], *, repaired: bool = False) -> Chain:
    """The resume chain of one view of the file (see the module docstring)."""
    chained = [r for r in all_records if r.uuid is not None and r.type in CHAIN_TYPES and (repaired or r.readable)]
    # A session file replays its main chain; a subagent's file (`agent-*.jsonl`) holds only sidechain records.
    main = [r for r in chained if not r.sidechain]
    # A uuid written more than once (a retried write; history a compaction wrote again) loads as
    # one record: Claude Code keeps the records in a map by uuid, so the last copy wins, in the
    # place of the first (docs/claude-code-sessions.md §2).
    by_uuid = {r.uuid: r for r in main or chained}
    records = [by_uuid[u] for u in dict.fromkeys(r.uuid for r in main or chained)]
    chain = Chain(records)
    chain.by_uuid = by_uuid  # type: ignore[assignment]
    chain.parents = parents = effective_parents(records)
    first = records[0] if records else None
    dangling, children = chain.dangling, chain.children
    for rec in records:
        parent = parents[rec.uuid]  # type: ignore[index]
        if parent is None:
            continue
        if parent not in by_uuid and rec is not first:
            dangling.append(rec)
        if not repaired:
            kids = children.get(parent)
            if kids is None:
                children[parent] = [rec]
            else:
                kids.append(rec)
    if repaired:
        _relink_dangling(chain)
        for rec in records:
            parent = parents[rec.uuid]  # type: ignore[index]
            if parent is not None:
                children.setdefault(parent, []).append(rec)
    chain.leaf = next((r for r in reversed(records) if r.uuid not in children), None)
    _walk(chain)
    return chain


def _walk(chain: Chain) -> None:
    path: list[Record] = []
    seen: set[str] = set()
    cur = chain.leaf
    while cur is not None and cur.uuid not in seen:
        seen.add(cur.uuid)  # type: ignore[arg-type]
        path.append(cur)
        if cur.subtype == "compact_boundary":
            chain.boundary = cur
            break
        parent = chain.parents.get(cur.uuid)  # type: ignore[arg-type]
        if parent is None:
            break
        nxt = chain.by_uuid.get(parent)
        if nxt is None:
            chain.cut = cur if cur is not chain.records[0] else None
            break
        cur = nxt
    path.reverse()
    chain.path = path


def relink_target(chain: Chain, rec: Record) -> Record | None:
    """The nearest earlier record of the file to hang a dangling record on (never a descendant)."""
    position = chain.records.index(rec)
    for k in range(position - 1, -1, -1):
        candidate = chain.records[k]
        if not _descends_from(chain, candidate, rec):
            return candidate
    return None


def _descends_from(chain: Chain, rec: Record, ancestor: Record) -> bool:
    seen: set[str] = set()
    cur: Record | None = rec
    while cur is not None and cur.uuid not in seen:
        if cur is ancestor:
            return True
        seen.add(cur.uuid)  # type: ignore[arg-type]
        parent = chain.parents.get(cur.uuid)  # type: ignore[arg-type]
        cur = chain.by_uuid.get(parent) if parent is not None else None
    return False


def _relink_dangling(chain: Chain) -> None:
    for rec in chain.dangling:
        target = relink_target(chain, rec)
        if target is not None and target.uuid is not None:
            chain.parents[rec.uuid] = target.uuid  # type: ignore[index]
            chain.relinked[rec.uuid] = target.uuid  # type: ignore[index]

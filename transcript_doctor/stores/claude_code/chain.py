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


def _relink_dangling(chain: Chain) -> None:
    """Hang each dangling record, in file order, on the nearest earlier record of the file that
    does not descend from it (a descendant would close a loop).

    A dangling record's parent names nothing, so it is the root of its own tree until it is
    re-linked: the records that descend from it are exactly those its subtree holds (`_subtree`,
    over the children of each record under the parents as re-linked so far). One walk down each
    dangling record's tree, instead of a walk up from every candidate to its root, keeps a file
    with many broken parents linear: the trees of successive dangling records are, in any file
    written in order, disjoint (tests/claude_code/test_linear_time.py pins this to the walk-up reference)."""
    if not chain.dangling:
        return
    records, parents = chain.records, chain.parents
    position = {rec.uuid: k for k, rec in enumerate(records)}
    below: dict[str | None, list[str]] = {}  # record uuid -> the uuids of its children now
    for rec in records:
        below.setdefault(parents[rec.uuid], []).append(rec.uuid)  # type: ignore[index, arg-type]
    for rec in chain.dangling:
        uuid: str = rec.uuid  # type: ignore[assignment]
        descendants = _subtree(below, uuid)
        k = position[uuid] - 1
        while k >= 0 and records[k].uuid in descendants:
            k -= 1
        if k >= 0:
            target: str = records[k].uuid  # type: ignore[assignment]
            parents[uuid] = chain.relinked[uuid] = target
            below.setdefault(target, []).append(uuid)


def _subtree(below: dict[str | None, list[str]], root: str) -> set[str]:
    """`root` and every uuid below it."""
    seen = {root}
    stack = [root]
    while stack:
        for child in below.get(stack.pop(), ()):
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return seen

"""Turn heal intents into line edits on a Claude Code transcript (docs/claude-code-sessions.md, section "Heal").

An intent says what to do to the session (remove a record, drop a block, answer a call, split a
line, re-link a parent); `plan` works out every line that has to change so the chain stays whole:
the children of a removed record are re-linked to its nearest surviving ancestor, a record whose
blocks are all dropped is removed, a split keeps each record's exact text. Records a resume needs
(`compact_boundary`, `permission-mode`, `last-prompt`) are never removed. Lines no intent touches
are not edited, so they stay byte-identical.
"""

from __future__ import annotations

import hashlib
import json
import uuid as uuidlib
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from ...model import Edit
from .reader import Concatenated, Transcript, split_values
from .records import Record

INTERRUPTED = "Tool call interrupted: the outcome is unknown (result added by tdoc heal)"
_NS = uuidlib.UUID("6f1c7e3a-2b0d-4c8e-9a51-3d7f0b2e4c19")


@dataclass(frozen=True)
class Intent:
    kind: str  # remove | drop-block | answer | split | relink
    record: int = -1  # record index
    block: int = -1
    line: int = 0  # split: the line
    call_id: str = ""
    parent: str | None = None  # relink: the new parent uuid


@dataclass
class Plan:
    lines: dict[int, str | None] = field(default_factory=dict)  # line -> new text (None: delete)
    removed: set[int] = field(default_factory=set)  # record indexes removed
    dropped: dict[int, set[int]] = field(default_factory=dict)  # record index -> block indexes dropped
    added: list[dict[str, Any]] = field(default_factory=list)  # records inserted
    added_uuids: set[Any] = field(default_factory=set)  # their uuids (two intents answering one call add it once)
    relinked: dict[int, str | None] = field(default_factory=dict)  # record index -> new parent
    repaired: set[int] = field(default_factory=set)  # re-linked by a chain repair (C206), not for a removal
    twins: set[int] = field(default_factory=set)  # record indexes written once elsewhere (split dedupe)
    refused: list[str] = field(default_factory=list)

    def edits(self) -> tuple[Edit, ...]:
        return tuple(Edit("delete", line=n) if text is None else Edit("replace", line=n, text=text)
                     for n, text in sorted(self.lines.items()))  # fmt: skip


class LineSource:
    """The raw text of a line, read by seeking to the offset the reader recorded.

    One read handle serves every line (a scan with thousands of fixes reads thousands of lines:
    opening the file for each cost a sixth of such a scan). It is opened on the first line asked
    for and closed by `close` (the store's), or when the source is collected."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cache: dict[int, str] = {}
        self._file: BinaryIO | None = None

    def text(self, rec: Record) -> str:
        if rec.line not in self.cache:
            fh = self._file
            if fh is None:
                fh = self._file = open(self.path, "rb")  # noqa: SIM115 - held across calls, closed by `close`
                weakref.finalize(self, fh.close)
            fh.seek(rec.offset)
            raw = fh.readline()
            self.cache[rec.line] = raw.rstrip(b"\n").rstrip(b"\r").decode("utf-8")
        return self.cache[rec.line]

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def piece(self, rec: Record, pieces: int) -> str:
        text = self.text(rec)
        if pieces == 1:
            return text
        split = split_values(text) or [(text, None)]
        return split[rec.piece][0]


def dumps(obj: Any) -> str:
    try:
        return orjson.dumps(obj).decode("utf-8")
    except TypeError:  # lone surrogates: stdlib JSON escapes them
        return json.dumps(obj, separators=(",", ":"))


def loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _name_uuid(name: str) -> uuidlib.UUID:
    """`uuid.uuid5(_NS, name)`, also for a name holding a lone surrogate (which `uuid5` cannot
    encode): the name's UTF-8 bytes, surrogates passed through, so every other name keeps its uuid."""
    digest = hashlib.sha1(_NS.bytes + name.encode("utf-8", "surrogatepass")).digest()
    return uuidlib.UUID(bytes=digest[:16], version=5)


def answer_record(call_rec: Record, source: LineSource, pieces: int, call_id: str) -> dict[str, Any]:
    """An `is_error` tool result for `call_id`, parented on the line of its call, envelope copied."""
    obj = loads(source.piece(call_rec, pieces))
    out: dict[str, Any] = {"parentUuid": call_rec.uuid, "isSidechain": False}
    for key in ("userType", "cwd", "sessionId", "version", "gitBranch"):
        if key in obj:
            out[key] = obj[key]
    out["type"] = "user"
    out["message"] = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call_id, "content": INTERRUPTED, "is_error": True}]}
    out["uuid"] = str(_name_uuid(f"{call_rec.session}:{call_id}"))
    if "timestamp" in obj:
        out["timestamp"] = obj["timestamp"]
    return out


class Planner:
    """Plans intents over the transcript; the uuid and child indexes are built only for a removal."""

    def __init__(self, transcript: Transcript, source: LineSource) -> None:
        self.t = transcript
        self.source = source
        self.records = transcript.records

    def by_line(self, line: int) -> list[Record]:
        return self.t.by_line(line)

    def pieces(self, line: int) -> int:
        return len(self.t.by_line(line))

    @cached_property
    def by_uuid(self) -> dict[str, Record]:
        by_uuid: dict[str, Record] = {}
        for rec in self.records:
            if rec.uuid is not None:
                by_uuid.setdefault(rec.uuid, rec)
        return by_uuid

    @cached_property
    def concatenated(self) -> dict[int, list[Concatenated]]:
        """The concatenated lines by line number (a fix splits one line: not a walk over all of them)."""
        found: dict[int, list[Concatenated]] = {}
        for cat in self.t.concatenated:
            found.setdefault(cat.line, []).append(cat)
        return found

    @cached_property
    def children(self) -> dict[str, list[Record]]:
        children: dict[str, list[Record]] = {}
        for rec in self.records:
            if rec.parent is not None:
                children.setdefault(rec.parent, []).append(rec)
        return children

    def plan(self, intents: Iterable[Intent]) -> Plan:
        plan = Plan()
        inserts: dict[int, list[dict[str, Any]]] = {}
        split_lines: set[int] = set()
        for it in intents:
            self._take(it, plan, inserts, split_lines)
        self._drop_emptied(plan)
        self._relink_children(plan)
        self._write(plan, inserts, split_lines)
        return plan

    def _take(self, it: Intent, plan: Plan, inserts: dict[int, list[dict[str, Any]]], split: set[int]) -> None:
        if it.kind == "split":
            split.add(it.line)
            for cat in self.concatenated.get(it.line, ()):
                plan.twins.update(r.index for r in self.by_line(it.line) if r.piece in cat.twins)
            return
        rec = self.records[it.record]
        if it.kind == "remove":
            if rec.protected:
                plan.refused.append(f"line {rec.line}: a {rec.subtype or rec.type} record is never removed")
            else:
                self._remove(rec, plan)
        elif it.kind == "drop-block":
            plan.dropped.setdefault(rec.index, set()).add(it.block)
        elif it.kind == "relink":
            plan.relinked[rec.index] = it.parent
            plan.repaired.add(rec.index)
        elif it.kind == "answer":
            added = answer_record(rec, self.source, self.pieces(rec.line), it.call_id)
            if added["uuid"] not in plan.added_uuids:  # (a search of `added` per answer grew with their square)
                plan.added_uuids.add(added["uuid"])
                inserts.setdefault(rec.index, []).append(added)
                plan.added.append(added)

    @cached_property
    def same_uuid(self) -> dict[str, list[Record]]:
        """uuid -> its records, for the uuids written more than once."""
        seen: dict[str, list[Record]] = {}
        for rec in self.records:
            if rec.uuid is not None:
                seen.setdefault(rec.uuid, []).append(rec)
        return {u: recs for u, recs in seen.items() if len(recs) > 1}

    def _remove(self, rec: Record, plan: Plan) -> None:
        """Remove `rec` and every copy of it: a uuid written twice (a retried write) loads as its
        last record, so removing only that one would bring the other back. A copy that differs
        is another record: then nothing is removed (the fix is refused)."""
        copies = [r for r in self.same_uuid.get(rec.uuid or "", ()) if r.index != rec.index]
        mine = self.source.piece(rec, self.pieces(rec.line)) if copies else ""  # (read back only for copies)
        for other in copies:
            if other.protected or self.source.piece(other, self.pieces(other.line)) != mine:
                plan.refused.append(f"line {rec.line}: its uuid is also written on line {other.line}, with "
                                    "other content; removing one would bring the other back")
                return
        plan.removed.add(rec.index)
        plan.removed.update(r.index for r in copies)

    def _drop_emptied(self, plan: Plan) -> None:
        for index, blocks in list(plan.dropped.items()):
            rec = self.records[index]
            if len(blocks) >= len(rec.blocks) and not rec.protected:
                self._remove(rec, plan)  # (its copies too: an earlier copy would come back)

    def _parent(self, rec: Record, plan: Plan) -> str | None:
        return plan.relinked.get(rec.index, rec.parent)

    def _relink_children(self, plan: Plan) -> None:
        """Every surviving record whose parent is removed hangs on the nearest surviving ancestor."""
        removed_uuids = {self.records[i].uuid for i in plan.removed if self.records[i].uuid}
        if not removed_uuids:
            return
        orphans = {c.index: c for u in removed_uuids for c in self.children.get(u or "", ())
                   if c.index not in plan.relinked}  # fmt: skip
        orphans.update((i, self.records[i]) for i, p in plan.relinked.items() if p in removed_uuids)
        for rec in orphans.values():
            if rec.index in plan.removed:
                continue
            parent = self._parent(rec, plan)
            seen: set[str] = set()
            while parent in removed_uuids and parent not in seen:
                seen.add(parent)  # type: ignore[arg-type]
                parent = self._parent(self.by_uuid[parent], plan)  # type: ignore[index]
            plan.relinked[rec.index] = parent

    def _write(self, plan: Plan, inserts: dict[int, list[dict[str, Any]]], split: set[int]) -> None:
        touched = set(split)
        for index in plan.removed | set(plan.dropped) | set(plan.relinked) | set(inserts) | plan.twins:
            touched.add(self.records[index].line)
        for line in sorted(touched):
            recs = self.by_line(line)
            out: list[str] = []
            for rec in sorted(recs, key=lambda r: r.piece):
                if rec.index not in plan.removed and rec.index not in plan.twins:
                    out.append(self._text(rec, plan))
                out.extend(dumps(a) for a in inserts.get(rec.index, ()))
            plan.lines[line] = "\n".join(out) if out else None

    def _text(self, rec: Record, plan: Plan) -> str:
        text = self.source.piece(rec, self.pieces(rec.line))
        if rec.index not in plan.relinked and rec.index not in plan.dropped:
            return text
        obj = loads(text)
        if rec.index in plan.relinked:
            obj["parentUuid"] = plan.relinked[rec.index]
        drop = plan.dropped.get(rec.index)
        if drop:
            content = obj["message"]["content"]
            obj["message"]["content"] = [b for k, b in enumerate(content) if k not in drop]
        return dumps(obj)

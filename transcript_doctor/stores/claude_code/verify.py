"""Check a healed transcript before it replaces the original (docs/claude-code-sessions.md, section "Heal").

1. The healed file's resume replay equals the original's with the planned fixes applied to the
   records in memory (records removed, blocks dropped, parents re-linked, results added, lines split).
2. Every record of the original is present exactly once, except those the plan removed (a
   concatenated line's twin is present once), plus the records the plan added.
3. The healed file resumes on the same branch: its chain passes the original's leaf, or when the
   plan removed it, its nearest surviving ancestor. Removing a leaf can otherwise hand the
   resume to another, older branch that happens to end later in the file.
4. A re-scan of the healed file finds no safe-fixable finding of the rules that were fixed
   (other than on records the heal keeps on purpose, `kept_uuids`).

A failure is a TdocError; a branch flip is `OtherBranch`, which names the removed records at the
end of the resumed chain (keeping them keeps the branch: heal.py retries without their fixes).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...model import Finding, TdocError
from .plan import Plan
from .reader import Transcript, read_transcript
from .records import KEEP_CHARS, Record, parse_record
from .resume import View, view

_CHARS = KEEP_CHARS - 1  # texts are compared on the part every reading keeps


def expected_records(t: Transcript, plan: Plan) -> list[Record]:
    """The original records with the plan applied, as the healed file should hold them."""
    split = {line for line, text in plan.lines.items() if text is not None}
    inserted: dict[str, list[dict[str, Any]]] = {}
    for added in plan.added:
        inserted.setdefault(added["parentUuid"], []).append(added)
    last = {r.uuid: r.index for r in t.records}  # (a result goes after the copy the resume reads: the last)
    out: list[Record] = []
    for rec in t.records:
        if rec.index in plan.removed or rec.index in plan.twins:
            continue
        new = replace(rec, index=len(out), readable=rec.readable or rec.line in split)
        if rec.index in plan.relinked:
            new.parent = plan.relinked[rec.index]
        if rec.index in plan.dropped:
            new.blocks = [b for k, b in enumerate(rec.blocks) if k not in plan.dropped[rec.index]]
        out.append(new)
        if last.get(rec.uuid) == rec.index:
            for added in inserted.get(rec.uuid or "", ()):
                out.append(parse_record(added, len(out), rec.line))
    return out


def signature(v: View) -> list[tuple[Any, ...]]:
    """What the request sends, independent of line numbers."""
    return [
        (m.role, m.msg_id, tuple((s.block.kind, s.block.id, s.block.text[:_CHARS], s.block.is_error, s.block.signed)
                                 for s in m.slots), tuple(r.uuid for r in m.records))
        for m in v.request.messages
    ]


class OtherBranch(TdocError):
    """The healed file would resume another branch; `tail`: the removed records (indexes) that end
    the original's resumed chain."""

    def __init__(self, message: str, tail: set[int]) -> None:
        super().__init__(message)
        self.tail = tail


def removed_tail(before: View, plan: Plan) -> set[int]:
    """The records the plan removes from the end of the original's resumed chain (its leaf, and
    the removed ancestors right above it)."""
    tail: set[int] = set()
    for rec in reversed(before.chain.path):
        if rec.index not in plan.removed:
            break
        tail.add(rec.index)
    return tail


def _other_branch(original: Transcript, before: View, plan: Plan, resumed: View) -> str | None:
    """Why the healed file resumes on another branch than the original does, or None: its chain
    must pass the original's leaf, or when the plan removed that, its nearest surviving ancestor
    (a record below it, or a result the plan added, may be the newest leaf now)."""
    if plan.repaired or original.concatenated:
        return None  # a repair of the chain (a C206 re-link, a split line) means to change what resumes
    # (children re-linked around a removed record still hang on the branch: the check holds for them)
    want = next((r for r in reversed(before.chain.path) if r.index not in plan.removed), None)
    got = resumed.chain.leaf
    if want is None or got is None:
        return None if want is got else "the resume would start elsewhere"
    if got.uuid in {a.get("uuid") for a in plan.added} or any(r.uuid == want.uuid for r in resumed.chain.path):
        return None  # (a record hanging below it, a progress record say, may be the newest leaf now)
    return f"from the record of healed line {got.line}, whose chain does not pass {want.uuid!r}"


def _census(records: list[Record]) -> Counter[str]:
    return Counter(r.uuid if r.uuid is not None else f"<{r.type}>" for r in records)


def verify(original: Transcript, before: View, plan: Plan, healed: Path, display: str,
           rescan: Callable[[Transcript], list[Finding]], fixed_codes: set[str],
           kept_uuids: frozenset[str] = frozenset()) -> Transcript:  # fmt: skip
    """Raise TdocError naming the first check the healed file fails (`before`: the original's
    resume); return its transcript."""
    after = read_transcript(healed, display)
    expected = expected_records(original, plan)
    resumed = view(after.records, repaired=False)
    if signature(resumed) != signature(view(expected, repaired=False)):
        raise TdocError(f"{display}: the healed file would not resume as planned; nothing written")
    branch = _other_branch(original, before, plan, resumed)
    if branch is not None:
        raise OtherBranch(f"{display}: the healed file would resume another branch ({branch}); nothing written",
                          removed_tail(before, plan))
    if _census(after.records) != _census(expected):
        raise TdocError(f"{display}: the healed file does not hold every record exactly once; nothing written")
    left = [f for f in rescan(after) if f.code in fixed_codes and f.fix and f.fix.applicability == "safe"
            and not (kept_uuids and _on_kept(after, f, kept_uuids))]
    if left:
        raise TdocError(f"{display}: {left[0].code} would survive the heal (line {left[0].line}); nothing written")
    return after


def _on_kept(t: Transcript, f: Finding, kept_uuids: frozenset[str]) -> bool:
    return f.line is not None and any(r.uuid in kept_uuids for r in t.by_line(f.line))

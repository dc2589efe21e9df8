"""Walks that stay linear in the file on the shapes that once made them quadratic: many broken
parents (re-linking, `chain._relink_dangling`, pinned to the plain definition it stands for: the
nearest earlier record of the file that does not descend from the dangling one, found by walking
up from each candidate to its root), many records left out of the resume (`View.reached`), one
user message gathering thousands of records (`RequestMessage.add`), many concatenated lines
(`Planner.concatenated`). No test here times anything: each counts the steps, or forbids the
search, that made the work grow with the square of the file."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_doctor.stores.claude_code import chain as chain_module
from transcript_doctor.stores.claude_code.chain import Chain, build_chain
from transcript_doctor.stores.claude_code.records import Record


def _reference_target(chain: Chain, rec: Record) -> Record | None:
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


def _reference_relink(chain: Chain) -> None:
    for rec in chain.dangling:
        target = _reference_target(chain, rec)
        if target is not None and target.uuid is not None:
            chain.parents[rec.uuid] = target.uuid  # type: ignore[index]
            chain.relinked[rec.uuid] = target.uuid  # type: ignore[index]


def _records(spec: list[tuple[int, int | None, bool]]) -> list[Record]:
    """Records of uuids `u<k>` (a uuid may repeat: the last copy wins), each naming as its parent
    another record (before or after it, itself included), a uuid no record has (`gone<k>`), or none."""
    out = []
    for index, (uuid, parent, missing) in enumerate(spec):
        named = None if parent is None else f"gone{parent}" if missing else f"u{parent}"
        out.append(Record(index, index + 1, type="user" if index % 2 else "assistant", uuid=f"u{uuid}", parent=named))
    return out


def _shape(chain: Chain) -> tuple:
    return (dict(chain.parents), dict(chain.relinked), [r.index for r in chain.path],
            chain.leaf.index if chain.leaf else None, chain.cut.index if chain.cut else None,
            {k: [r.index for r in v] for k, v in chain.children.items()})  # fmt: skip


SPECS = st.integers(1, 40).flatmap(lambda n: st.lists(
    st.tuples(st.integers(0, n - 1), st.none() | st.integers(0, n - 1), st.booleans()), min_size=1, max_size=n))


@settings(max_examples=400, deadline=None)
@given(SPECS)
def test_relinking_finds_what_the_walk_up_from_every_candidate_finds(spec) -> None:
    records = _records(spec)
    fast = build_chain(records, repaired=True)
    original = chain_module._relink_dangling
    chain_module._relink_dangling = _reference_relink
    try:
        slow = build_chain(records, repaired=True)
    finally:
        chain_module._relink_dangling = original
    assert _shape(fast) == _shape(slow)


def test_a_file_written_in_order_with_many_broken_parents_is_walked_once(monkeypatch) -> None:
    # 3,000 records in one chain, every other one naming a parent no record has: each dangling
    # record's tree is its own stretch of the file, so the walks down add up to the file once.
    spec = [(k, k - 1, k % 2 == 0) if k else (0, None, False) for k in range(3000)]
    visited: list[int] = []
    real = chain_module._subtree

    def counted(below, root):
        found = real(below, root)
        visited.append(len(found))
        return found

    monkeypatch.setattr(chain_module, "_subtree", counted)
    chain = build_chain(_records(spec), repaired=True)
    assert len(chain.relinked) == 1499 and len(visited) == 1499
    assert sum(visited) == 2 * 1499  # each dangling record and the one record below it
    assert [r.index for r in chain.path] == list(range(3000))  # re-linked into one chain again


def test_what_a_view_reaches_is_built_once() -> None:
    # `Resume.unsent_reason` asks for it once per record the resume leaves out: rebuilt each time,
    # a file with many such records took time quadratic in its length.
    from transcript_doctor.stores.claude_code.resume import view

    spec = [(k, k - 1, k % 3 == 0) if k else (0, None, False) for k in range(30)]
    built = view(_records(spec), repaired=False)
    assert built.reached is built.reached
    assert built.reached == {r.index for r in built.chain.path} | built.request.sent


class _Unsearchable(list):
    def __contains__(self, item: object) -> bool:
        raise AssertionError("a request message's records are searched (linear per record added)")


def test_a_request_message_never_searches_its_records_to_add_one() -> None:
    from transcript_doctor.stores.claude_code.request import RequestMessage

    records = _records([(k, None, False) for k in range(50)])
    msg = RequestMessage("user", records=_Unsearchable())
    for rec in records + records[:10]:  # the first ten again: kept once, their blocks twice
        msg.add(rec)
    assert msg.records == records and [r.index for r in msg.records] == list(range(50))


class _CountedIteration(list):
    walks = 0

    def __iter__(self):
        type(self).walks += 1
        return super().__iter__()


def test_planning_the_split_of_each_concatenated_line_walks_the_list_of_them_once(tmp_path) -> None:
    from tests.claude_code.builders import Session
    from transcript_doctor.stores.claude_code.plan import Intent, LineSource, Planner
    from transcript_doctor.stores.claude_code.reader import read_transcript

    session = Session()
    for k in range(40):
        session.user(f"question {k}")
        session.text(f"msg_{k}", "answer")
    lines = session.lines()
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(a + b for a, b in zip(lines[::2], lines[1::2])) + "\n")  # two records a line
    transcript = read_transcript(path, str(path))
    assert len(transcript.concatenated) == 40
    _CountedIteration.walks = 0
    transcript.concatenated = _CountedIteration(transcript.concatenated)
    planner = Planner(transcript, LineSource(path))
    for line in range(1, 41):
        plan = planner.plan([Intent("split", line=line)])
        assert list(plan.lines) == [line]
    assert _CountedIteration.walks == 1


def test_fixes_read_their_lines_through_one_handle_that_the_store_closes(tmp_path, monkeypatch) -> None:
    import builtins

    from tests.claude_code.builders import Session
    from transcript_doctor.core import ScanConfig, check_store
    from transcript_doctor.stores import Options, open_store
    from transcript_doctor.stores.claude_code import plan

    session = Session()
    for k in range(30):
        session.user(f"question {k}")
        session.text(f"msg_{k}", "\n\n")  # a blank text block: W102, fixed by dropping it
        session.text(f"msg_{k}", "answer")
    path = tmp_path / "s.jsonl"
    path.write_text(session.jsonl())
    opened: list = []

    def counting(*args, **kwargs):
        handle = builtins.open(*args, **kwargs)
        opened.append(handle)
        return handle

    monkeypatch.setattr(plan, "open", counting, raising=False)
    store = open_store(path, str(path), Options())
    findings = check_store(store, ScanConfig())
    assert sum(1 for f in findings if f.code == "W102" and f.fix is not None) == 30
    assert len(opened) == 1 and not opened[0].closed
    store.close()
    assert opened[0].closed

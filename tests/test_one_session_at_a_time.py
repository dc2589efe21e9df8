"""A scan of a store of many sessions holds one session at a time (stores/collector.py).

When a store reads its next session, the rule engine is done with the one before, and nothing on
the way (`paused_per_item`, `SessionPass`, `rules.engine.check_store`, the stores' generators)
may still hold it: it must already be freed, by reference counting alone (the collector is paused
while a session is read), so that the next session is built in the memory it leaves. Each test
records a weak reference to every session a scan builds, counts the earlier ones still alive as
the next one is read, and asserts that count is zero every time, for every session of the
fixture (those that findings name included).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.stores import FIXTURES
from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.stores.collector import paused_per_item
from transcript_doctor.stores.hermes import checks as hermes_checks
from transcript_doctor.stores.hermes import store as hermes_store
from transcript_doctor.stores.opencode import reader as opencode_reader


class Tracker:
    """Weak references to the sessions built so far; `check` records how many are still alive."""

    def __init__(self) -> None:
        self.built: list[weakref.ref] = []
        self.alive_at_next_read: list[int] = []

    def check(self) -> None:
        self.alive_at_next_read.append(sum(ref() is not None for ref in self.built))

    def add(self, session: object) -> None:
        self.built.append(weakref.ref(session))


pytestmark = pytest.mark.usefixtures("collector_on")


def _scan(path: Path) -> None:
    report = scan([str(path)], ScanConfig(ignore=["F506"]))
    assert report.files[0].error is None


def test_an_opencode_scan_frees_each_session_before_reading_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    tracker = Tracker()
    read = opencode_reader.DbReader.read_session

    def tracked(self: opencode_reader.DbReader, row: opencode_reader.SessionRow) -> opencode_reader.OcSession:
        tracker.check()
        session = read(self, row)
        tracker.add(session)
        return session

    monkeypatch.setattr(opencode_reader.DbReader, "read_session", tracked)
    _scan(FIXTURES / "opencode" / "opencode.db")
    assert len(tracker.built) == 10  # the fixture's sessions
    assert tracker.alive_at_next_read == [0] * 10


@pytest.mark.parametrize("name", ["hermes-state-v21.db", "hermes-state-v21-b.db"])
def test_a_hermes_scan_frees_each_session_before_reading_the_next(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    tracker = Tracker()
    built = hermes_checks.SessionScan.__post_init__

    def tracked(self: hermes_checks.SessionScan) -> None:
        built(self)
        tracker.add(self)

    init = hermes_checks.SessionScan.__init__

    def tracked_init(self: hermes_checks.SessionScan, *args: object, **kwargs: object) -> None:
        tracker.check()  # the session's rows are read by now; the scan of it is about to be made
        init(self, *args, **kwargs)

    monkeypatch.setattr(hermes_checks.SessionScan, "__post_init__", tracked)
    monkeypatch.setattr(hermes_checks.SessionScan, "__init__", tracked_init)
    rows = _track_row_lists(monkeypatch)
    _scan(FIXTURES / "hermes" / name)
    assert len(tracker.built) >= 4
    assert tracker.alive_at_next_read == [0] * len(tracker.built)
    assert len(rows.built) == len(tracker.built)
    assert rows.alive_at_next_read == [0] * len(rows.built)


class RowList(list):
    """A session's rows, as a list a weak reference can name."""


def _track_row_lists(monkeypatch: pytest.MonkeyPatch) -> Tracker:
    """Each session's list of rows, tracked as the reader hands it over: when the reader is asked
    for the next session, the lists of the earlier ones must be gone."""
    tracker = Tracker()
    read = hermes_store.HermesDbStore.iter_sessions

    def tracked(self: hermes_store.HermesDbStore, session_ids: list[str] | None = None) -> Iterator[tuple[str, list]]:
        for sid, rows in read(self, session_ids):
            tracker.check()
            listed = RowList(rows)
            tracker.add(listed)
            del rows
            yield sid, listed
            del listed

    monkeypatch.setattr(hermes_store.HermesDbStore, "iter_sessions", tracked)
    return tracker


def test_paused_per_item_does_not_hold_an_item_while_the_next_is_made() -> None:
    class Item:
        pass

    refs: list[weakref.ref] = []
    alive: list[int] = []

    def produce() -> Iterator[Item]:
        for _ in range(3):
            alive.append(sum(r() is not None for r in refs))
            item = Item()
            refs.append(weakref.ref(item))
            yield item
            del item

    for item in paused_per_item(produce()):
        assert isinstance(item, Item)
        del item
    assert alive == [0, 0, 0]

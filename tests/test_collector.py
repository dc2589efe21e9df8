"""stores.collector: the cyclic collector is paused while a reader produces, and always resumed."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from transcript_doctor.stores.collector import collector_paused, paused_per_item

pytestmark = pytest.mark.usefixtures("collector_on")


def test_paused_per_item_pauses_while_producing_and_runs_while_consuming() -> None:
    seen_while_producing: list[bool] = []

    def produce() -> Iterator[int]:
        for i in range(3):
            seen_while_producing.append(gc.isenabled())
            yield i

    consumed = []
    for item in paused_per_item(produce()):
        consumed.append((item, gc.isenabled()))
    assert consumed == [(0, True), (1, True), (2, True)]
    assert seen_while_producing == [False, False, False]
    assert gc.isenabled()


def test_an_error_while_producing_resumes_the_collector() -> None:
    def produce() -> Iterator[int]:
        yield 1
        raise ValueError("unreadable row")

    items = paused_per_item(produce())
    assert next(items) == 1
    with pytest.raises(ValueError, match="unreadable row"):
        next(items)
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
    assert list(paused_per_item(iter([1, 2]))) == [1, 2]
    assert not gc.isenabled()


def test_cyclic_garbage_made_while_paused_is_collected_afterwards() -> None:
    class Node:
        def __init__(self) -> None:
            self.me = self

    with collector_paused():
        Node()
    assert gc.collect() >= 1  # the cycle is still collectable once the collector runs


def test_a_pause_leaves_what_another_store_froze_frozen() -> None:
    """An open Claude Code store freezes its index; reading another store meanwhile must not thaw it."""
    kept = [object() for _ in range(100)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with collector_paused():
            made = [[i] for i in range(1000)]
        assert gc.get_freeze_count() == frozen and gc.isenabled()
        assert list(paused_per_item(iter([1, 2]))) == [1, 2]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
    assert kept and made

"""The JSON scan report of every shipped fixture is byte-identical to its committed snapshot.

The snapshots were captured before the conversation-model refactoring (issue 14); a change of
output must be intended and re-captured with `python -m tests.reports.capture`.
"""

from __future__ import annotations

import pytest

from tests.reports.capture import fixture_stores, report_json, snapshot_path

STORES = fixture_stores()


def test_snapshots_and_fixture_stores_match_one_to_one() -> None:
    assert STORES, "no fixture store found"
    on_disk = set(snapshot_path(STORES[0]).parent.glob("*.json"))
    assert on_disk == {snapshot_path(rel) for rel in STORES}


@pytest.mark.parametrize("rel", STORES, ids=str)
def test_report_is_byte_identical(rel) -> None:
    assert report_json(rel) == snapshot_path(rel).read_text()

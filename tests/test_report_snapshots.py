"""The JSON scan report of every shipped fixture is byte-identical to its committed snapshot.

The snapshots were captured before the conversation-model refactoring (issue 14); a change of
output must be intended and re-captured with `python -m tests.reports.capture`.
"""

from __future__ import annotations

import pytest

from tests.reports.capture import fixture_stores, report_json, snapshot_path

STORES = fixture_stores()


def test_every_fixture_store_has_a_snapshot() -> None:
    assert len(STORES) > 100
    assert all(snapshot_path(rel).is_file() for rel in STORES)


@pytest.mark.parametrize("rel", STORES, ids=str)
def test_report_is_byte_identical(rel) -> None:
    assert report_json(rel) == snapshot_path(rel).read_text()
